// Stats added to from several threads: each thread accumulates in a slot of its own, merged when
// the window closes (core/src/stat_slots.h). Every sample must appear in exactly one window,
// whatever the threads do meanwhile: exit mid-window, add while the window closes. Run under
// ThreadSanitizer by ./test.sh.
#include <livemon/event_handler.h>
#include <livemon/quantile_sketch.h>
#include <livemon/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <latch>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "event_recorder.h"

namespace livemon {
namespace {

using namespace std::chrono_literals;
using testing::EventRecorder;

constexpr int64_t kNoCap = std::numeric_limits<int64_t>::max();

double valueOf(const Event& e, const std::string& key) { return std::get<double>(e.data.at(key)); }

class StatThreadTest : public ::testing::Test {
 protected:
  ManualClock clock{std::chrono::steady_clock::time_point(10'000ms)};
  EventRecorder recorder;

  std::vector<Event> statEvents() const { return recorder.named(kStatEventName); }
};

TEST_F(StatThreadTest, SamplesOfAThreadThatExitedMidWindowAreLoggedOnce) {
  Stat stat("exited", {Aggregation::Count, Aggregation::Sum, Aggregation::Min, Aggregation::Max}, 1000ms, kNoCap,
            clock);
  std::thread([&] {
    for (int i = 1; i <= 100; ++i) stat.add(i);
  }).join();
  stat.add(1000);
  EXPECT_EQ(stat.count(), 101);
  clock.advance(1000ms);
  ASSERT_EQ(statEvents().size(), 1u);
  const Event first = statEvents()[0];
  EXPECT_EQ(valueOf(first, "exited.count"), 101.0);
  EXPECT_EQ(valueOf(first, "exited.sum"), 5050.0 + 1000.0);
  EXPECT_EQ(valueOf(first, "exited.min"), 1.0);
  EXPECT_EQ(valueOf(first, "exited.max"), 1000.0);
  // The exited thread's samples are not logged again with the next window's.
  stat.add(7);
  clock.advance(1000ms);
  ASSERT_EQ(statEvents().size(), 2u);
  EXPECT_EQ(valueOf(statEvents()[1], "exited.count"), 1.0);
  EXPECT_EQ(valueOf(statEvents()[1], "exited.sum"), 7.0);
}

TEST_F(StatThreadTest, AThreadThatExitsAloneStillHasItsWindowClosed) {
  Stat stat("alone", {Aggregation::Count}, 1000ms, kNoCap, clock);
  for (int round = 0; round < 3; ++round) {
    std::thread([&] { stat.add(1); }).join();
    clock.advance(1000ms);
    ASSERT_EQ(statEvents().size(), static_cast<std::size_t>(round + 1));
    EXPECT_EQ(valueOf(statEvents().back(), "alone.count"), 1.0);
  }
  std::thread([&] { stat.add(1); }).join();
  stat.flush();
  ASSERT_EQ(statEvents().size(), 4u);
  EXPECT_EQ(valueOf(statEvents().back(), "alone.count"), 1.0);
}

TEST_F(StatThreadTest, EveryAggregationMergesTheThreadsExactly) {
  const std::vector<Aggregation> all = {Aggregation::Count, Aggregation::Sum, Aggregation::Mean,  Aggregation::Min,
                                        Aggregation::Max,   Aggregation::Stddev, Aggregation::P50, Aggregation::P90,
                                        Aggregation::P99,   Aggregation::Value};
  Stat stat("merged", all, 1000ms, kNoCap, clock);
  // Four threads whose values lie far apart, so each slot's variance sums are centred on a
  // different first value: the merge must re-centre them.
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2500;
  std::vector<double> everything;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) everything.push_back(1e9 + t * 1000.0 + i % 50);
  }
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) stat.add(everything[static_cast<std::size_t>(t * kPerThread + i)]);
    });
  }
  for (auto& thread : threads) thread.join();
  stat.add(5.0);  // the last value, after every thread's
  everything.push_back(5.0);
  clock.advance(1000ms);
  ASSERT_EQ(statEvents().size(), 1u);
  const Event e = statEvents()[0];

  const double n = static_cast<double>(everything.size());
  double sum = 0;
  for (double v : everything) sum += v;
  const double mean = sum / n;
  double squares = 0;
  for (double v : everything) squares += (v - mean) * (v - mean);
  std::vector<double> sorted = everything;
  std::sort(sorted.begin(), sorted.end());
  auto exactQuantile = [&](double q) {
    return sorted[static_cast<std::size_t>(std::ceil(q * n)) - 1];
  };

  EXPECT_EQ(valueOf(e, "merged.count"), n);
  EXPECT_DOUBLE_EQ(valueOf(e, "merged.sum"), sum);
  EXPECT_DOUBLE_EQ(valueOf(e, "merged.mean"), mean);
  EXPECT_EQ(valueOf(e, "merged.min"), 5.0);
  EXPECT_EQ(valueOf(e, "merged.max"), 1e9 + 3049.0);
  EXPECT_NEAR(valueOf(e, "merged.stddev"), std::sqrt(squares / n), 1e-6 * std::sqrt(squares / n));
  for (auto [key, q] : {std::pair{"merged.p50", 0.5}, std::pair{"merged.p90", 0.9}, std::pair{"merged.p99", 0.99}}) {
    EXPECT_NEAR(valueOf(e, key), exactQuantile(q), exactQuantile(q) * QuantileSketch::kRelativeError) << key;
  }
  EXPECT_EQ(valueOf(e, "merged.value"), 5.0);
}

