// SPDX-License-Identifier: MIT
// The Timeline's data and view against the sample runs' own rows, counted with SQL.
#include <qcustomplot.h>
#include <sqlite3.h>
#include <QComboBox>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include "common/error.h"
#include "sample_runs.h"
#include "store/chrome_trace.h"
#include "store/run_db.h"
#include "views/streams_view.h"
#include "views/timeline_data.h"
#include "views/timeline_view.h"

namespace swapscope {
namespace {

const std::string kFmnist = swapscope::testing::fmnistRun();
const std::string kResnet = swapscope::testing::resnet56Run();

/// One integer a query on the file returns, read with SQLite itself (not the engine's reader).
std::int64_t sqlCount(const std::string& path, const std::string& query) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query.c_str(), -1, &st, nullptr), SQLITE_OK) << query;
  std::int64_t n = -1;
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

std::string where(std::int64_t k, int iteration) {
  return " WHERE k = " + std::to_string(k) + " AND iteration = " + std::to_string(iteration);
}

TEST(TimelineData, EventsAreTheIterationsStepAndTransferRows) {
  const store::RunData run = store::RunReader(kResnet).load();
  for (const auto& [k, iteration] : {std::pair<std::int64_t, int>{128, 0}, {16, 4}, {85, 2}}) {
    SCOPED_TRACE("k = " + std::to_string(k) + ", iteration " + std::to_string(iteration));
    const TimelineData d = makeTimelineData(run, k, iteration);
    const auto steps = sqlCount(kResnet, "SELECT count(*) FROM samples" + where(k, iteration));
    const auto transfers =
        sqlCount(kResnet, "SELECT count(*) FROM transfers" + where(k, iteration));
    const auto stalled = sqlCount(
        kResnet, "SELECT count(*) FROM samples" + where(k, iteration) + " AND stall_ns > 0");
    const auto offloads = sqlCount(
        kResnet, "SELECT count(*) FROM transfers" + where(k, iteration) + " AND kind = 'offload'");
    const auto prefetches = sqlCount(
        kResnet, "SELECT count(*) FROM transfers" + where(k, iteration) + " AND kind = 'prefetch'");
    const auto poolRows = sqlCount(kResnet, "SELECT count(*) FROM memory" + where(k, iteration));
    const auto duration =
        sqlCount(kResnet, "SELECT duration_ns FROM iterations" + where(k, iteration));
    const auto stallNs =
        sqlCount(kResnet, "SELECT sum(stall_ns) FROM samples" + where(k, iteration));
    ASSERT_GT(steps, 0);
    EXPECT_EQ(static_cast<std::int64_t>(d.step_rows), steps);
    EXPECT_EQ(static_cast<std::int64_t>(d.transfer_rows), transfers);
    EXPECT_EQ(static_cast<std::int64_t>(d.lanes.bars.size()), steps + transfers);
    EXPECT_EQ(static_cast<std::int64_t>(d.lanes.stalls.size()), stalled);
    EXPECT_EQ(d.lanes.swapTransfers(), offloads + prefetches);
    EXPECT_EQ(static_cast<std::int64_t>(d.pool.size()), poolRows);
    EXPECT_DOUBLE_EQ(d.lanes.t_iter, static_cast<double>(duration) * 1e-9);
    EXPECT_NEAR(d.lanes.total_stall, static_cast<double>(stallNs) * 1e-9, 1e-12);
    // Times are from the iteration's start: every bar inside it, the lanes in time order.
    for (std::size_t i = 0; i < d.lanes.bars.size(); ++i) {
      const StreamBar& b = d.lanes.bars[i];
      EXPECT_GE(b.start, 0);
      EXPECT_LE(b.start, b.finish);
      if (i > 0 && d.lanes.bars[i - 1].lane == b.lane) {
        EXPECT_LE(d.lanes.bars[i - 1].start, b.start);
      }
    }
    for (const StallMarker& s : d.lanes.stalls)
      EXPECT_GT(s.seconds(), 0);
  }
}

