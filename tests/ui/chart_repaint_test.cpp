// What a chart leaves on screen after it redraws: only what it draws now. Tick labels and the plot
// area move on every redraw of live data; where they were must be painted over, or old labels stay
// as clipped glyphs under the x axis ("1 :"), extra values on the y axis ("1500, 1410, 1450") and
// boxes in the plot's corner. Offscreen: the window's pixels are compared with a fresh rendering
// of the same widget.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <QCoreApplication>
#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QImage>
#include <QPixmap>
#include <QScreen>
#include <QtTest/QTest>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;

constexpr double kStart = 1'700'000'000'000.0;

// Lets the window paint what is pending (posted updates, the scenes' queued changes).
void settle() {
  for (int i = 0; i < 3; ++i) QCoreApplication::processEvents();
}

// Where the window's pixels (as last painted, in the offscreen backing store) differ from a fresh
// rendering of `widget`: empty when the screen shows exactly what the widget draws.
QRect staleArea(QWidget& widget) {
  const QImage shown =
      widget.screen()->grabWindow(widget.winId()).toImage().convertToFormat(QImage::Format_RGB32);
  const QImage drawn = widget.grab().toImage().convertToFormat(QImage::Format_RGB32);
  if (shown.size() != drawn.size()) return QRect(QPoint(0, 0), drawn.size());
  QRect stale;
  for (int y = 0; y < drawn.height(); ++y) {
    for (int x = 0; x < drawn.width(); ++x) {
      if (shown.pixel(x, y) != drawn.pixel(x, y)) stale |= QRect(x, y, 1, 1);
    }
  }
  return stale;
}

std::string describe(const QRect& r) {
  return r.isEmpty() ? std::string("none")
                     : std::to_string(r.width()) + "x" + std::to_string(r.height()) + " at " + std::to_string(r.x()) +
                           "," + std::to_string(r.y());
}

// The tick labels the chart's scene holds left of the plot (the value axis), top to bottom.
QStringList valueAxisLabels(StatChartView& chart) {
  const QRectF plot = chart.chart()->mapRectToScene(chart.chart()->plotArea());
  std::vector<std::pair<double, QString>> found;
  for (QGraphicsItem* item : chart.scene()->items()) {
    auto* text = dynamic_cast<QGraphicsTextItem*>(item);
    if (text == nullptr || !text->isVisible()) continue;
    const QRectF at = text->sceneBoundingRect();
    if (at.right() <= plot.left() + 1.0 && at.top() >= plot.top() - at.height()) found.emplace_back(at.top(), text->toPlainText());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  QStringList labels;
  for (const auto& [y, text] : found) labels << text;
  return labels;
}

class ChartRepaintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    chart_ = std::make_unique<StatChartView>(QStringLiteral("train.stat"), registry_, TimeAxisMode::SinceRunStart);
    chart_->setViewOptions(&options_);
    chart_->resize(460, 280);
    chart_->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(chart_.get()));
  }

  void feed(double seconds, const char* key, double value) {
    IngestBatch batch;
    auto event = received(source_, Event{"livemon.Stat", atMs(kStart + seconds * 1000.0), {{key, value}}});
    converter_.convert(event, batch);
    for (SeriesId id : registry_.apply(batch).newSeries) chart_->addSeries(id);
  }

  // Redraws for x in [0, seconds]; `partialPaint` paints a corner of the chart before the event
  // loop runs, as when another widget's update is flushed first.
  void redraw(double seconds, bool partialPaint) {
    ChartRenderContext context;
    context.mode = TimeAxisMode::SinceRunStart;
    context.x = XRange{0.0, seconds};
    ASSERT_TRUE(chart_->render(context));
    if (partialPaint) chart_->viewport()->repaint(QRect(0, 0, 8, 8));
    settle();
  }

  EventConverter converter_;
  StatRegistry registry_;
  ChartViewOptions options_;
  std::unique_ptr<StatChartView> chart_;
  const std::shared_ptr<const transport::SourceInfo> source_ = makeSource("demo", 100, std::nullopt, kStart);
};

