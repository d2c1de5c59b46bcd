// What a chart's redraw hands Qt Charts, whose cost follows it: points per pixel, a shape worked
// out once per redraw, and the pens of dense lines (docs/benchmarks.md, issue 32 goal 5).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>
#include <QtTest/QTest>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_trace.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;

constexpr double kStart = 1'700'000'000'000.0;

class ChartRedrawCostTest : public ::testing::Test {
 protected:
  // `count` windows 10 ms apart from `first` on, a loss with its min and max, around 5 times
  // `scale`: noisy, or with `smooth` a slow wave.
  std::vector<SeriesId> feed(int first, int count, double scale = 1.0, bool smooth = false) {
    IngestBatch batch;
    for (int i = first; i < first + count; ++i) {
      const double noise = smooth ? std::sin(i * 0.0005) : std::sin(i * 0.37) + 0.5 * std::sin(i * 1.91);
      auto event = received(source_, Event{"livemon.Stat", atMs(kStart + 10.0 * i),
                                           {{"loss.mean", scale * (5.0 + noise)},
                                            {"loss.min", scale * (4.0 + noise)},
                                            {"loss.max", scale * (6.0 + noise)}}});
      converter_.convert(event, batch);
    }
    return registry_.apply(batch).newSeries;
  }

  StatChartView& showChart(const std::vector<SeriesId>& ids) {
    chart_ = std::make_unique<StatChartView>(QStringLiteral("loss"), registry_, TimeAxisMode::SinceRunStart);
    for (SeriesId id : ids) chart_->addSeries(id);
    chart_->resize(600, 300);
    chart_->show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(chart_.get()));
    return *chart_;
  }

  static ChartRenderContext context(double maxSeconds, double minSeconds = 0.0) {
    ChartRenderContext result;
    result.mode = TimeAxisMode::SinceRunStart;
    result.x = XRange{minSeconds, maxSeconds};
    return result;
  }

  EventConverter converter_;
  StatRegistry registry_;
  std::unique_ptr<StatChartView> chart_;
  const std::shared_ptr<const transport::SourceInfo> source_ = makeSource("train", 100, std::nullopt, kStart);
};

TEST_F(ChartRedrawCostTest, ALineOfFarMorePointsThanPixelsIsDrawnWithAtMostTwoPointsAPixel) {
  const std::vector<SeriesId> ids = feed(0, 20000);
  StatChartView& chart = showChart(ids);
  ASSERT_TRUE(chart.render(context(200.0), true));
  const int width = chart.plotRect().width();
  ASSERT_GT(width, 100);
  const qsizetype drawn = chart.line(ids[0])->count();
  // First, min, max and last of each column two pixels wide, and the neighbours either side.
  EXPECT_LE(drawn, 2 * width + 4);
  EXPECT_GT(drawn, width / 2);  // still the shape of the noise, not a few points
  // Every extreme is still drawn: the line reaches the lowest and the highest value in view.
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  const QLineSeries* mean = chart.line(QStringLiteral("mean"), 0);
  ASSERT_NE(mean, nullptr);
  for (const QPointF& point : mean->points()) {
    low = std::min(low, point.y());
    high = std::max(high, point.y());
  }
  double fedLow = std::numeric_limits<double>::infinity();
  double fedHigh = -fedLow;
  for (int i = 0; i < 20000; ++i) {  // the mean feed() gave, all of it in view
    fedLow = std::min(fedLow, 5.0 + std::sin(i * 0.37) + 0.5 * std::sin(i * 1.91));
    fedHigh = std::max(fedHigh, 5.0 + std::sin(i * 0.37) + 0.5 * std::sin(i * 1.91));
  }
  EXPECT_DOUBLE_EQ(low, fedLow);
  EXPECT_DOUBLE_EQ(high, fedHigh);
}

