// The chart under the user's hands: a hover that stays while the mouse rests, legend entries
// drawn in their line's pen, lines readable on the dark plot, a zoom that says it no longer
// follows live data and offers the way back, and source labels without a stray space.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include <QAbstractButton>
#include <QApplication>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QToolTip>
#include <QtCharts/QLineSeries>
#include <QtTest/QTest>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/chart_legend.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr double kStart = 1'700'000'000'000.0;

class ChartInteractionTest : public ::testing::Test {
 protected:
  std::vector<SeriesId> feed(const std::shared_ptr<const transport::SourceInfo>& source, double ms,
                             std::unordered_map<std::string, DataValue> data) {
    IngestBatch batch;
    auto event = test::received(source, Event{"livemon.Stat", test::atMs(ms), std::move(data)});
    converter_.convert(event, batch);
    return registry_.apply(batch).newSeries;
  }

  StatChartView& showChart(const std::vector<SeriesId>& ids) {
    chart_ = std::make_unique<StatChartView>(QStringLiteral("loss"), registry_, TimeAxisMode::SinceRunStart);
    for (SeriesId id : ids) chart_->addSeries(id);
    chart_->resize(800, 400);
    chart_->show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(chart_.get()));
    chart_->render(context(0.0, 20.0));
    return *chart_;
  }

  static ChartRenderContext context(double min, double max, bool following = true) {
    ChartRenderContext result;
    result.mode = TimeAxisMode::SinceRunStart;
    result.x = XRange{min, max};
    result.following = following;
    return result;
  }

  EventConverter converter_;
  StatRegistry registry_;
  std::unique_ptr<StatChartView> chart_;
  const std::shared_ptr<const transport::SourceInfo> source_ = test::makeSource("train", 100, std::nullopt, kStart);
};

TEST_F(ChartInteractionTest, TheHoverStaysWhileTheMouseRests) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"loss.mean", 1.0}});
  for (int i = 1; i < 20; ++i) feed(source_, kStart + 1000.0 * i, {{"loss.mean", 1.0 + i}});
  StatChartView& chart = showChart(ids);
  const QPoint inside = chart.plotRect().center();
  QMouseEvent move(QEvent::MouseMove, QPointF(inside), chart.viewport()->mapToGlobal(QPointF(inside)), Qt::NoButton,
                   Qt::NoButton, Qt::NoModifier);
  QApplication::sendEvent(chart.viewport(), &move);
  ASSERT_TRUE(QToolTip::isVisible());
  // After the mouse rests Qt asks the view for its tooltip; the scene has none, and answering
  // with nothing hid the chart's hover about a second after it appeared.
  QHelpEvent help(QEvent::ToolTip, inside, chart.viewport()->mapToGlobal(inside));
  QApplication::sendEvent(chart.viewport(), &help);
  EXPECT_TRUE(help.isAccepted());
  QTest::qWait(1000);  // longer than Qt takes to hide a tip it was told to hide
  EXPECT_TRUE(QToolTip::isVisible());
  EXPECT_TRUE(QToolTip::text().contains(QStringLiteral("loss")));
  QToolTip::hideText();
}

TEST_F(ChartInteractionTest, LegendEntriesAreDrawnInTheirLinesPen) {
  const auto rank0 = test::makeSource("train", 100, 0, kStart);
  const auto rank1 = test::makeSource("train", 101, 1, kStart);
  std::vector<SeriesId> ids = feed(rank0, kStart, {{"loss.mean", 1.0}, {"loss.p90", 2.0}});
  auto more = feed(rank1, kStart, {{"loss.mean", 1.5}, {"loss.p90", 2.5}});
  ids.insert(ids.end(), more.begin(), more.end());
  StatChartView& chart = showChart(ids);
  // Colour tells sources apart and the dash pattern aggregations: the entries must show both.
  const auto entryOf = [&chart](SeriesId id) -> const LegendEntry* {
    for (const LegendEntry& entry : chart.legend().entries()) {
      if (entry.key == static_cast<int64_t>(id)) return &entry;
    }
    return nullptr;
  };
  for (SeriesId id : ids) {
    QLineSeries* line = chart.line(id);
    ASSERT_NE(line, nullptr);
    const LegendEntry* entry = entryOf(id);
    ASSERT_NE(entry, nullptr) << line->name().toStdString();
    EXPECT_EQ(entry->pen.style(), line->pen().style()) << line->name().toStdString();
    EXPECT_EQ(entry->pen.color().rgb(), line->pen().color().rgb()) << line->name().toStdString();
  }
  EXPECT_NE(chart.line(QStringLiteral("p90"), 0)->pen().style(), Qt::SolidLine);

  // Smoothed, the raw line is faint: the entry shows the smoothed line, drawn in the line's pen.
  ChartViewOptions options;
  chart.setViewOptions(&options);
  chart.render(context(0.0, 21.0));
  EXPECT_EQ(chart.legend().entries().size(), ids.size());
  for (SeriesId id : ids) {
    const LegendEntry* entry = entryOf(id);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->pen.color().alpha(), 255);
    EXPECT_EQ(entry->pen.color().rgb(), chart.smoothedLine(id)->pen().color().rgb());
    EXPECT_EQ(entry->label, chart.line(id)->name());
  }
}

