// Charts against steps, offscreen: the time range picks the points and the axis shows their steps,
// points without a step are not drawn and a chart without any says so, zoom, smoothing, hover and
// CSV work in steps; two x-range defects: a young run fills the chart, and a min–max band
// breaks at a stall like its lines; and several runs overlaid by step.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <QBuffer>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <QtTest/QTest>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/chart_csv.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_band.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/chart_legend.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;
using test::waitFor;

constexpr double kStart = 1'700'000'000'000.0;

class StepChartTest : public ::testing::Test {
 protected:
  // A Stat window through the real converter; `step` is the event's, if any.
  void feed(const std::shared_ptr<const transport::SourceInfo>& source, double ms, std::optional<int64_t> step,
            std::unordered_map<std::string, DataValue> data) {
    IngestBatch batch;
    Event event{"livemon.Stat", atMs(ms), std::move(data)};
    event.step = step;
    auto r = received(source, std::move(event));
    converter_.convert(r, batch);
    const RegistryChanges changes = registry_.apply(batch);
    grid_.addSeries(changes.newSeries);
  }

  // The grid shown, with `stat`'s chart made and on screen.
  StatChartView& showChart(const QString& stat) {
    grid_.setRenderBudget(std::chrono::hours(1));
    grid_.resize(1000, 700);
    grid_.show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(&grid_));
    EXPECT_TRUE(waitFor([&] {
      grid_.refresh();
      return grid_.chart(stat) != nullptr && grid_.chart(stat)->isOnScreen();
    }));
    grid_.refresh();
    return *grid_.chart(stat);
  }

  static std::vector<double> xs(const QLineSeries* line) {
    std::vector<double> out;
    for (const QPointF& p : line->points()) out.push_back(p.x());
    return out;
  }

  EventConverter converter_;
  StatRegistry registry_;
  ChartGrid grid_{registry_};
  const std::shared_ptr<const transport::SourceInfo> source_ = makeSource("train", 100, std::nullopt, kStart);
};

TEST_F(StepChartTest, TheTimeRangePicksThePointsAndTheAxisShowsTheirSteps) {
  // 200 windows a second apart, 10 steps each; window 150 states no step.
  for (int i = 0; i < 200; ++i) {
    feed(source_, kStart + 1000.0 * i, i == 150 ? std::nullopt : std::optional<int64_t>(10 * i), {{"loss.mean", 0.5 * i}});
  }
  grid_.setTimeAxisMode(TimeAxisMode::Step);
  grid_.setTimeRange(TimeRange::LastMinute);
  StatChartView& chart = showChart(QStringLiteral("loss"));
  // The newest minute: windows 139..199, at steps 1390..1990.
  EXPECT_EQ(chart.xRange(), (XRange{1390.0, 1990.0}));
  const QLineSeries* mean = chart.line(QStringLiteral("mean"), 0);
  ASSERT_NE(mean, nullptr);
  const std::vector<double> steps = xs(mean);
  ASSERT_EQ(steps.size(), 60U);  // 61 windows, less the one without a step
  EXPECT_EQ(steps.front(), 1390.0);
  EXPECT_EQ(steps.back(), 1990.0);
  EXPECT_EQ(std::count(steps.begin(), steps.end(), 1500.0), 0) << "no made-up step for window 150";
  EXPECT_EQ(mean->at(0).y(), 0.5 * 139);
  // The axis says "step" and ticks on whole steps.
  auto* axis = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).front());
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(axis->titleText(), QStringLiteral("step"));
  EXPECT_TRUE(axis->isTitleVisible()) << "a title nobody sees says nothing";
  EXPECT_GE(axis->tickInterval(), 1.0);
  EXPECT_EQ(axis->tickInterval(), std::round(axis->tickInterval()));
  // Hover names the step.
  const QString text = chart.tooltipAt(chart.plotRect().center());
  EXPECT_TRUE(text.contains(QStringLiteral("step 1"))) << text.toStdString();
  EXPECT_TRUE(chart.stepNote().isEmpty());
  // The whole run shows every step.
  grid_.setTimeRange(TimeRange::All);
  grid_.refresh();
  EXPECT_EQ(chart.xRange(), (XRange{0.0, 1990.0}));
  EXPECT_EQ(chart.line(QStringLiteral("mean"), 0)->count(), 199);
}

