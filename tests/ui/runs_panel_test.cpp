// The Runs panel in the window: a config that reaches the dashboard is a column, the filter says
// when it cannot read an expression, selecting runs shows exactly those, and several runs put the
// charts on the Step axis unless the user chose one.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <QApplication>
#include <QImage>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <livemon/run_config.h>
#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/runs_model.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/runs_panel.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::received;
using test::waitFor;

constexpr double kStart = 1'700'000'000'000.0;

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

// On the light theme pale lines are drawn darker (themedLine); a run's swatch in the panel is
// drawn in the same colour as its lines, not the palette's paler one.
TEST_F(RunsPanelTest, OnTheLightThemeASwatchHasItsRunsLineColour) {
  MainWindow window(options());
  window.resize(1600, 1000);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  applyTheme(*qApp, Theme::Light);
  const QStringList names{"a", "b", "c", "d", "e"};
  for (int i = 0; i < names.size(); ++i) {
    const auto source = test::makeSource(names[i].toStdString(), 100 + i);
    deliver(window, {loss(source, 0, 2.0), loss(source, 10, 1.0)});
  }
  const RunsModel& runs = window.dashboard().runs();
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    return runs.rowCount() == names.size();
  }));
  QTableView* table = window.runsPanel().table();
  int darkened = 0;
  for (int row = 0; row < table->model()->rowCount(); ++row) {
    const QModelIndex index = table->model()->index(row, 0);
    const QColor palette = index.data(Qt::DecorationRole).value<QColor>();
    const QColor line = themedLine(palette);
    if (line == palette) continue;
    ++darkened;
    const QImage cell = table->viewport()->grab(table->visualRect(index)).toImage();
    int lineColoured = 0;
    int paletteColoured = 0;
    for (int y = 0; y < cell.height(); ++y) {
      for (int x = 0; x < cell.width(); ++x) {
        const QRgb pixel = cell.pixel(x, y) | 0xff000000u;
        lineColoured += pixel == line.rgb() ? 1 : 0;
        paletteColoured += pixel == palette.rgb() ? 1 : 0;
      }
    }
    EXPECT_GT(lineColoured, 20) << index.data().toString().toStdString();
    EXPECT_EQ(paletteColoured, 0) << index.data().toString().toStdString();
  }
  EXPECT_GT(darkened, 0) << "some of the palette is darkened on white";
  applyTheme(*qApp, Theme::Dark);
}

TEST_F(RunsPanelTest, AConfigThatReachesTheDashboardIsAColumnOfTheRunsPanel) {
  MainWindow window(options());
  window.resize(1600, 1000);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  const auto a = test::makeSource("lr-1e-3", 100);
  const auto b = test::makeSource("lr-1e-2", 200);
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

  // A click on a run's box hides that run alone, though it selects its row.
  const QModelIndex first = table->model()->index(0, 0);
  const QString firstRun = first.data().toString();
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, panel.checkBoxRect(first).center());
  EXPECT_FALSE(window.dashboard().runDisplay().isShown(firstRun));
  EXPECT_EQ(window.dashboard().runDisplay().shownCount(), 1U);
  QTest::mouseClick(table->viewport(), Qt::LeftButton, {}, panel.checkBoxRect(first).center());
  EXPECT_EQ(window.dashboard().runDisplay().shownCount(), 2U);
  table->clearSelection();

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

// A config with more keys than the table has columns: the panel says that later keys are not
// shown, so a missing column is not taken for a run without that key.
TEST_F(RunsPanelTest, ConfigKeysBeyondTheColumnsTheTableHasAreSaidToBeLeftOut) {
  MainWindow window(options());
  window.resize(1600, 1000);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  const RunsModel& runs = window.dashboard().runs();
  RunsPanel& panel = window.runsPanel();
  const auto narrow = test::makeSource("narrow", 100);
  deliver(window, {config(narrow, {{"lr", 1e-3}}), loss(narrow, 0, 2.0)});
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    return runs.columnOf(QStringLiteral("lr")) > 0;
  }));
  EXPECT_TRUE(panel.limitText().isEmpty()) << panel.limitText().toStdString();

  RunConfig wide;
  for (int i = 0; i < RunsModel::kMaxConfigColumns + 10; ++i) wide.emplace("key" + std::to_string(1000 + i), int64_t{i});
  const auto source = test::makeSource("wide", 200);
  deliver(window, {config(source, wide), loss(source, 0, 3.0)});
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    return runs.rowCount() == 2 && runs.droppedConfigKeys() > 0;
  }));
  const QString said = panel.limitText();
  EXPECT_TRUE(said.contains(QString::number(RunsModel::kMaxConfigColumns))) << said.toStdString();
  // "lr" took a column first: 255 of the wide run's keys are columns, 11 are not.
  EXPECT_TRUE(said.contains(QStringLiteral("11 values"))) << said.toStdString();
}

TEST_F(RunsPanelTest, ARunKeepsItsColourInTheNextSessionWhateverOrderRunsComeIn) {
  const auto a = test::makeSource("lr-1e-3", 100);
  const auto b = test::makeSource("lr-1e-2", 200);
  QColor colourA;
  QColor colourB;
  {
    MainWindow window(options());
    deliver(window, {loss(a, 0, 1.0)});
    deliver(window, {loss(b, 0, 1.0)});
    ASSERT_TRUE(waitFor([&] {
      window.dashboard().refreshNow();
      return window.dashboard().runs().rowCount() == 2;
    }));
    colourA = window.dashboard().runDisplay().colour(QStringLiteral("lr-1e-3"));
    colourB = window.dashboard().runDisplay().colour(QStringLiteral("lr-1e-2"));
    EXPECT_NE(colourA, colourB);
  }
  MainWindow window(options());
  deliver(window, {loss(b, 0, 1.0), loss(a, 0, 1.0)});  // the other way round
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    return window.dashboard().runs().rowCount() == 2;
  }));
  EXPECT_EQ(window.dashboard().runDisplay().colour(QStringLiteral("lr-1e-3")), colourA);
  EXPECT_EQ(window.dashboard().runDisplay().colour(QStringLiteral("lr-1e-2")), colourB);
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
