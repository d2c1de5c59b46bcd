// The event log as a person reads it in the window (issue 30): the Stat windows hidden by default
// (a toggle, kept in the settings, shows them), the Step column, the rank first in Source, the
// log collapsible from the View menu and hidden while a chart is enlarged; the View and Help menus.
#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDialog>
#include <QMenu>
#include <QMenuBar>
#include <QSplitter>
#include <QTableWidget>
#include <QTemporaryDir>

#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/widgets/alerts_dock.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/event_log_view.h>
#include <livemon/ui/widgets/main_window.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::waitFor;

constexpr double kT0Ms = 1'700'000'000'000.0;

class LogWindowTest : public ::testing::Test {
 protected:
  DashboardOptions options() {
    DashboardOptions result;
    result.exactEndpoints = true;  // no publishers: only what the test feeds
    result.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
    return result;
  }

  // From rank 3 of "train": a Stat window at step 120 and an eval event at step 120.
  static void deliverStatAndEval(MainWindow& window) {
    const auto source = test::makeSource("train", 4242, 3, kT0Ms);
    std::vector<transport::ReceivedEvent> events;
    events.push_back(test::received(source, Event{std::string(kStatEventName), test::atMs(kT0Ms),
                                                  {{"loss.mean", 0.5}, {"step", int64_t{120}}}}));
    events.push_back(test::received(source, Event{"eval", test::atMs(kT0Ms + 10), {{"accuracy", 0.75}, {"step", int64_t{120}}}}));
    window.dashboard().ingest().deliver(events);
    window.dashboard().refreshNow();
  }

  static QStringList logNames(MainWindow& window) {
    const EventLogModel& log = window.dashboard().eventLog();
    QStringList names;
    for (int row = 0; row < log.rowCount(); ++row) names << log.index(row, log.columnCount() - 2).data().toString();
    return names;
  }

  static QAction* action(QWidget& window, const char* name) {
    return window.findChild<QAction*>(QLatin1String(name));
  }

  static QMenu* menu(QMainWindow& window, const QString& title) {
    for (QAction* entry : window.menuBar()->actions()) {
      if (entry->menu() != nullptr && entry->text().remove(QLatin1Char('&')) == title) return entry->menu();
    }
    return nullptr;
  }

  static int logWidth(MainWindow& window) {
    auto* splitter = window.findChild<QSplitter*>();
    return splitter->sizes().value(1);
  }

  QTemporaryDir dir_;
};

TEST_F(LogWindowTest, TheLogHidesStatWindowsByDefaultAndItsToggleShowsThemAgainNextSessionToo) {
  {
    MainWindow window(options());
    window.show();
    deliverStatAndEval(window);
    ASSERT_TRUE(waitFor([&] { return window.dashboard().eventLog().storedCount() == 2; }));
    EXPECT_EQ(logNames(window), QStringList{QStringLiteral("eval")});

    QAction* toggle = action(window, "viewStatWindows");
    ASSERT_NE(toggle, nullptr);
    EXPECT_FALSE(toggle->isChecked());
    toggle->trigger();
    EXPECT_EQ(logNames(window), (QStringList{QString::fromUtf8(kStatEventName.data()), QStringLiteral("eval")}));
    EXPECT_TRUE(window.eventLogView().showStatWindows());
    window.close();  // saves the settings
  }
  MainWindow again(options());
  EXPECT_TRUE(again.eventLogView().showStatWindows());
  EXPECT_TRUE(action(again, "viewStatWindows")->isChecked());
}

