// How a chart draws its values: smoothed lines over faint raw ones, count on an axis of its own,
// durations in ms, a log scale that says what it leaves out, and lines that break at a stall.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace livemon::ui
