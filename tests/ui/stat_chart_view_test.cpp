// One Stat's chart and the grid of them: lines and bands from the stores, y fitted to what is
// visible, legend toggles, tooltip, zoom, pan and reset, several sources and their removal, and
// the grid skipping charts that are off screen or unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <QScrollBar>
#include <QSignalSpy>
#include <QDateTime>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtTest/QTest>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/chart_legend.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "stepping_clock.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::lastY;
using test::makeSource;
using test::received;
using test::SteppingClock;
using test::waitFor;

constexpr double kStart = 1'700'000'000'000.0;  // the sources' start, ms since the epoch

class ChartTest : public ::testing::Test {
 protected:
  // Feeds a Stat event through the real converter into the registry; returns the new series.
  std::vector<SeriesId> feed(const std::shared_ptr<const transport::SourceInfo>& source, double ms,
                             std::unordered_map<std::string, DataValue> data) {
    IngestBatch batch;
    auto event = received(source, Event{"livemon.Stat", atMs(ms), std::move(data)});
    converter_.convert(event, batch);
    return registry_.apply(batch).newSeries;
  }

  // A chart for `stat` holding `ids`, shown at a known size.
  StatChartView& showChart(const QString& stat, const std::vector<SeriesId>& ids) {
    chart_ = std::make_unique<StatChartView>(stat, registry_, TimeAxisMode::SinceRunStart);
    for (SeriesId id : ids) chart_->addSeries(id);
    chart_->resize(800, 400);
    chart_->show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(chart_.get()));
    return *chart_;
  }

  ChartRenderContext context(double min, double max) const {
    ChartRenderContext result;
    result.mode = TimeAxisMode::SinceRunStart;
    result.x = XRange{min, max};
    return result;
  }

  EventConverter converter_;
  StatRegistry registry_;
  std::unique_ptr<StatChartView> chart_;
  const std::shared_ptr<const transport::SourceInfo> source_ = makeSource("train", 100, std::nullopt, kStart);
};

// The labels of the legend entries shown, once the legend has laid itself out.
QStringList shownLegend(StatChartView& chart) {
  QStringList labels;
  waitFor([&] {
    labels.clear();
    for (const LegendEntry& entry : chart.legend().entries()) labels << entry.label;
    return !labels.isEmpty();
  });
  return labels;
}

TEST_F(ChartTest, DrawsALinePerAggregationAndABandBetweenMinAndMax) {
  std::vector<SeriesId> ids;
  for (int i = 0; i < 60; ++i) {
    const double mean = std::sin(i * 0.2);
    auto added = feed(source_, kStart + 1000.0 * i, {{"loss.mean", mean}, {"loss.min", mean - 1}, {"loss.max", mean + 1}});
    ids.insert(ids.end(), added.begin(), added.end());
  }
  ASSERT_EQ(ids.size(), 3U);
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  ASSERT_TRUE(chart.render(context(0.0, 60.0)));

  for (const char* aggregation : {"mean", "min", "max"}) {
    QLineSeries* line = chart.line(QString::fromLatin1(aggregation), 0);
    ASSERT_NE(line, nullptr) << aggregation;
    EXPECT_EQ(line->count(), 60) << aggregation;
  }
  EXPECT_EQ(lastY(chart.line(QStringLiteral("mean"), 0)), std::sin(59 * 0.2));
  EXPECT_EQ(chart.line(QStringLiteral("mean"), 0)->at(59).x(), 59.0);  // seconds since the run started
  QAreaSeries* band = chart.band(0);
  ASSERT_NE(band, nullptr);
  EXPECT_EQ(band->upperSeries()->count(), 60);
  EXPECT_EQ(band->lowerSeries()->count(), 60);
  EXPECT_EQ(band->upperSeries()->at(10).y(), std::sin(10 * 0.2) + 1);
  EXPECT_TRUE(band->isVisible());
  // The legend lists the aggregations in their usual order, not the band.
  EXPECT_EQ(shownLegend(chart), (QStringList{QStringLiteral("mean"), QStringLiteral("min"), QStringLiteral("max")}));
}

TEST_F(ChartTest, TheYAxisFitsOnlyWhatIsVisible) {
  // (50, not 1000: a value orders of magnitude beyond the rest is left out of the fit anyway.)
  std::vector<SeriesId> ids = feed(source_, kStart, {{"loss.mean", 50.0}});
  for (int i = 1; i < 100; ++i) feed(source_, kStart + 1000.0 * i, {{"loss.mean", 5.0 + (i % 2)}});
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  chart.render(context(50.0, 99.0));  // the 50 at t=0 is off to the left
  EXPECT_LE(chart.yRange().min, 5.0);
  EXPECT_GE(chart.yRange().max, 6.0);
  EXPECT_LT(chart.yRange().max, 7.0);
  chart.render(context(0.0, 99.0));
  EXPECT_GE(chart.yRange().max, 50.0);
}

