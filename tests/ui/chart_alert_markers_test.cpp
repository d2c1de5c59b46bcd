// Alerts drawn on the charts, offscreen: a value alert marks only its own source's line when two
// runs share a chart (at that run's time, in its colour, naming it), and silence and loss mark
// every chart of their source, and no other, with a tooltip naming the rule.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <map>

#include <QGraphicsPolygonItem>
#include <QGraphicsRectItem>
#include <QCoreApplication>
#include <QScrollBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/alert_list_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/alerts_dock.h>
#include <livemon/ui/widgets/chart_alert_markers.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/main_window.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::waitFor;

constexpr double kT0 = 1'700'000'000'000.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class ChartAlertMarkersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    DashboardOptions options;
    options.exactEndpoints = true;
    options.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
    window_ = std::make_unique<MainWindow>(options);
    window_->resize(1400, 900);
    window_->show();
    window_->setTimeRange(TimeRange::All);
    window_->dashboard().start();
  }

  Dashboard& dashboard() { return window_->dashboard(); }
  ChartGrid& grid() { return window_->chartGrid(); }
  const ChartAlertMarkers& markers() { return window_->alertsDock().chartMarkers(); }

  // Ten Stat windows a second apart from kT0, of "train.loss" and "train.acc" for run "a" and of
  // "train.loss" only for run "b"; run "a" started a minute before "b", and its loss is NaN at its
  // sixth window.
  void deliverTwoRuns() {
    const auto runA = test::makeSource("a", 1, std::nullopt, kT0 - 60'000.0);
    const auto runB = test::makeSource("b", 2, std::nullopt, kT0);
    std::vector<transport::ReceivedEvent> events;
    for (int i = 0; i < 10; ++i) {
      const double t = kT0 + 1000.0 * i;
      // Run "b" first, so that the chart's first line is not run "a"'s.
      events.push_back(test::received(runB, Event{std::string(kStatEventName), test::atMs(t), {{"train.loss.mean", 2.0 * i}}}));
      events.push_back(test::received(runA, Event{std::string(kStatEventName), test::atMs(t),
                                                  {{"train.loss.mean", i == 5 ? kNaN : 1.0 * i}, {"train.acc.mean", 0.5}}}));
    }
    dashboard().ingest().deliver(events);
    ASSERT_TRUE(waitFor([&] {
      dashboard().refreshNow();
      grid().refresh();
      StatChartView* loss = grid().chart(QStringLiteral("train.loss"));
      return loss != nullptr && grid().chart(QStringLiteral("train.acc")) != nullptr && loss->seriesIds().size() == 2;
    }));
  }

  // The source ids by run name.
  std::map<std::string, SourceId> sourcesByRun() {
    std::map<std::string, SourceId> ids;
    for (SeriesId id : grid().chart(QStringLiteral("train.loss"))->seriesIds()) {
      const SeriesEntry* entry = dashboard().registry().series(id);
      ids[dashboard().registry().source(entry->source)->info->run] = entry->source;
    }
    return ids;
  }

  QTemporaryDir dir_;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(ChartAlertMarkersTest, ANaNOfOneRunMarksOnlyThatRunsLineAtItsOwnTime) {
  // Relative time: run "a" started a minute before "b", so the same wall time is 60 s further
  // right for it.
  window_->setTimeAxisMode(TimeAxisMode::SinceRunStart);
  deliverTwoRuns();
  StatChartView& chart = *grid().chart(QStringLiteral("train.loss"));
  const std::map<std::string, SourceId> sources = sourcesByRun();
  QLineSeries* lineA = chart.line(QStringLiteral("mean"), sources.at("a"));
  QLineSeries* lineB = chart.line(QStringLiteral("mean"), sources.at("b"));
  ASSERT_NE(lineA, nullptr);
  ASSERT_NE(lineB, nullptr);
  ASSERT_NE(lineA->pen().color().rgb(), lineB->pen().color().rgb()) << "two runs, two colours";

  // The built-in "nan" rule raised it: one alert, from run "a".
  ASSERT_TRUE(waitFor([&] {
    dashboard().refreshNow();
    grid().refresh();
    return markers().visibleMarkers(chart).size() == 1;
  }));
  ASSERT_EQ(dashboard().alertCentre().alerts().rowCount(), 1);
  const QGraphicsPolygonItem* marker = markers().visibleMarkers(chart).front();
  EXPECT_EQ(marker->brush().color().rgb(), lineA->pen().color().rgb()) << "in run a's colour";
  EXPECT_TRUE(marker->toolTip().contains(QStringLiteral("Alert from a"))) << marker->toolTip().toStdString();
  EXPECT_TRUE(marker->toolTip().contains(QStringLiteral("nan"))) << "names the rule";
  // At 65 s on run "a"'s clock (its sixth window, a minute after its start), not at 5 s.
  const QPointF expected = chart.chart()->mapToPosition(QPointF(65.0, 0.0), lineA);
  EXPECT_NEAR(marker->pos().x(), expected.x(), 1.0);
  const QPointF wrong = chart.chart()->mapToPosition(QPointF(5.0, 0.0), lineB);
  EXPECT_GT(std::abs(marker->pos().x() - wrong.x()), 50.0);
  EXPECT_TRUE(markers().visibleMarkers(*grid().chart(QStringLiteral("train.acc"))).empty()) << "another key's chart";
}

TEST_F(ChartAlertMarkersTest, AValueAlertOfARunWithoutALineOnTheChartMarksNothing) {
  deliverTwoRuns();
  const std::map<std::string, SourceId> sources = sourcesByRun();
  StatChartView& acc = *grid().chart(QStringLiteral("train.acc"));  // run "a"'s lines only
  AlertEntry alert;
  alert.timeMs = kT0 + 2000.0;
  alert.kind = QStringLiteral("threshold");
  alert.rule = QStringLiteral("train.acc.mean > 0.1");
  alert.key = QStringLiteral("train.acc.mean");
  alert.source = QStringLiteral("b");
  alert.sourceId = sources.at("b");
  dashboard().alertCentre().raise(alert);
  grid().refresh();
  EXPECT_TRUE(markers().visibleMarkers(acc).empty());
  alert.source = QStringLiteral("a");
  alert.sourceId = sources.at("a");
  dashboard().alertCentre().raise(alert);
  ASSERT_TRUE(waitFor([&] {
    grid().refresh();
    return markers().visibleMarkers(acc).size() == 1;
  }));
}

TEST_F(ChartAlertMarkersTest, SilenceAndLossMarkEveryChartOfTheirSourceWithTheRuleNamed) {
  deliverTwoRuns();
  const std::map<std::string, SourceId> sources = sourcesByRun();
  StatChartView& loss = *grid().chart(QStringLiteral("train.loss"));  // runs "a" and "b"
  StatChartView& acc = *grid().chart(QStringLiteral("train.acc"));    // run "a" only
  EXPECT_TRUE(markers().visibleSourceMarks(loss).empty());

  AlertEntry silence;
  silence.timeMs = kT0 + 8000.0;
  silence.kind = QStringLiteral("silent");
  silence.rule = QStringLiteral("silent 3s");
  silence.value = 4.0;  // quiet since kT0 + 4 s
  silence.source = QStringLiteral("b");
  silence.sourceId = sources.at("b");
  silence.message = QStringLiteral("b has been silent for 4 s");
  dashboard().alertCentre().raise(silence);
  ASSERT_TRUE(waitFor([&] {
    grid().refresh();
    return markers().visibleSourceMarks(loss).size() == 1;
  }));
  EXPECT_TRUE(markers().visibleSourceMarks(acc).empty()) << "run b has no line there";
  const QGraphicsRectItem* band = markers().visibleSourceMarks(loss).front();
  EXPECT_TRUE(band->toolTip().contains(QStringLiteral("silent 3s"))) << band->toolTip().toStdString();
  EXPECT_TRUE(band->toolTip().contains(QStringLiteral("Alert from b")));
  // Wall time over kT0..kT0+9 s: the band covers the quiet 4 s up to the alert.
  const QRectF plot = loss.chart()->plotArea();
  EXPECT_NEAR(band->rect().left(), plot.left() + plot.width() * 4.0 / 9.0, plot.width() * 0.03);
  EXPECT_NEAR(band->rect().right(), plot.left() + plot.width() * 8.0 / 9.0, plot.width() * 0.03);
  EXPECT_DOUBLE_EQ(band->rect().top(), plot.top());
  EXPECT_DOUBLE_EQ(band->rect().height(), plot.height());

  AlertEntry lost;
  lost.timeMs = kT0 + 3000.0;
  lost.kind = QStringLiteral("loss");
  lost.rule = QStringLiteral("loss");
  lost.key = QStringLiteral("livemon.Stat");  // a topic, not a chart
  lost.value = 12.0;
  lost.source = QStringLiteral("a");
  lost.sourceId = sources.at("a");
  dashboard().alertCentre().raise(lost);
  ASSERT_TRUE(waitFor([&] {
    grid().refresh();
    return markers().visibleSourceMarks(acc).size() == 1 && markers().visibleSourceMarks(loss).size() == 2;
  }));
  const QGraphicsRectItem* line = markers().visibleSourceMarks(acc).front();
  EXPECT_TRUE(line->toolTip().contains(QStringLiteral("rule: loss"))) << line->toolTip().toStdString();
  const QRectF accPlot = acc.chart()->plotArea();
  EXPECT_NEAR(line->rect().right(), accPlot.left() + accPlot.width() * 3.0 / 9.0, accPlot.width() * 0.03);
  EXPECT_LE(line->rect().width(), 3.0) << "a loss is a moment: a thin line";
  EXPECT_TRUE(markers().visibleMarkers(acc).empty()) << "a loss is not a value alert";
}

TEST_F(ChartAlertMarkersTest, SourceMarksOutsideTheVisibleRangeAreHidden) {
  deliverTwoRuns();
  const std::map<std::string, SourceId> sources = sourcesByRun();
  StatChartView& loss = *grid().chart(QStringLiteral("train.loss"));
  AlertEntry lost;
  lost.timeMs = kT0 - 3'600'000.0;  // an hour before anything shown
  lost.kind = QStringLiteral("loss");
  lost.rule = QStringLiteral("loss");
  lost.sourceId = sources.at("a");
  dashboard().alertCentre().raise(lost);
  grid().refresh();
  EXPECT_TRUE(markers().visibleSourceMarks(loss).empty());
}


TEST_F(ChartAlertMarkersTest, AValueAlertStandsAtItsValueAndAtTheEdgeOnlyWhenOffTheAxis) {
  deliverTwoRuns();
  const std::map<std::string, SourceId> sources = sourcesByRun();
  StatChartView& chart = *grid().chart(QStringLiteral("train.loss"));
  QLineSeries* lineB = chart.line(QStringLiteral("mean"), sources.at("b"));
  AlertEntry alert;
  alert.timeMs = kT0 + 4000.0;
  alert.kind = QStringLiteral("threshold");
  alert.rule = QStringLiteral("train.loss.mean > 7");
  alert.key = QStringLiteral("train.loss.mean");
  alert.value = 8.0;  // run b's value at 4 s
  alert.step = 40;
  alert.source = QStringLiteral("b");
  alert.sourceId = sources.at("b");
  alert.message = QStringLiteral("train.loss.mean = 8 > 7");
  dashboard().alertCentre().raise(alert);
  // Run a's NaN (the built-in rule) and the threshold alert.
  ASSERT_TRUE(waitFor([&] {
    dashboard().refreshNow();
    grid().refresh();
    return markers().visibleMarkers(chart).size() == 2;
  }));
  const QRectF plot = chart.chart()->plotArea();
  const QGraphicsPolygonItem* atValue = nullptr;
  const QGraphicsPolygonItem* nan = nullptr;
  for (const QGraphicsPolygonItem* marker : markers().visibleMarkers(chart)) {
    (marker->toolTip().contains(QStringLiteral("> 7")) ? atValue : nan) = marker;
  }
  ASSERT_NE(atValue, nullptr);
  ASSERT_NE(nan, nullptr);
  // At 8 on the axis, where run b's line has its point: well inside the plot, not on its edge.
  const QPointF value = chart.chart()->mapToPosition(QPointF(kT0 + 4000.0, 8.0), lineB);
  ASSERT_GT(value.y(), plot.top() + 30.0);
  const QRectF drawn = atValue->sceneBoundingRect();
  EXPECT_NEAR(drawn.center().x(), value.x(), 2.0);
  EXPECT_LE(drawn.top() - 1.0, value.y()) << "the marker touches the value";
  EXPECT_GE(drawn.bottom() + 1.0, value.y());
  EXPECT_LT(drawn.height(), 16.0);
  // Its tooltip, shown by the chart's hover over it: the alert's text, time, step and value.
  const QPoint over = chart.mapFromScene(drawn.center());
  const QString tip = chart.tooltipAt(over);
  EXPECT_TRUE(tip.contains(QStringLiteral("train.loss.mean = 8 &gt; 7")) || tip.contains(QStringLiteral("train.loss.mean = 8 > 7")))
      << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("step 40"))) << tip.toStdString();
  EXPECT_TRUE(tip.contains(QStringLiteral("value 8"))) << tip.toStdString();

  // NaN has no place on the axis: at the top edge, and its tooltip says why.
  EXPECT_LE(std::abs(nan->sceneBoundingRect().top() - plot.top()), 2.0);
  EXPECT_TRUE(nan->toolTip().contains(QStringLiteral("value NaN"))) << nan->toolTip().toStdString();
  EXPECT_TRUE(nan->toolTip().contains(QStringLiteral("edge"))) << nan->toolTip().toStdString();

  // A value above the axis: clamped to the top edge, pointing up, and said so.
  alert.value = 1e6;
  alert.message = QStringLiteral("way up");
  dashboard().alertCentre().raise(alert);
  ASSERT_TRUE(waitFor([&] {
    grid().refresh();
    return markers().visibleMarkers(chart).size() == 3;
  }));
  const QGraphicsPolygonItem* above = nullptr;
  for (const QGraphicsPolygonItem* marker : markers().visibleMarkers(chart)) {
    if (marker->toolTip().contains(QStringLiteral("way up"))) above = marker;
  }
  ASSERT_NE(above, nullptr);
  EXPECT_LE(std::abs(above->sceneBoundingRect().top() - plot.top()), 2.0);
  EXPECT_TRUE(above->toolTip().contains(QStringLiteral("above"))) << above->toolTip().toStdString();
}

