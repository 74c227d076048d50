// SPDX-License-Identifier: MIT
/// @brief What `profile` and `run --db` say about a database they replace: where the run is
/// recorded while it runs, and where it is when it did not replace the earlier file.
#pragma once

#include <iostream>
#include <ostream>
#include <string>

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

}  // namespace swapscope::cli
