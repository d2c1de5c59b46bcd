// Stats on the real clock: windows are closed by the shared background thread.
#include <livemon/stat.h>

#include <gtest/gtest.h>

#include "event_recorder.h"

namespace livemon {
namespace {

using namespace std::chrono_literals;
using testing::EventRecorder;

TEST(StatSystemClockTest, WindowClosesWithoutAFurtherAdd) {
  EventRecorder recorder;
  Stat stat("on_time", {Aggregation::Count}, 50ms);
  const auto addedAt = std::chrono::system_clock::now();
  stat.add(1);
  // torch.monitor would wait for the next add forever; here the window thread closes it.
  ASSERT_TRUE(recorder.waitFor(1, 10s));
  const Event e = recorder.events().at(0);
  EXPECT_EQ(e.data.at("on_time.count"), DataValue(1.0));
  EXPECT_GE(e.timestamp, addedAt);
  // The close happens at the window's end; a generous bound keeps a loaded machine from failing
  // this while still telling "on time" from "never".
  EXPECT_LT(e.timestamp - addedAt, 50ms + 2s);
  EXPECT_EQ(stat.count(), 0);
}

TEST(StatSystemClockTest, ConsecutiveWindowsEachCloseOnce) {
  EventRecorder recorder;
  Stat stat("consecutive", {Aggregation::Count}, 20ms);
  stat.add(1);
  ASSERT_TRUE(recorder.waitFor(1, 10s));
  stat.add(1);
  stat.add(1);
  ASSERT_TRUE(recorder.waitFor(2, 10s));
  const auto events = recorder.events();
  EXPECT_EQ(events[0].data.at("consecutive.count"), DataValue(1.0));
  EXPECT_EQ(events[1].data.at("consecutive.count"), DataValue(2.0));
  EXPECT_LT(events[0].timestamp, events[1].timestamp);
}

TEST(StatSystemClockTest, ManyStatsAllClose) {
  EventRecorder recorder;
  std::vector<std::unique_ptr<Stat>> stats;
  for (int i = 0; i < 50; ++i) {
    stats.push_back(std::make_unique<Stat>("many." + std::to_string(i), std::vector{Aggregation::Sum},
                                           std::chrono::milliseconds(5 + i)));
    stats.back()->add(i);
  }
  ASSERT_TRUE(recorder.waitFor(50, 20s));
  for (int i = 0; i < 50; ++i) EXPECT_EQ(stats[static_cast<std::size_t>(i)]->get().at(Aggregation::Sum), i);
}

TEST(StatSystemClockTest, DestroyingAStatWhileItsWindowIsScheduledIsSafe) {
  EventRecorder recorder;
  for (int i = 0; i < 200; ++i) {
    Stat stat("short_lived", {Aggregation::Count}, 1ms);
    stat.add(1);
  }
  // Each window is logged exactly once: by its destructor, or by the window thread if that got
  // there first (its event may still be on the way).
  ASSERT_TRUE(recorder.waitFor(200, 10s));
  EXPECT_EQ(recorder.named(kStatEventName).size(), 200u);
}

}  // namespace
}  // namespace livemon