TEST_F(ChartRedrawCostTest, ADenseLineHasBevelledJoinsAndASparseOneKeepsItsRoundOnes) {
  std::vector<SeriesId> ids = feed(0, 20000);
  StatChartView& chart = showChart(ids);
  ASSERT_TRUE(chart.render(context(200.0), true));
  const QPen dense = chart.line(ids[0])->pen();
  EXPECT_EQ(dense.joinStyle(), Qt::BevelJoin);
  EXPECT_EQ(dense.capStyle(), Qt::FlatCap);

  // Zoomed in on 40 windows: a point every dozen pixels, where a round join shows.
  ASSERT_TRUE(chart.render(context(100.4, 100.0), true));
  const QPen sparse = chart.line(ids[0])->pen();
  EXPECT_EQ(sparse.joinStyle(), Qt::RoundJoin);
  EXPECT_EQ(sparse.capStyle(), Qt::RoundCap);
  EXPECT_EQ(sparse.color(), dense.color());
  EXPECT_EQ(sparse.widthF(), dense.widthF());
}

TEST_F(ChartRedrawCostTest, AtANewRangeTheLinesAreEmptyWhileTheAxesMoveAndShapedOnceAfter) {
  std::vector<SeriesId> ids = feed(0, 5000);
  StatChartView& chart = showChart(ids);
  ASSERT_TRUE(chart.render(context(50.0), true));
  QLineSeries* line = chart.line(ids[0]);
  ASSERT_GT(line->count(), 0);
  auto* x = qobject_cast<QValueAxis*>(line->attachedAxes().front());
  ASSERT_NE(x, nullptr);
  ASSERT_EQ(x->orientation(), Qt::Horizontal);

  // A new range makes Qt work out the shape of every line on the chart again: the redraw empties
  // the lines first, so only their new points are shaped, once.
  std::vector<qsizetype> pointsWhileMoving;
  QObject::connect(x, &QValueAxis::rangeChanged, [&] { pointsWhileMoving.push_back(line->count()); });
  int replaced = 0;
  QObject::connect(line, &QXYSeries::pointsReplaced, [&] { ++replaced; });
  feed(5000, 100);
  ASSERT_TRUE(chart.render(context(51.0), true));
  ASSERT_FALSE(pointsWhileMoving.empty());
  for (qsizetype points : pointsWhileMoving) EXPECT_EQ(points, 0);
  EXPECT_EQ(replaced, 1);
  EXPECT_GT(line->count(), 0);
}

TEST_F(ChartRedrawCostTest, WhenNewAxisLabelsResizeThePlotTheLinesGetPointsOnlyForItsSettledWidth) {
  std::vector<SeriesId> ids = feed(0, 5000);
  StatChartView& chart = showChart(ids);
  ASSERT_TRUE(chart.render(context(50.0), true));
  const int narrowLabels = chart.plotRect().width();
  QLineSeries* line = chart.line(ids[0]);
  std::vector<qsizetype> handed;
  QObject::connect(line, &QXYSeries::pointsReplaced, [&] { handed.push_back(line->count()); });

  // Values a million times larger: the y axis' labels widen and the plot narrows. The points
  // traced for the former width would be shaped by Qt (a stroke of every point) and replaced at
  // once: the line gets points once, for the plot as it is after the new labels.
  feed(5000, 5000, 1e6);
  ASSERT_TRUE(chart.render(context(100.0), true));
  const int wideLabels = chart.plotRect().width();
  ASSERT_LT(wideLabels, narrowLabels - 2 * 2);  // more than a column of 2 pixels narrower
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_LE(handed.front(), 2 * wideLabels + 4);
  EXPECT_GT(handed.front(), wideLabels / 2);
}

// Dense lines fill their pixel columns: antialiasing their edges does not show, and it was most
// of the cost of painting the dashboard's noisy charts (docs/benchmarks.md). A smooth line keeps it.
TEST_F(ChartRedrawCostTest, DenseLinesAreDrawnWithoutAntialiasingAndSmoothOnesWithIt) {
  const std::vector<SeriesId> ids = feed(0, 20000, 1.0, true);
  StatChartView& chart = showChart(ids);
  ASSERT_TRUE(chart.render(context(200.0), true));
  EXPECT_TRUE(chart.renderHints().testFlag(QPainter::Antialiasing));

  feed(20000, 20000);  // the same lines, noisy from 200 s on
  ASSERT_TRUE(chart.render(context(400.0, 200.0), true));
  EXPECT_FALSE(chart.renderHints().testFlag(QPainter::Antialiasing));

  ASSERT_TRUE(chart.render(context(200.0), true));  // back to the smooth part
  EXPECT_TRUE(chart.renderHints().testFlag(QPainter::Antialiasing));
}

}  // namespace
}  // namespace livemon::ui
