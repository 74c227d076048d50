// SPDX-License-Identifier: MIT
/// @brief The app's "Run" menu: Profile… (network, budget, device, iterations, max batch, output
/// database) and Run plan… (the plan shown, for N iterations, into a new database). Both run on a
/// worker thread (RunJob) behind a progress dialog with the stage, k, iteration and time left,
/// and Cancel, which stops after the current iteration and leaves a readable database marked
/// incomplete, and a Run dock whose charts follow the committed iterations (LiveRunData). A
/// failure shows the engine's message (the database is marked failed). A finished profile is
/// opened in the window, ready to plan; a finished run of the plan is overlaid on the Memory,
/// Streams and Summary views (openMeasurement). Closing the window during a run asks first, then
/// cancels and closes once the iteration has ended.
#pragma once

#include <QObject>
#include <QString>
#include <QWidget>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "gui/live_run.h"
#include "gui/live_run_panel.h"
#include "gui/run_job.h"
#include "perfmodel/compare.h"
#include "store/plan_file.h"
#include "store/run_db.h"
#include "views/measured_overlay.h"

class QDockWidget;
class QMenu;
class QProgressDialog;

namespace swapscope::gui {

class MainWindow;

class RunController : public QObject {
  Q_OBJECT
 public:
  /// Adds the Run menu to `window`'s menu bar and watches its closing.
  explicit RunController(MainWindow* window);
  ~RunController() override;

  /// Starts a profile; the window opens its database when it completes. Error(BadInput) when
  /// the database is a file the window reads (MainWindow::inputs), whatever `job.force` says.
  void startProfile(ProfileJob job);
  /// Runs the plan shown on `device` for `iterations` measured iterations (after `warmup`) into
  /// `db`. Error(BadInput) when no plan is shown, or for `db` as startProfile.
  void startPlanShown(const QString& db, int iterations, int warmup, bool force,
                      const std::string& device = "cpu");
  RunJob* job() const { return m_job; }

  /// Reads the run database `path` (a run of a plan: Run plan..., or `swapscope run --plan --db`)
  /// on a worker thread and overlays its measurement on the Memory, Streams and Summary views
  /// while the plan shown is the plan it ran; otherwise the Summary says which plan that is. A
  /// database whose plan is shown in the window (opened to plan) is overlaid the same way.
  void openMeasurement(const QString& path);
  /// The run whose measurement is kept (null: none).
  std::shared_ptr<const store::RunData> measuredRun() const { return m_measuredRun; }
  /// Whether the views show the measurement over the plan shown.
  bool overlayShown() const { return m_overlayShown; }
  QProgressDialog* progressDialog() const { return m_progress; }
  /// The Run dock (null before the first job) and what its charts show.
  QDockWidget* runDock() const { return m_dock; }
  LiveRunPanel* livePanel() const { return m_panel; }
  const LiveRunData& liveData() const { return m_live; }
  /// Asked when the window is closed during a run: true cancels the run and closes the window
  /// once the current iteration has ended. By default a question box.
  std::function<bool()> confirmClose;

 signals:
  /// A job ended (after the window was asked to open a completed profile).
  void jobFinished(const swapscope::gui::JobOutcome& outcome);
  /// The views were brought up to date with the measurement for the plan shown.
  void measurementApplied();
  /// openMeasurement could not read the database: the reader's message.
  void measurementFailed(const QString& message);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  enum class Kind { Profile, Plan };
  /// Checks a job's database against the window's inputs (Error(BadInput) for one of them, a
  /// folder or a missing folder) and makes it one of them.
  void claimOutput(const std::string& db);
  void showProgress(const QString& title, Kind kind);
  void onProgress(const collect::RunProgress& p);
  void onFinished(const JobOutcome& outcome);
  void askProfile();
  void askRunPlan();
  void setMeasurement(std::shared_ptr<const store::RunData> run);
  /// Whether the plan shown is the plan the measured run ran.
  bool showsMeasuredPlan() const;
  /// Replaces the views' overlay with the measurement over the plan shown, or why it is not
  /// shown.
  void applyMeasurement();

  MainWindow* m_window;
  RunJob* m_job;
  QProgressDialog* m_progress = nullptr;
  QDockWidget* m_dock = nullptr;
  LiveRunPanel* m_panel = nullptr;
  LiveRunData m_live;
  Kind m_kind = Kind::Profile;
  QString m_planFile;  ///< the temporary copy of the plan shown that a plan job runs
  bool m_closeWhenDone = false;
  std::shared_ptr<const store::RunData> m_measuredRun;
  std::optional<perf::RunSide::Check> m_check;  ///< perf::planCheck of the run
  std::optional<store::PlanFile> m_measuredPlan;
  /// Whether the overlay the Memory, Streams and Summary views hold was made for the run's own
  /// plan (false also before any run is measured).
  bool m_overlayShown = false;
  quint64 m_measurementGeneration = 0;
};

}  // namespace swapscope::gui