TEST_F(ChartAlertMarkersTest, DoubleClickingAnAlertScrollsToItsChartAndFlashesIt) {
  // Enough charts that the last is below the fold.
  const auto run = test::makeSource("a", 1);
  std::vector<transport::ReceivedEvent> events;
  for (int i = 0; i < 3; ++i) {
    std::unordered_map<std::string, DataValue> data;
    for (int c = 0; c < 40; ++c) data[QStringLiteral("zz.metric%1.mean").arg(c, 2, 10, QLatin1Char('0')).toStdString()] = 1.0 * i;
    events.push_back(test::received(run, Event{std::string(kStatEventName), test::atMs(kT0 + 1000.0 * i), data}));
  }
  dashboard().ingest().deliver(events);
  ASSERT_TRUE(waitFor([&] {
    dashboard().refreshNow();
    grid().refresh();
    return grid().charts().size() == 40 && grid().pendingChartCount() == 0;
  }));
  StatChartView* target = grid().chart(QStringLiteral("zz.metric39"));
  ASSERT_NE(target, nullptr);
  // The list open, as a user has it to double-click in it; the window laid out around it.
  AlertsDock& dock = window_->alertsDock();
  dock.show();
  QCoreApplication::processEvents();
  const auto inView = [&] {
    const QRect shown(target->mapTo(grid().viewport(), QPoint(0, 0)), target->size());
    return grid().viewport()->rect().contains(shown);
  };
  ASSERT_FALSE(inView()) << "below the fold to begin with";

  AlertEntry alert;
  alert.timeMs = kT0 + 1000.0;
  alert.kind = QStringLiteral("threshold");
  alert.rule = QStringLiteral("zz.metric39.mean > 0.5");
  alert.key = QStringLiteral("zz.metric39.mean");
  alert.value = 1.0;
  alert.source = QStringLiteral("a");
  alert.message = QStringLiteral("zz.metric39.mean = 1 > 0.5");
  dashboard().alertCentre().raise(alert);
  QTableView* table = dock.table();
  const int row = table->model()->rowCount() - 1;
  emit table->doubleClicked(table->model()->index(row, AlertListModel::RuleColumn));
  EXPECT_GT(grid().verticalScrollBar()->value(), 0);
  EXPECT_TRUE(inView()) << "chart at " << target->mapTo(grid().viewport(), QPoint(0, 0)).y() << " height "
                        << target->height() << " in a viewport " << grid().viewport()->height() << " high, scrolled to "
                        << grid().verticalScrollBar()->value() << " of " << grid().verticalScrollBar()->maximum();
  const QWidget* flash = target->findChild<QWidget*>(QStringLiteral("chartFlash"));
  ASSERT_NE(flash, nullptr);
  EXPECT_TRUE(flash->isVisible()) << "the chart flashes";
  EXPECT_EQ(flash->geometry(), target->rect());
}

}  // namespace
}  // namespace livemon::ui
