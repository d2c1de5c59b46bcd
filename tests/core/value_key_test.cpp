// The names of event values, shared by the dashboard's charts and the alert rules.
#include <livemon/value_key.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace livemon {
namespace {

TEST(ValueKey, StatEventsKeepTheirKeysOtherEventsPrefixTheirName) {
  EXPECT_EQ(valueKey(kStatEventName, "train.loss.mean"), "train.loss.mean");
  EXPECT_EQ(valueKey(kTorchStatEventName, "gpu.util.p99"), "gpu.util.p99");
  EXPECT_EQ(valueKey("eval", "accuracy"), "eval.accuracy");
  EXPECT_EQ(valueKey("a.b", "c.d"), "a.b.c.d");
  EXPECT_EQ(valueKey("", "x"), ".x");
}

TEST(ValueKey, StatEventNames) {
  EXPECT_TRUE(isStatEventName("livemon.Stat"));
  EXPECT_TRUE(isStatEventName("torch.monitor.Stat"));
  EXPECT_FALSE(isStatEventName("livemon.stat"));
  EXPECT_FALSE(isStatEventName("torch.monitor.Stats"));
  EXPECT_FALSE(isStatEventName(""));
}

TEST(ValueKey, NumbersAreDoublesAndIntegers) {
  EXPECT_EQ(numericValue(DataValue(2.5)), 2.5);
  EXPECT_EQ(numericValue(DataValue(int64_t{-3})), -3.0);
  EXPECT_TRUE(std::isnan(*numericValue(DataValue(std::numeric_limits<double>::quiet_NaN()))));
  EXPECT_FALSE(numericValue(DataValue(true)).has_value());
  EXPECT_FALSE(numericValue(DataValue(std::string("1.0"))).has_value());
}

}  // namespace
}  // namespace livemon
