// User alert rules from the GUI, offscreen: the dialog a chart title's context menu opens
// (prefilled with the chart's key and last value, accepting only text parseAlertRule reads), the
// rules listed and removed in the Alerts dock, and their round trip through the settings.
#include <gtest/gtest.h>

#include <limits>

#include <QGraphicsPolygonItem>
#include <QListWidget>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QTemporaryDir>

#include <livemon/alert_rules.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/widgets/alert_rule_dialog.h>
#include <livemon/ui/widgets/alerts_dock.h>
#include <livemon/ui/widgets/chart_alert_markers.h>
#include <livemon/ui/widgets/chart_alert_menu.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/main_window.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::waitFor;

TEST(AlertRuleDialog, BuildsTheRuleFromTheChartsKeyAndLastValue) {
  AlertRuleDialog dialog(QStringLiteral("train.loss.mean"), 2.5);
  EXPECT_EQ(dialog.ruleText(), QStringLiteral("train.loss.mean > 2.5"));
  EXPECT_TRUE(dialog.problem().isEmpty());
  dialog.setAbove(false);
  dialog.setConsecutive(3);
  EXPECT_EQ(dialog.ruleText(), QStringLiteral("train.loss.mean < 2.5 for 3"));
  const std::optional<AlertRule> rule = parseAlertRule(dialog.ruleText().toStdString());
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(rule->key, "train.loss.mean");
  EXPECT_EQ(rule->comparison, AlertComparison::Less);
  EXPECT_EQ(rule->threshold, 2.5);
  EXPECT_EQ(rule->consecutive, 3u);
}

TEST(AlertRuleDialog, QuotesAKeyThatIsNotAWordAndRefusesABadThreshold) {
  AlertRuleDialog dialog(QStringLiteral("odd key \"x\">y"), std::numeric_limits<double>::quiet_NaN());
  const std::optional<AlertRule> rule = parseAlertRule(dialog.ruleText().toStdString());
  ASSERT_TRUE(rule.has_value()) << dialog.ruleText().toStdString();
  EXPECT_EQ(rule->key, "odd key \"x\">y");
  EXPECT_EQ(rule->threshold, 0.0);  // a NaN last value starts from 0

  dialog.setThreshold(QStringLiteral("lots"));
  EXPECT_FALSE(dialog.problem().isEmpty());
  dialog.accept();
  EXPECT_NE(dialog.result(), QDialog::Accepted);
}

class AlertRulesWindowTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.isValid()); }
  DashboardOptions options() {
    DashboardOptions result;
    result.exactEndpoints = true;
    result.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
    return result;
  }
  QTemporaryDir dir_;
};

TEST_F(AlertRulesWindowTest, TheDockListsTheRulesRemovesThemAndTheyComeBackNextTime) {
  {
    MainWindow window(options());
    AlertsDock& dock = window.alertsDock();
    EXPECT_EQ(dock.rules()->count(), 0);
    ASSERT_TRUE(window.dashboard().alertCentre().addRule(QStringLiteral("train.loss.mean > 10 for 3")));
    ASSERT_TRUE(window.dashboard().alertCentre().addRule(QStringLiteral("eval.accuracy < 0.5")));
    ASSERT_EQ(dock.rules()->count(), 2);
    dock.rules()->setCurrentRow(1);
    dock.removeSelectedRule();
    ASSERT_EQ(dock.rules()->count(), 1);
    EXPECT_EQ(dock.rules()->item(0)->text(), QStringLiteral("train.loss.mean > 10 for 3"));
  }
  MainWindow window(options());
  EXPECT_EQ(window.dashboard().alertCentre().rules(), QStringList{QStringLiteral("train.loss.mean > 10 for 3")});
  ASSERT_EQ(window.alertsDock().rules()->count(), 1);
  EXPECT_EQ(window.alertsDock().rules()->item(0)->text(), QStringLiteral("train.loss.mean > 10 for 3"));
}

TEST_F(AlertRulesWindowTest, AChartProposesItsMainLinesKeyAndLastValue) {
  MainWindow window(options());
  window.show();
  Dashboard& dashboard = window.dashboard();
  dashboard.start();
  const auto source = test::makeSource("train", 42);
  std::vector<transport::ReceivedEvent> events{
      test::received(source, Event{std::string(kStatEventName), test::atMs(1'700'000'000'000.0),
                                   {{"train.loss.max", 9.0}, {"train.loss.mean", 2.5}}}),
      test::received(source, Event{"eval", test::atMs(1'700'000'001'000.0), {{"accuracy", 0.75}}})};
  dashboard.ingest().deliver(events);
  ChartGrid& grid = window.chartGrid();
  ASSERT_TRUE(waitFor([&] {
    dashboard.refreshNow();
    return grid.chart(QStringLiteral("train.loss")) != nullptr && grid.chart(QStringLiteral("eval.accuracy")) != nullptr;
  }));
  const ChartAlertMenu& menu = window.alertsDock().chartMenu();
  const std::optional<ChartRuleProposal> loss = menu.proposal(*grid.chart(QStringLiteral("train.loss")));
  ASSERT_TRUE(loss.has_value());
  EXPECT_EQ(loss->key, QStringLiteral("train.loss.mean"));
  EXPECT_EQ(loss->lastValue, 2.5);
  const std::optional<ChartRuleProposal> accuracy = menu.proposal(*grid.chart(QStringLiteral("eval.accuracy")));
  ASSERT_TRUE(accuracy.has_value());
  EXPECT_EQ(accuracy->key, QStringLiteral("eval.accuracy"));
  EXPECT_EQ(accuracy->lastValue, 0.75);
}

