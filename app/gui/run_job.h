// SPDX-License-Identifier: MIT
/// @brief A profile or a plan's run on a worker thread, for the app's "Profile…" and "Run plan…":
/// the engine's own loops (collect::runProfile, collect::runPlan) write the run database, with
/// progress after each iteration and a cancel that stops after the current one. The GUI thread
/// never waits on the engine: progress() and finished() arrive on it as queued calls.
#pragma once

#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "collectors/profiler.h"
#include "graph/network.h"
#include "store/run_db.h"

namespace swapscope::gui {

struct ProfileJob {
  std::shared_ptr<const Network> network;
  std::string device = "cpu";  ///< rt::openDevice's spec: "cpu", "cuda", "cuda:1"
  collect::ProfileConfig config;
  std::string db;      ///< the run database to create
  bool force = false;  ///< replace an existing database (never one a live process writes)
  /// What the database records as its command line: the CLI command that does the same.
  std::string command_line;
};

struct PlanJob {
  std::string plan;                        ///< the plan file
  std::shared_ptr<const Network> network;  ///< null: the one in the plan's source_db
  std::string device = "cpu";
  collect::PlanRunConfig config;
  std::string db;
  bool force = false;
  std::string command_line;
};

/// How a job ended.
struct JobOutcome {
  QString db;  ///< the database the run is in (the recording name if not moved)
  /// Where the run is and that the earlier database is kept, when it replaced none
  /// (store::RunWriter::keptNote); empty otherwise.
  QString kept;
  bool created = false;  ///< whether it was created (false: refused before anything ran)
  store::RunStatus status = store::RunStatus::Failed;  ///< complete, incomplete or failed
  /// The database's status message (the count of an interrupted run), or the error's.
  QString message;
  /// A plan run on another device than the one its model was fitted on: what to tell the user
  /// (collect::planDeviceMismatch); empty otherwise.
  QString warning;
};

class RunJob : public QObject {
  Q_OBJECT
 public:
  explicit RunJob(QObject* parent = nullptr);
  /// Cancels a job still running and waits for its current iteration to end.
  ~RunJob() override;

  /// Starts a job; Error(Runtime) while another runs. Every error of the job itself, bad input
  /// included, ends it with finished() and status failed.
  void startProfile(ProfileJob job);
  void startPlan(PlanJob job);
  /// Asks the job to stop after its current iteration; finished() follows (incomplete).
  void cancel();
  bool running() const { return m_running; }
  /// Whether cancel() was called since the job started.
  bool cancelRequested() const { return m_cancel.load(); }

 signals:
  void progress(const swapscope::collect::RunProgress& progress);
  void finished(const swapscope::gui::JobOutcome& outcome);

 private:
  void start(
      const std::string& db,
      std::function<void(const collect::RunProgressFn&, const std::atomic<bool>*, JobOutcome&)>
          work);

  std::thread m_thread;
  std::atomic<bool> m_cancel{false};
  bool m_running = false;
};

}  // namespace swapscope::gui

Q_DECLARE_METATYPE(swapscope::collect::RunProgress)
Q_DECLARE_METATYPE(swapscope::gui::JobOutcome)