TEST_F(ChartTest, ALongSeriesIsHandedOverDecimatedWithItsSpike) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"step.value", 0.0}});
  for (int i = 1; i < 20'000; ++i) feed(source_, kStart + 10.0 * i, {{"step.value", i == 12'345 ? 99.0 : 0.0}});
  StatChartView& chart = showChart(QStringLiteral("step"), ids);
  chart.render(context(0.0, 200.0));
  QLineSeries* line = chart.line(ids[0]);
  EXPECT_LE(line->count(), 4 * chart.plotRect().width() + 2);
  bool spike = false;
  for (const QPointF& p : line->points()) spike = spike || p.y() == 99.0;
  EXPECT_TRUE(spike);
  EXPECT_GE(chart.yRange().max, 99.0);
}

TEST_F(ChartTest, AnUnchangedChartIsNotRedrawnAndNewDataRedrawsIt) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"loss.mean", 1.0}});
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  ASSERT_TRUE(chart.render(context(0.0, 60.0)));
  chart.render(context(0.0, 60.0));  // the axes' labels may settle the plot's size once
  EXPECT_FALSE(chart.render(context(0.0, 60.0)));
  feed(source_, kStart + 1000.0, {{"loss.mean", 2.0}});
  EXPECT_TRUE(chart.render(context(0.0, 60.0)));
  EXPECT_EQ(lastY(chart.line(ids[0])), 2.0);
  EXPECT_TRUE(chart.render(context(0.0, 30.0)));  // a new range redraws too

  // Frozen (paused): new data alone does not redraw.
  chart.render(context(0.0, 30.0));
  feed(source_, kStart + 2000.0, {{"loss.mean", 3.0}});
  ChartRenderContext frozen = context(0.0, 30.0);
  frozen.frozen = true;
  EXPECT_FALSE(chart.render(frozen));
  EXPECT_EQ(lastY(chart.line(ids[0])), 2.0);
}

TEST_F(ChartTest, TheLegendTogglesSeriesAndTheBandFollowsItsEdges) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"loss.mean", 1.0}, {"loss.min", 0.0}, {"loss.max", 50.0}});
  for (int i = 1; i < 10; ++i) feed(source_, kStart + 1000.0 * i, {{"loss.mean", 1.0}, {"loss.min", 0.0}, {"loss.max", 50.0}});
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  chart.render(context(0.0, 10.0));
  QLineSeries* max = chart.line(QStringLiteral("max"), 0);
  ASSERT_NE(max, nullptr);
  const std::vector<LegendEntry>& entries = chart.legend().entries();
  const auto entry = std::find_if(entries.begin(), entries.end(), [](const LegendEntry& e) { return e.label == QLatin1String("max"); });
  ASSERT_NE(entry, entries.end());
  const std::size_t index = static_cast<std::size_t>(entry - entries.begin());
  const QPoint onEntry = chart.mapFromScene(chart.chart()->mapRectToScene(chart.legend().entryRect(index)).center());
  ASSERT_GT(onEntry.y(), chart.plotRect().bottom()) << "below the plot";

  QTest::mouseClick(chart.viewport(), Qt::LeftButton, Qt::NoModifier, onEntry);
  EXPECT_FALSE(max->isVisible());
  EXPECT_FALSE(chart.band(0)->isVisible());
  EXPECT_TRUE(shownLegend(chart).contains(QStringLiteral("max"))) << "the entry stays, dimmed, to be clicked back";
  chart.render(context(0.0, 10.0));
  EXPECT_LT(chart.yRange().max, 50.0) << "hidden lines do not stretch the y axis";

  QTest::mouseClick(chart.viewport(), Qt::LeftButton, Qt::NoModifier, onEntry);
  EXPECT_TRUE(max->isVisible());
  EXPECT_TRUE(chart.band(0)->isVisible());
  chart.render(context(0.0, 10.0));
  EXPECT_GE(chart.yRange().max, 50.0);
}