TEST_F(LogWindowTest, TheLogShowsTheStepAndTheRankFirstInSource) {
  MainWindow window(options());
  window.show();
  deliverStatAndEval(window);
  const EventLogModel& log = window.dashboard().eventLog();
  ASSERT_TRUE(waitFor([&] { return log.rowCount() == 1; }));
  int step = -1;
  int source = -1;
  for (int column = 0; column < log.columnCount(); ++column) {
    const QString header = log.headerData(column, Qt::Horizontal).toString();
    if (header == QStringLiteral("Step")) step = column;
    if (header == QStringLiteral("Source")) source = column;
  }
  ASSERT_GE(step, 0) << "no Step column";
  EXPECT_EQ(log.index(0, step).data().toString(), QStringLiteral("120"));
  ASSERT_GE(source, 0);
  const QString text = log.index(0, source).data().toString();
  EXPECT_TRUE(text.startsWith(QStringLiteral("rank 3"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("train@host:4242"))) << text.toStdString();
}

TEST_F(LogWindowTest, TheLogStartsAtAboutAThirdOfTheWidthAndCollapsesFromTheViewMenu) {
  MainWindow window(options());
  window.resize(1600, 1000);
  window.show();
  ASSERT_TRUE(waitFor([&] { return window.isVisible() && logWidth(window) > 0; }));
  auto* splitter = window.findChild<QSplitter*>();
  const int total = splitter->sizes().value(0) + logWidth(window);
  EXPECT_LT(logWidth(window), total * 35 / 100);

  QAction* toggle = action(window, "viewEventLog");
  ASSERT_NE(toggle, nullptr);
  EXPECT_TRUE(toggle->isChecked());
  const int before = logWidth(window);
  toggle->trigger();
  EXPECT_EQ(logWidth(window), 0);
  EXPECT_FALSE(toggle->isChecked());
  toggle->trigger();
  EXPECT_EQ(logWidth(window), before);
  EXPECT_TRUE(toggle->isChecked());

  // Collapsed when the window closes (with a chart enlarged, which is not kept): collapsed in the
  // next session.
  toggle->trigger();
  window.chartGrid().setEnlarged(QStringLiteral("loss"));
  window.close();
  MainWindow again(options());
  again.resize(1600, 1000);
  again.show();
  ASSERT_TRUE(waitFor([&] { return again.isVisible(); }));
  EXPECT_EQ(logWidth(again), 0);
  EXPECT_FALSE(action(again, "viewEventLog")->isChecked());
  action(again, "viewEventLog")->trigger();
  EXPECT_GT(logWidth(again), 0);
}

TEST_F(LogWindowTest, AnEnlargedChartTakesTheLogsRoomUntilTheGridComesBack) {
  MainWindow window(options());
  window.resize(1600, 1000);
  window.show();
  deliverStatAndEval(window);
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    return window.chartGrid().chart(QStringLiteral("loss")) != nullptr;
  }));
  ASSERT_TRUE(window.eventLogView().isVisible());
  window.chartGrid().setEnlarged(QStringLiteral("loss"));
  EXPECT_FALSE(window.eventLogView().isVisible());
  window.chartGrid().setEnlarged(std::nullopt);
  EXPECT_TRUE(window.eventLogView().isVisible());
  EXPECT_GT(logWidth(window), 0);
}

TEST_F(LogWindowTest, TheViewMenuHasThePanelsAndTabsAndTheHelpMenuShortcutsGuideAndAbout) {
  MainWindow window(options());
  window.show();
  QMenu* view = menu(window, QStringLiteral("View"));
  ASSERT_NE(view, nullptr);
  QStringList entries;
  for (QAction* entry : view->actions()) entries << entry->text().remove(QLatin1Char('&'));
  for (const char* expected : {"Charts", "Ranges", "Ranks", "Event log", "Stat windows in the log", "Alerts"}) {
    EXPECT_TRUE(entries.contains(QLatin1String(expected))) << expected << " in " << entries.join(", ").toStdString();
  }
  // The tab entries switch the tabs; Alerts shows the list.
  action(window, "viewTab2")->trigger();
  EXPECT_EQ(window.view(), DashboardView::Ranks);
  action(window, "viewTab0")->trigger();
  EXPECT_EQ(window.view(), DashboardView::Charts);
  QAction* alerts = action(window, "viewAlerts");
  ASSERT_NE(alerts, nullptr);
  alerts->trigger();
  EXPECT_TRUE(window.alertsDock().isVisible());

  QMenu* help = menu(window, QStringLiteral("Help"));
  ASSERT_NE(help, nullptr);
  ASSERT_NE(action(window, "helpGuide"), nullptr);
  EXPECT_TRUE(action(window, "helpGuide")->toolTip().endsWith(QStringLiteral("docs/dashboard.md")))
      << action(window, "helpGuide")->toolTip().toStdString();
  ASSERT_NE(action(window, "helpAbout"), nullptr);
  QAction* shortcuts = action(window, "helpShortcuts");
  ASSERT_NE(shortcuts, nullptr);
  shortcuts->trigger();
  auto* dialog = window.findChild<QDialog*>(QStringLiteral("shortcutsDialog"));
  ASSERT_NE(dialog, nullptr);
  auto* table = dialog->findChild<QTableWidget*>();
  ASSERT_NE(table, nullptr);
  QStringList keys;
  for (int row = 0; row < table->rowCount(); ++row) keys << table->item(row, 0)->text() + QStringLiteral(" = ") + table->item(row, 1)->text();
  const QString all = keys.join(QLatin1Char('\n'));
  // The menus' real shortcuts, and the charts' gestures.
  EXPECT_TRUE(all.contains(QKeySequence(QKeySequence::Open).toString(QKeySequence::NativeText) + QStringLiteral(" = File › Open recording")))
      << all.toStdString();
  EXPECT_TRUE(all.contains(QStringLiteral("View › Event log"))) << all.toStdString();
  EXPECT_TRUE(all.contains(QStringLiteral("Escape"))) << all.toStdString();
  EXPECT_TRUE(all.contains(QStringLiteral("Ctrl + mouse wheel"))) << all.toStdString();
  dialog->close();
}

}  // namespace
}  // namespace livemon::ui
