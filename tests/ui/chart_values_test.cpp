// How a chart draws its values: smoothed lines over faint raw ones, count on an axis of its own,
// durations in ms, a log scale that says what it leaves out, and lines that break at a stall.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>
#include <QtTest/QTest>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_legend.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;
using test::waitFor;

// The legend entries shown, once the legend has laid itself out.
int shownLegendEntries(StatChartView& chart) {
  int shown = 0;
  waitFor([&] {
    shown = static_cast<int>(chart.legend().entries().size());
    return shown > 0;
  });
  return shown;
}

constexpr double kStart = 1'700'000'000'000.0;

class ChartValuesTest : public ::testing::Test {
 protected:
  std::vector<SeriesId> feed(double ms, std::unordered_map<std::string, DataValue> data) {
    IngestBatch batch;
    auto event = received(source_, Event{"livemon.Stat", atMs(ms), std::move(data)});
    converter_.convert(event, batch);
    return registry_.apply(batch).newSeries;
  }

  StatChartView& showChart(const QString& stat, const std::vector<SeriesId>& ids) {
    chart_ = std::make_unique<StatChartView>(stat, registry_, TimeAxisMode::SinceRunStart);
    chart_->setViewOptions(&options_);
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

  static std::vector<double> ys(const QLineSeries* series) {
    std::vector<double> values;
    for (const QPointF& p : series->points()) values.push_back(p.y());
    return values;
  }

  EventConverter converter_;
  StatRegistry registry_;
  ChartViewOptions options_;
  std::unique_ptr<StatChartView> chart_;
  const std::shared_ptr<const transport::SourceInfo> source_ = makeSource("train", 100, std::nullopt, kStart);
};

TEST_F(ChartValuesTest, ASmoothedLineIsDrawnOverItsFaintRawValues) {
  std::vector<SeriesId> ids = feed(kStart, {{"loss.mean", 1.0}});
  feed(kStart + 1000.0, {{"loss.mean", 2.0}});
  feed(kStart + 2000.0, {{"loss.mean", 3.0}});
  options_.setSmoothing(0.6);
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  ASSERT_TRUE(chart.render(context(0.0, 10.0)));

  EXPECT_EQ(ys(chart.line(ids[0])), (std::vector<double>{1.0, 2.0, 3.0}));
  const std::vector<double> smoothed = ys(chart.smoothedLine(ids[0]));
  ASSERT_EQ(smoothed.size(), 3U);
  EXPECT_DOUBLE_EQ(smoothed[1], 1.625);  // TensorBoard's debiased EMA at 0.6
  EXPECT_NEAR(smoothed[2], 1.824 / 0.784, 1e-12);
  // The raw line is faint and thin behind the smoothed one, which has the line's own pen.
  EXPECT_LT(chart.line(ids[0])->pen().color().alpha(), 100);
  EXPECT_GT(chart.smoothedLine(ids[0])->pen().color().alpha(), 200);
  EXPECT_TRUE(chart.smoothedLine(ids[0])->isVisible());
  // One legend entry per line, not two.
  EXPECT_EQ(shownLegendEntries(chart), 1);
  // The tooltip gives the smoothed value and the raw one under it.
  const QRect plot = chart.plotRect();
  const QString tip = chart.tooltipAt(QPoint(plot.left() + plot.width() / 10, plot.center().y()));  // at 1 s
  EXPECT_TRUE(tip.contains(QStringLiteral("1.625 <small>(raw 2)"))) << tip.toStdString();

  // Smoothing off: the raw line alone, in its full pen.
  options_.setSmoothing(0.0);
  ASSERT_TRUE(chart.render(context(0.0, 10.0)));
  EXPECT_EQ(chart.smoothedLine(ids[0])->count(), 0);
  EXPECT_FALSE(chart.smoothedLine(ids[0])->isVisible());
  EXPECT_GT(chart.line(ids[0])->pen().color().alpha(), 200);
}

TEST_F(ChartValuesTest, CountHasItsOwnRightAxisAndDurationsSayMilliseconds) {
  std::vector<SeriesId> ids;
  for (int i = 0; i < 10; ++i) {
    auto added = feed(kStart + 1000.0 * i, {{"range/forward.count", 150.0 + i}, {"range/forward.mean", 2.0 + 0.1 * i},
                                            {"range/forward.p99", 4.5}});
    ids.insert(ids.end(), added.begin(), added.end());
  }
  options_.setSmoothing(0.0);
  StatChartView& chart = showChart(QStringLiteral("range/forward"), ids);
  chart.render(context(0.0, 10.0));
  // A range chart starts with its count and p99 hidden (issue 30): shown, as a click on their
  // legend entries would.
  for (SeriesId id : ids) chart.setSeriesVisible(id, true);
  chart.render(context(0.0, 10.0));
  ASSERT_TRUE(chart.yAxes().hasCountAxis());
  EXPECT_EQ(chart.yAxes().values()->titleText(), QStringLiteral("ms"));
  EXPECT_TRUE(chart.yAxes().values()->isTitleVisible());
  EXPECT_EQ(chart.yAxes().counts()->titleText(), QStringLiteral("count"));
  EXPECT_EQ(chart.yAxes().counts()->alignment(), Qt::AlignRight);
  // The durations fill their axis instead of lying flat under 150 calls.
  EXPECT_LT(chart.yAxes().valueRange().max, 10.0);
  EXPECT_GE(chart.yAxes().countRange()->max, 159.0);
  EXPECT_LE(chart.yAxes().countRange()->min, 150.0);
  // The count line is drawn against the count axis.
  const QList<QAbstractAxis*> attached = chart.line(QStringLiteral("count"), 0)->attachedAxes();
  EXPECT_TRUE(attached.contains(chart.yAxes().counts()));
}

TEST_F(ChartValuesTest, AUsersStatHasNoUnitAndCountAloneStaysOnTheLeft) {
  std::vector<SeriesId> loss = feed(kStart, {{"train.loss.mean", 2.0}, {"train.loss.max", 3.0}});
  StatChartView& chart = showChart(QStringLiteral("train.loss"), loss);
  chart.render(context(0.0, 10.0));
  EXPECT_FALSE(chart.yAxes().hasCountAxis());
  EXPECT_FALSE(chart.yAxes().values()->isTitleVisible());

  std::vector<SeriesId> calls = feed(kStart, {{"calls.count", 12.0}});
  StatChartView& counts = showChart(QStringLiteral("calls"), calls);
  counts.render(context(0.0, 10.0));
  EXPECT_FALSE(counts.yAxes().hasCountAxis());
  EXPECT_GE(counts.yRange().max, 12.0);
}

TEST_F(ChartValuesTest, AStallBreaksTheLineInsteadOfSlopingAcrossIt) {
  std::vector<SeriesId> ids = feed(kStart, {{"train.data_loading.count", 120.0}});
  for (int i = 1; i < 20; ++i) feed(kStart + 1000.0 * i, {{"train.data_loading.count", 120.0}});
  for (int i = 30; i < 50; ++i) feed(kStart + 1000.0 * i, {{"train.data_loading.count", 120.0}});  // 10 s stall
  StatChartView& chart = showChart(QStringLiteral("train.data_loading"), ids);
  chart.render(context(0.0, 50.0));
  const ChartTrace* trace = chart.trace(ids[0]);
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(trace->stretchCount(), 2);
  // No piece of the line crosses the stall: each ends before it or starts after it.
  for (const ChartTrace* drawn : {trace, chart.smoothedTrace(ids[0])}) {
    for (const QLineSeries* piece : drawn->series()) {
      if (piece->count() == 0) continue;
      const bool before = piece->at(piece->count() - 1).x() <= 19.0;
      const bool after = piece->at(0).x() >= 30.0;
      EXPECT_TRUE(before || after) << piece->at(0).x() << ".." << piece->at(piece->count() - 1).x();
    }
  }
  // The second piece has no legend entry of its own.
  EXPECT_EQ(shownLegendEntries(chart), 1);
}

TEST_F(ChartValuesTest, ALogScaleSaysWhichValuesItCannotShow) {
  test::QtWarnings warnings;  // Qt complains of a log of a value <= 0 handed to it
  std::vector<SeriesId> ids = feed(kStart, {{"loss.value", 2.0}});
  feed(kStart + 1000.0, {{"loss.value", 84.0}});
  feed(kStart + 2000.0, {{"loss.value", -1.0}});
  feed(kStart + 3000.0, {{"loss.value", 0.5}});
  options_.setSmoothing(0.0);
  StatChartView& chart = showChart(QStringLiteral("loss"), ids);
  chart.render(context(0.0, 10.0));
  EXPECT_FALSE(chart.isLogScale());
  EXPECT_TRUE(chart.scaleNote().isEmpty());

  options_.setLogScale(QStringLiteral("loss"), true);
  ASSERT_TRUE(chart.render(context(0.0, 10.0)));
  ASSERT_TRUE(chart.isLogScale());
  EXPECT_NE(qobject_cast<QLogValueAxis*>(chart.yAxes().values()), nullptr);
  EXPECT_EQ(ys(chart.line(ids[0])), (std::vector<double>{2.0, 84.0}));  // the first stretch
  EXPECT_EQ(chart.trace(ids[0])->stretchCount(), 2);
  EXPECT_TRUE(chart.scaleNote().contains(QStringLiteral("1 value ≤ 0"))) << chart.scaleNote().toStdString();
  EXPECT_GT(chart.yRange().min, 0.0);
  EXPECT_LE(chart.yRange().min, 0.5);
  EXPECT_GE(chart.yRange().max, 84.0);
  // The lines follow the new axis.
  EXPECT_TRUE(chart.line(ids[0])->attachedAxes().contains(chart.yAxes().values()));

  options_.setLogScale(QStringLiteral("loss"), false);
  ASSERT_TRUE(chart.render(context(0.0, 10.0)));
  EXPECT_NE(qobject_cast<QValueAxis*>(chart.yAxes().values()), nullptr);
  EXPECT_TRUE(chart.scaleNote().isEmpty());
  EXPECT_EQ(chart.line(ids[0])->count(), 4);
  EXPECT_TRUE(warnings.messages().isEmpty()) << warnings.text();
}


// The chart's items shown now: shaded regions whose tooltip says "NaN", and "NaN" labels.
std::vector<const QGraphicsRectItem*> nanBands(StatChartView& chart) {
  std::vector<const QGraphicsRectItem*> bands;
  for (const QGraphicsItem* item : chart.scene()->items(Qt::AscendingOrder)) {
    const auto* rect = dynamic_cast<const QGraphicsRectItem*>(item);
    if (rect != nullptr && rect->isVisible() && rect->toolTip().contains(QStringLiteral("NaN"))) bands.push_back(rect);
  }
  std::sort(bands.begin(), bands.end(), [](const auto* a, const auto* b) { return a->rect().left() < b->rect().left(); });
  return bands;
}

int nanLabels(StatChartView& chart) {
  int labels = 0;
  for (const QGraphicsItem* item : chart.scene()->items()) {
    const auto* text = dynamic_cast<const QGraphicsSimpleTextItem*>(item);
    labels += text != nullptr && text->isVisible() && text->text() == QStringLiteral("NaN") ? 1 : 0;
  }
  return labels;
}

TEST_F(ChartValuesTest, WhereALineIsNaNARegionLabelledNaNRunsFromWhereItBecameNaN) {
  // NaN from 3 s to 5 s, finite again at 6 s; NaN again from 8 s to the newest window.
  std::vector<SeriesId> ids;
  for (int i = 0; i < 10; ++i) {
    const bool nan = (i >= 3 && i <= 5) || i >= 8;
    auto added = feed(kStart + 1000.0 * i, {{"train.loss.mean", nan ? std::nan("") : 1.0 + 0.1 * i}});
    ids.insert(ids.end(), added.begin(), added.end());
  }
  options_.setSmoothing(0.0);
  StatChartView& chart = showChart(QStringLiteral("train.loss"), ids);
  ASSERT_TRUE(chart.render(context(0.0, 10.0)));
  QLineSeries* line = chart.line(ids[0]);
  const auto xAt = [&](double x) { return chart.chart()->mapToPosition(QPointF(x, 1.0), line).x(); };
  const std::vector<const QGraphicsRectItem*> bands = nanBands(chart);
  ASSERT_EQ(bands.size(), 2U);
  EXPECT_NEAR(bands[0]->rect().left(), xAt(3.0), 1.0) << "from the first NaN window";
  EXPECT_NEAR(bands[0]->rect().right(), xAt(6.0), 1.0) << "to where it is finite again";
  EXPECT_NEAR(bands[1]->rect().left(), xAt(8.0), 1.0);
  EXPECT_GE(bands[1]->rect().right(), xAt(9.0) - 1.0) << "to the newest value, still NaN";
  const QRectF plot = chart.chart()->plotArea();
  EXPECT_DOUBLE_EQ(bands[0]->rect().top(), plot.top());
  EXPECT_DOUBLE_EQ(bands[0]->rect().height(), plot.height());
  EXPECT_TRUE(bands[0]->toolTip().contains(QStringLiteral("mean"))) << bands[0]->toolTip().toStdString();
  EXPECT_EQ(nanLabels(chart), 2);
  // The hover over a region says so too.
  const QPoint inside = chart.mapFromScene(chart.chart()->mapToScene(QPointF(xAt(4.5), plot.center().y())));
  EXPECT_TRUE(chart.tooltipAt(inside).contains(QStringLiteral("NaN"))) << chart.tooltipAt(inside).toStdString();

  // Zoomed away from them: none shown.
  ASSERT_TRUE(chart.render(context(0.0, 2.5)));
  EXPECT_TRUE(nanBands(chart).empty());
  EXPECT_EQ(nanLabels(chart), 0);
}

TEST_F(ChartValuesTest, TheHoverAtANaNWindowGivesEveryLinesValueOfThatWindow) {
  // The window at 20 s held a NaN: its mean is NaN while its min and max are finite (and larger
  // than every mean). The hover there must not pair a neighbouring window's mean with its min.
  std::vector<SeriesId> ids;
  for (int i = 0; i < 30; ++i) {
    const bool diverged = i == 20;
    auto added = feed(kStart + 1000.0 * i, {{"train.loss.mean", diverged ? std::nan("") : 2.0 + 0.1 * i},
                                            {"train.loss.min", diverged ? 50.0 : 1.0},
                                            {"train.loss.max", diverged ? 60.0 : 9.0}});
    ids.insert(ids.end(), added.begin(), added.end());
  }
  options_.setSmoothing(0.0);
  StatChartView& chart = showChart(QStringLiteral("train.loss"), ids);
  ASSERT_TRUE(chart.render(context(0.0, 30.0)));
  const QRect plot = chart.plotRect();
  const auto hoverAt = [&](double x) {
    return chart.tooltipAt(QPoint(plot.left() + static_cast<int>(plot.width() * x / 30.0), plot.center().y()));
  };
  const auto row = [](const QString& name, const QString& value) {
    return QStringLiteral("%1</td><td align='right'>&nbsp;%2").arg(name, value);
  };
  const QString atNaN = hoverAt(20.2);
  EXPECT_TRUE(atNaN.contains(row(QStringLiteral("min"), QStringLiteral("50")))) << atNaN.toStdString();
  EXPECT_TRUE(atNaN.contains(row(QStringLiteral("mean"), QStringLiteral("NaN")))) << atNaN.toStdString();
  EXPECT_FALSE(atNaN.contains(QStringLiteral("4.1"))) << "the mean of the window after";
  EXPECT_FALSE(atNaN.contains(QStringLiteral("3.9"))) << "the mean of the window before";
  // Just before it, every value is the 19 s window's.
  const QString before = hoverAt(19.3);
  EXPECT_TRUE(before.contains(row(QStringLiteral("mean"), QStringLiteral("3.9")))) << before.toStdString();
  EXPECT_TRUE(before.contains(row(QStringLiteral("min"), QStringLiteral("1")))) << before.toStdString();
  EXPECT_TRUE(before.contains(row(QStringLiteral("max"), QStringLiteral("9")))) << before.toStdString();
}

}  // namespace
}  // namespace livemon::ui