TEST_F(ChartTest, HoveringShowsTheTimeAndTheValuesUnderTheCursor) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"loss.mean", 1.5}, {"loss.p99", 9.25}});
  for (int i = 1; i <= 10; ++i) feed(source_, kStart + 1000.0 * i, {{"loss.mean", 1.5}, {"loss.p99", 9.25}});
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  chart.render(context(0.0, 10.0));
  const QRect plot = chart.plotRect();
  const QString text = chart.tooltipAt(plot.center());
  EXPECT_TRUE(text.contains(QStringLiteral("loss"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("s since start"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("mean"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("1.5"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("9.25"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("train@host:100"))) << "the source is named";
  EXPECT_TRUE(chart.tooltipAt(QPoint(2, 2)).isEmpty()) << "outside the plot";
}

TEST_F(ChartTest, CtrlWheelZoomsAboutTheCursorDragZoomsToTheBandRightDragPansAndDoubleClickResets) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"loss.mean", 0.0}});
  for (int i = 1; i <= 100; ++i) feed(source_, kStart + 1000.0 * i, {{"loss.mean", static_cast<double>(i)}});
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  chart.render(context(0.0, 100.0));
  QSignalSpy ranges(&chart, &StatChartView::rangeRequested);
  QSignalSpy resets(&chart, &StatChartView::resetRequested);
  const QRect plot = chart.plotRect();

  QWheelEvent wheel(QPointF(plot.center()), QPointF(chart.viewport()->mapToGlobal(plot.center())), QPoint(),
                    QPoint(0, 120), Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(chart.viewport(), &wheel);
  ASSERT_EQ(ranges.count(), 1);
  const double zoomedMin = ranges[0][0].toDouble();
  const double zoomedMax = ranges[0][1].toDouble();
  EXPECT_GT(zoomedMin, 0.0);
  EXPECT_LT(zoomedMax, 100.0);
  EXPECT_NEAR(zoomedMax - zoomedMin, 80.0, 0.5);  // 20 % per notch

  // Rubber band over the left quarter, the full plot height.
  const QPoint from(plot.left() + 2, plot.top() + 2);
  const QPoint to(plot.left() + plot.width() / 4, plot.bottom() - 2);
  QTest::mousePress(chart.viewport(), Qt::LeftButton, Qt::NoModifier, from);
  QTest::mouseMove(chart.viewport(), to);
  QTest::mouseRelease(chart.viewport(), Qt::LeftButton, Qt::NoModifier, to);
  ASSERT_EQ(ranges.count(), 2);
  EXPECT_NEAR(ranges[1][0].toDouble(), 0.0, 1.0);
  EXPECT_NEAR(ranges[1][1].toDouble(), 25.0, 1.5);
  EXPECT_TRUE(chart.hasManualYRange());

  // Pan with the right button: dragging right by a tenth of the plot shows earlier data.
  chart.render(context(40.0, 60.0));
  const QPoint start = plot.center();
  const QPoint end = start + QPoint(plot.width() / 10, 0);
  QTest::mousePress(chart.viewport(), Qt::RightButton, Qt::NoModifier, start);
  QMouseEvent move(QEvent::MouseMove, QPointF(end), QPointF(chart.viewport()->mapToGlobal(end)), Qt::NoButton,
                   Qt::RightButton, Qt::NoModifier);
  QApplication::sendEvent(chart.viewport(), &move);
  QTest::mouseRelease(chart.viewport(), Qt::RightButton, Qt::NoModifier, end);
  ASSERT_GE(ranges.count(), 3);
  EXPECT_NEAR(ranges.last()[0].toDouble(), 38.0, 0.3);
  EXPECT_NEAR(ranges.last()[1].toDouble(), 58.0, 0.3);

  QTest::mouseDClick(chart.viewport(), Qt::LeftButton, Qt::NoModifier, plot.center());
  EXPECT_EQ(resets.count(), 1);
  EXPECT_FALSE(chart.hasManualYRange());
}

// A range's windows of under 100 samples have p99 == max: the max line is left out where it lies
// on the p99, so the p99 shows, and the legend says so; with the p99 hidden, the max is whole.
TEST_F(ChartTest, AMaxIsDrawnOnlyWhereItDiffersFromItsP99) {
  std::vector<SeriesId> ids;
  for (int i = 0; i < 10; ++i) {
    const double p99 = 10.0 + i;
    const double max = i == 5 ? 40.0 : p99;
    for (SeriesId id : feed(source_, kStart + 1000.0 * i, {{"range/step.p99", p99}, {"range/step.max", max}})) ids.push_back(id);
  }
  ASSERT_EQ(ids.size(), 2U);
  StatChartView& chart = showChart(QStringLiteral("range/step"), ids);
  chart.render(context(0.0, 10.0), true);
  // A range chart starts with its p99 and max hidden (issue 30): shown, as a click on their legend
  // entries would.
  for (SeriesId id : ids) chart.setSeriesVisible(id, true);
  chart.render(context(0.0, 10.0), true);
  QLineSeries* p99 = chart.line(QStringLiteral("p99"), 0);
  QLineSeries* max = chart.line(QStringLiteral("max"), 0);
  ASSERT_NE(p99, nullptr);
  ASSERT_NE(max, nullptr);
  EXPECT_EQ(p99->count(), 10);
  // Only the departure at 5 s, from the p99 and back.
  EXPECT_EQ(max->points(), (QList<QPointF>{{4.0, 14.0}, {5.0, 40.0}, {6.0, 16.0}}));
  EXPECT_EQ(max->name(), QStringLiteral("max (where ≠ p99)"));
  EXPECT_TRUE(shownLegend(chart).contains(QStringLiteral("max (where ≠ p99)")));

  const SeriesId p99Id = registry_.series(ids[0])->aggregation == QLatin1String("p99") ? ids[0] : ids[1];
  chart.setSeriesVisible(p99Id, false);
  chart.render(context(0.0, 10.0), true);
  EXPECT_EQ(max->count(), 10);
  EXPECT_EQ(max->name(), QStringLiteral("max"));
}

TEST_F(ChartTest, SeveralSourcesGetAColourEachAndAreNamedInTheLegend) {
  const auto rank0 = makeSource("train", 100, 0, kStart);
  const auto rank1 = makeSource("train", 101, 1, kStart + 500.0);
  std::vector<SeriesId> ids = feed(rank0, kStart, {{"loss.mean", 1.0}, {"loss.min", 0.0}, {"loss.max", 2.0}});
  auto more = feed(rank1, kStart + 500.0, {{"loss.mean", 3.0}, {"loss.min", 2.0}, {"loss.max", 4.0}});
  ids.insert(ids.end(), more.begin(), more.end());
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  chart.render(context(0.0, 60.0));
  QLineSeries* mean0 = chart.line(QStringLiteral("mean"), 0);
  QLineSeries* mean1 = chart.line(QStringLiteral("mean"), 1);
  ASSERT_NE(mean0, nullptr);
  ASSERT_NE(mean1, nullptr);
  EXPECT_EQ(mean0->name(), QStringLiteral("mean · train r0"));
  EXPECT_EQ(mean1->name(), QStringLiteral("mean · train r1"));
  EXPECT_NE(mean0->pen().color().rgb(), mean1->pen().color().rgb());
  EXPECT_NE(chart.band(0), nullptr);
  EXPECT_NE(chart.band(1), nullptr);
  // Each run's x counts from its own start.
  EXPECT_EQ(mean1->at(0).x(), 0.0);
  const QString tooltip = chart.tooltipAt(chart.plotRect().topLeft() + QPoint(3, 3));
  EXPECT_TRUE(tooltip.contains(QStringLiteral("train r1"))) << tooltip.toStdString();
}

TEST_F(ChartTest, AMaxWithoutAMinGetsNoBandAndASecondSourceJoinsWithoutComplaint) {
  // Range Stats have a max but no min: no band, and rebuilding the chart for a second source
  // must not try to take a band that never existed off the chart.
  test::QtWarnings warnings;
  const auto first = makeSource("train", 100, 0, kStart);
  const auto second = makeSource("train", 101, 1, kStart);
  StatChartView& chart = showChart(QStringLiteral("range/forward"),
                                   feed(first, kStart, {{"range/forward.mean", 1.0}, {"range/forward.max", 2.0}}));
  chart.render(context(0.0, 60.0));
  for (SeriesId id : feed(second, kStart + 1000.0, {{"range/forward.mean", 3.0}, {"range/forward.max", 4.0}})) {
    chart.addSeries(id);
  }
  chart.render(context(0.0, 60.0));
  EXPECT_EQ(chart.band(0), nullptr);
  EXPECT_EQ(chart.band(1), nullptr);
  ASSERT_NE(chart.line(QStringLiteral("max"), 1), nullptr);
  EXPECT_EQ(chart.line(QStringLiteral("max"), 1)->count(), 1);
  EXPECT_TRUE(warnings.messages().isEmpty()) << warnings.text();
}

TEST_F(ChartTest, RemovingASourceTakesItsLinesAndBandAndLeavesASingleSourceLegend) {
  test::QtWarnings warnings;
  const auto rank0 = makeSource("train", 100, 0, kStart);
  const auto rank1 = makeSource("train", 101, 1, kStart);
  std::vector<SeriesId> ids = feed(rank0, kStart, {{"loss.mean", 1.0}, {"loss.min", 0.0}, {"loss.max", 2.0}});
  auto more = feed(rank1, kStart, {{"loss.mean", 30.0}, {"loss.min", 20.0}, {"loss.max", 40.0}});
  ids.insert(ids.end(), more.begin(), more.end());
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  chart.render(context(0.0, 60.0));
  ASSERT_NE(chart.band(1), nullptr);

  const RegistryRemoval removal = registry_.removeSources([](const SourceEntry& source) { return source.id == 1; });
  ASSERT_EQ(removal.series.size(), 3U);
  chart.removeSeries(removal.series);
  chart.render(context(0.0, 60.0));

  EXPECT_EQ(chart.seriesIds().size(), 3U);
  EXPECT_EQ(chart.line(QStringLiteral("mean"), 1), nullptr);
  EXPECT_EQ(chart.band(1), nullptr);
  ASSERT_NE(chart.band(0), nullptr);
  EXPECT_EQ(chart.band(0)->upperSeries()->count(), 1);
  // One source again: named by aggregation alone, in aggregation colours.
  ASSERT_NE(chart.line(QStringLiteral("mean"), 0), nullptr);
  EXPECT_EQ(chart.line(QStringLiteral("mean"), 0)->name(), QStringLiteral("mean"));
  EXPECT_EQ(chart.chart()->series().size(), 7);  // three lines, their smoothed lines (empty unsmoothed) and one band
  EXPECT_EQ(shownLegend(chart), (QStringList{QStringLiteral("mean"), QStringLiteral("min"), QStringLiteral("max")}));
  // The y axis fits what is left (0..2), not the removed source's 20..40.
  EXPECT_LT(chart.yRange().max, 10.0);
  EXPECT_TRUE(warnings.messages().isEmpty()) << warnings.text();
}

TEST_F(ChartTest, WallClockTicksFallOnRoundLocalTimes) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"loss.mean", 1.0}});
  for (int i = 1; i < 120; ++i) feed(source_, kStart + 1000.0 * i, {{"loss.mean", 1.0}});
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  chart.setTimeAxisMode(TimeAxisMode::WallClock);
  ChartRenderContext wall;
  wall.mode = TimeAxisMode::WallClock;
  wall.x = XRange{kStart + 7'300.0, kStart + 67'300.0};  // a minute, starting at an odd time
  chart.render(wall);
  const QList<QAbstractAxis*> axes = chart.chart()->axes(Qt::Horizontal);
  ASSERT_EQ(axes.size(), 1);
  auto* axis = qobject_cast<QCategoryAxis*>(axes.front());
  ASSERT_NE(axis, nullptr);
  const QStringList labels = axis->categoriesLabels();
  ASSERT_GE(labels.size(), 3);
  ASSERT_LE(labels.size(), 12);
  for (const QString& label : labels) {
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(axis->endValue(label)));
    EXPECT_EQ(at.time().msec(), 0) << label.toStdString();
    EXPECT_EQ(at.time().second() % 5, 0) << label.toStdString();
    EXPECT_EQ(at.toString(QStringLiteral("HH:mm:ss")), label);
    EXPECT_GT(axis->endValue(label), wall.x.min);
    EXPECT_LE(axis->endValue(label), wall.x.max);
  }
}

