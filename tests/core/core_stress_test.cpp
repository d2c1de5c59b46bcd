// Many threads using Stats and handlers at once, on the real clock. Run under ThreadSanitizer by
// ./test.sh. The invariant checked: every sample added is reported in exactly one window.
#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/wait_counter.h>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <latch>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace livemon {
namespace {

using namespace std::chrono_literals;

// Sums "<stat>.count" over every Stat event seen, per stat name.
class CountTotals {
 public:
  CountTotals()
      : handle_(registerEventHandler([this](const Event& e) {
          if (e.name != kStatEventName) return;
          std::lock_guard lock(mutex_);
          for (const auto& [key, value] : e.data) {
            if (key.ends_with(".count")) totals_[key] += std::get<double>(value);
          }
          changed_.notify_all();
        })) {}
  ~CountTotals() { unregisterEventHandler(handle_); }
  // Waits until the totals of `keys` add up to `want` (a window closed on the window thread may
  // still be on its way to the handler), or `timeout` passes; returns the sum reached.
  double waitForSum(const std::vector<std::string>& keys, double want, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    auto sum = [&] {
      double s = 0;
      for (const auto& key : keys) s += totals_[key];
      return s;
    };
    changed_.wait_for(lock, timeout, [&] { return sum() >= want; });
    return sum();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, double> totals_;
  EventHandlerHandle handle_;
};

TEST(CoreStressTest, ConcurrentAddLogRegisterUnregisterLoseNoSample) {
  constexpr int kAdders = 3;
  constexpr int kAddsPerThread = 30'000;
  CountTotals totals;
  std::vector<std::unique_ptr<Stat>> stats;
  stats.push_back(std::make_unique<Stat>("stress.a", std::vector{Aggregation::Count, Aggregation::Mean}, 2ms));
  stats.push_back(std::make_unique<Stat>(
      "stress.b", std::vector{Aggregation::Count, Aggregation::P99, Aggregation::Stddev}, 3ms));
  stats.push_back(std::make_unique<Stat>("stress.c", std::vector{Aggregation::Count}, 1000ms, 97));

  std::atomic<bool> done{false};
  std::latch start(kAdders + 3);
  std::vector<std::thread> threads;
  for (int t = 0; t < kAdders; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < kAddsPerThread; ++i) stats[static_cast<std::size_t>((i + t) % 3)]->add(i);
    });
  }
  threads.emplace_back([&] {  // handlers come and go, some of them re-entrant
    start.arrive_and_wait();
    Stat nested("stress.nested", {Aggregation::Count}, 5ms);
    while (!done) {
      auto h = registerEventHandler([&](const Event& e) {
        if (e.name == kStatEventName) nested.add(1);
      });
      auto thrower = registerEventHandler([](const Event&) { throw std::runtime_error("x"); });
      unregisterEventHandler(thrower);
      unregisterEventHandler(h);
    }
  });
  threads.emplace_back([&] {  // other events logged alongside
    start.arrive_and_wait();
    while (!done) logEvent(Event{"stress.other", std::chrono::system_clock::now(), {{"x", 1.0}}});
  });
  threads.emplace_back([&] {  // flushes, reads and short-lived Stats
    start.arrive_and_wait();
    WaitCounter waits("stress.waits");
    while (!done) {
      auto guard = waits.start();
      stats[0]->flush();
      (void)stats[1]->get();
      (void)stats[2]->count();
      Stat temporary("stress.temporary", {Aggregation::Sum}, 1ms);
      temporary.add(1);
    }
  });
  for (int t = 0; t < kAdders; ++t) threads[static_cast<std::size_t>(t)].join();
  done = true;
  for (std::size_t t = kAdders; t < threads.size(); ++t) threads[t].join();

  int64_t dropped = 0;
  for (auto& stat : stats) {
    dropped += stat->droppedCount();
    stat.reset();  // logs whatever is still open
  }
  const double added = double{kAdders} * kAddsPerThread;
  const double reported =
      totals.waitForSum({"stress.a.count", "stress.b.count", "stress.c.count"}, added - static_cast<double>(dropped), 10s);
  EXPECT_EQ(reported + static_cast<double>(dropped), added);
}

}  // namespace
}  // namespace livemon
