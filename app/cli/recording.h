// SPDX-License-Identifier: MIT
/// @brief What `profile` and `run --db` say about a database they replace: where the run is
/// recorded while it runs, and where it is when it did not replace the earlier file.
#pragma once

#include <iostream>
#include <ostream>
#include <string>

#include "commands.h"
#include "common/error.h"
#include "store/run_db.h"

namespace swapscope::cli {

/// Where the run is recorded and what becomes of the file it replaces, at once (a kill leaves
/// nothing else to say it): on `out` in text mode, on standard error with --json.
inline void announceRecording(const store::RunWriter& db, bool json, std::ostream& out) {
  if (!db.replacing()) return;
  std::ostream& to = json ? std::cerr : out;
  to << db.recordingNote() << '\n';
  to.flush();
}

/// Runs `work` (which finishes `db`); an Error it throws gets where the run and the earlier
/// file are, when the run replaced nothing.
template <class Work>
auto runKeepingNote(const store::RunWriter& db, Work&& work) {
  try {
    return work();
  } catch (const Error& e) {
    const std::string kept = db.keptNote();
    if (kept.empty()) throw;
    throw Error(e.kind(), std::string(e.what()) + "; " + kept);
  }
}

/// The exit code of a run or profile that ended (interrupted or not): 1 where it was interrupted,
/// or where it completed but did not replace the database --force named (`kept`, keptNote():
/// the earlier run is still under that name, and a script that went on would read it as this
/// one). The latter also goes to standard error as an error, the report having been printed.
inline int finishedExit(bool cancelled, const std::string& kept, const char* verb,
                        std::ostream& err) {
  if (cancelled) return kExitFailure;
  if (kept.empty()) return kExitOk;
  err << "swapscope " << verb
      << ": error: the run completed but did not replace the database: " << kept << '\n';
  return kExitFailure;
}

}  // namespace swapscope::cli