TEST(SourceLabels, AreShortAndUniqueAddingThePidOnlyWhenNeeded) {
  StatRegistry registry;
  EventConverter converter;
  IngestBatch batch;
  for (const auto& source : {makeSource("train", 1), makeSource("train", 2), makeSource("eval", 3, 0)}) {
    auto event = received(source, Event{"note", atMs(0), {}});
    converter.convert(event, batch);
  }
  const RegistryChanges changes = registry.apply(batch);
  EXPECT_EQ(changes.newSources.size(), 3U);
  EXPECT_EQ(registry.source(0)->label, QStringLiteral("train:1"));
  EXPECT_EQ(registry.source(1)->label, QStringLiteral("train:2"));
  EXPECT_EQ(registry.source(2)->label, QStringLiteral("eval r0"));
  EXPECT_EQ(registry.source(0)->description, QString::fromStdString(transport::describe(*makeSource("train", 1))));
}

TEST(StatRegistry, RemovedSourcesAndTheirSeriesAreGoneForGoodAndTheOthersRelabelled) {
  StatRegistry registry;
  EventConverter converter;
  IngestBatch batch;
  const auto first = makeSource("train", 1, std::nullopt, 1000.0);
  const auto second = makeSource("train", 2, std::nullopt, 1000.0);
  auto early = received(first, Event{"livemon.Stat", atMs(1000.0), {{"loss.mean", 1.0}}});
  auto late = received(second, Event{"livemon.Stat", atMs(9000.0), {{"loss.mean", 2.0}, {"acc.mean", 0.5}}});
  converter.convert(early, batch);
  converter.convert(late, batch);
  registry.apply(batch);
  ASSERT_EQ(registry.source(0)->label, QStringLiteral("train:1"));
  ASSERT_EQ(registry.extent(TimeAxisMode::WallClock)->max, 9000.0);

  const RegistryRemoval removal = registry.removeSources([](const SourceEntry& source) { return source.info->pid == 2; });
  EXPECT_EQ(removal.sources, (std::vector<SourceId>{1}));
  EXPECT_EQ(removal.series, (std::vector<SeriesId>{1, 2}));
  EXPECT_TRUE(removal.labelsChanged);
  EXPECT_EQ(registry.source(1), nullptr);
  EXPECT_EQ(registry.series(1), nullptr);
  EXPECT_EQ(registry.series(2), nullptr);
  EXPECT_EQ(registry.sourceCount(), 1U);
  EXPECT_EQ(registry.seriesCount(), 1U);
  EXPECT_EQ(registry.sourceIdEnd(), 2U);
  EXPECT_EQ(registry.source(0)->label, QStringLiteral("train"));  // no longer told apart from pid 2
  EXPECT_EQ(registry.extent(TimeAxisMode::WallClock)->max, 1000.0);

  // Samples still on their way for a removed series are dropped; a new source gets a new id.
  IngestBatch after;
  after.samples.push_back(StatSample{2, 9500.0, 0.7});
  auto third = received(makeSource("eval", 3), Event{"livemon.Stat", atMs(2000.0), {{"acc.mean", 0.9}}});
  converter.convert(third, after);
  const RegistryChanges changes = registry.apply(after);
  EXPECT_EQ(changes.newSources, (std::vector<SourceId>{2}));
  EXPECT_EQ(registry.series(2), nullptr);
  EXPECT_EQ(registry.extent(TimeAxisMode::WallClock)->max, 2000.0);
  EXPECT_TRUE(registry.removeSources([](const SourceEntry&) { return false; }).empty());
}

