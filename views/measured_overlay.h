// SPDX-License-Identifier: MIT
/// @brief A run's measurement of the plan shown, as the Memory, Streams and Summary views draw
/// it over every plan they are given: one value, made once when the plan shown comes to be (or
/// stops being) the plan the run ran, and shared by the three views by pointer, so that a new
/// plan of a budget drag neither copies nor rebuilds it.
#pragma once

#include <memory>
#include <optional>

#include "views/memory_chart_data.h"
#include "views/streams_data.h"
#include "views/summary_data.h"

namespace swapscope {

struct MeasuredOverlay {
  /// The Memory view's measured pool bytes (addMeasuredMemory's series); drawn over a plan's
  /// chart of as many steps.
  std::optional<MemorySeries> memory;
  /// The Streams view's measured iteration: only the measured_* fields (addMeasuredStreams)
  /// are read; hasMeasured() false draws none.
  StreamsData streams;
  /// Rows, warnings and the measurement added to every plan's summary (addMeasuredSummary, or
  /// why the measurement is not shown).
  SummaryData summary;
};

/// The measured iteration `overlay` holds, or an empty one (hasMeasured() false) without one.
inline const StreamsData& measuredStreams(const MeasuredOverlay* overlay) {
  static const StreamsData none;
  return overlay ? overlay->streams : none;
}

}  // namespace swapscope