TEST_F(ChartRepaintTest, OldXAxisLabelsAndThePlotsOldEdgeAreNotLeftOnScreen) {
  // A young run: ticks every half second, values near 1.
  feed(0.0, "train.stat.value", 1.0);
  feed(1.0, "train.stat.value", 2.0);
  redraw(1.0, false);
  ASSERT_EQ(staleArea(*chart_), QRect());
  // A second later the ticks are a second apart and the values small: the wider y labels move
  // the plot's left edge. A part of the chart is painted before the scene has worked out what
  // moved: what the old labels and edge covered must be painted over all the same.
  feed(2.0, "train.stat.value", 3e-5);
  redraw(2.0, true);
  feed(3.0, "train.stat.value", 4e-5);
  redraw(3.0, false);
  EXPECT_EQ(staleArea(*chart_), QRect()) << "stale pixels: " << describe(staleArea(*chart_));
}

TEST_F(ChartRepaintTest, TheYAxisShowsOnlyTheLabelsOfItsRange) {
  // Throughput near 1400: labels ten apart (1390, 1400, 1410, ...).
  for (int i = 0; i < 4; ++i) feed(i, "train.samples_per_s.mean", 1382.0 + 36.0 * (i % 2));
  redraw(3.0, false);
  ASSERT_TRUE(valueAxisLabels(*chart_).contains(QStringLiteral("1410"))) << valueAxisLabels(*chart_).join(u' ').toStdString();
  // A spike to 1500: labels twenty apart (at least four of them). "1410" must not stay between
  // 1420 and 1400.
  feed(4.0, "train.samples_per_s.mean", 1500.0);
  redraw(4.0, true);
  QStringList labels = valueAxisLabels(*chart_);
  labels.removeAll(QString());
  EXPECT_EQ(labels, (QStringList{QStringLiteral("1500"), QStringLiteral("1480"), QStringLiteral("1460"), QStringLiteral("1440"),
                                 QStringLiteral("1420"), QStringLiteral("1400"), QStringLiteral("1380")}));
  EXPECT_EQ(staleArea(*chart_), QRect()) << "stale pixels: " << describe(staleArea(*chart_));
}

// The grid as the dashboard runs it, with nothing forced: one chart made and one drawn per
// refresh, so a chart is redrawn in the refresh that shows a new one beside it.
TEST(ChartGridRepaint, ChartsRedrawnWhileOthersAppearLeaveNothingOnScreen) {
  EventConverter converter;
  StatRegistry registry;
  ChartGrid grid(registry);
  grid.setTimeAxisMode(TimeAxisMode::SinceRunStart);
  grid.setTimeRange(TimeRange::All);
  grid.setCreationBudget(std::chrono::milliseconds(0));
  grid.setRenderBudget(std::chrono::milliseconds(0));
  grid.resize(960, 700);
  grid.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&grid));
  const auto source = makeSource("demo", 100, std::nullopt, kStart);
  for (int i = 0; i < 6; ++i) {
    const double t = i * 1.3;
    IngestBatch batch;
    auto event = received(source, Event{"livemon.Stat", atMs(kStart + 300.0 + 1000.0 * i),
                                        {{"train.step_time_ms.mean", 47.0 + std::sin(t)},
                                         {"train.step_time_ms.p99", 60.0 + 10.0 * std::sin(3.0 * t)},
                                         {"train.samples_per_s.mean", 1400.0 + 60.0 * std::sin(t)},
                                         {"train.lr.value", 3e-4 * (1.0 - std::exp(-0.1 * (i + 1)))}}});
    converter.convert(event, batch);
    grid.addSeries(registry.apply(batch).newSeries);
    grid.refresh();
    settle();
    ASSERT_EQ(staleArea(grid), QRect()) << "after refresh " << i << ", stale pixels: " << describe(staleArea(grid));
  }
}

}  // namespace
}  // namespace livemon::ui