class ChartGridTest : public ChartTest {
 protected:
  static constexpr const char* kSixStats[] = {"a", "b", "c", "d", "e", "f"};

  // Six charts, one a Stat, all on screen in `grid` and all drawn; returns them.
  std::vector<StatChartView*> showSixCharts(ChartGrid& grid) {
    std::vector<SeriesId> ids;
    for (const char* stat : kSixStats) {
      auto added = feed(source_, kStart, {{std::string(stat) + ".mean", 1.0}});
      ids.insert(ids.end(), added.begin(), added.end());
    }
    grid.resize(1000, 1000);  // two columns, three rows: all on screen
    grid.show();
    grid.addSeries(ids);
    while (grid.pendingChartCount() > 0) grid.refresh();
    const std::vector<StatChartView*> charts = grid.charts();
    const auto onScreen = [](StatChartView* c) { return c->isOnScreen(); };
    EXPECT_TRUE(waitFor([&] { return std::all_of(charts.begin(), charts.end(), onScreen); }));
    grid.setRenderBudget(std::chrono::hours(1));
    while (grid.refresh().rendered > 0) {
    }
    return charts;
  }
};

TEST_F(ChartGridTest, ChartsAppearPerStatSortedAndOnlyThoseOnScreenAreDrawn) {
  std::vector<SeriesId> ids;
  for (int stat = 0; stat < 30; ++stat) {
    const std::string name = "stat" + std::string(stat < 10 ? "0" : "") + std::to_string(stat);
    auto added = feed(source_, kStart, {{name + ".mean", 1.0 * stat}});
    ids.insert(ids.end(), added.begin(), added.end());
  }
  ChartGrid grid(registry_);
  grid.setCreationBudget(std::chrono::milliseconds(0));  // one chart per refresh
  grid.setRenderBudget(std::chrono::hours(1));           // every due chart drawn at once
  grid.resize(600, 600);
  grid.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&grid));
  grid.addSeries(ids);
  EXPECT_EQ(grid.refresh().created, 1);
  EXPECT_EQ(grid.pendingChartCount(), 29);
  while (grid.pendingChartCount() > 0) grid.refresh();
  ASSERT_EQ(grid.charts().size(), 30U);
  EXPECT_EQ(grid.charts().front()->statName(), QStringLiteral("stat00"));
  EXPECT_EQ(grid.charts().back()->statName(), QStringLiteral("stat29"));

  // Once laid out, two charts fit in 600 px; the rest are off screen and are not drawn.
  StatChartView* first = grid.chart(QStringLiteral("stat00"));
  StatChartView* last = grid.chart(QStringLiteral("stat29"));
  ASSERT_TRUE(waitFor([&] { return last->y() > 5000; }));
  grid.refresh();
  EXPECT_TRUE(first->isOnScreen());
  EXPECT_FALSE(last->isOnScreen());
  ASSERT_NE(first->line(QStringLiteral("mean"), 0), nullptr);
  EXPECT_EQ(first->line(QStringLiteral("mean"), 0)->count(), 1);
  const std::optional<double> lastBefore = lastY(last->line(QStringLiteral("mean"), 0));
  feed(source_, kStart + 1000.0, {{"stat29.mean", 129.0}});
  grid.refresh();
  grid.refresh();
  EXPECT_EQ(lastY(last->line(QStringLiteral("mean"), 0)), lastBefore) << "off screen: not drawn";
  EXPECT_EQ(grid.refresh().rendered, 0) << "nothing on screen changed";

  // Scrolled into view, a chart is drawn on the next refresh.
  grid.verticalScrollBar()->setValue(grid.verticalScrollBar()->maximum());
  ASSERT_TRUE(waitFor([&] { return last->isOnScreen(); }));
  EXPECT_GT(grid.refresh().rendered, 0);
  EXPECT_EQ(lastY(last->line(QStringLiteral("mean"), 0)), 129.0);
}

