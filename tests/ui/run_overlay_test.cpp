// Several runs on one chart: one line per run in its run's colour on the Step axis, a point at
// step N of each run exactly at x = N whatever the runs' step rates and start times; a hidden
// run leaves every chart; and the Runs panel in the window: a config that reaches the dashboard
// is a column, the filter says when it cannot read an expression, selecting runs shows exactly
// those, and several runs put the charts on the Step axis unless the user chose one.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <QItemSelectionModel>
#include <QLineEdit>
#include <QTableView>
#include <QTemporaryDir>
#include <QtCharts/QLineSeries>
#include <QtTest/QTest>

#include <livemon/run_config.h>
#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/runs_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/chart_legend.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/runs_panel.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;
using test::waitFor;

constexpr double kStart = 1'700'000'000'000.0;

class RunOverlayTest : public ::testing::Test {
 protected:
  RunOverlayTest() { grid_.setRunDisplay(&runs_); }

  void feed(const std::shared_ptr<const transport::SourceInfo>& source, double ms, int64_t step,
            std::unordered_map<std::string, DataValue> data) {
    IngestBatch batch;
    Event event{"livemon.Stat", atMs(ms), std::move(data)};
    event.step = step;
    auto r = received(source, std::move(event));
    converter_.convert(r, batch);
    for (const SourceDescriptor& added : batch.sources) runs_.assign(QString::fromStdString(added.info->run));
    const RegistryChanges changes = registry_.apply(batch);
    grid_.addSeries(changes.newSeries);
  }

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

  // The points of a line by x.
  static std::map<double, double> pointsOf(const QLineSeries* line) {
    std::map<double, double> out;
    for (const QPointF& p : line->points()) out[p.x()] = p.y();
    return out;
  }

  EventConverter converter_;
  StatRegistry registry_;
  RunDisplay runs_;
  ChartGrid grid_{registry_};
  // Run a makes 10 steps a second; run b, started an hour later, 3.
  const std::shared_ptr<const transport::SourceInfo> a_ = makeSource("lr-1e-3", 100, std::nullopt, kStart);
  const std::shared_ptr<const transport::SourceInfo> b_ = makeSource("lr-1e-2", 200, std::nullopt, kStart + 3.6e6);
};

TEST_F(RunOverlayTest, TwoRunsOfDifferentStepRatesLieAtTheirStepsInTheirColours) {
  grid_.viewOptions().setSmoothing(0.0);
  for (int i = 0; i < 60; ++i) {
    feed(a_, kStart + 1000.0 * i, 10 * i, {{"loss.mean", 1.0 + i}, {"loss.min", 0.5 + i}, {"loss.max", 2.0 + i}});
    feed(b_, kStart + 3.6e6 + 1000.0 * i, 3 * i, {{"loss.mean", 100.0 + i}, {"loss.min", 99.0 + i}, {"loss.max", 101.0 + i}});
  }
  grid_.setTimeAxisMode(TimeAxisMode::Step);
  grid_.setTimeRange(TimeRange::All);
  StatChartView& chart = showChart(QStringLiteral("loss"));
  EXPECT_TRUE(chart.showsSeveralRuns());
  const QLineSeries* meanA = chart.line(QStringLiteral("mean"), 0);
  const QLineSeries* meanB = chart.line(QStringLiteral("mean"), 1);
  ASSERT_NE(meanA, nullptr);
  ASSERT_NE(meanB, nullptr);
  const std::map<double, double> pointsA = pointsOf(meanA);
  const std::map<double, double> pointsB = pointsOf(meanB);
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
  EXPECT_EQ(meanA->pen().color(), runs_.colour(QStringLiteral("lr-1e-3")));
  EXPECT_EQ(meanB->pen().color(), runs_.colour(QStringLiteral("lr-1e-2")));
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
  runs_.setShown(QStringLiteral("lr-1e-2"), false);
  grid_.refresh();
  EXPECT_FALSE(chart.showsSeveralRuns());
  EXPECT_FALSE(meanB->isVisible());
  EXPECT_TRUE(chart.line(QStringLiteral("max"), 0)->isVisible());
  for (const LegendEntry& entry : chart.legend().entries()) EXPECT_FALSE(entry.label.contains(QStringLiteral("lr-1e-2")));
  EXPECT_FALSE(chart.tooltipAt(chart.mapFromScene(atStep)).contains(QStringLiteral("lr-1e-2")));
}

