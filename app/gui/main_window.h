// SPDX-License-Identifier: MIT
/// @brief The desktop workbench: a run database's fitted model, a network (the profiled one, a
/// zoo model or a network JSON), the planner's controls and a log-scale budget slider; the
/// views (Memory, Streams, Trade-off, Layers, Model, Summary) show the plan for the budget and
/// follow one selected layer together; Timeline and Compare show what the open databases
/// recorded (MeasuredViews). Without a run database it shows the analyzer's memory
/// curves only. Database reads and plans run on worker threads (RunDocument, PlanService).
/// The tabs are the rows of viewTable() (view_registry.h). The window's code is in three files:
/// main_window.cpp (the views and the plan shown), plan_dock.cpp (the Plan dock's controls, the
/// network, budget and request they name) and window_files.cpp (the command line's options, the
/// files opened and the files written).
#pragma once

#include <QMainWindow>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/network_analysis.h"
#include "gui/gui_options.h"
#include "gui/input_files.h"
#include "gui/workbench_types.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;

namespace swapscope {
class PlanView;
}  // namespace swapscope

namespace swapscope::gui {

class RunDocument;
class PlanService;
class MeasuredViews;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Applies the command line's choices. Error(BadInput) for a network the options cannot build,
  /// or an output the options name that checkOutputs refuses.
  /// Headless (export or screenshot): errors are not shown in dialogs but reported by failed().
  void applyOptions(const GuiOptions& options);
  /// Opens a run database (read on a worker thread); errors go to a dialog or failed().
  void openDatabase(const QString& path);
  /// Plans for the ONNX model at `path` (the network source "ONNX model"); a file that does not
  /// import is reported in a message box, as a bad network JSON is.
  void openOnnx(const QString& path);
  /// The network to plan: null for the profiled one; `origin` names it ("resnet152", a path).
  void setNetwork(std::shared_ptr<const Network> network, const std::string& origin);

  /// The budget in bytes, as the slider and the exact entry show it.
  std::int64_t budget() const { return m_budget; }
  void setBudget(std::int64_t bytes);
  /// The slider's budget at position `pos` (0..kSliderSteps) and back, on a log scale from the
  /// untrainable minimum to the device memory.
  std::int64_t budgetAt(int pos) const;
  int sliderPosition(std::int64_t bytes) const;
  static constexpr int kSliderSteps = 10000;

  /// The request the controls describe now.
  perf::PlanRequest currentRequest() const;
  /// The plan shown (null before the first).
  const PlanOutcome* shownPlan() const { return m_shown ? &*m_shown : nullptr; }
  /// The status line's text (the last message, or empty).
  std::string statusText() const;
  /// The dock's words on the run database open: its path, network and device, and a warning
  /// for one that is not a profile.
  std::string databaseText() const;

  /// Writes the plan shown through the engine's plan-file writer, or prints its text to standard
  /// output where `path` is "-". As `swapscope plan`: Error(BadInput) when the budget or k cannot
  /// train (or the path is refused), Error(Runtime) when paper mode finds no k meeting (6).
  void exportPlan(const QString& path, bool force);
  /// Saves the view `name` (viewNames()) as PNG, SVG or PDF (by the file's suffix).
  void saveFigure(const QString& name, const QString& path, bool force);
  /// Renders the whole window as PNG, SVG or PDF (by the file's suffix, as saveFigure).
  void saveScreenshot(const QString& path, bool force);
  /// The files the window reads (InputFiles), which no output replaces.
  InputFiles& inputs() const { return *m_inputs; }
  /// The rules for an output of the window: `force`, and every input.
  files::OutputRules outputRules(bool force) const;
  /// Shows view `name`; Error(BadInput) for an unknown one.
  void showView(const QString& name);
  /// Selects a layer in every view; -1 clears.
  void selectLayer(int layer);
  int selectedLayer() const { return m_selected; }
  /// A layer of the planned network by name or index; Error(BadInput) naming the network.
  int findLayer(const QString& text) const;

  QSlider* budgetSlider() const { return m_slider; }
  /// The plan views, per row of viewTable() (null for a recorded-run view's row).
  const std::vector<PlanView*>& planViews() const { return m_planViews; }
  /// The plan view of type View (e.g. MemoryChartView), or null.
  template <class View>
  View* view() const {
    for (PlanView* v : m_planViews)
      if (auto* found = qobject_cast<View*>(v)) return found;
    return nullptr;
  }
  /// The Timeline and Compare views and the databases open beside the planning one.
  MeasuredViews* measured() const { return m_measured; }
  QTabWidget* tabs() const { return m_tabs; }
  /// The plan shown is drawn in every view (a hidden one is brought up to date when shown).
  void refreshAllViews();

 signals:
  /// A plan was drawn in the visible views.
  void planShown();
  /// Nothing is left to compute for the plan shown: no newer plan waits, the budget sweep is
  /// complete and the plan's k curve is drawn.
  void settled();
  /// Headless mode only: what would have been a dialog.
  void failed(const QString& message);