TEST_F(ChartGridTest, LivemonsOwnStatsComeLastAndTheNameFilterHidesCharts) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"livemon.publisher.dropped.value", 0.0}, {"zeta.mean", 1.0},
                                                     {"alpha.mean", 2.0}, {"train.loss.mean", 3.0}});
  ChartGrid grid(registry_);
  grid.resize(1000, 700);
  grid.show();
  grid.addSeries(ids);
  while (grid.pendingChartCount() > 0) grid.refresh();
  QStringList names;
  for (StatChartView* chart : grid.charts()) names << chart->statName();
  EXPECT_EQ(names, (QStringList{QStringLiteral("train.loss"), QStringLiteral("alpha"), QStringLiteral("zeta"),
                                QStringLiteral("livemon.publisher.dropped")}));
  grid.setNameFilter(QStringLiteral("LOSS"));
  EXPECT_FALSE(grid.chart(QStringLiteral("train.loss"))->isHidden());
  EXPECT_TRUE(grid.chart(QStringLiteral("alpha"))->isHidden());
  grid.setNameFilter(QStringLiteral("?eta"));  // wildcards, matching anywhere in the name
  EXPECT_FALSE(grid.chart(QStringLiteral("zeta"))->isHidden());
  EXPECT_TRUE(grid.chart(QStringLiteral("alpha"))->isHidden());
  grid.setNameFilter(QStringLiteral("publisher.*"));
  EXPECT_FALSE(grid.chart(QStringLiteral("livemon.publisher.dropped"))->isHidden());
  EXPECT_TRUE(grid.chart(QStringLiteral("train.loss"))->isHidden());
}

