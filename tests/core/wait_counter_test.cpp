#include <livemon/wait_counter.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "event_recorder.h"

namespace livemon {
namespace {

using namespace std::chrono_literals;
using testing::EventRecorder;

class WaitCounterTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv("LIVEMON_DISABLE_WAIT_COUNTERS"); }
  void TearDown() override { unsetenv("LIVEMON_DISABLE_WAIT_COUNTERS"); }
  ManualClock clock;
  EventRecorder recorder;
};

TEST_F(WaitCounterTest, RecordsOneFinishedWait) {
  WaitCounter counter("wc.one", clock);
  WaitGuard guard = counter.start();
  EXPECT_EQ(counter.totals().active, 1);
  EXPECT_EQ(counter.totals().calls, 0);
  clock.advance(7ms);
  guard.stop();
  const WaitCounterTotals totals = counter.totals();
  EXPECT_EQ(totals.active, 0);
  EXPECT_EQ(totals.calls, 1);
  EXPECT_EQ(totals.totalTime, 7ms);
  EXPECT_EQ(totals.maxTime, 7ms);
}

TEST_F(WaitCounterTest, SecondStopAndDestructionRecordNothingMore) {
  WaitCounter counter("wc.once", clock);
  {
    WaitGuard guard = counter.start();
    clock.advance(1ms);
    guard.stop();
    clock.advance(5ms);
    guard.stop();
  }
  EXPECT_EQ(counter.totals().calls, 1);
  EXPECT_EQ(counter.totals().totalTime, 1ms);
}

TEST_F(WaitCounterTest, DestructionRecordsTheWait) {
  WaitCounter counter("wc.scope", clock);
  {
    auto guard = counter.start();
    clock.advance(3ms);
  }
  EXPECT_EQ(counter.totals().calls, 1);
  EXPECT_EQ(counter.totals().totalTime, 3ms);
}

TEST_F(WaitCounterTest, MovedGuardRecordsOnce) {
  WaitCounter counter("wc.move", clock);
  WaitGuard first = counter.start();
  clock.advance(2ms);
  WaitGuard second = std::move(first);
  first.stop();  // moved-from: nothing
  EXPECT_EQ(counter.totals().calls, 0);
  second.stop();
  EXPECT_EQ(counter.totals().calls, 1);
  EXPECT_EQ(counter.totals().totalTime, 2ms);
}

TEST_F(WaitCounterTest, MoveAssigningOverARunningGuardFinishesIt) {
  WaitCounter counter("wc.assign", clock);
  WaitGuard a = counter.start();
  clock.advance(4ms);
  WaitGuard b = counter.start();
  a = std::move(b);  // a's wait of 4 ms ends here
  EXPECT_EQ(counter.totals().calls, 1);
  clock.advance(1ms);
  a.stop();
  EXPECT_EQ(counter.totals().calls, 2);
  EXPECT_EQ(counter.totals().totalTime, 4ms + 1ms);
  EXPECT_EQ(counter.totals().maxTime, 4ms);
}

TEST_F(WaitCounterTest, CountersWithTheSameKeyShareTotals) {
  WaitCounter a("wc.shared", clock);
  WaitCounter b("wc.shared", clock);
  a.start().stop();
  b.start().stop();
  EXPECT_EQ(a.totals().calls, 2);
  EXPECT_EQ(b.totals().calls, 2);
  WaitCounter other("wc.other", clock);
  EXPECT_EQ(other.totals().calls, 0);
}

TEST_F(WaitCounterTest, FinishedWaitsFeedAStatNamedAfterTheKey) {
  WaitCounter counter("data_wait", clock);
  for (auto wait : {2ms, 4ms, 6ms}) {
    auto guard = counter.start();
    clock.advance(wait);
  }
  clock.advance(WaitCounter::kStatWindow);
  const auto events = recorder.named(kStatEventName);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data.at("data_wait.count"), DataValue(3.0));
  EXPECT_EQ(events[0].data.at("data_wait.mean"), DataValue(4.0));  // milliseconds
  EXPECT_EQ(events[0].data.at("data_wait.max"), DataValue(6.0));
}

TEST_F(WaitCounterTest, ConcurrentWaitsAreAllCounted) {
  WaitCounter counter("wc.threads", clock);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) counter.start().stop();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter.totals().calls, 4000);
  EXPECT_EQ(counter.totals().active, 0);
}

TEST_F(WaitCounterTest, DisabledByEnvironmentIsANoOp) {
  setenv("LIVEMON_DISABLE_WAIT_COUNTERS", "1", 1);
  WaitCounter counter("wc.disabled", clock);
  EXPECT_FALSE(counter.enabled());
  {
    auto guard = counter.start();
    clock.advance(5ms);
  }
  clock.advance(WaitCounter::kStatWindow);
  EXPECT_EQ(counter.totals().calls, 0);
  EXPECT_TRUE(recorder.named(kStatEventName).empty());
}

TEST_F(WaitCounterTest, ZeroInTheEnvironmentKeepsItEnabled) {
  setenv("LIVEMON_DISABLE_WAIT_COUNTERS", "0", 1);
  WaitCounter counter("wc.enabled", clock);
  EXPECT_TRUE(counter.enabled());
}

TEST_F(WaitCounterTest, EmptyKeyIsRejected) {
  EXPECT_THROW(WaitCounter(""), std::invalid_argument);
}

}  // namespace
}  // namespace livemon
