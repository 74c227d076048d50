// SPDX-License-Identifier: MIT
#include "store/table_rows.h"

namespace swapscope::store {

[[noreturn]] void damaged(const std::string& path, const std::string& why) {
  throwBadInput("'" + path + "' is damaged: " + why);
}

Direction directionFromName(const TableRows& rows, int c, bool update) {
  const std::string s = rows.text(c);
  for (Direction v : {Direction::Forward, Direction::Backward, Direction::Update}) {
    if (s == directionName(v) && (update || v != Direction::Update)) return v;
  }
  rows.bad(c, "is " + quoteBounded(s) + (update ? ", not fwd, bwd or update" : ", not fwd or bwd"));
}

TransferKind transferKindFromName(const TableRows& rows, int c) {
  const std::string s = rows.text(c);
  for (TransferKind v : {TransferKind::Offload, TransferKind::Prefetch, TransferKind::Load,
                         TransferKind::Readback}) {
    if (s == transferKindName(v)) return v;
  }
  rows.bad(c, "is " + quoteBounded(s) + ", not offload, prefetch, load or readback");
}

}  // namespace swapscope::store