TEST_F(ChartGridTest, ABurstOfRedrawsIsSpreadOverRefreshesWithinTheBudget) {
  ChartGrid grid(registry_);
  const std::vector<StatChartView*> charts = showSixCharts(grid);
  ASSERT_FALSE(HasFailure());

  // New data for every chart; with no budget, one chart per refresh, none forgotten.
  for (const char* stat : kSixStats) feed(source_, kStart + 1000.0, {{std::string(stat) + ".mean", 2.0}});
  grid.setRenderBudget(std::chrono::milliseconds(0));
  for (int refresh = 0; refresh < 6; ++refresh) {
    const ChartGrid::RefreshStats stats = grid.refresh();
    EXPECT_EQ(stats.rendered, 1);
    EXPECT_EQ(stats.deferred, 5 - refresh);
  }
  for (StatChartView* chart : charts) EXPECT_EQ(lastY(chart->line(QStringLiteral("mean"), 0)), 2.0) << chart->statName().toStdString();
  EXPECT_EQ(grid.refresh().rendered, 0);
}

// The budget is kept on the grid's clock: here every reading of it is a millisecond later, so
// each redraw costs 1 ms and a 5 ms budget admits two, whatever the machine's speed.
TEST_F(ChartGridTest, TheRedrawBudgetIsTimedOnTheGridsClock) {
  ChartGrid grid(registry_);
  SteppingClock clock(std::chrono::milliseconds(1));
  grid.setClock(clock);  // before the charts are drawn: their costs are timed on it too
  const std::vector<StatChartView*> charts = showSixCharts(grid);
  ASSERT_FALSE(HasFailure());
  grid.setRenderBudget(std::chrono::milliseconds(5));

  for (const char* stat : kSixStats) feed(source_, kStart + 1000.0, {{std::string(stat) + ".mean", 2.0}});
  // The deadline is read at 0 ms (5 ms); the first chart starts at 1 ms and ends at 2, the second
  // at 3 and 4; the third, starting at 5 ms with a cost of 1 ms, would overrun.
  for (const int deferred : {4, 2, 0}) {
    const ChartGrid::RefreshStats stats = grid.refresh();
    EXPECT_EQ(stats.rendered, 2);
    EXPECT_EQ(stats.deferred, deferred);
  }
  for (StatChartView* chart : charts) {
    EXPECT_EQ(lastY(chart->line(QStringLiteral("mean"), 0)), 2.0) << chart->statName().toStdString();
  }
}

// A live run: every chart has new data at every refresh, and the budget draws only some of them.
// Each must still be drawn in its turn; before, the charts first in display order took every
// turn, and on a loaded machine a chart further down showed data 25 s old.
TEST_F(ChartGridTest, WhenEveryChartHasNewDataAtEveryRefreshEachIsDrawnInTurn) {
  ChartGrid grid(registry_);
  const std::vector<StatChartView*> charts = showSixCharts(grid);
  ASSERT_FALSE(HasFailure());

  std::map<const StatChartView*, int> drawn;
  for (StatChartView* chart : charts) {
    QObject::connect(chart, &StatChartView::rendered, [&drawn, chart] { ++drawn[chart]; });
  }
  grid.setRenderBudget(std::chrono::milliseconds(0));  // one chart a refresh
  for (int refresh = 1; refresh <= 3 * static_cast<int>(std::size(kSixStats)); ++refresh) {
    for (const char* stat : kSixStats) {
      feed(source_, kStart + 1000.0 * refresh, {{std::string(stat) + ".mean", 1.0 + refresh}});
    }
    EXPECT_EQ(grid.refresh().rendered, 1);
  }
  for (StatChartView* chart : charts) EXPECT_EQ(drawn[chart], 3) << chart->statName().toStdString();
}

TEST_F(ChartGridTest, AZoomOnOneChartMovesThemAllUntilReset) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"a.mean", 1.0}, {"b.mean", 2.0}});
  for (int i = 1; i < 100; ++i) feed(source_, kStart + 1000.0 * i, {{"a.mean", 1.0}, {"b.mean", 2.0}});
  ChartGrid grid(registry_);
  // Every due chart drawn by the refresh after the zoom, however slow the machine: the budget is
  // another test's subject.
  grid.setRenderBudget(std::chrono::hours(1));
  grid.setTimeAxisMode(TimeAxisMode::SinceRunStart);
  grid.setTimeRange(TimeRange::All);
  grid.resize(1000, 700);
  grid.show();
  grid.addSeries(ids);
  ASSERT_TRUE(waitFor([&] {
    grid.refresh();
    return grid.chart(QStringLiteral("b")) != nullptr && grid.chart(QStringLiteral("b"))->isOnScreen();
  }));
  emit grid.chart(QStringLiteral("a"))->rangeRequested(10.0, 20.0);
  grid.refresh();
  EXPECT_EQ(grid.chart(QStringLiteral("b"))->xRange(), (XRange{10.0, 20.0}));
  EXPECT_FALSE(grid.timeView().followsLive());
  emit grid.chart(QStringLiteral("b"))->resetRequested();
  grid.refresh();
  EXPECT_TRUE(grid.timeView().followsLive());
  EXPECT_EQ(grid.chart(QStringLiteral("a"))->xRange(), (XRange{0.0, 99.0}));
}

