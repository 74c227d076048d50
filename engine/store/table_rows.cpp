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

FitScope fitScopeFromName(const TableRows& rows, int c) {
  const std::string s = rows.text(c);
  if (const std::optional<FitScope> v = fitScopeFromName(s)) return *v;
  rows.bad(c, "is " + quoteBounded(s) + ", not type, layer, pcie, dispatch or contention");
}

FitDirection fitDirectionFromName(const TableRows& rows, int c) {
  const std::string s = rows.text(c);
  if (const std::optional<FitDirection> v = fitDirectionFromName(s)) return *v;
  rows.bad(c, "is " + quoteBounded(s) + ", not fwd, bwd, update, h2d, d2h or -");
}

FitRowForm fitRowFormFromName(const TableRows& rows, int c) {
  const std::string s = rows.text(c);
  if (const std::optional<FitRowForm> v = fitRowFormFromName(s)) return *v;
  rows.bad(c, "is " + quoteBounded(s) +
                  ", not affine, saturating, loglog, mean-of-step-medians, proportional, line, "
                  "mean or median");
}

}  // namespace swapscope::store
