// The Step axis without widgets: samples keep their steps through the store's buckets, a time
// window picks the points and the axis shows their steps, a run resumed from a checkpoint is drawn
// along its newest path, lines trace and break in steps, and a band breaks where its lines do.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <livemon/ui/model/line_trace.h>
#include <livemon/ui/model/series_store.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/model/step_points.h>
#include <livemon/ui/model/time_view.h>

namespace livemon::ui {
namespace {

constexpr double kAll = std::numeric_limits<double>::infinity();

// (step, y) of every point, in order.
std::vector<std::pair<double, double>> pointsOf(const StepPoints& points) {
  std::vector<std::pair<double, double>> out;
  points.visitFrom(-kAll, 0, [&](double step, double y, bool) {
    out.emplace_back(step, y);
    return true;
  });
  return out;
}

TraceRequest request(double xMin, double xMax) {
  TraceRequest r;
  r.xMin = xMin;
  r.xMax = xMax;
  r.columns = 1000;
  return r;
}

TEST(StepPoints, PointsWithoutAStepAreLeftOutNotPlacedAtAMadeUpStep) {
  SeriesStore store;
  store.append(1000.0, 1.0);  // before the job set a step
  store.append(2000.0, 2.0, 10.0);
  store.append(3000.0, 3.0);
  store.append(4000.0, 4.0, 30.0);
  EXPECT_EQ(store.steppedCount(), 2U);
  const StepPoints points(store, XRange{-kAll, kAll});
  EXPECT_EQ(pointsOf(points), (std::vector<std::pair<double, double>>{{10.0, 2.0}, {30.0, 4.0}}));

  SeriesStore none;
  none.append(1000.0, 1.0);
  EXPECT_FALSE(none.hasSteps());
  EXPECT_TRUE(StepPoints(none, XRange{-kAll, kAll}).empty());
  EXPECT_FALSE(none.stepExtent(-kAll, kAll));
}

TEST(StepPoints, TheTimeWindowPicksThePointsAndTheirStepsAreTheExtent) {
  SeriesStore store;
  for (int i = 0; i < 100; ++i) store.append(1000.0 * i, i * 0.5, 50.0 * i);  // 50 steps a second
  const StepPoints points(store, XRange{40'000.0, 59'000.0});
  ASSERT_EQ(points.size(), 20U);
  EXPECT_EQ(points.steps(), (XRange{2000.0, 2950.0}));
  EXPECT_EQ(store.stepExtent(40'000.0, 59'000.0), (std::pair{2000.0, 2950.0}));
  EXPECT_EQ(points.typicalInterval(), 50.0);
  // A window before the data, or one with no point in it.
  EXPECT_FALSE(store.stepExtent(-5000.0, -1.0));
  EXPECT_FALSE(store.stepExtent(40'100.0, 40'900.0));
}

TEST(StepPoints, StepsSurviveFoldingIntoBuckets) {
  SeriesStore::Limits limits;
  limits.recentCapacity = 16;
  limits.bucketCapacity = 8;
  limits.samplesPerBucket = 4;
  SeriesStore store(limits);
  for (int i = 0; i < 400; ++i) store.append(10.0 * i, std::sin(i * 0.3), i);
  ASSERT_GT(store.bucketCount(), 0U);
  // Every point kept, old ones from buckets too, sits at its own sample's step: x = 10 * step.
  std::size_t visited = 0;
  store.visitPointsFrom(-kAll, 0, [&](const SeriesStore::Point& p, bool) {
    EXPECT_EQ(p.step * 10.0, p.x);
    ++visited;
    return true;
  });
  EXPECT_GT(visited, store.recentSize());  // the buckets were visited with a `before` of 0
  const StepPoints points(store, XRange{-kAll, kAll});
  EXPECT_EQ(points.size(), visited);
  EXPECT_EQ(points.steps().min, 0.0);
  EXPECT_EQ(points.steps().max, 399.0);
  EXPECT_EQ(store.stepExtent(-kAll, kAll), (std::pair{0.0, 399.0}));
}

TEST(StepPoints, ARunResumedFromACheckpointIsDrawnAlongItsNewestPath) {
  SeriesStore store;
  for (int step = 0; step <= 100; step += 10) store.append(1000.0 + step, 1.0, step);   // to step 100
  for (int step = 60; step <= 140; step += 10) store.append(5000.0 + step, 2.0, step);  // back to 60
  const StepPoints points(store, XRange{-kAll, kAll});
  const auto drawn = pointsOf(points);
  // Steps 0..50 of the first try, then 60..140 of the second: x never goes back.
  ASSERT_EQ(drawn.size(), 6U + 9U);
  EXPECT_EQ(drawn[5], (std::pair{50.0, 1.0}));
  EXPECT_EQ(drawn[6], (std::pair{60.0, 2.0}));
  EXPECT_EQ(drawn.back(), (std::pair{140.0, 2.0}));
  // Windows that share a step all stay; only a step come back to is superseded.
  SeriesStore slow;
  for (int i = 0; i < 6; ++i) slow.append(1000.0 * i, i, i / 2);
  EXPECT_EQ(StepPoints(slow, XRange{-kAll, kAll}).size(), 6U);
  // The extent is the same with steps out of order (the store scans then).
  EXPECT_EQ(store.stepExtent(-kAll, kAll), (std::pair{0.0, 140.0}));
  EXPECT_EQ(store.stepExtent(5000.0, kAll), (std::pair{60.0, 140.0}));
}

TEST(StepPoints, ALineOnStepsIsTracedSmoothedAndBrokenWhereStepsAreMissing) {
  SeriesStore store;
  // A window every 10 steps; steps 200..490 never came.
  for (int step = 0; step < 200; step += 10) store.append(100.0 * step, 1.0 + step, step);
  for (int step = 500; step < 700; step += 10) store.append(100.0 * step, 1.0 + step, step);
  const StepPoints points(store, XRange{-kAll, kAll});
  TraceRequest r = request(0.0, 690.0);
  r.smoothing = 0.5;
  TraceResult result;
  traceSeries(points, r, result);
  ASSERT_EQ(result.raw.points.size(), 40);
  EXPECT_EQ(result.raw.points.front(), QPointF(0.0, 1.0));
  EXPECT_EQ(result.raw.points.back(), QPointF(690.0, 691.0));
  ASSERT_EQ(result.raw.breaks.size(), 1U);
  EXPECT_EQ(result.raw.points[result.raw.breaks[0]].x(), 500.0);
  EXPECT_EQ(result.smoothed.points.size(), 40);
  ASSERT_EQ(result.smoothed.breaks.size(), 1U);
}

TEST(StepPoints, TheRegistryStepExtentSpansEverySeriesInTheWindow) {
  StatRegistry registry;
  IngestBatch batch;
  auto info = std::make_shared<transport::SourceInfo>();
  info->run = "train";
  batch.sources.push_back(SourceDescriptor{0, info, ""});
  batch.series.push_back(SeriesDescriptor{0, 0, "loss", "mean", SeriesKind::StatWindow});
  batch.series.push_back(SeriesDescriptor{1, 0, "eval.acc", "value", SeriesKind::EventField});
  for (int i = 0; i < 10; ++i) batch.samples.push_back(StatSample{0, 1000.0 * i, 0.5, 100.0 * i});
  batch.samples.push_back(StatSample{1, 4500.0, 0.9, 450.0});
  batch.samples.push_back(StatSample{1, 5500.0, 0.9});  // no step
  registry.apply(batch);
  EXPECT_EQ(registry.stepExtent(XRange{3000.0, 6000.0}), (XRange{300.0, 600.0}));
  EXPECT_EQ(registry.extent(TimeAxisMode::Step), (XRange{0.0, 900.0}));
  EXPECT_FALSE(registry.stepExtent(XRange{9500.0, 9900.0}));
  // On the Step axis x is the step itself.
  const PlotTransform identity = registry.transform(*registry.series(0), TimeAxisMode::Step);
  EXPECT_EQ(identity.apply(450.0), 450.0);
}

TEST(BandStretches, ABandBreaksWhereItsLinesBreakInsteadOfBridgingAStall) {
  SeriesStore min;
  SeriesStore max;
  const auto add = [&](double x) {
    min.append(x, -1.0);
    max.append(x, 1.0);
  };
  for (int i = 0; i < 20; ++i) add(1000.0 * i);
  for (int i = 40; i < 60; ++i) add(1000.0 * i);  // a 20 s stall
  const TraceRequest r = request(0.0, 60'000.0);
  TraceResult minLine;
  TraceResult maxLine;
  traceSeries(min, r, minLine);
  traceSeries(max, r, maxLine);
  ASSERT_EQ(minLine.raw.breaks.size(), 1U);
  const std::vector<BandStretch> band = traceBandStretches(min, {}, minLine.raw, max, {}, maxLine.raw, r);
  ASSERT_EQ(band.size(), 2U);
  EXPECT_EQ(band[0].lower.back().x(), 19'000.0);
  EXPECT_EQ(band[0].upper.back().x(), 19'000.0);
  EXPECT_EQ(band[1].lower.front().x(), 40'000.0);
  EXPECT_EQ(band[1].upper.front().x(), 40'000.0);
  EXPECT_EQ(band[1].upper.back().x(), 59'000.0);
}

TEST(BandStretches, SplittingPairsTheEdgesByGapAndIsBounded) {
  const QList<QPointF> lower{{0, 0}, {1, 0}, {5, 0}, {6, 0}, {10, 0}};
  const QList<QPointF> upper{{0, 1}, {1, 1}, {5, 1}, {6, 1}, {10, 1}};
  // The same gap twice (from both lines) and one more.
  const auto split = splitBand(lower, upper, {{6.0, 10.0}, {1.0, 5.0}, {1.0, 5.0}}, 32);
  ASSERT_EQ(split.size(), 3U);
  EXPECT_EQ(split[1].lower, (QList<QPointF>{{5, 0}, {6, 0}}));
  EXPECT_EQ(split[2].upper, (QList<QPointF>{{10, 1}}));
  // At most two stretches: the later gap is bridged.
  const auto bounded = splitBand(lower, upper, {{1.0, 5.0}, {6.0, 10.0}}, 2);
  ASSERT_EQ(bounded.size(), 2U);
  EXPECT_EQ(bounded[1].lower.size(), 3);
  EXPECT_EQ(splitBand(lower, upper, {}, 32).size(), 1U);
}

TEST(TimeView, StepAxisShowsTheStepsOfThePointsTheTimeRangePicks) {
  TimeView view;
  view.setMode(TimeAxisMode::Step);
  view.setRange(TimeRange::LastMinute);
  // The window is a time span in ms, as for the wall clock: the newest minute of a long run.
  EXPECT_EQ(view.window(XRange{0.0, 600'000.0}), (XRange{540'000.0, 600'000.0}));
  // The axis is the steps of the points in it, at least one step wide.
  EXPECT_EQ(view.visible(XRange{1200.0, 1500.0}), (XRange{1200.0, 1500.0}));
  EXPECT_EQ(view.visible(XRange{7.0, 7.0}), (XRange{6.5, 7.5}));
  EXPECT_EQ(view.visible(std::nullopt), (XRange{0.0, 1.0}));
  // Paused: the window ends at the time of pausing.
  view.setPaused(true, 500'000.0);
  EXPECT_EQ(view.window(XRange{0.0, 600'000.0}), (XRange{440'000.0, 500'000.0}));
  // A zoom is a range of steps, over every time up to the pause.
  view.showFixed(XRange{100.0, 200.0});
  EXPECT_EQ(view.visible(XRange{0.0, 5000.0}), (XRange{100.0, 200.0}));
  EXPECT_EQ(view.window(XRange{0.0, 600'000.0}), (XRange{-kAll, 500'000.0}));
  view.setPaused(false, std::nullopt);
  EXPECT_EQ(view.window(XRange{0.0, 600'000.0}), (XRange{-kAll, kAll}));
  EXPECT_EQ(TimeView::timeMode(TimeAxisMode::Step), TimeAxisMode::WallClock);
}

}  // namespace
}  // namespace livemon::ui