TEST_F(ChartGridTest, AChartLeftWithoutSeriesLeavesTheGridAndSoDoesOneStillToBeMade) {
  const auto live = makeSource("live", 100, std::nullopt, kStart);
  const auto replayed = makeSource("replayed", 200, std::nullopt, kStart);
  std::vector<SeriesId> ids = feed(replayed, kStart, {{"a_only.mean", 1.0}, {"c_only.mean", 3.0}, {"b_shared.mean", 2.0}});
  auto more = feed(live, kStart, {{"b_shared.mean", 4.0}});
  ids.insert(ids.end(), more.begin(), more.end());
  ChartGrid grid(registry_);
  grid.setCreationBudget(std::chrono::milliseconds(0));  // one chart per refresh
  grid.resize(1000, 700);
  grid.show();
  grid.addSeries(ids);
  grid.refresh();
  grid.refresh();
  ASSERT_EQ(grid.charts().size(), 2U);  // a_only and b_shared; c_only is still to be made
  ASSERT_EQ(grid.pendingChartCount(), 1);
  QSignalSpy counted(&grid, &ChartGrid::chartCountChanged);

  const RegistryRemoval removal = registry_.removeSources([](const SourceEntry& source) { return source.id == 0; });
  grid.removeSeries(removal.series);
  EXPECT_EQ(grid.chart(QStringLiteral("a_only")), nullptr);
  EXPECT_EQ(grid.pendingChartCount(), 0);
  ASSERT_EQ(grid.charts().size(), 1U);
  StatChartView* shared = grid.chart(QStringLiteral("b_shared"));
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->seriesIds(), more);
  ASSERT_EQ(counted.count(), 1);
  EXPECT_EQ(counted.front().at(0).toInt(), 1);
  for (int i = 0; i < 3; ++i) grid.refresh();
  EXPECT_EQ(grid.charts().size(), 1U) << "nothing removed comes back";
}

TEST_F(ChartGridTest, AChartDrawsAtMostItsLineLimitAndTheGridCountsTheLinesLeftOff) {
  EXPECT_EQ(ChartGrid(registry_).maxLinesPerChart(), kDefaultMaxLinesPerChart);
  std::vector<std::shared_ptr<const transport::SourceInfo>> sources;
  for (int rank = 0; rank < 18; ++rank) sources.push_back(makeSource("train", 100 + rank, rank, kStart));
  ChartGrid grid(registry_);
  grid.setMaxLinesPerChart(8);
  grid.setRenderBudget(std::chrono::hours(1));
  grid.resize(800, 600);
  grid.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&grid));
  // Twelve sources before the chart is made, six after.
  for (int rank = 0; rank < 12; ++rank) grid.addSeries(feed(sources[static_cast<std::size_t>(rank)], kStart, {{"loss.mean", 1.0}}));
  while (grid.pendingChartCount() > 0) grid.refresh();
  StatChartView* loss = grid.chart(QStringLiteral("loss"));
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->lineCount(), 8U);
  EXPECT_EQ(grid.undrawnLineCount(), 4U);
  for (int rank = 12; rank < 18; ++rank) grid.addSeries(feed(sources[static_cast<std::size_t>(rank)], kStart, {{"loss.mean", 1.0}}));
  EXPECT_EQ(loss->lineCount(), 8U);
  EXPECT_EQ(grid.undrawnLineCount(), 10U);
  grid.refresh();
  ASSERT_EQ(loss->seriesIds().size(), 8U);
  for (SeriesId id : loss->seriesIds()) EXPECT_LT(registry_.series(id)->source, 8U) << "the first come are drawn";

  // The lines drawn keep updating.
  feed(sources[3], kStart + 1000.0, {{"loss.mean", 5.0}});
  grid.refresh();
  EXPECT_EQ(lastY(loss->line(QStringLiteral("mean"), 3)), 5.0);

  // Sources whose lines were left off leave: so does their count.
  const RegistryRemoval removal = registry_.removeSources([](const SourceEntry& source) { return source.id >= 14; });
  grid.removeSeries(removal.series);
  EXPECT_EQ(grid.undrawnLineCount(), 6U);
  EXPECT_EQ(loss->lineCount(), 8U);
}

}  // namespace
}  // namespace livemon::ui
