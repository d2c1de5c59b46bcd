// Times a known piece of work two ways in a fresh process, for range_timing_process_test: as a
// range (its "range/<name>" Stat) and with steady_clock around the same range. A fresh process
// calibrates the range clock, so each run measures a calibration made under whatever load the
// test puts on the machine.
//
//   range_timing_probe SLEEP_MS COUNT [BUSY_THREADS]
// runs BUSY_THREADS busy loops of its own while it works (so that its calibration competes for
// the cores with its own threads, as a training job's does), and prints "count C range_ms R steady_ms S clock counter|steady ns_per_tick N error_bound E".
#include <livemon/event.h>
#include <livemon/event_handler.h>
#include <livemon/record_function.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "range_registry.h"

namespace {

// The sums over every window of the range's Stat.
struct RangeTotals {
  std::mutex mutex;
  double count = 0;
  double totalMs = 0;
};

double number(const livemon::Event& event, const std::string& key) {
  const auto found = event.data.find(key);
  if (found == event.data.end()) return 0;
  const double* value = std::get_if<double>(&found->second);
  return value != nullptr ? *value : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: range_timing_probe SLEEP_MS COUNT [BUSY_THREADS]\n");
    return 2;
  }
  const int sleepMs = std::atoi(argv[1]);
  const int count = std::atoi(argv[2]);
  const int busyThreads = argc == 4 ? std::atoi(argv[3]) : 0;
  if (sleepMs < 1 || count < 1 || busyThreads < 0) {
    std::fprintf(stderr, "range_timing_probe: SLEEP_MS and COUNT must be positive, BUSY_THREADS not negative\n");
    return 2;
  }
  std::atomic<bool> done{false};
  std::vector<std::thread> busy;
  for (int i = 0; i < busyThreads; ++i) {
    busy.emplace_back([&done] {
      while (!done.load(std::memory_order_relaxed)) {
      }
    });
  }

  RangeTotals totals;
  livemon::registerEventHandler([&totals](const livemon::Event& event) {
    if (event.name != livemon::kStatEventName) return;
    const double windowCount = number(event, "range/probe.work.count");
    std::lock_guard lock(totals.mutex);
    totals.count += windowCount;
    totals.totalMs += windowCount * number(event, "range/probe.work.mean");
  });

  // The first use of ranges calibrates their clock, here under the test's load.
  livemon::setRangeStatsEnabled(true, std::chrono::hours(1));
  // The range's first end creates its Stat and starts the window thread, tens of milliseconds
  // under a sanitizer on a loaded machine, outside the range but inside the steady_clock span.
  { LIVEMON_RECORD_FUNCTION("probe.work"); }
  livemon::flushRangeStats();
  {
    std::lock_guard lock(totals.mutex);
    totals.count = 0;
    totals.totalMs = 0;
  }
  double steadyMs = 0;
  for (int i = 0; i < count; ++i) {
    const auto before = std::chrono::steady_clock::now();
    {
      LIVEMON_RECORD_FUNCTION("probe.work");
      std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));  // the work timed
    }
    steadyMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count();
  }
  done = true;
  for (std::thread& thread : busy) thread.join();
  livemon::setRangeStatsEnabled(false);
  livemon::flushRangeStats();  // logs the one window, on this thread

  const livemon::detail::RangeClockState clock = livemon::detail::rangeClockState();
  std::lock_guard lock(totals.mutex);
  std::printf("count %.0f range_ms %.6f steady_ms %.6f clock %s ns_per_tick %.9f error_bound %.3g\n", totals.count,
              totals.totalMs, steadyMs, clock.counter ? "counter" : "steady", clock.nsPerTick, clock.errorBound);
  return 0;
}
