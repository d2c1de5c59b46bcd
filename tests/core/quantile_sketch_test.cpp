#include <livemon/quantile_sketch.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace livemon {
namespace {

constexpr double kBound = QuantileSketch::kRelativeError * (1 + 1e-12);

double exactQuantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  return values[rank - 1];
}

void expectWithinBound(const QuantileSketch& sketch, const std::vector<double>& values) {
  for (double q : {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0}) {
    const double want = exactQuantile(values, q);
    const double got = sketch.quantile(q);
    if (want == 0) {
      EXPECT_EQ(got, 0.0) << "q=" << q;
    } else {
      EXPECT_LE(std::abs(got - want) / std::abs(want), kBound) << "q=" << q << " want " << want << " got " << got;
    }
  }
}

TEST(QuantileSketchTest, StatedErrorIsOnePercentOrBetter) {
  EXPECT_LE(QuantileSketch::kRelativeError, 0.01);
}

TEST(QuantileSketchTest, EmptySketchAnswersNan) {
  QuantileSketch sketch;
  EXPECT_TRUE(std::isnan(sketch.quantile(0.5)));
  EXPECT_TRUE(sketch.empty());
}

TEST(QuantileSketchTest, ExtremesAreExact) {
  QuantileSketch sketch;
  sketch.add(3.14159);
  EXPECT_EQ(sketch.quantile(0.0), 3.14159);
  EXPECT_EQ(sketch.quantile(0.5), 3.14159);
  EXPECT_EQ(sketch.quantile(1.0), 3.14159);
  sketch.add(2.71828);
  sketch.add(1.41421);
  EXPECT_EQ(sketch.quantile(0.0), 1.41421);
  EXPECT_EQ(sketch.quantile(1.0), 3.14159);
}

struct Distribution {
  const char* name;
  std::vector<double> (*make)(std::mt19937_64&);
};

class QuantileSketchDistributionTest : public ::testing::TestWithParam<Distribution> {};

TEST_P(QuantileSketchDistributionTest, EveryQuantileIsWithinTheBound) {
  std::mt19937_64 rng(42);
  const std::vector<double> values = GetParam().make(rng);
  QuantileSketch sketch;
  for (double v : values) sketch.add(v);
  EXPECT_EQ(sketch.count(), static_cast<int64_t>(values.size()));
  expectWithinBound(sketch, values);
}

std::vector<double> draw(std::mt19937_64& rng, auto dist, int n = 50'000) {
  std::vector<double> out(static_cast<std::size_t>(n));
  for (double& v : out) v = dist(rng);
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Distributions, QuantileSketchDistributionTest,
    ::testing::Values(
        Distribution{"uniform", [](std::mt19937_64& r) { return draw(r, std::uniform_real_distribution<>(0, 1)); }},
        Distribution{"lognormal", [](std::mt19937_64& r) { return draw(r, std::lognormal_distribution<>(0, 3)); }},
        Distribution{"normal_around_zero",
                     [](std::mt19937_64& r) { return draw(r, std::normal_distribution<>(0, 10)); }},
        Distribution{"all_negative",
                     [](std::mt19937_64& r) { return draw(r, std::uniform_real_distribution<>(-1e6, -1e-3)); }},
        Distribution{"step_times_ms",
                     [](std::mt19937_64& r) { return draw(r, std::gamma_distribution<>(9, 12)); }},
        Distribution{"integers_with_zeros",
                     [](std::mt19937_64& r) {
                       auto v = draw(r, std::uniform_int_distribution<int>(0, 20));
                       return v;
                     }},
        Distribution{"huge_and_tiny",
                     [](std::mt19937_64& r) {
                       // 1e-9 .. 1e9: 60 binary orders of magnitude, within the 64 kept
                       auto v = draw(r, std::uniform_real_distribution<>(-9, 9), 5'000);
                       for (double& x : v) x = std::pow(10.0, x);
                       return v;
                     }}),
    [](const auto& param) { return std::string(param.param.name); });

TEST(QuantileSketchTest, MergeEqualsAddingEverythingToOne) {
  std::mt19937_64 rng(1);
  std::lognormal_distribution<> dist(2, 1);
  QuantileSketch a;
  QuantileSketch b;
  QuantileSketch both;
  std::vector<double> all;
  for (int i = 0; i < 10'000; ++i) {
    const double v = dist(rng) * (i % 3 == 0 ? -1 : 1);
    (i % 2 ? a : b).add(v);
    both.add(v);
    all.push_back(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), both.count());
  for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0}) EXPECT_EQ(a.quantile(q), both.quantile(q)) << q;
  expectWithinBound(a, all);
}

TEST(QuantileSketchTest, MergeIntoEmptyAndFromEmpty) {
  QuantileSketch empty;
  QuantileSketch full;
  full.add(5);
  full.add(7);
  QuantileSketch target;
  target.merge(full);
  target.merge(empty);
  EXPECT_EQ(target.count(), 2);
  EXPECT_EQ(target.quantile(1.0), 7.0);
  EXPECT_EQ(target.quantile(0.0), 5.0);
}

TEST(QuantileSketchTest, NanIsIgnoredAndInfinitiesAreKept) {
  QuantileSketch sketch;
  sketch.add(std::nan(""));
  EXPECT_TRUE(sketch.empty());
  sketch.add(1);
  sketch.add(std::numeric_limits<double>::infinity());
  sketch.add(-std::numeric_limits<double>::infinity());
  EXPECT_EQ(sketch.count(), 3);
  EXPECT_EQ(sketch.quantile(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_NEAR(sketch.quantile(0.5), 1.0, kBound);
  EXPECT_EQ(sketch.quantile(1.0), std::numeric_limits<double>::infinity());
}

TEST(QuantileSketchTest, ClearForgetsEverything) {
  QuantileSketch sketch;
  for (int i = 1; i <= 100; ++i) sketch.add(i);
  sketch.clear();
  EXPECT_TRUE(sketch.empty());
  sketch.add(42);
  EXPECT_EQ(sketch.quantile(0.5), 42.0);
}

TEST(QuantileSketchTest, RangeWiderThanTheBucketCapKeepsUpperQuantilesAccurate) {
  // 1e-300 .. 1e300 spans about 2000 binary orders of magnitude, far beyond the 64 kept.
  QuantileSketch sketch;
  std::vector<double> values;
  for (int e = -300; e <= 300; ++e) values.push_back(std::pow(10.0, e));
  for (int i = 0; i < 1000; ++i) values.push_back(1e300 * (1 + i / 1000.0));
  for (double v : values) sketch.add(v);
  EXPECT_EQ(sketch.count(), static_cast<int64_t>(values.size()));
  for (double q : {0.9, 0.99, 1.0}) {
    const double want = exactQuantile(values, q);
    EXPECT_LE(std::abs(sketch.quantile(q) - want) / want, kBound) << q;
  }
  EXPECT_GE(sketch.quantile(0.0), 1e-300);  // clamped to the exact minimum
}

}  // namespace
}  // namespace livemon
