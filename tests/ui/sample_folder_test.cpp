// Folding a fast line's points on the ingest thread: what a chart or an alert needs survives.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include <livemon/ui/ingest/sample_folder.h>

namespace livemon::ui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The (x, y) of one series' samples, in order.
std::vector<std::pair<double, double>> pointsOf(const std::vector<StatSample>& samples, SeriesId series) {
  std::vector<std::pair<double, double>> points;
  for (const StatSample& s : samples) {
    if (s.series == series) points.emplace_back(s.x, s.y);
  }
  return points;
}

TEST(SampleFolder, ASlotKeepsItsFirstLowestHighestAndLastInOrder) {
  SampleFolder folder(2.0);
  // One slot [100, 102): the high comes before the low.
  std::vector<StatSample> samples{{7, 100.0, 5.0}, {7, 100.2, 6.0}, {7, 100.4, 9.0}, {7, 100.6, 4.0},
                                  {7, 100.8, 1.0}, {7, 101.0, 3.0}, {7, 101.5, 2.0}};
  EXPECT_EQ(folder.fold(samples, {7}), 3u);
  const std::vector<std::pair<double, double>> expected{{100.0, 5.0}, {100.4, 9.0}, {100.8, 1.0}, {101.5, 2.0}};
  EXPECT_EQ(pointsOf(samples, 7), expected);
  EXPECT_EQ(folder.foldedCount(), 3u);
}

TEST(SampleFolder, EverySlotKeepsItsOwnExtremes) {
  SampleFolder folder(1.0);
  std::vector<StatSample> samples;
  // 1000 samples a millisecond for 20 ms, a spike up and one down in each millisecond.
  for (int i = 0; i < 20'000; ++i) {
    const double x = 1000.0 + i * 0.001;
    double y = std::sin(i * 0.01);
    if (i % 1000 == 500) y = 100.0 + i;
    if (i % 1000 == 700) y = -100.0 - i;
    samples.push_back({1, x, y});
  }
  const std::vector<StatSample> original = samples;
  folder.fold(samples, {1});
  EXPECT_LE(samples.size(), 20u * 4u);
  for (int slot = 0; slot < 20; ++slot) {
    const int up = slot * 1000 + 500;
    const int down = slot * 1000 + 700;
    const auto has = [&samples](const StatSample& want) {
      for (const StatSample& s : samples) {
        if (s.x == want.x && s.y == want.y) return true;
      }
      return false;
    };
    EXPECT_TRUE(has(original[static_cast<std::size_t>(up)])) << "slot " << slot;
    EXPECT_TRUE(has(original[static_cast<std::size_t>(down)])) << "slot " << slot;
    EXPECT_TRUE(has(original[static_cast<std::size_t>(slot * 1000)])) << "first of slot " << slot;
    EXPECT_TRUE(has(original[static_cast<std::size_t>(slot * 1000 + 999)])) << "last of slot " << slot;
  }
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_LT(samples[i - 1].x, samples[i].x);
}

TEST(SampleFolder, ANaNAndInfinitiesStayPointsInTheirPlace) {
  SampleFolder folder(10.0);
  std::vector<StatSample> samples{{3, 0.0, 1.0}, {3, 1.0, 2.0}, {3, 2.0, kNaN}, {3, 3.0, kNaN}, {3, 4.0, 3.0},
                                  {3, 5.0, kInf}, {3, 6.0, -kInf}, {3, 7.0, 0.5}, {3, 8.0, 2.5}};
  folder.fold(samples, {3});
  const std::vector<std::pair<double, double>> points = pointsOf(samples, 3);
  ASSERT_EQ(points.size(), 7u);
  EXPECT_EQ(points[0], std::make_pair(0.0, 1.0));  // first
  EXPECT_EQ(points[1].first, 2.0);                 // the first NaN
  EXPECT_TRUE(std::isnan(points[1].second));
  EXPECT_EQ(points[2], std::make_pair(4.0, 3.0));   // highest
  EXPECT_EQ(points[3], std::make_pair(5.0, kInf));  // +Inf
  EXPECT_EQ(points[4], std::make_pair(6.0, -kInf)); // -Inf
  EXPECT_EQ(points[5], std::make_pair(7.0, 0.5));   // lowest
  EXPECT_EQ(points[6], std::make_pair(8.0, 2.5));   // last
}

TEST(SampleFolder, ALoneNaNIsKept) {
  SampleFolder folder;
  std::vector<StatSample> samples{{3, 0.0, kNaN}};
  folder.fold(samples, {3});
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_TRUE(std::isnan(samples[0].y));
}

TEST(SampleFolder, OtherSeriesPassUntouchedAndInPlace) {
  SampleFolder folder(5.0);
  std::vector<StatSample> samples;
  for (int i = 0; i < 10; ++i) {
    samples.push_back({1, static_cast<double>(i) * 0.1, static_cast<double>(i)});  // folded
    samples.push_back({2, static_cast<double>(i) * 0.1, static_cast<double>(i % 3)});  // not folded
  }
  folder.fold(samples, {1});
  const auto others = pointsOf(samples, 2);
  ASSERT_EQ(others.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(others[static_cast<std::size_t>(i)].second, i % 3);
  EXPECT_EQ(pointsOf(samples, 1).size(), 2u);  // rising: first = lowest, last = highest
}

TEST(SampleFolder, ASlotEndsWhenItsLineMovesOnOrGoesBack) {
  SampleFolder folder(1.0);
  std::vector<StatSample> samples{{1, 10.1, 1.0}, {1, 10.2, 5.0}, {1, 10.3, 2.0}, {1, 10.4, 3.0},
                                  {1, 11.5, 7.0}, {1, 10.5, 8.0}};
  folder.fold(samples, {1});
  const std::vector<std::pair<double, double>> expected{{10.1, 1.0}, {10.2, 5.0}, {10.4, 3.0}, {11.5, 7.0}, {10.5, 8.0}};
  EXPECT_EQ(pointsOf(samples, 1), expected);
}

TEST(SampleFolder, FewSamplesAndSlowLinesAreNotChanged) {
  SampleFolder folder(2.0);
  // One sample per slot: nothing to fold.
  std::vector<StatSample> samples;
  for (int i = 0; i < 100; ++i) samples.push_back({4, 1000.0 * i, static_cast<double>(i % 7)});
  const std::vector<StatSample> before = samples;
  EXPECT_EQ(folder.fold(samples, {4}), 0u);
  ASSERT_EQ(samples.size(), before.size());
  for (std::size_t i = 0; i < samples.size(); ++i) EXPECT_EQ(samples[i].y, before[i].y);
}

TEST(SampleFolder, AnXWithoutASlotIsPassedOn) {
  SampleFolder folder(1.0);
  std::vector<StatSample> samples{{1, kInf, 1.0}, {1, kNaN, 2.0}, {1, 1e300, 3.0}, {1, 1e300, 4.0}};
  EXPECT_EQ(folder.fold(samples, {1}), 0u);
  EXPECT_EQ(samples.size(), 4u);
}

TEST(SampleFolder, RefusesASlotThatIsNotAPositiveNumber) {
  EXPECT_THROW(SampleFolder{0.0}, std::invalid_argument);
  EXPECT_THROW(SampleFolder{-1.0}, std::invalid_argument);
  EXPECT_THROW(SampleFolder{kNaN}, std::invalid_argument);
  EXPECT_THROW(SampleFolder{kInf}, std::invalid_argument);
}

}  // namespace
}  // namespace livemon::ui
