// The clock ranges are timed with, inside a process: its calibration is refined by the ranges
// themselves, and traces collected meanwhile keep their ranges ordered and nested.
#include <gtest/gtest.h>

#include <livemon/profiler.h>
#include <livemon/record_function.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "range_registry.h"

namespace {

using namespace std::chrono_literals;
using livemon::Profiler;
using livemon::ProfilerOptions;
using livemon::RecordFunction;
using livemon::Schedule;
using livemon::Trace;
using livemon::TraceRange;
using livemon::detail::rangeClockState;

TEST(RangeClockTest, RangeStatsAloneKeepRefiningTheCalibration) {
  livemon::setRangeStatsEnabled(true, 1h);
  if (!rangeClockState().counter) {
    livemon::setRangeStatsEnabled(false);
    GTEST_SKIP() << "ranges are timed with steady_clock here: there is no calibration to refine";
  }
  // No Profiler runs: before, only a collection refined the rate, so a first rate measured
  // while the thread was preempted stayed wrong for the life of the process.
  const int64_t before = rangeClockState().refines;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (rangeClockState().refines < before + 2 && std::chrono::steady_clock::now() < deadline) {
    LIVEMON_RECORD_FUNCTION("range_clock_test.work");
    std::this_thread::sleep_for(1ms);  // the work the range times
  }
  livemon::setRangeStatsEnabled(false);
  EXPECT_GE(rangeClockState().refines, before + 2);
  EXPECT_LT(rangeClockState().errorBound, 1e-3);
}

// Checks that each thread's ranges in `trace` nest: a range at depth d lies inside the range at
// depth d - 1 before it (when the trace holds it: its parent may have opened while nothing was
// timed, or not have closed by the collection), and a range starts after its predecessors at the
// same depth have ended. A range may start before the trace (it was open when recording
// started) but not end before it.
void expectOrderedAndNested(const Trace& trace) {
  std::map<uint64_t, std::vector<const TraceRange*>> byThread;
  for (const TraceRange& range : trace.ranges) {
    EXPECT_LE(trace.startNs, range.endNs);
    EXPECT_LE(range.startNs, range.endNs);
    EXPECT_LE(range.endNs, trace.endNs);
    byThread[range.threadId].push_back(&range);
  }
  for (const auto& [thread, ranges] : byThread) {
    std::vector<const TraceRange*> open;  // the enclosing ranges, outermost first
    for (const TraceRange* range : ranges) {
      while (!open.empty() && open.back()->depth >= range->depth) {
        EXPECT_LE(open.back()->endNs, range->startNs) << "siblings overlap: " << range->name;
        open.pop_back();
      }
      // Over before this one started: not its parent, which was still open at the collection.
      while (!open.empty() && open.back()->endNs < range->startNs) open.pop_back();
      if (range->depth > 0 && !open.empty() && open.back()->depth == range->depth - 1) {
        EXPECT_LE(open.back()->startNs, range->startNs) << range->name;
        EXPECT_GE(open.back()->endNs, range->endNs) << range->name;
      }
      open.push_back(range);
    }
  }
}

TEST(RangeClockTest, TracesStayOrderedAndNestedWhileOtherThreadsRefineTheClock) {
  std::vector<Trace> traces;
  ProfilerOptions options;
  options.schedule = Schedule(0, 0, 1);  // every step collects
  options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
  Profiler profiler(options);
  profiler.start();

  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        LIVEMON_RECORD_FUNCTION("range_clock_test.outer");
        for (int i = 0; i < 3; ++i) {
          LIVEMON_RECORD_FUNCTION("range_clock_test.inner");
          std::this_thread::sleep_for(200us);  // the work the range times
        }
      }
    });
  }
  const int64_t before = rangeClockState().refines;
  // Until the workers' range ends have refined the clock a few times while traces were taken.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  int steps = 0;
  while ((steps < 20 || rangeClockState().refines < before + 3) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);  // a training step
    profiler.step();
    ++steps;
  }
  stop = true;
  for (std::thread& worker : workers) worker.join();
  profiler.stop();

  ASSERT_FALSE(traces.empty());
  for (const Trace& trace : traces) expectOrderedAndNested(trace);
  if (rangeClockState().counter) {
    EXPECT_GE(rangeClockState().refines, before + 3);
  }
}

}  // namespace