// WCAG's contrast ratio of a colour drawn (with its alpha) on the plot's background.
double contrastOnPlot(QColor colour) {
  const QColor background(colours::window());
  const double alpha = colour.alphaF();
  const auto channel = [alpha](double fg, double bg) {
    const double c = fg * alpha + bg * (1 - alpha);
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  };
  const auto luminance = [&](QColor c, QColor bg) {
    return 0.2126 * channel(c.redF(), bg.redF()) + 0.7152 * channel(c.greenF(), bg.greenF()) +
           0.0722 * channel(c.blueF(), bg.blueF());
  };
  const double fg = luminance(colour, background);
  const double bg = luminance(background, background);
  return (std::max(fg, bg) + 0.05) / (std::min(fg, bg) + 0.05);
}

TEST(ChartColours, EveryLineIsReadableOnTheDarkPlot) {
  for (const char* aggregation : {"value", "mean", "p50", "p90", "p99", "min", "max", "stddev", "count", "sum"}) {
    const QString name = QString::fromLatin1(aggregation);
    EXPECT_GE(contrastOnPlot(linePen(name, std::nullopt).color()), 4.5) << aggregation;
    for (unsigned source = 0; source < 8; ++source) {
      EXPECT_GE(contrastOnPlot(linePen(name, source).color()), 4.5) << aggregation << " source " << source;
    }
  }
}

TEST_F(ChartInteractionTest, AZoomedChartSaysItIsNotFollowingAndOffersTheWayBack) {
  std::vector<SeriesId> ids = feed(source_, kStart, {{"loss.mean", 1.0}});
  for (int i = 1; i < 20; ++i) feed(source_, kStart + 1000.0 * i, {{"loss.mean", 1.0 + i}});
  StatChartView& chart = showChart(ids);
  ASSERT_NE(chart.followLiveButton(), nullptr);
  EXPECT_FALSE(chart.followLiveButton()->isVisible());

  chart.render(context(5.0, 10.0, false));  // zoomed: the grid no longer follows live data
  EXPECT_TRUE(chart.followLiveButton()->isVisible());
  EXPECT_TRUE(chart.plotRect().contains(chart.followLiveButton()->geometry().center()));
  QSignalSpy reset(&chart, &StatChartView::resetRequested);
  QTest::mouseClick(chart.followLiveButton(), Qt::LeftButton);
  EXPECT_EQ(reset.count(), 1);
  chart.render(context(0.0, 20.0));
  EXPECT_FALSE(chart.followLiveButton()->isVisible());

  // A rubber band that fixed the y axis is a zoom too, even while x follows.
  chart.setManualYRange(XRange{2.0, 3.0});
  chart.render(context(0.0, 20.0));
  EXPECT_TRUE(chart.followLiveButton()->isVisible());
}

TEST_F(ChartInteractionTest, SourceLabelsTellPidsApartWithoutAStraySpace) {
  const auto first = test::makeSource("job", 28208, std::nullopt, kStart);
  const auto second = test::makeSource("job", 28209, std::nullopt, kStart);
  std::vector<SeriesId> ids = feed(first, kStart, {{"loss.mean", 1.0}});
  auto more = feed(second, kStart, {{"loss.mean", 2.0}});
  ids.insert(ids.end(), more.begin(), more.end());
  EXPECT_EQ(registry_.source(0)->label, QStringLiteral("job:28208"));
  StatChartView& chart = showChart(ids);
  EXPECT_EQ(chart.line(ids[0])->name(), QStringLiteral("mean · job:28208"));
}

}  // namespace
}  // namespace livemon::ui
