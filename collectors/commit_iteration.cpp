// SPDX-License-Identifier: MIT
#include "collectors/commit_iteration.h"

#include <utility>
#include <vector>

namespace swapscope::collect {

std::shared_ptr<const store::IterationRows> commitIteration(store::RunWriter& db,
                                                            const rt::IterationRecord& rec,
                                                            RowContext ctx, bool share) {
  if (!share) {
    db.addIteration(iterationRows(rec, ctx));
    return nullptr;
  }
  const bool keepMemory = ctx.memory;
  ctx.memory = true;
  auto rows = std::make_shared<store::IterationRows>(iterationRows(rec, ctx));
  if (keepMemory) {
    db.addIteration(*rows);
  } else {
    std::vector<store::MemoryRow> memory = std::move(rows->memory);
    rows->memory.clear();
    db.addIteration(*rows);
    rows->memory = std::move(memory);
  }
  return rows;
}

}  // namespace swapscope::collect
