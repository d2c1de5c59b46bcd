// Splitting Stat keys into stat name and aggregation, and recognising Stat events.
#include <gtest/gtest.h>

#include <livemon/ui/data/stat_key.h>

namespace livemon::ui {
namespace {

TEST(StatKey, SplitsAtTheLastDot) {
  const auto parts = splitStatKey("loss.mean");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->stat, "loss");
  EXPECT_EQ(parts->aggregation, "mean");
}

TEST(StatKey, StatNamesMayContainDots) {
  const auto parts = splitStatKey("train.step_time_ms.p99");
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->stat, "train.step_time_ms");
  EXPECT_EQ(parts->aggregation, "p99");

  const auto deep = splitStatKey("a.b.c.d.value");
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->stat, "a.b.c.d");
  EXPECT_EQ(deep->aggregation, "value");
}

TEST(StatKey, KeysWithoutBothHalvesDoNotSplit) {
  EXPECT_FALSE(splitStatKey(""));
  EXPECT_FALSE(splitStatKey("."));
  EXPECT_FALSE(splitStatKey("loss"));
  EXPECT_FALSE(splitStatKey(".mean"));
  EXPECT_FALSE(splitStatKey("loss."));
  EXPECT_FALSE(splitStatKey("train.loss."));
}

TEST(StatKey, BothStatEventNamesAreRecognised) {
  EXPECT_TRUE(isStatEventName("livemon.Stat"));
  EXPECT_TRUE(isStatEventName("torch.monitor.Stat"));
  EXPECT_FALSE(isStatEventName("livemon.stat"));
  EXPECT_FALSE(isStatEventName("torch.monitor.Stats"));
  EXPECT_FALSE(isStatEventName("Stat"));
  EXPECT_FALSE(isStatEventName(""));
}

}  // namespace
}  // namespace livemon::ui
