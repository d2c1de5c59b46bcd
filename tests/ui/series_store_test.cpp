// Per-pixel decimation keeps every extreme; a series store stays bounded over a long run and
// keeps old extremes in its min/max buckets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include <livemon/ui/model/column_decimator.h>
#include <livemon/ui/model/lazy_deque.h>
#include <livemon/ui/model/point_ring.h>
#include <livemon/ui/model/series_store.h>

namespace livemon::ui {
namespace {

struct Point {
  double x;
  double y;
};

QList<QPointF> decimate(const std::vector<Point>& points, double xMin, double xMax, int columns,
                        QList<QPointF>* lower = nullptr, QList<QPointF>* upper = nullptr) {
  QList<QPointF> line;
  ColumnDecimator decimator(xMin, xMax, columns, PlotTransform{}, line, lower, upper);
  for (const Point& p : points) {
    if (!decimator.add(p.x, p.y)) break;
  }
  decimator.finish();
  return line;
}

bool contains(const QList<QPointF>& points, double x, double y) {
  return std::any_of(points.begin(), points.end(), [&](const QPointF& p) { return p.x() == x && p.y() == y; });
}

TEST(ColumnDecimator, SingleSampleSpikesSurviveAmongAHundredThousandFlatSamples) {
  std::vector<Point> points;
  for (int i = 0; i < 100'000; ++i) points.push_back({static_cast<double>(i), 0.0});
  points[12'345].y = 1000.0;
  points[77'777].y = -500.0;
  points[99'998].y = 3.0;

  const QList<QPointF> line = decimate(points, 0.0, 99'999.0, 200);
  EXPECT_LE(line.size(), 4 * 200);
  EXPECT_TRUE(contains(line, 12'345.0, 1000.0));
  EXPECT_TRUE(contains(line, 77'777.0, -500.0));
  EXPECT_TRUE(contains(line, 99'998.0, 3.0));
  EXPECT_TRUE(contains(line, 0.0, 0.0));       // the first sample
  EXPECT_TRUE(contains(line, 99'999.0, 0.0));  // the last sample
  EXPECT_TRUE(std::is_sorted(line.begin(), line.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); }));
}

TEST(ColumnDecimator, SpikesInAdjacentSamplesOfOneColumnAreBothKept) {
  std::vector<Point> points;
  for (int i = 0; i < 1000; ++i) points.push_back({static_cast<double>(i), std::sin(i * 0.01)});
  points[500].y = 50.0;
  points[501].y = -50.0;  // same column as the +50 spike
  const QList<QPointF> line = decimate(points, 0.0, 999.0, 10);
  EXPECT_TRUE(contains(line, 500.0, 50.0));
  EXPECT_TRUE(contains(line, 501.0, -50.0));
}

// Against a brute-force reference: each column keeps exactly its first, min, max and last.
TEST(ColumnDecimator, KeepsExactlyEachColumnsFirstMinMaxAndLast) {
  std::mt19937 random(42);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<Point> points;
  double x = 0.0;
  for (int i = 0; i < 20'000; ++i) {
    x += std::exponential_distribution<double>(1.0)(random);
    points.push_back({x, noise(random) + (i % 997 == 0 ? 25.0 : 0.0)});
  }
  const double xMin = points.front().x;
  const double xMax = points.back().x;
  constexpr int kColumns = 333;
  const QList<QPointF> line = decimate(points, xMin, xMax, kColumns);

  std::vector<std::vector<Point>> columns(kColumns);
  for (const Point& p : points) {
    const int column = std::clamp(static_cast<int>((p.x - xMin) * kColumns / (xMax - xMin)), 0, kColumns - 1);
    columns[static_cast<std::size_t>(column)].push_back(p);
  }
  std::size_t expectedSize = 0;
  for (const auto& column : columns) {
    if (column.empty()) continue;
    const auto [low, high] = std::minmax_element(column.begin(), column.end(), [](const Point& a, const Point& b) { return a.y < b.y; });
    std::set<const Point*> kept{&column.front(), &*low, &*high, &column.back()};
    expectedSize += kept.size();
    for (const Point* p : kept) EXPECT_TRUE(contains(line, p->x, p->y)) << "column point " << p->x;
  }
  EXPECT_EQ(static_cast<std::size_t>(line.size()), expectedSize);
}

TEST(ColumnDecimator, KeepsTheNeighboursJustOutsideTheRangeSoLinesReachTheEdges) {
  const std::vector<Point> points{{0, 1}, {1, 2}, {5, 3}, {6, 4}, {9, 5}, {10, 6}};
  const QList<QPointF> line = decimate(points, 4.5, 7.0, 100);
  ASSERT_EQ(line.size(), 4);
  EXPECT_EQ(line.front(), QPointF(1, 2));
  EXPECT_EQ(line.back(), QPointF(9, 5));
}

TEST(ColumnDecimator, ReportsTheYRangeOfThePointsInsideTheRangeOnly) {
  const std::vector<Point> points{{0, 100}, {5, 3}, {6, -4}, {10, -100}};
  QList<QPointF> line;
  ColumnDecimator decimator(4.0, 7.0, 10, PlotTransform{}, line);
  for (const Point& p : points) decimator.add(p.x, p.y);
  const DecimationSummary summary = decimator.finish();
  EXPECT_EQ(summary.pointsInRange, 2U);
  EXPECT_EQ(summary.yMin, -4.0);
  EXPECT_EQ(summary.yMax, 3.0);
}

TEST(ColumnDecimator, WritesBandEdgesFromEachColumnsExtremes) {
  std::vector<Point> points;
  for (int i = 0; i < 100; ++i) points.push_back({static_cast<double>(i), static_cast<double>(i % 10)});
  QList<QPointF> lower;
  QList<QPointF> upper;
  decimate(points, 0.0, 99.0, 10, &lower, &upper);
  ASSERT_EQ(lower.size(), 10);
  ASSERT_EQ(upper.size(), 10);
  for (const QPointF& p : lower) EXPECT_EQ(p.y(), 0.0);
  for (const QPointF& p : upper) EXPECT_EQ(p.y(), 9.0);
}

TEST(ColumnDecimator, StartsFromEmptyOutputsSoAReusedLineHoldsOnlyTheNewPoints) {
  QList<QPointF> line{{-1, -1}, {-2, -2}};
  QList<QPointF> lower{{-1, -1}};
  QList<QPointF> upper{{-1, -1}};
  ColumnDecimator decimator(0.0, 10.0, 10, PlotTransform{}, line, &lower, &upper);
  EXPECT_TRUE(line.isEmpty());
  EXPECT_TRUE(lower.isEmpty());
  EXPECT_TRUE(upper.isEmpty());
  decimator.add(5.0, 3.0);
  decimator.finish();
  EXPECT_EQ(line, (QList<QPointF>{{5.0, 3.0}}));
  EXPECT_EQ(lower, (QList<QPointF>{{5.0, 3.0}}));
  EXPECT_EQ(upper, (QList<QPointF>{{5.0, 3.0}}));
}

TEST(ColumnDecimator, AppliesThePlotTransform) {
  QList<QPointF> line;
  ColumnDecimator decimator(1000.0, 3000.0, 10, PlotTransform{1000.0, 0.001}, line);
  decimator.add(2000.0, 7.0);
  decimator.finish();
  ASSERT_EQ(line.size(), 1);
  EXPECT_EQ(line.front(), QPointF(1.0, 7.0));
}

TEST(SeriesStore, StaysBoundedOverALongRunAndKeepsOldExtremes) {
  SeriesStore store;
  const SeriesStore::Limits& limits = store.limits();
  const std::size_t bound =
      // Bytes per sample (x, y, step) and per bucket (four of them and a count).
      (limits.recentCapacity + limits.samplesPerBucket) * 24 + limits.bucketCapacity * 104;
  constexpr int kSamples = 3'000'000;  // one sample per 10 ms: a run of 8 hours
  std::size_t bytesAtThird = 0;
  for (int i = 0; i < kSamples; ++i) {
    double y = std::sin(i * 1e-3);
    if (i == 1'000) y = 1e6;          // early spikes, folded into buckets long ago
    if (i == 1'500'000) y = -1e6;
    store.append(i * 10.0, y);
    if (i == kSamples / 3) bytesAtThird = store.storedBytes();
    ASSERT_LE(store.recentSize(), limits.recentCapacity + limits.samplesPerBucket);
    ASSERT_LE(store.bucketCount(), limits.bucketCapacity);
  }
  EXPECT_LE(store.storedBytes(), bound);
  EXPECT_LE(bytesAtThird, bound);
  EXPECT_GE(bytesAtThird, bound / 2) << "a third into the run the store is already full";
  EXPECT_EQ(store.appendedCount(), static_cast<uint64_t>(kSamples));

  // The whole run in 800 pixels still shows both spikes and the newest sample.
  QList<QPointF> line;
  const DecimationSummary summary = store.decimate(0.0, (kSamples - 1) * 10.0, 800, PlotTransform{}, line);
  EXPECT_EQ(summary.yMax, 1e6);
  EXPECT_EQ(summary.yMin, -1e6);
  EXPECT_TRUE(contains(line, 1'000 * 10.0, 1e6));
  EXPECT_TRUE(contains(line, 1'500'000 * 10.0, -1e6));
  EXPECT_EQ(line.back().x(), (kSamples - 1) * 10.0);
  EXPECT_LE(line.size(), 4 * 800 + 2);
  EXPECT_EQ(store.lastY(), std::sin((kSamples - 1) * 1e-3));
  EXPECT_EQ(store.firstX(), 0.0);
}

TEST(SeriesStore, RecentSamplesAreKeptAtFullResolution) {
  SeriesStore store;
  for (int i = 0; i < 5000; ++i) store.append(i, i * 0.5);
  QList<QPointF> line;
  // The newest 1000 samples over 4000 columns: every one of them, exactly.
  store.decimate(4000.0, 4999.0, 4000, PlotTransform{}, line);
  ASSERT_EQ(line.size(), 1001);  // plus the left neighbour
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(line[i + 1], QPointF(4000 + i, (4000 + i) * 0.5));
}

TEST(SeriesStore, ALateSampleIsPutInPlaceAndOneOlderThanTheFullResolutionPartIsDropped) {
  SeriesStore::Limits limits;
  limits.recentCapacity = 16;
  limits.samplesPerBucket = 4;
  limits.bucketCapacity = 8;
  SeriesStore store(limits);
  for (int i = 0; i < 100; ++i) store.append(i * 10.0, 1.0);
  const uint64_t version = store.version();
  store.append(985.0, 2.0);  // between 980 and 990
  EXPECT_GT(store.version(), version);
  QList<QPointF> line;
  store.decimate(975.0, 995.0, 100, PlotTransform{}, line);
  EXPECT_TRUE(contains(line, 985.0, 2.0));
  EXPECT_TRUE(std::is_sorted(line.begin(), line.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); }));

  store.append(5.0, 3.0);  // long folded into buckets
  EXPECT_EQ(store.lateDroppedCount(), 1U);
}

TEST(SeriesStore, SamplesAfterTheCutoffAreLeftOutAsIfNotYetReceived) {
  SeriesStore store;
  for (int i = 0; i < 10; ++i) store.append(i, i);
  QList<QPointF> line;
  const DecimationSummary summary =
      store.decimate(0.0, 20.0, 100, PlotTransform{}, line, nullptr, nullptr, /*cutoff=*/4.0);
  ASSERT_EQ(line.size(), 5);
  EXPECT_EQ(line.back(), QPointF(4, 4));
  EXPECT_EQ(summary.yMax, 4.0);
}

TEST(SeriesStore, NonFiniteValuesAreCountedNotStored) {
  SeriesStore store;
  store.append(1.0, std::numeric_limits<double>::quiet_NaN());
  store.append(2.0, std::numeric_limits<double>::infinity());
  store.append(3.0, 1.0);
  EXPECT_EQ(store.nonFiniteCount(), 2U);
  EXPECT_EQ(store.recentSize(), 1U);
}

TEST(SeriesStore, KeepsWhereRunsOfNonFiniteValuesStartAndEndBounded) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  SeriesStore store;
  store.append(1.0, 1.0, 10.0);
  store.append(2.0, kNaN, 20.0);
  store.append(3.0, std::numeric_limits<double>::infinity(), 30.0);
  store.append(4.0, 2.0, 40.0);  // finite again
  store.append(5.0, -std::numeric_limits<double>::infinity(), 50.0);
  store.append(6.0, -std::numeric_limits<double>::infinity(), 60.0);  // still not finite at the newest
  ASSERT_EQ(store.nonFiniteSpans().size(), 2U);
  const SeriesStore::NonFiniteSpan& first = store.nonFiniteSpans().front();
  EXPECT_EQ(first.first.x, 2.0);
  EXPECT_EQ(first.first.step, 20.0);
  EXPECT_EQ(first.last.x, 3.0);
  ASSERT_TRUE(first.end.has_value());
  EXPECT_EQ(first.end->x, 4.0);
  EXPECT_TRUE(first.nan);
  const SeriesStore::NonFiniteSpan& open = store.nonFiniteSpans().back();
  EXPECT_EQ(open.first.x, 5.0);
  EXPECT_EQ(open.last.x, 6.0);
  EXPECT_FALSE(open.end.has_value());
  EXPECT_FALSE(open.nan) << "infinities only";

  // A series flipping between NaN and numbers for ever keeps only the newest runs.
  for (int i = 0; i < 1000; ++i) store.append(10.0 + i, i % 2 == 0 ? kNaN : 1.0);
  EXPECT_EQ(store.nonFiniteSpans().size(), SeriesStore::kMaxNonFiniteSpans);
  EXPECT_EQ(store.nonFiniteSpans().back().first.x, 10.0 + 998);
  store.clear();
  EXPECT_TRUE(store.nonFiniteSpans().empty());
}

TEST(LazyDeque, HoldsNothingUntilItsFirstItemAndCopiesWhatItHolds) {
  LazyDeque<int> items;
  EXPECT_TRUE(items.empty());
  EXPECT_EQ(items.size(), 0U);
  EXPECT_EQ(items.begin(), items.end());
  EXPECT_TRUE(items.items().empty());
  for (int i = 0; i < 5; ++i) items.push_back(i);
  items.pop_front();
  items.back() = 40;
  EXPECT_EQ(std::vector<int>(items.begin(), items.end()), (std::vector<int>{1, 2, 3, 40}));
  EXPECT_EQ(items.front(), 1);

  LazyDeque<int> copy = items;
  copy.push_back(5);
  EXPECT_EQ(items.size(), 4U);  // a copy of its own, not a shared one
  EXPECT_EQ(copy.size(), 5U);
  LazyDeque<int> moved = std::move(copy);
  EXPECT_EQ(moved.size(), 5U);
  items.clear();
  EXPECT_TRUE(items.empty());
  EXPECT_EQ(moved.back(), 5);
}

TEST(PointRing, BehavesAsADequeUnderRandomPushesPopsInsertsAndTruncations) {
  constexpr std::size_t kLimit = 24;
  PointRing<int> ring(kLimit);
  std::deque<int> model;
  EXPECT_EQ(ring.capacity(), 0U) << "nothing allocated while empty";
  std::mt19937 random(7);
  int next = 0;
  for (int round = 0; round < 20000; ++round) {
    const unsigned op = random() % 10;
    if (op < 5 && model.size() < kLimit) {
      ring.push_back(next);
      model.push_back(next++);
    } else if (op < 7 && model.size() < kLimit) {
      const std::size_t at = random() % (model.size() + 1);
      ring.insert(at, next);
      model.insert(model.begin() + static_cast<std::ptrdiff_t>(at), next++);
    } else if (op < 9) {
      const std::size_t n = random() % 5;
      ring.popFront(n);
      model.erase(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(std::min(n, model.size())));
    } else {
      const std::size_t n = model.size() - random() % (model.size() + 1) / 2;
      ring.truncate(n);
      model.resize(n);
    }
    ASSERT_EQ(ring.size(), model.size()) << "round " << round;
    ASSERT_TRUE(std::equal(ring.begin(), ring.end(), model.begin(), model.end())) << "round " << round;
    if (!model.empty()) {
      ASSERT_EQ(ring.front(), model.front());
      ASSERT_EQ(ring.back(), model.back());
    }
    ASSERT_LE(ring.capacity(), kLimit) << "growing stops at the limit its owner keeps";
  }
  // Sorted contents can be searched as a deque's can.
  PointRing<int> sorted(8);
  for (int v : {1, 3, 5, 7, 9, 11}) sorted.push_back(v);
  sorted.popFront(2);  // the ring's start is no longer at its allocation's
  for (int v : {13, 15, 17}) sorted.push_back(v);
  EXPECT_EQ(std::lower_bound(sorted.begin(), sorted.end(), 10) - sorted.begin(), 3);
  EXPECT_EQ(*std::upper_bound(sorted.begin(), sorted.end(), 13), 15);
  ring.clear();
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.capacity(), 0U) << "clear() gives the memory back";
}

TEST(PointRing, GrowsPastItsLimitOnlyWhenItsOwnerKeepsMoreAndCopiesWhatItHolds) {
  PointRing<int> ring(5);
  for (int i = 0; i < 5; ++i) ring.push_back(i);
  EXPECT_EQ(ring.capacity(), 5U);
  ring.push_back(5);  // beyond the limit: still kept
  EXPECT_EQ(ring.size(), 6U);
  EXPECT_EQ(ring.back(), 5);
  PointRing<int> copy = ring;
  copy.push_back(6);
  EXPECT_EQ(ring.size(), 6U) << "a copy of its own";
  EXPECT_EQ(copy.size(), 7U);
  PointRing<int> moved = std::move(copy);
  EXPECT_EQ(moved.size(), 7U);
  EXPECT_EQ(moved[6], 6);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from ring is empty
  copy = moved;
  EXPECT_EQ(copy.size(), 7U);
}

TEST(SeriesStore, ARanksSmallStoreAllocatesNoMoreThanItsLimitsHoldHoweverLongTheRun) {
  SeriesStore::Limits limits;
  limits.recentCapacity = 8;
  limits.bucketCapacity = 8;
  limits.samplesPerBucket = 8;
  SeriesStore store(limits);
  EXPECT_EQ(store.allocatedBytes(), 0U) << "an empty series allocates nothing";
  for (int i = 0; i < 100000; ++i) store.append(i, std::sin(i * 0.01));
  const std::size_t most = (limits.recentCapacity + limits.samplesPerBucket) * sizeof(SeriesStore::Point) +
                           (limits.bucketCapacity + 1) * (4 * sizeof(SeriesStore::Point) + sizeof(uint64_t));
  EXPECT_LE(store.allocatedBytes(), most);
  EXPECT_GE(store.allocatedBytes(), store.storedBytes());
  // Still the whole run, coarsely: the first point and the newest.
  EXPECT_EQ(store.firstX(), 0.0);
  EXPECT_EQ(store.lastX(), 99999.0);
  store.clear();
  EXPECT_EQ(store.allocatedBytes(), 0U);
}

TEST(SeriesStore, RejectsZeroLimitsNamingThem) {
  SeriesStore::Limits limits;
  limits.recentCapacity = 0;
  EXPECT_THROW(
      {
        try {
          SeriesStore store(limits);
        } catch (const std::invalid_argument& error) {
          EXPECT_NE(std::string(error.what()).find("recentCapacity"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
}

TEST(SeriesStore, AmendLastChangesTheNewestValueOnly) {
  SeriesStore store;
  EXPECT_FALSE(store.amendLast(1.0)) << "nothing to amend";
  store.append(1000.0, 1.0, 5.0);
  store.append(2000.0, 2.0, 6.0);
  const uint64_t version = store.version();
  EXPECT_FALSE(store.amendLast(std::nan("")));
  EXPECT_EQ(store.version(), version);
  EXPECT_TRUE(store.amendLast(3.0));
  EXPECT_GT(store.version(), version);
  EXPECT_EQ(store.lastX(), 2000.0);
  EXPECT_EQ(store.lastY(), 3.0);
  EXPECT_EQ(store.recentSize(), 2U);
  EXPECT_EQ(store.appendedCount(), 2U);
}

}  // namespace
}  // namespace livemon::ui
