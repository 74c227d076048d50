// SPDX-License-Identifier: MIT
/// @brief Replacing a run database without a moment where neither run is kept: a run that
/// replaces an existing file is recorded under a sibling name, and moved over the file with
/// rename(2) only once it is complete and one self-contained file (docs/run-database.md,
/// "Replacing a database").
#pragma once

#include <string>
#include <vector>

namespace swapscope::store {

/// The sibling name a run that replaces `target` is recorded under: `NAME.recording.swapdb` for
/// `NAME.swapdb` (`NAME.recording-2.swapdb`, `-3`, ... where that exists, such as the recording of
/// a run that was killed), created empty and exclusively so that no two runs share it and no
/// earlier recording is overwritten. Throws Error(BadInput) naming the process when a live run
/// is already recording a replacement of `target`.
/// The other recording names that exist (earlier recordings: runs that did not replace
/// `target`, each a database of its own), before and after the one claimed, are added to
/// `earlier` where given.
std::string claimRecordingName(const std::string& target,
                               std::vector<std::string>* earlier = nullptr);

/// Moves the finished recording `recording` over `target` with rename(2). First folds a `-wal`
/// or hot `-journal` of `target` into it (SQLite would otherwise apply the old file's side file
/// to the new one). Returns the empty string once `target` is the recording; otherwise why
/// `target` was left as it was, the recording still in place.
std::string replaceWithRecording(const std::string& recording, const std::string& target);

}  // namespace swapscope::store
