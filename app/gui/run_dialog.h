// SPDX-License-Identifier: MIT
/// @brief The app's "Run" menu: Profile… (network, budget, device, iterations, max batch, output
/// database) and Run plan… (the plan shown, for N iterations, into a new database). Both run on a
/// worker thread (RunJob) behind a progress dialog with the stage, k, iteration and time left,
/// and Cancel, which stops after the current iteration and leaves a readable database marked
/// incomplete. A failure shows the engine's message (the database is marked failed). A finished
/// profile is opened in the window, ready to plan. Closing the window during a run asks first,
/// then cancels and closes once the iteration has ended.
#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <string>

#include "gui/run_job.h"

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

  /// Starts a profile; the window opens its database when it completes.
  void startProfile(ProfileJob job);
  /// Runs the plan shown on `device` for `iterations` measured iterations (after `warmup`) into
  /// `db`. Error(BadInput) when no plan is shown.
  void startPlanShown(const QString& db, int iterations, int warmup, bool force,
                      const std::string& device = "cpu");
  RunJob* job() const { return m_job; }
  QProgressDialog* progressDialog() const { return m_progress; }
  /// Asked when the window is closed during a run: true cancels the run and closes the window
  /// once the current iteration has ended. By default a question box.
  std::function<bool()> confirmClose;

 signals:
  /// A job ended (after the window was asked to open a completed profile).
  void jobFinished(const swapscope::gui::JobOutcome& outcome);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  enum class Kind { Profile, Plan };
  void showProgress(const QString& title, Kind kind);
  void onProgress(const collect::RunProgress& p);
  void onFinished(const JobOutcome& outcome);
  void askProfile();
  void askRunPlan();

  MainWindow* m_window;
  RunJob* m_job;
  QProgressDialog* m_progress = nullptr;
  Kind m_kind = Kind::Profile;
  QString m_planFile;  ///< the temporary copy of the plan shown that a plan job runs
  bool m_closeWhenDone = false;
};

}  // namespace swapscope::gui