TEST_F(AlertRulesWindowTest, AnAlertOnAChartsKeyMarksItsTimeOnThatChart) {
  MainWindow window(options());
  window.resize(1200, 800);
  window.show();
  window.setTimeRange(TimeRange::All);
  Dashboard& dashboard = window.dashboard();
  dashboard.start();
  const auto source = test::makeSource("train", 42);
  constexpr double kT0 = 1'700'000'000'000.0;
  std::vector<transport::ReceivedEvent> events;
  for (int i = 0; i < 10; ++i) {
    events.push_back(test::received(source, Event{std::string(kStatEventName), test::atMs(kT0 + 1000.0 * i),
                                                  {{"train.loss.mean", 1.0 * i}}}));
  }
  dashboard.ingest().deliver(events);
  ChartGrid& grid = window.chartGrid();
  ASSERT_TRUE(waitFor([&] {
    dashboard.refreshNow();
    return grid.chart(QStringLiteral("train.loss")) != nullptr;
  }));
  StatChartView& chart = *grid.chart(QStringLiteral("train.loss"));
  const ChartAlertMarkers& markers = window.alertsDock().chartMarkers();
  EXPECT_TRUE(markers.visibleMarkers(chart).empty());

  AlertEntry alert;
  alert.timeMs = kT0 + 5000.0;
  alert.kind = QStringLiteral("threshold");
  alert.key = QStringLiteral("train.loss.mean");
  alert.value = 5.0;
  dashboard.alertCentre().raise(alert);
  alert.key = QStringLiteral("other.loss.mean");  // another chart's: not on this one
  dashboard.alertCentre().raise(alert);
  ASSERT_TRUE(waitFor([&] {
    grid.refresh();
    return markers.visibleMarkers(chart).size() == 1;
  }));
  // At the alert's time and value: half way across the plot, its tip at 5 on the y axis.
  const QGraphicsPolygonItem* marker = markers.visibleMarkers(chart).front();
  const QRectF plot = chart.chart()->plotArea();
  EXPECT_NEAR(marker->pos().x(), plot.left() + plot.width() * 5.0 / 9.0, plot.width() * 0.05);
  EXPECT_NEAR(marker->pos().y(), chart.chart()->mapToPosition(QPointF(kT0 + 5000.0, 5.0), chart.line(chart.seriesIds().front())).y(), 0.5);
}

TEST_F(AlertRulesWindowTest, OnTheStepAxisAMarkerStandsAtItsEventsStepAndOneWithoutAStepIsLeftOut) {
  MainWindow window(options());
  window.resize(1200, 800);
  window.show();
  window.setTimeRange(TimeRange::All);
  window.setTimeAxisMode(TimeAxisMode::Step);
  Dashboard& dashboard = window.dashboard();
  dashboard.start();
  const auto source = test::makeSource("train", 42);
  constexpr double kT0 = 1'700'000'000'000.0;
  std::vector<transport::ReceivedEvent> events;
  for (int i = 0; i < 10; ++i) {
    Event stat{std::string(kStatEventName), test::atMs(kT0 + 1000.0 * i), {{"train.loss.mean", 1.0 * i}}};
    stat.step = 100 * i;
    events.push_back(test::received(source, std::move(stat)));
  }
  dashboard.ingest().deliver(events);
  ChartGrid& grid = window.chartGrid();
  ASSERT_TRUE(waitFor([&] {
    dashboard.refreshNow();
    return grid.chart(QStringLiteral("train.loss")) != nullptr && grid.chart(QStringLiteral("train.loss"))->isOnScreen();
  }));
  StatChartView& chart = *grid.chart(QStringLiteral("train.loss"));
  const ChartAlertMarkers& markers = window.alertsDock().chartMarkers();

  AlertEntry alert;
  alert.timeMs = kT0 + 1000.0;  // its time says 1/9 of the way; its step says 6/9
  alert.kind = QStringLiteral("nan");
  alert.key = QStringLiteral("train.loss.mean");
  alert.step = 600;
  dashboard.alertCentre().raise(alert);
  alert.step.reset();  // no step: no place on this axis
  dashboard.alertCentre().raise(alert);
  ASSERT_TRUE(waitFor([&] {
    grid.refresh();
    return chart.xRange() == XRange{0.0, 900.0} && markers.visibleMarkers(chart).size() == 1;
  }));
  grid.refresh();
  const QGraphicsPolygonItem* marker = markers.visibleMarkers(chart).front();
  const QRectF plot = chart.chart()->plotArea();
  EXPECT_NEAR(marker->pos().x(), plot.left() + plot.width() * 6.0 / 9.0, plot.width() * 0.05);
  // Back on the wall clock both are shown, at their times.
  window.setTimeAxisMode(TimeAxisMode::WallClock);
  EXPECT_TRUE(waitFor([&] {
    grid.refresh();
    return markers.visibleMarkers(chart).size() == 2;
  }));
}

}  // namespace
}  // namespace livemon::ui