TEST_F(StatThreadTest, CountIncludesEveryThreadsSamples) {
  Stat stat("counted", {Aggregation::Count}, 1000ms, kNoCap, clock);
  std::thread([&] {
    for (int i = 0; i < 3; ++i) stat.add(1);
  }).join();
  std::thread([&] { stat.add(1); }).join();
  stat.add(1);
  EXPECT_EQ(stat.count(), 5);
  stat.flush();
  EXPECT_EQ(stat.count(), 0);
}

// Threads add integers while another closes windows as fast as it can: every close races with
// adds in progress. Integer sums are exact, so a sample lost, counted twice or torn between two
// windows shows in the totals.
TEST_F(StatThreadTest, AddsRacingWithClosesAreEachLoggedOnce) {
  constexpr int kAdders = 3;
  constexpr int kAddsPerThread = 100'000;
  Stat stat("racing", {Aggregation::Count, Aggregation::Sum, Aggregation::Stddev, Aggregation::P50}, 1000ms, kNoCap,
            clock);
  std::atomic<int> running{kAdders};
  std::latch start(kAdders + 1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kAdders; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kAddsPerThread; ++i) stat.add((i + t) % 7);
      running.fetch_sub(1);
    });
  }
  start.arrive_and_wait();
  while (running.load() > 0) stat.flush();
  for (auto& thread : threads) thread.join();
  stat.flush();

  double count = 0;
  double sum = 0;
  for (const Event& e : statEvents()) {
    count += valueOf(e, "racing.count");
    sum += valueOf(e, "racing.sum");
  }
  double want = 0;
  for (int t = 0; t < kAdders; ++t) {
    for (int i = 0; i < kAddsPerThread; ++i) want += (i + t) % 7;
  }
  EXPECT_EQ(count, double{kAdders} * kAddsPerThread);
  EXPECT_EQ(sum, want);
}

// Threads come and go while the window thread (the system clock) closes 1 ms windows: their
// slots are handed back at exit and freed after their last window.
TEST(StatThreadSystemClockTest, ShortLivedThreadsLoseNoSample) {
  constexpr int kRounds = 40;
  constexpr int kThreads = 4;
  constexpr int kAdds = 500;
  constexpr double kWant = double{kRounds} * kThreads * kAdds;
  std::mutex mutex;
  std::condition_variable changed;
  double count = 0;  // guarded by mutex
  const EventHandlerHandle handle = registerEventHandler([&](const Event& e) {
    if (e.name != kStatEventName || !e.data.count("churn.count")) return;
    std::lock_guard lock(mutex);
    count += valueOf(e, "churn.count");
    changed.notify_all();
  });
  {
    Stat stat("churn", {Aggregation::Count}, 1ms);
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
          for (int i = 0; i < kAdds; ++i) stat.add(1);
        });
      }
      for (auto& thread : threads) thread.join();
    }
  }  // the destructor logs whatever is still open
  std::unique_lock lock(mutex);
  // A window closed on the window thread may still be on its way to the handler.
  changed.wait_for(lock, 10s, [&] { return count >= kWant; });
  EXPECT_EQ(count, kWant);
  lock.unlock();
  unregisterEventHandler(handle);
}

}  // namespace
}  // namespace livemon