class RunsPanelTest : public ::testing::Test {
 protected:
  DashboardOptions options() {
    DashboardOptions result;
    result.exactEndpoints = true;  // a synthetic feed only
    result.settingsFile = settingsDir_.filePath(QStringLiteral("livemon.ini"));
    return result;
  }
  static void deliver(MainWindow& window, std::vector<transport::ReceivedEvent> events) {
    window.dashboard().ingest().deliver(events);
  }
  static transport::ReceivedEvent config(const std::shared_ptr<const transport::SourceInfo>& source, RunConfig values) {
    Event event{std::string(kRunConfigEventName), atMs(kStart), {}};
    for (auto& [key, value] : values) event.data.emplace(key, std::move(value));
    return received(source, std::move(event));
  }
  static transport::ReceivedEvent loss(const std::shared_ptr<const transport::SourceInfo>& source, int64_t step, double value) {
    Event event{"livemon.Stat", atMs(kStart + 100.0 * static_cast<double>(step)), {{"loss.mean", value}}};
    event.step = step;
    return received(source, std::move(event));
  }

  QTemporaryDir settingsDir_;
};

TEST_F(RunsPanelTest, AConfigThatReachesTheDashboardIsAColumnOfTheRunsPanel) {
  MainWindow window(options());
  window.resize(1600, 1000);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  const auto a = makeSource("lr-1e-3", 100);
  const auto b = makeSource("lr-1e-2", 200);
  deliver(window, {config(a, {{"lr", 1e-3}, {"optimizer", std::string("adam")}}), loss(a, 0, 2.0), loss(a, 10, 1.0)});
  deliver(window, {config(b, {{"lr", 1e-2}, {"batch", int64_t{64}}}), loss(b, 0, 3.0)});
  RunsPanel& panel = window.runsPanel();
  const RunsModel& runs = window.dashboard().runs();
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    return runs.rowCount() == 2 && runs.columnOf(QStringLiteral("batch")) > 0;
  }));
  // A second run shows the panel, and the charts go on the Step axis (no axis was chosen).
  EXPECT_TRUE(panel.isVisible());
  EXPECT_EQ(window.chartGrid().timeView().mode(), TimeAxisMode::Step);
  QTableView* table = panel.table();
  const auto cell = [&](const QString& run, const QString& key) {
    for (int row = 0; row < table->model()->rowCount(); ++row) {
      if (table->model()->index(row, 0).data().toString() == run) {
        return table->model()->index(row, runs.columnOf(key)).data().toString();
      }
    }
    return QStringLiteral("(no row)");
  };
  EXPECT_EQ(table->model()->headerData(runs.columnOf(QStringLiteral("lr")), Qt::Horizontal).toString(), QStringLiteral("lr"));
  EXPECT_EQ(cell(QStringLiteral("lr-1e-3"), QStringLiteral("lr")), QStringLiteral("0.001"));
  EXPECT_EQ(cell(QStringLiteral("lr-1e-3"), QStringLiteral("optimizer")), QStringLiteral("adam"));
  EXPECT_EQ(cell(QStringLiteral("lr-1e-3"), QStringLiteral("batch")), QString());
  EXPECT_EQ(cell(QStringLiteral("lr-1e-2"), QStringLiteral("batch")), QStringLiteral("64"));
  // The config is logged, not charted.
  EXPECT_EQ(window.chartGrid().chart(QStringLiteral("livemon.run_config.lr")), nullptr);

  // The filter, typed: one run left; a bad expression is said, under the box.
  panel.filterBox()->setText(QStringLiteral("lr>5e-3"));
  EXPECT_EQ(table->model()->rowCount(), 1);
  EXPECT_TRUE(panel.errorText().isEmpty());
  panel.filterBox()->setText(QStringLiteral("lr>"));
  EXPECT_TRUE(panel.errorText().contains(QStringLiteral("lr>"))) << panel.errorText().toStdString();
  panel.filterBox()->clear();
  EXPECT_TRUE(panel.errorText().isEmpty());

  // Selecting a row shows exactly that run; the charts follow.
  table->selectionModel()->select(table->model()->index(0, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  const QString selected = table->model()->index(0, 0).data().toString();
  EXPECT_TRUE(window.dashboard().runDisplay().isShown(selected));
  EXPECT_EQ(window.dashboard().runDisplay().shownCount(), 1U);
  EXPECT_EQ(table->model()->index(1, 0).data(Qt::CheckStateRole).toInt(), Qt::Unchecked);
  EXPECT_EQ(window.chartGrid().timeView().mode(), TimeAxisMode::WallClock);

  // An axis the user chose stays, and is the one saved.
  window.setTimeAxisMode(TimeAxisMode::SinceRunStart);
  window.dashboard().runDisplay().showOnly({QStringLiteral("lr-1e-3"), QStringLiteral("lr-1e-2")});
  EXPECT_EQ(window.chartGrid().timeView().mode(), TimeAxisMode::SinceRunStart);
}

TEST_F(RunsPanelTest, AnAxisNotChosenIsNotSavedSoSeveralRunsStillGetSteps) {
  {
    MainWindow window(options());
    window.saveSettings();
  }
  EXPECT_FALSE(DashboardSettings(options().settingsFile).timeAxisMode().has_value());
}

}  // namespace
}  // namespace livemon::ui