 private:
  /// The Network box's entries, in its order.
  enum class NetworkSource { Profiled, Zoo, File, Onnx };
  NetworkSource networkSource() const;
  /// Selects `source` in the Network box (its signal, when not blocked, rebuilds the network).
  void setNetworkSource(NetworkSource source);
  /// Selects `policy` in the Policy box.
  void setPolicy(Policy policy);
  /// The Plan dock: its controls made (network, request, budget), laid out and connected.
  void buildControls();
  /// The dock's buttons, made with the controls and connected after.
  struct ControlButtons {
    QPushButton* open_db = nullptr;
    QPushButton* open_net = nullptr;
    QPushButton* export_plan = nullptr;
    QPushButton* save_figure = nullptr;
  };
  /// The run database and network rows.
  void makeNetworkControls(ControlButtons& buttons);
  /// Policy, mode, k, GPUs, link bandwidth, epochs and data-set size.
  void makeRequestControls();
  /// The budget slider and entry, its range and the status line.
  void makeBudgetControls();
  /// The controls in one form, in a scrolling dock on the left.
  void addControlsDock(const ControlButtons& buttons);
  void connectNetworkControls(const ControlButtons& buttons);
  /// A change of the request replans.
  void connectRequestControls();
  /// The slider and the exact entry set the budget, each keeping the other in step.
  void connectBudgetControls();
  /// Export plan... and Save figure...
  void connectOutputButtons(const ControlButtons& buttons);
  /// One tab per row of viewTable(), in its order.
  void addViewTabs();
  void onLoaded();
  /// For a run of a plan: planning shows the plan it ran (unless `keepRequest`: the command
  /// line's budget or k).
  void showRecordedPlan(const LoadedRun& run, bool keepRequest);
  void onContextReady();
  void onPlanReady(const PlanOutcome& outcome);
  void onBatchCurve(const BatchCurveOutcome& curve);
  void refreshView(int index);
  void checkSettled();
  void restartSweepIfChanged(const perf::PlanRequest& request);
  void onNetworkSourceChanged();
  /// The zoo model, input and classes fields enabled as `source` uses them.
  void enableNetworkFields(NetworkSource source);
  /// File > Open ONNX model...: asks for a file, then openOnnx.
  void askOpenOnnx();
  void replan();
  void showAnalysisOnly();
  void updateBudgetControls();
  void showError(const QString& title, const QString& message);
  /// File > Open run database... and the Plan panel's button: asks for the file, opens it.
  void askOpenDatabase();
  /// Records the files the options name as inputs, and checks their outputs before anything is
  /// read: never an input, never each other, an image format figureFormat knows.
  void checkOutputs(const GuiOptions& options);
  const Network* plannedNetwork() const;
  /// The Timeline shows a database of the network planned (its layers are the plan's).
  bool timelineShowsPlannedNetwork() const;

  std::shared_ptr<InputFiles> m_inputs = std::make_shared<InputFiles>();
  RunDocument* m_doc;
  PlanService* m_plans;
  QTabWidget* m_tabs;
  std::vector<PlanView*> m_planViews;  ///< per row of viewTable(); null for recorded-run views
  MeasuredViews* m_measured = nullptr;
  /// Per tab (viewTable() order): the plan shown is not drawn there yet.
  std::vector<bool> m_stale;
  /// What a budget sweep depends on: everything in a request but the budget.
  struct SweepKey {
    Policy policy;
    perf::PlanMode mode;
    std::optional<std::int64_t> batch;
    int gpus;
    double link_bandwidth;
    double epochs;
    std::int64_t dataset_size;
    static SweepKey of(const perf::PlanRequest& request);
    bool operator==(const SweepKey&) const = default;
  };
  std::optional<SweepKey> m_sweepKey;  ///< the request the sweep on screen was made for
  bool m_sweepDone = false;
  quint64 m_curveSeq = 0;  ///< the plan whose k curve is drawn

  QLabel* m_dbLabel;
  QComboBox* m_netSource;
  QComboBox* m_zoo;
  QLineEdit* m_input;
  QLineEdit* m_classes;
  QLabel* m_netLabel;
  QComboBox* m_policy;
  QComboBox* m_mode;
  QCheckBox* m_autoK;
  QSpinBox* m_k;
  QSpinBox* m_gpus;
  QLineEdit* m_link;
  QDoubleSpinBox* m_epochs;
  QSpinBox* m_datasetSize;
  QSlider* m_slider;
  QLineEdit* m_budgetEntry;
  QLabel* m_budgetRange;
  QLabel* m_status;
  QString m_openNote;  ///< said once the planner for an opened database is ready

  bool m_headless = false;
  bool m_requestGiven = false;  ///< --budget or --batch: kept when the database opens
  std::int64_t m_budget = std::int64_t{256} << 20;
  std::int64_t m_minBudget = 1, m_maxBudget = std::int64_t{80} << 30;
  QString m_netFile;   ///< the network JSON planned, when one is
  QString m_onnxFile;  ///< the ONNX model planned, when one is
  std::optional<PlanOutcome> m_shown;
  int m_selected = -1;
  bool m_selecting = false;
  QString m_pendingSelect;
  /// Without a run database: the analyzer's view of a zoo or file network.
  std::shared_ptr<const Network> m_analysisNet;
  std::unique_ptr<NetworkAnalysis> m_analysis;
};

}  // namespace swapscope::gui
