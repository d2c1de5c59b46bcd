// The alerts' widgets: the badge counting new alerts, the notification, and a double-click on an
// alert that moves the replay's playhead to it.
#include <gtest/gtest.h>

#include <chrono>

#include <QStatusBar>
#include <QTableView>
#include <QToolButton>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/alert_list_model.h>
#include <livemon/ui/replay/replay_session.h>
#include <livemon/ui/widgets/alerts_dock.h>
#include <livemon/ui/widgets/main_window.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::eventNs;
using test::kT0Ms;
using test::ReplayTest;
using test::waitFor;

AlertEntry nanAlert(double timeMs) {
  AlertEntry alert;
  alert.timeMs = timeMs;
  alert.source = QStringLiteral("train@host:4242");
  alert.kind = QStringLiteral("nan");
  alert.rule = QStringLiteral("nan");
  alert.key = QStringLiteral("loss.mean");
  alert.value = std::numeric_limits<double>::quiet_NaN();
  alert.message = QStringLiteral("loss.mean became NaN");
  return alert;
}

TEST_F(ReplayTest, AnAlertShowsABadgeAndANotificationAndTheListClearsTheBadge) {
  MainWindow window(options());
  window.show();
  AlertsDock& dock = window.alertsDock();
  EXPECT_FALSE(dock.badge()->isVisibleTo(&window));
  window.dashboard().alertCentre().raise(nanAlert(kT0Ms));
  EXPECT_TRUE(dock.badge()->isVisibleTo(&window));
  EXPECT_TRUE(dock.badge()->text().endsWith(QStringLiteral(" 1 new alert"))) << dock.badge()->text().toStdString();
  EXPECT_TRUE(dock.lastNotification().contains(QStringLiteral("loss.mean became NaN")));
  EXPECT_EQ(window.dashboard().alertCentre().alerts().rowCount(), 1);

  dock.badge()->click();  // shows the list: the alert is seen
  EXPECT_TRUE(dock.isVisible());
  EXPECT_EQ(window.dashboard().alertCentre().alerts().unseen(), 0U);
  EXPECT_EQ(dock.badge()->text(), QStringLiteral("1 alert"));
}

TEST_F(ReplayTest, DoubleClickingAnAlertMovesTheReplaysPlayheadToIt) {
  MainWindow window(options());
  window.setTimeRange(TimeRange::All);
  window.show();
  ReplaySession* session = openReplay(window.dashboard(), recording_);
  ASSERT_EQ(session->playheadNs(), eventNs(test::kEvents - 1));
  window.dashboard().alertCentre().raise(nanAlert(static_cast<double>(eventNs(100)) / 1e6));
  AlertsDock& dock = window.alertsDock();
  dock.show();
  QTableView* table = dock.table();
  const QModelIndex index = table->model()->index(0, AlertListModel::RuleColumn);
  emit table->doubleClicked(index);
  settle(window.dashboard(), *session);
  EXPECT_EQ(session->playheadNs(), eventNs(100));
  expectShows(window.dashboard(), 0, 100);
}

}  // namespace
}  // namespace livemon::ui
