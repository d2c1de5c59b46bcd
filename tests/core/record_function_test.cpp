// RecordFunction and range stats: live range timings reach the event handlers as "range/<name>" Stats.
#include <livemon/record_function.h>

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <livemon/event_handler.h>
#include <livemon/profiler.h>

namespace livemon {
namespace {

// The values of every "range/..." key of the Stat events logged while it lives.
class RangeStatEvents {
 public:
  RangeStatEvents()
      : handle_(registerEventHandler([this](const Event& event) {
          if (event.name != kStatEventName) return;
          std::lock_guard lock(mutex_);
          for (const auto& [key, value] : event.data) {
            if (key.starts_with(kRangeStatPrefix)) values_[key].push_back(std::get<double>(value));
          }
          arrived_.notify_all();
        })) {}
  ~RangeStatEvents() { unregisterEventHandler(handle_); }

  std::map<std::string, std::vector<double>> values() {
    std::lock_guard lock(mutex_);
    return values_;
  }

  // Waits until `key` has had `windows` values; the deadline only catches a window that never comes.
  bool waitForWindows(const std::string& key, std::size_t windows) {
    std::unique_lock lock(mutex_);
    return arrived_.wait_for(lock, std::chrono::seconds(30), [&] { return values_[key].size() >= windows; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::string, std::vector<double>> values_;
  EventHandlerHandle handle_;
};

double total(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum;
}

TEST(RecordFunction, IsInactiveWhenNothingRecords) {
  ASSERT_FALSE(rangeStatsEnabled());
  RecordFunction range("idle");
  EXPECT_FALSE(range.active());
}

TEST(RangeStats, TimeEveryRangeIntoItsStatInMilliseconds) {
  RangeStatEvents events;
  setRangeStatsEnabled(true);
  EXPECT_TRUE(rangeStatsEnabled());
  for (int i = 0; i < 3; ++i) {
    LIVEMON_RECORD_FUNCTION("forward");
    RecordFunction backward(std::string("backward"));
    EXPECT_TRUE(backward.active());
  }
  {
    LIVEMON_RECORD_FUNCTION("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // what is measured
  }
  setRangeStatsEnabled(false);
  { LIVEMON_RECORD_FUNCTION("forward"); }  // off again: not counted
  flushRangeStats();
  auto values = events.values();
  EXPECT_EQ(total(values["range/forward.count"]), 3);
  EXPECT_EQ(total(values["range/backward.count"]), 3);
  for (const char* key : {"range/forward.mean", "range/forward.p50", "range/forward.p99", "range/forward.max"}) {
    EXPECT_FALSE(values[key].empty()) << key;
  }
  ASSERT_EQ(values["range/sleep.max"].size(), 1u);
  EXPECT_GE(values["range/sleep.max"][0], 10.0);
  EXPECT_LT(values["range/sleep.max"][0], 10'000.0) << "milliseconds, not nanoseconds";
}

TEST(RangeStats, AreOnWhileAProfilerRunsUnlessItSaysOtherwise) {
  Profiler withStats;
  withStats.start();
  EXPECT_TRUE(rangeStatsEnabled());
  withStats.stop();
  EXPECT_FALSE(rangeStatsEnabled());

  ProfilerOptions options;
  options.rangeStats = false;
  Profiler withoutStats(options);
  withoutStats.start();
  EXPECT_FALSE(rangeStatsEnabled());
}

TEST(RangeStats, CountRangesOfConcurrentThreads) {
  RangeStatEvents events;
  setRangeStatsEnabled(true);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 1000; ++i) {
        LIVEMON_RECORD_FUNCTION("concurrent");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  setRangeStatsEnabled(false);
  flushRangeStats();
  EXPECT_EQ(total(events.values()["range/concurrent.count"]), 4000);
}

TEST(RangeStats, ANewWindowAppliesToTheRangeStatsAlreadyCreated) {
  RangeStatEvents events;
  setRangeStatsEnabled(true, std::chrono::hours(1));
  { LIVEMON_RECORD_FUNCTION("resized"); }
  EXPECT_TRUE(events.values()["range/resized.count"].empty()) << "an hour's window is still open";

  setRangeStatsEnabled(true, std::chrono::hours(1));  // the same window: nothing changes
  EXPECT_TRUE(events.values()["range/resized.count"].empty());

  // Another window: the hour's window is logged now, and the next ones are 20 ms long, so they
  // close on time without any flush (with the hour kept, the deadline would pass first).
  setRangeStatsEnabled(true, std::chrono::milliseconds(20));
  EXPECT_EQ(events.values()["range/resized.count"], std::vector<double>{1});
  { LIVEMON_RECORD_FUNCTION("resized"); }
  { LIVEMON_RECORD_FUNCTION("resized"); }
  ASSERT_TRUE(events.waitForWindows("range/resized.count", 2));
  // A name seen for the first time gets the new window as well.
  { LIVEMON_RECORD_FUNCTION("created.after"); }
  EXPECT_TRUE(events.waitForWindows("range/created.after.count", 1));
  EXPECT_EQ(total(events.values()["range/resized.count"]), 3);

  setRangeStatsEnabled(false, std::chrono::milliseconds(5));  // off: the window stays as it is
  setRangeStatsEnabled(true, std::chrono::milliseconds(20));
  { LIVEMON_RECORD_FUNCTION("resized"); }
  EXPECT_TRUE(events.waitForWindows("range/resized.count", 3));
  setRangeStatsEnabled(true);  // back to the default 1 s for the tests after this one
  setRangeStatsEnabled(false);
}

TEST(RangeStats, AProfilerStopLogsTheWindowsItsTimingOpened) {
  RangeStatEvents events;
  setRangeStatsEnabled(true, std::chrono::hours(1));  // windows that would stay open all along
  setRangeStatsEnabled(false);
  Profiler profiler;
  profiler.start();
  { LIVEMON_RECORD_FUNCTION("profiled"); }
  EXPECT_TRUE(events.values()["range/profiled.count"].empty());
  profiler.stop();
  EXPECT_EQ(events.values()["range/profiled.count"], std::vector<double>{1});
  setRangeStatsEnabled(true);  // back to the default 1 s
  setRangeStatsEnabled(false);
}

TEST(RangeStats, RejectAWindowBelowOneMillisecond) {
  EXPECT_THROW(setRangeStatsEnabled(true, std::chrono::milliseconds(0)), std::invalid_argument);
  EXPECT_FALSE(rangeStatsEnabled());
}

TEST(RecordFunction, AForkedChildRecordsWithoutTheParentsProfiler) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads after a multi-threaded fork; the other builds test this";
#endif
  Profiler profiler;
  profiler.start();
  // The system clock's fork hooks are installed by its first user; let that be this thread.
  { LIVEMON_RECORD_FUNCTION("busy"); }
  // Keep the registry busy on another thread while forking.
  std::atomic<bool> done{false};
  std::thread busy([&] {
    while (!done.load()) {
      LIVEMON_RECORD_FUNCTION("busy");
    }
  });
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    { LIVEMON_RECORD_FUNCTION("child"); }
    std::vector<Trace> traces;
    ProfilerOptions options;
    options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
    options.rangeStats = false;  // a Stat would start a window thread, which ThreadSanitizer forbids here
    Profiler own(options);
    own.start();  // the parent's profiler is not running here
    { LIVEMON_RECORD_FUNCTION("child"); }
    own.stop();
    const bool ok = traces.size() == 1 && traces[0].ranges.size() == 1 && traces[0].ranges[0].name == "child";
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  done = true;
  busy.join();
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace livemon
