// The smoothing slider's moving average: TensorBoard's debiased EMA, worked out by hand here, and
// what a NaN does to it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Smoothing, DebiasedAverageMatchesHandComputedValues) {
  ExponentialSmoother ema(0.6);
  // 0.4 * 1 / (1 - 0.6): the first point is the first value, not 40 % of it.
  EXPECT_DOUBLE_EQ(ema.add(1.0), 1.0);
  // (0.6 * 0.4 + 0.4 * 2) / (1 - 0.36) = 1.04 / 0.64
  EXPECT_DOUBLE_EQ(ema.add(2.0), 1.625);
  // (0.6 * 1.04 + 0.4 * 3) / (1 - 0.216) = 1.824 / 0.784
  EXPECT_NEAR(ema.add(3.0), 1.824 / 0.784, 1e-12);
}

TEST(Smoothing, AConstantStaysConstantFromTheFirstPoint) {
  ExponentialSmoother ema(0.99);
  for (int i = 0; i < 50; ++i) EXPECT_NEAR(ema.add(5.0), 5.0, 1e-9) << i;
}

TEST(Smoothing, ANaNIsShownWhereItHappensAndDoesNotPoisonWhatFollows) {
  ExponentialSmoother ema(0.6);
  EXPECT_DOUBLE_EQ(ema.add(1.0), 1.0);
  EXPECT_TRUE(std::isnan(ema.add(kNaN)));
  EXPECT_EQ(ema.add(kInf), kInf);
  EXPECT_EQ(ema.add(-kInf), -kInf);
  // As if the non-finite values had not come: the second finite value's average.
  EXPECT_DOUBLE_EQ(ema.add(2.0), 1.625);
  // A NaN first does not count as a value either.
  ExponentialSmoother fresh(0.6);
  EXPECT_TRUE(std::isnan(fresh.add(kNaN)));
  EXPECT_DOUBLE_EQ(fresh.add(7.0), 7.0);
}

TEST(Smoothing, ZeroWeightReturnsEveryValueAndResetStartsOver) {
  ExponentialSmoother none(0.0);
  EXPECT_DOUBLE_EQ(none.add(3.0), 3.0);
  EXPECT_DOUBLE_EQ(none.add(-8.0), -8.0);
  ExponentialSmoother ema(0.6);
  ema.add(100.0);
  ema.reset();
  EXPECT_DOUBLE_EQ(ema.add(1.0), 1.0);
}

TEST(Smoothing, TheWeightIsClampedToTheSlidersRange) {
  EXPECT_DOUBLE_EQ(clampSmoothing(1.5), kMaxSmoothing);
  EXPECT_DOUBLE_EQ(clampSmoothing(1.0), kMaxSmoothing);  // 1 would never move from zero
  EXPECT_DOUBLE_EQ(clampSmoothing(-0.5), 0.0);
  EXPECT_DOUBLE_EQ(clampSmoothing(kNaN), 0.0);
  EXPECT_DOUBLE_EQ(clampSmoothing(0.6), 0.6);
  EXPECT_DOUBLE_EQ(ExponentialSmoother(2.0).weight(), kMaxSmoothing);
  // A weight of 1 clamped: the line still follows its values.
  ExponentialSmoother heaviest(1.0);
  heaviest.add(0.0);
  EXPECT_GT(heaviest.add(100.0), 0.0);
}

TEST(Smoothing, TheWarmUpLeavesOutLessThanAThousandth) {
  EXPECT_EQ(smoothingWarmup(0.0), 0U);
  EXPECT_EQ(smoothingWarmup(0.6), 14U);
  EXPECT_EQ(smoothingWarmup(0.99), 688U);
  for (double w : {0.1, 0.6, 0.9, 0.99}) {
    EXPECT_LE(std::pow(w, static_cast<double>(smoothingWarmup(w))), 1e-3 * (1 + 1e-9)) << w;
    EXPECT_GT(std::pow(w, static_cast<double>(smoothingWarmup(w) - 1)), 1e-3) << w;
  }
}

}  // namespace
}  // namespace livemon::ui