TEST_F(StepChartTest, ZoomSmoothingLogScaleAndCsvWorkInSteps) {
  for (int i = 0; i < 100; ++i) {
    feed(source_, kStart + 1000.0 * i, 10 * i, {{"loss.mean", 1.0 + i}, {"loss.min", 0.5 + i}, {"loss.max", 2.0 + i}});
  }
  grid_.setTimeAxisMode(TimeAxisMode::Step);
  grid_.setTimeRange(TimeRange::All);
  StatChartView& chart = showChart(QStringLiteral("loss"));
  ASSERT_NE(chart.band(0), nullptr);
  EXPECT_EQ(chart.band(0)->upperSeries()->count(), 100);
  EXPECT_EQ(chart.band(0)->upperSeries()->at(10).x(), 100.0);

  // A zoom is a range of steps, on every chart.
  emit chart.rangeRequested(300.0, 400.0);
  grid_.refresh();
  EXPECT_EQ(chart.xRange(), (XRange{300.0, 400.0}));
  const std::vector<double> zoomed = xs(chart.line(QStringLiteral("mean"), 0));
  EXPECT_EQ(zoomed.front(), 290.0);  // the neighbours outside, so the line reaches the edges
  EXPECT_EQ(zoomed.back(), 410.0);

  // CSV: a step column and a row per step in view.
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  ASSERT_TRUE(writeChartCsv(buffer, chart.csvColumns(), chart.xRange(), chart.timeAxisMode()));
  const QStringList rows = QString::fromUtf8(buffer.data()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  ASSERT_EQ(rows.size(), 1 + 11);
  EXPECT_TRUE(rows[0].startsWith(QStringLiteral("step,"))) << rows[0].toStdString();
  EXPECT_TRUE(rows[1].startsWith(QStringLiteral("300,"))) << rows[1].toStdString();

  // Smoothing and a log scale apply as on the time axes.
  grid_.followLive();
  grid_.viewOptions().setSmoothing(0.6);
  grid_.viewOptions().setLogScaleAll(true);
  grid_.refresh();
  EXPECT_TRUE(chart.isLogScale());
  EXPECT_EQ(chart.smoothedLine(chart.seriesIds().front())->count(), 100);
  EXPECT_EQ(chart.smoothedLine(chart.seriesIds().front())->at(0).x(), 0.0);
}

TEST_F(StepChartTest, AChartWithoutStepsSaysSoAndOneSourceWithoutStepsIsNamed) {
  for (int i = 0; i < 10; ++i) feed(source_, kStart + 1000.0 * i, std::nullopt, {{"loss.mean", 1.0}});
  grid_.setTimeAxisMode(TimeAxisMode::Step);
  StatChartView& chart = showChart(QStringLiteral("loss"));
  EXPECT_TRUE(chart.stepNote().startsWith(QStringLiteral("No step data"))) << chart.stepNote().toStdString();
  EXPECT_EQ(chart.line(QStringLiteral("mean"), 0)->count(), 0);

  // A second run that sets steps: its line is drawn, the first is named as having none.
  const auto other = makeSource("eval", 200, std::nullopt, kStart);
  for (int i = 0; i < 10; ++i) feed(other, kStart + 1000.0 * i, i, {{"loss.mean", 2.0}});
  grid_.refresh();
  grid_.refresh();
  EXPECT_EQ(chart.line(QStringLiteral("mean"), 1)->count(), 10);
  EXPECT_EQ(chart.stepNote(), QStringLiteral("No step data: mean · train")) << chart.stepNote().toStdString();

  // Not on the time axes.
  grid_.setTimeAxisMode(TimeAxisMode::WallClock);
  grid_.refresh();
  EXPECT_TRUE(chart.stepNote().isEmpty());
  EXPECT_EQ(chart.line(QStringLiteral("mean"), 0)->count(), 10);
}

TEST_F(StepChartTest, AYoungRunFillsTheChartInsteadOfItsLeftPart) {
  // 30 s of a run with "Last 5 min".
  grid_.setTimeRange(TimeRange::Last5Minutes);
  for (int i = 0; i <= 30; ++i) feed(source_, kStart + 1000.0 * i, i, {{"loss.mean", 1.0}});
  for (TimeAxisMode mode : {TimeAxisMode::WallClock, TimeAxisMode::SinceRunStart}) {
    grid_.setTimeAxisMode(mode);
    StatChartView& chart = showChart(QStringLiteral("loss"));
    const double perSecond = TimeView::unitsPerSecond(mode);
    const double first = mode == TimeAxisMode::WallClock ? kStart : 0.0;
    // From the first point to the newest, give or take the live edge's steps (snapLiveEdge), not
    // the whole 5 minutes.
    const XRange x = chart.xRange();
    const double span = 30.0 * perSecond;
    EXPECT_LE(x.min, first) << timeAxisModeKey(mode).toStdString();
    EXPECT_GE(x.max, first + span) << timeAxisModeKey(mode).toStdString();
    EXPECT_LT(x.max - x.min, span * 1.07) << timeAxisModeKey(mode).toStdString();
  }
}

TEST_F(StepChartTest, TheBandBreaksAtAStallLikeItsLines) {
  const auto window = [&](int i) { feed(source_, kStart + 1000.0 * i, i, {{"loss.min", 0.0}, {"loss.max", 1.0}}); };
  for (int i = 0; i < 30; ++i) window(i);
  for (int i = 60; i < 90; ++i) window(i);  // 30 s without windows
  grid_.setTimeAxisMode(TimeAxisMode::SinceRunStart);
  grid_.setTimeRange(TimeRange::All);
  StatChartView& chart = showChart(QStringLiteral("loss"));
  ASSERT_EQ(chart.trace(chart.seriesIds().front())->stretchCount(), 2);
  const ChartBand* band = chart.bandStretches(0);
  ASSERT_NE(band, nullptr);
  ASSERT_EQ(band->stretchCount(), 2);
  EXPECT_EQ(band->area(0)->upperSeries()->points().back().x(), 29.0);
  EXPECT_EQ(band->area(1)->lowerSeries()->points().front().x(), 60.0);
  EXPECT_EQ(band->area(0), chart.band(0));
  // Hiding an edge hides every stretch.
  chart.setSeriesVisible(chart.seriesIds().front(), false);
  EXPECT_FALSE(band->area(0)->isVisible());
  EXPECT_FALSE(band->area(1)->isVisible());
}

// Several runs on one chart: one line per run in its run's colour, a point at step N of each run
// exactly at x = N whatever the runs' step rates and start times; a hidden run leaves the chart.
TEST_F(StepChartTest, TwoRunsOfDifferentStepRatesLieAtTheirStepsInTheirColours) {
  RunDisplay runs;
  grid_.setRunDisplay(&runs);
  runs.assign(QStringLiteral("lr-1e-3"));
  runs.assign(QStringLiteral("lr-1e-2"));
  // Run a makes 10 steps a second; run b, started an hour later, 3.
  const auto a = makeSource("lr-1e-3", 100, std::nullopt, kStart);
  const auto b = makeSource("lr-1e-2", 200, std::nullopt, kStart + 3.6e6);
  grid_.viewOptions().setSmoothing(0.0);
  for (int i = 0; i < 60; ++i) {
    feed(a, kStart + 1000.0 * i, 10 * i, {{"loss.mean", 1.0 + i}, {"loss.min", 0.5 + i}, {"loss.max", 2.0 + i}});
    feed(b, kStart + 3.6e6 + 1000.0 * i, 3 * i, {{"loss.mean", 100.0 + i}, {"loss.min", 99.0 + i}, {"loss.max", 101.0 + i}});
  }
  grid_.setTimeAxisMode(TimeAxisMode::Step);
  grid_.setTimeRange(TimeRange::All);
  StatChartView& chart = showChart(QStringLiteral("loss"));
  EXPECT_TRUE(chart.showsSeveralRuns());
  const QLineSeries* meanA = chart.line(QStringLiteral("mean"), 0);
  const QLineSeries* meanB = chart.line(QStringLiteral("mean"), 1);
  ASSERT_NE(meanA, nullptr);
  ASSERT_NE(meanB, nullptr);
  std::map<double, double> pointsA;
  std::map<double, double> pointsB;
  for (const QPointF& p : meanA->points()) pointsA[p.x()] = p.y();
  for (const QPointF& p : meanB->points()) pointsB[p.x()] = p.y();
  ASSERT_EQ(pointsA.size(), 60U);
  ASSERT_EQ(pointsB.size(), 60U);
  // Step 30 is window 3 of run a and window 10 of run b: both exactly at x = 30.
  ASSERT_TRUE(pointsA.contains(30.0));
  ASSERT_TRUE(pointsB.contains(30.0));
  EXPECT_EQ(pointsA.at(30.0), 4.0);
  EXPECT_EQ(pointsB.at(30.0), 110.0);
  for (int i = 0; i < 60; ++i) {
    EXPECT_EQ(pointsA.at(10.0 * i), 1.0 + i);
    EXPECT_EQ(pointsB.at(3.0 * i), 100.0 + i);
  }
  // One line per run, in the run's colour: the other aggregations are left out.
  EXPECT_TRUE(meanA->isVisible());
  EXPECT_TRUE(meanB->isVisible());
  EXPECT_FALSE(chart.line(QStringLiteral("max"), 0)->isVisible());
  EXPECT_FALSE(chart.line(QStringLiteral("min"), 1)->isVisible());
  EXPECT_EQ(meanA->pen().color(), runs.colour(QStringLiteral("lr-1e-3")));
  EXPECT_EQ(meanB->pen().color(), runs.colour(QStringLiteral("lr-1e-2")));
  EXPECT_NE(meanA->pen().color(), meanB->pen().color());
  ASSERT_EQ(chart.legend().entries().size(), 2U);
  EXPECT_EQ(chart.legend().entries()[0].label, QStringLiteral("mean · lr-1e-3"));
  // The hover lists both runs' values at the step under the cursor: step 150, where both have one.
  const QPointF atStep = chart.chart()->mapToScene(chart.chart()->mapToPosition(QPointF(150.0, 50.0)));
  const QString text = chart.tooltipAt(chart.mapFromScene(atStep));
  EXPECT_TRUE(text.contains(QStringLiteral("mean · lr-1e-3")) && text.contains(QStringLiteral("mean · lr-1e-2")))
      << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("&nbsp;16<")) && text.contains(QStringLiteral("&nbsp;150<"))) << text.toStdString();

  // Run b hidden: it leaves the chart, and run a alone shows all its aggregations again.
  runs.setShown(QStringLiteral("lr-1e-2"), false);
  grid_.refresh();
  EXPECT_FALSE(chart.showsSeveralRuns());
  EXPECT_FALSE(meanB->isVisible());
  EXPECT_TRUE(chart.line(QStringLiteral("max"), 0)->isVisible());
  for (const LegendEntry& entry : chart.legend().entries()) EXPECT_FALSE(entry.label.contains(QStringLiteral("lr-1e-2")));
  EXPECT_FALSE(chart.tooltipAt(chart.mapFromScene(atStep)).contains(QStringLiteral("lr-1e-2")));
}

}  // namespace
}  // namespace livemon::ui
