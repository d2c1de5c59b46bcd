// What a chart line is made of: raw and smoothed points, broken where the series stalled or a log
// axis cannot show a value.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <livemon/ui/model/line_trace.h>
#include <livemon/ui/model/series_store.h>
#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {
namespace {

TraceRequest request(double xMin, double xMax, int columns = 1000) {
  TraceRequest r;
  r.xMin = xMin;
  r.xMax = xMax;
  r.columns = columns;
  return r;
}

TEST(LineTrace, ARegularSeriesIsOneUnbrokenLine) {
  SeriesStore store;
  // Some jitter, never twice the usual second.
  for (int i = 0; i < 100; ++i) store.append(1000.0 * i + (i % 3) * 150.0, i);
  TraceResult result;
  traceSeries(store, request(0.0, 100'000.0), result);
  EXPECT_EQ(result.raw.points.size(), 100);
  EXPECT_TRUE(result.raw.breaks.empty());
  EXPECT_TRUE(result.smoothed.points.isEmpty());  // no smoothing asked for
}

TEST(LineTrace, AStallLongerThanTwiceTheUsualIntervalBreaksTheLine) {
  SeriesStore store;
  for (int i = 0; i < 20; ++i) store.append(1000.0 * i, 150.0);
  for (int i = 30; i < 50; ++i) store.append(1000.0 * i, 150.0);  // a 10 s stall
  TraceResult result;
  TraceRequest r = request(0.0, 50'000.0);
  r.smoothing = 0.6;
  traceSeries(store, r, result);
  ASSERT_EQ(result.raw.breaks.size(), 1U);
  const qsizetype at = result.raw.breaks[0];
  EXPECT_EQ(result.raw.points[at - 1].x(), 19'000.0);
  EXPECT_EQ(result.raw.points[at].x(), 30'000.0);
  // The smoothed line breaks at the same place.
  ASSERT_EQ(result.smoothed.breaks.size(), 1U);
  EXPECT_EQ(result.smoothed.points[result.smoothed.breaks[0]].x(), 30'000.0);
  // Twice the interval exactly is still a line.
  SeriesStore twice;
  for (int i = 0; i < 20; ++i) twice.append(1000.0 * i, 1.0);
  twice.append(21'000.0, 1.0);
  traceSeries(twice, request(0.0, 30'000.0), result);
  EXPECT_TRUE(result.raw.breaks.empty());
}

TEST(LineTrace, AStallBreaksADecimatedLineToo) {
  SeriesStore store;
  for (int i = 0; i < 5000; ++i) store.append(10.0 * i, std::sin(i * 0.01));
  for (int i = 6000; i < 8000; ++i) store.append(10.0 * i, std::sin(i * 0.01));  // 10 s without samples
  TraceResult result;
  traceSeries(store, request(0.0, 80'000.0, 200), result);
  EXPECT_LT(result.raw.points.size(), 1000);  // decimated to the columns
  ASSERT_EQ(result.raw.breaks.size(), 1U);
  EXPECT_LE(result.raw.points[result.raw.breaks[0] - 1].x(), 49'990.0);
  EXPECT_GE(result.raw.points[result.raw.breaks[0]].x(), 60'000.0);
}

TEST(LineTrace, TheSmoothedLineIsTheEmaOfTheWholeSeries) {
  SeriesStore store;
  std::vector<double> values;
  for (int i = 0; i < 200; ++i) {
    values.push_back(std::sin(i * 0.3) * 10.0 + i);
    store.append(1000.0 * i, values.back());
  }
  TraceRequest r = request(150'000.0, 200'000.0);
  r.smoothing = 0.9;
  TraceResult result;
  traceSeries(store, r, result);
  ExponentialSmoother ema(0.9);
  std::vector<double> expected;
  for (double v : values) expected.push_back(ema.add(v));
  ASSERT_GE(result.smoothed.points.size(), 50);
  for (const QPointF& p : result.smoothed.points) {
    const auto index = static_cast<std::size_t>(p.x() / 1000.0);
    // Started from its warm-up rather than the first sample: within a thousandth of the range.
    EXPECT_NEAR(p.y(), expected[index], 1e-3 * 200.0) << index;
  }
  // The raw line stays raw beside it.
  EXPECT_EQ(result.raw.points.back().y(), values.back());
  EXPECT_NE(result.smoothed.points.back().y(), values.back());
}

TEST(LineTrace, TheSmoothedLineOfAShortSeriesIsExact) {
  SeriesStore store;
  store.append(0.0, 1.0);
  store.append(1000.0, 2.0);
  store.append(2000.0, 3.0);
  TraceRequest r = request(0.0, 2000.0);
  r.smoothing = 0.6;
  TraceResult result;
  traceSeries(store, r, result);
  ASSERT_EQ(result.smoothed.points.size(), 3);
  EXPECT_DOUBLE_EQ(result.smoothed.points[0].y(), 1.0);
  EXPECT_DOUBLE_EQ(result.smoothed.points[1].y(), 1.625);
  EXPECT_NEAR(result.smoothed.points[2].y(), 1.824 / 0.784, 1e-12);
}

TEST(LineTrace, ALogAxisLeavesOutValuesAtOrBelowZeroAndCountsThem) {
  SeriesStore store;
  const double values[] = {1.0, -1.0, 0.0, 2.0, 3.0};
  for (int i = 0; i < 5; ++i) store.append(1000.0 * i, values[i]);
  TraceRequest r = request(0.0, 4000.0);
  r.positiveOnly = true;
  TraceResult result;
  traceSeries(store, r, result);
  ASSERT_EQ(result.raw.points.size(), 3);
  EXPECT_EQ(result.raw.points[1].y(), 2.0);
  EXPECT_EQ(result.nonPositive, 2U);
  // The line does not join 1 to 2 across what it left out.
  EXPECT_EQ(result.raw.breaks, std::vector<qsizetype>{1});
  EXPECT_EQ(result.raw.summary.yMin, 1.0);
}

// Windows of 2 ms on a loaded machine: now and then one closes a few milliseconds late. Seen
// over a minute, such a spacing is a fraction of a pixel; breaking the line there would cut its
// newest seconds into dots. Zoomed in to where it spans many pixels, it shows as the gap it is.
TEST(LineTrace, AGapTooNarrowToSeeDoesNotBreakTheLine) {
  SeriesStore store;
  double x = 0.0;
  std::vector<double> late;
  for (int i = 0; i < 2000; ++i) {
    const bool closesLate = i % 200 == 199;
    x += closesLate ? 7.0 : 2.0;
    if (closesLate) late.push_back(x);
    store.append(x, std::sin(i * 0.01));
  }
  ASSERT_EQ(late.size(), 10U);
  TraceRequest minute = request(x - 60'000.0, x, 300);  // 200 ms a column
  minute.smoothing = 0.6;
  TraceResult result;
  traceSeries(store, minute, result);
  EXPECT_TRUE(result.raw.breaks.empty());
  EXPECT_TRUE(result.smoothed.breaks.empty());

  // 100 ms over 300 columns: the 7 ms spacing spans 21 of them and breaks the line there.
  traceSeries(store, request(late[4] - 50.0, late[4] + 50.0, 300), result);
  ASSERT_EQ(result.raw.breaks.size(), 1U);
  EXPECT_EQ(result.raw.points[result.raw.breaks[0] - 1].x(), late[4] - 7.0);
  EXPECT_EQ(result.raw.points[result.raw.breaks[0]].x(), late[4]);

  // A stall of a second still breaks the minute's line.
  for (int i = 0; i < 100; ++i) store.append(x + 1000.0 + 2.0 * i, 0.0);
  traceSeries(store, request(x + 1200.0 - 60'000.0, x + 1200.0, 300), result);
  EXPECT_EQ(result.raw.breaks.size(), 1U);
}

TEST(LineTrace, VerticalTravelIsTheRisesAndFallsInPlotHeights) {
  const QList<QPointF> zigzag{{0, 0}, {1, 10}, {2, 0}, {3, 10}};
  EXPECT_DOUBLE_EQ(verticalTravel(zigzag, XRange{0, 10}, false), 3.0);
  EXPECT_DOUBLE_EQ(verticalTravel(zigzag, XRange{0, 20}, false), 1.5);
  // Beyond the axis the line is cut at its edge.
  EXPECT_DOUBLE_EQ(verticalTravel({{0, -100}, {1, 100}}, XRange{0, 10}, false), 1.0);
  // On a log axis in its decades; a value it cannot show is left out.
  EXPECT_DOUBLE_EQ(verticalTravel({{0, 1}, {1, 100}, {2, 0}, {3, 10}}, XRange{1, 1000}, true), 1.0);
  EXPECT_EQ(verticalTravel(zigzag, XRange{5, 5}, false), 0.0);  // no span to measure in
  EXPECT_EQ(verticalTravel({}, XRange{0, 10}, false), 0.0);
}

TEST(LineTrace, LinesAreDenseAboveTheThresholdAndSparseAgainOnlyWellBelowIt) {
  const double width = 100.0;
  EXPECT_FALSE(drawsDense(kDenseTravel * width, width, false));
  EXPECT_TRUE(drawsDense((kDenseTravel + 1.0) * width, width, false));
  // Between the two thresholds a chart stays as it was: it does not switch at every redraw.
  const double between = (kDenseTravel + kSparseTravel) / 2.0 * width;
  EXPECT_TRUE(drawsDense(between, width, true));
  EXPECT_FALSE(drawsDense(between, width, false));
  EXPECT_FALSE(drawsDense((kSparseTravel - 1.0) * width, width, true));
  // No plot laid out yet: nothing changes.
  EXPECT_TRUE(drawsDense(1e9, 0.0, true));
  EXPECT_FALSE(drawsDense(1e9, 0.0, false));
}

TEST(LineTrace, GapsEverywhereMakeABoundedNumberOfStretches) {
  SeriesStore store;
  double x = 0.0;
  for (int i = 0; i < 1000; ++i) {
    x += (i % 3 == 2) ? 50'000.0 : 1000.0;  // a stall every third sample
    store.append(x, 1.0);
  }
  TraceRequest r = request(0.0, x);
  r.maxStretches = 8;
  TraceResult result;
  traceSeries(store, r, result);
  EXPECT_EQ(result.raw.breaks.size(), 7U);
}

TEST(LineTrace, SamplesAfterTheCutoffAreNotDrawn) {
  SeriesStore store;
  for (int i = 0; i < 10; ++i) store.append(1000.0 * i, i);
  TraceRequest r = request(0.0, 10'000.0);
  r.cutoff = 4500.0;
  r.smoothing = 0.5;
  TraceResult result;
  traceSeries(store, r, result);
  EXPECT_EQ(result.raw.points.back().x(), 4000.0);
  EXPECT_EQ(result.smoothed.points.back().x(), 4000.0);
}

TEST(LineTrace, BreaksFallBetweenThePointsAGapSeparates) {
  const QList<QPointF> points{{0, 0}, {1, 0}, {5, 0}, {6, 0}, {9, 0}};
  EXPECT_EQ(breaksAt(points, {{1.0, 5.0}, {6.0, 9.0}}), (std::vector<qsizetype>{2, 4}));
  // A gap left of every point or between points not drawn changes nothing.
  EXPECT_TRUE(breaksAt(points, {{-5.0, -1.0}}).empty());
  EXPECT_TRUE(breaksAt({}, {{1.0, 5.0}}).empty());
}

// A line from (x, y) pairs, with stretches starting at `breaks`.
TracedLine tracedLine(const std::vector<std::pair<double, double>>& points, std::vector<qsizetype> breaks = {}) {
  TracedLine line;
  for (const auto& [x, y] : points) line.points.append(QPointF(x, y));
  line.breaks = std::move(breaks);
  return line;
}

// In windows under 100 samples p99 and max are equal: the max is left out there, so the p99 under
// it shows, and drawn where it departs, leaving the p99 and rejoining it.
TEST(LineTrace, AMaxIsLeftOutWhereItLiesOnItsP99) {
  const TracedLine p99 = tracedLine({{0, 5}, {1, 6}, {2, 5}, {3, 7}, {4, 5}, {5, 6}, {6, 5}, {7, 5}});
  TracedLine max = tracedLine({{0, 5}, {1, 6}, {2, 5}, {3, 9}, {4, 5}, {5, 6}, {6, 5}, {7, 5}});
  EXPECT_TRUE(hideWhereEqual(max, p99, 32));
  // The departure at x = 3, from and back to the p99.
  EXPECT_EQ(max.points, (QList<QPointF>{{2, 5}, {3, 9}, {4, 5}}));
  EXPECT_TRUE(max.breaks.empty());

  // Equal throughout: nothing of the max is drawn.
  TracedLine same = p99;
  EXPECT_TRUE(hideWhereEqual(same, p99, 32));
  EXPECT_TRUE(same.points.isEmpty());
  EXPECT_TRUE(same.breaks.empty());

  // Different throughout: all of it.
  TracedLine above = tracedLine({{0, 8}, {1, 8}, {2, 8}});
  EXPECT_FALSE(hideWhereEqual(above, p99, 32));
  EXPECT_EQ(above.points.size(), 3);
}

TEST(LineTrace, AMaxLeftOutInPlacesBreaksThereAndKeepsItsOwnBreaks) {
  const TracedLine p99 = tracedLine({{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 1}, {10, 1}, {11, 1}});
  // Departs at 1, lies on the p99 over 3..4, departs at 5; a stall between 5 and 10 breaks it,
  // and after it departs at 10.
  TracedLine max = tracedLine({{0, 1}, {1, 2}, {2, 1}, {3, 1}, {4, 1}, {5, 2}, {10, 2}, {11, 1}}, {6});
  EXPECT_TRUE(hideWhereEqual(max, p99, 32));
  EXPECT_EQ(max.points, (QList<QPointF>{{0, 1}, {1, 2}, {2, 1}, {4, 1}, {5, 2}, {10, 2}, {11, 1}}));
  EXPECT_EQ(max.breaks, (std::vector<qsizetype>{3, 5}));

  // A point that lies alone in a stretch draws nothing: it goes rather than make a series.
  TracedLine lone = tracedLine({{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 1}, {5, 9}}, {5});
  EXPECT_TRUE(hideWhereEqual(lone, p99, 32));
  EXPECT_TRUE(lone.points.isEmpty());
}

TEST(LineTrace, AMaxThatWouldBreakIntoTooManyStretchesIsDrawnWhole) {
  TracedLine p99;
  TracedLine max;
  for (int i = 0; i < 200; ++i) {
    p99.points.append(QPointF(i, 1));
    max.points.append(QPointF(i, i % 4 == 0 ? 2 : 1));  // a departure every fourth point
  }
  const TracedLine whole = max;
  EXPECT_FALSE(hideWhereEqual(max, p99, 32));
  EXPECT_EQ(max.points, whole.points);
  EXPECT_TRUE(max.breaks.empty());
}

TEST(LineTrace, RunsOfNaNAreGivenInPlotUnitsOnTimeAndStepAxes) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  SeriesStore store;
  for (int i = 0; i < 10; ++i) store.append(1000.0 * i, i >= 4 && i <= 5 ? kNaN : 1.0, 100.0 + i);
  store.append(10'000.0, kNaN, 110.0);  // NaN again at the newest
  const XRange all{-1e18, 1e18};
  const double noCutoff = std::numeric_limits<double>::infinity();
  // Seconds since a start at 0: from the first NaN to where it is finite again.
  std::vector<NonFiniteStretch> runs = nonFiniteStretches(store, TimeAxisMode::SinceRunStart, {0.0, 0.001}, all, noCutoff);
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_DOUBLE_EQ(runs[0].from, 4.0);
  EXPECT_DOUBLE_EQ(runs[0].to, 6.0);
  EXPECT_TRUE(runs[0].nan);
  EXPECT_FALSE(runs[0].open);
  EXPECT_DOUBLE_EQ(runs[1].from, 10.0);
  EXPECT_TRUE(runs[1].open);
  // At their steps on the Step axis; a run timed outside the window is left out.
  runs = nonFiniteStretches(store, TimeAxisMode::Step, {}, XRange{0.0, 8000.0}, noCutoff);
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_DOUBLE_EQ(runs[0].from, 104.0);
  EXPECT_DOUBLE_EQ(runs[0].to, 106.0);
  // Paused at 5 s: the run ends there, and the later one is not shown yet.
  runs = nonFiniteStretches(store, TimeAxisMode::SinceRunStart, {0.0, 0.001}, all, 5.0);
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_DOUBLE_EQ(runs[0].to, 5.0);
}

}  // namespace
}  // namespace livemon::ui