// Files written before each pass's row of a sub-batched iteration held its own stall give every
// pass's row of a step the step's stall summed over the passes, which lies before the step's last
// pass only. The Timeline lays it as `swapscope trace` does (store::stallSpans): cut at the
// iteration's start before an earlier pass, never before the iteration, and the iteration's stall
// is its recorded one, not S times it.
TEST(TimelineData, AnOlderSubBatchedFilesSummedStallIsCutAtTheIterationsStart) {
  store::RunData run;
  run.path = "summed.swapdb";
  run.network.name = "net";
  // k = 8 in two passes from 1000 ns: step 1 at 1005 and 1040, each row with the step's 30 ns.
  run.iterations = {{8, 0, 1000, 900, 1.0, 30, 0, 0, 0}};
  run.samples = {{8, 0, 1, 0, store::Direction::Forward, 10, 1005, 20, 30},
                 {8, 0, 1, 0, store::Direction::Forward, 10, 1040, 20, 30}};
  const TimelineData d = makeTimelineData(run, 8, 0);
  ASSERT_EQ(d.lanes.stalls.size(), 2u);
  // Before the first pass: 1000 .. 1005, cut at the iteration's start; before the second:
  // 1010 .. 1040, all of it.
  EXPECT_NEAR(d.lanes.stalls[0].start, 0.0, 1e-15);
  EXPECT_NEAR(d.lanes.stalls[0].end, 5e-9, 1e-15);
  EXPECT_NEAR(d.lanes.stalls[1].start, 10e-9, 1e-15);
  EXPECT_NEAR(d.lanes.stalls[1].end, 40e-9, 1e-15);
  EXPECT_NEAR(d.lanes.total_stall, 30e-9, 1e-15);
  // The trace's stall slices are the same spans.
  const auto trace = store::chromeTrace(run, 8, 0);
  double traced = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("name", "") == "stall") traced += e["dur"].get<double>() * 1e-6;  // from us
  }
  double drawn = 0;
  for (const StallMarker& m : d.lanes.stalls)
    drawn += m.seconds();
  EXPECT_NEAR(drawn, traced, 1e-15);
}

TEST(TimelineData, AnUnrecordedIterationIsRefusedWithTheRecordedKs) {
  const store::RunData run = store::RunReader(kFmnist).load();
  EXPECT_EQ(recordedBatches(run), (std::vector<std::int64_t>{12, 24, 47, 63, 94}));
  EXPECT_EQ(recordedIterations(run, 24), 5);
  try {
    makeTimelineData(run, 13, 0);
    ADD_FAILURE() << "k = 13 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("recorded k: 12, 24, 47, 63, 94"), std::string::npos);
  }
}

TEST(TimelineView, AFirstIterationThatIsRefusedIsSaidOnce) {
  // The largest k's iteration 0 lost its row: opening the file shows the boxes and says why the
  // iteration cannot be drawn, once.
  store::RunData damaged = store::RunReader(kFmnist).load();
  std::erase_if(damaged.iterations,
                [](const store::IterationRow& r) { return r.k == 94 && r.iteration == 0; });
  TimelineView view;
  QSignalSpy failed(&view, &TimelineView::failed);
  view.setRuns({std::make_shared<const store::RunData>(std::move(damaged))});
  ASSERT_EQ(failed.count(), 1);
  EXPECT_NE(failed.front().front().toString().indexOf("holds no iteration 0 at k = 94"), -1);
  EXPECT_EQ(view.batchBox()->currentText(), "94");
}

TEST(TimelineView, SwitchingKAndIterationRedrawsThatIterationsRows) {
  auto run = std::make_shared<const store::RunData>(store::RunReader(kFmnist).load());
  TimelineView view;
  view.resize(900, 600);
  view.show();
  view.setRuns({run});
  // The largest k and iteration 0 first, as `swapscope trace`.
  EXPECT_EQ(view.data().k, 94);
  EXPECT_EQ(view.data().iteration, 0);
  EXPECT_EQ(view.batchBox()->count(), 5);
  EXPECT_EQ(view.iterationBox()->count(), 5);

  view.batchBox()->setCurrentIndex(view.batchBox()->findText("24"));  // as a user picks it
  EXPECT_EQ(view.data().k, 24);
  EXPECT_EQ(view.data().iteration, 0);
  view.iterationBox()->setCurrentIndex(3);
  EXPECT_EQ(view.data().k, 24);
  EXPECT_EQ(view.data().iteration, 3);
  view.lanes()->plot()->replot();  // the counts are of what a replot drew
  EXPECT_EQ(view.lanes()->stallMarkerCount(),
            sqlCount(kFmnist, "SELECT count(*) FROM samples" + where(24, 3) + " AND stall_ns > 0"));
  EXPECT_EQ(view.lanes()->transferBarCount(),
            sqlCount(kFmnist, "SELECT count(*) FROM transfers" + where(24, 3) +
                                  " AND kind IN ('offload', 'prefetch')"));
  // The pool's rows, and one more point at the iteration's end when the last row is before it.
  EXPECT_EQ(view.poolPlot()->graph(0)->dataCount(),
            sqlCount(kFmnist,
                     "SELECT count(*) + (max(m.time_ns) < i.start_ns + i.duration_ns) FROM memory "
                     "m, iterations i WHERE m.k = 24 AND m.iteration = 3 AND i.k = 24 AND "
                     "i.iteration = 3"));

  // An iteration not recorded is refused and what is shown stays.
  EXPECT_THROW(view.select(0, 24, 7), Error);
  EXPECT_EQ(view.data().iteration, 3);
  view.select(0, 63, 1);
  EXPECT_EQ(view.batchBox()->currentText(), "63");
  EXPECT_EQ(view.iterationBox()->currentText(), "1");
}

}  // namespace
}  // namespace swapscope
