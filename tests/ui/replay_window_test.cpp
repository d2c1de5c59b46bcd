// A replay in the window as a person reads it (issue 30): the timeline's button plays and stops
// (the toolbar's Pause is the only "Pause"), the toolbar follows the playhead rather than live
// data, a recording opens on the Charts tab, and the Open dialog starts where the last recording
// was opened from, also in the next session.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QMenu>
#include <QMenuBar>
#include <QTimer>
#include <QToolButton>

#include <livemon/ui/replay/replay_session.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/timeline_bar.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::ReplayTest;
using test::waitFor;

QAction* toolbarAction(MainWindow& window, const QStringList& texts) {
  for (QAction* action : window.findChildren<QAction*>()) {
    if (texts.contains(action->text()) && action->menu() == nullptr) return action;
  }
  return nullptr;
}

QAction* openAction(MainWindow& window) {
  for (QAction* entry : window.menuBar()->actions()) {
    if (entry->menu() == nullptr) continue;
    for (QAction* action : entry->menu()->actions()) {
      if (action->text().remove(QLatin1Char('&')).startsWith(QStringLiteral("Open recording"))) return action;
    }
  }
  return nullptr;
}

// Triggers File › Open recording…; the dialog it opens (modal or not) is read, with `select` given
// says that file was picked, and is closed. Returns the folder it started in.
QString openDialogFolder(MainWindow& window, const QString& select = {}) {
  QString folder;
  bool seen = false;
  QTimer guard;
  guard.setInterval(10);
  QObject::connect(&guard, &QTimer::timeout, [&] {
    auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
    if (dialog == nullptr || seen) return;
    seen = true;
    folder = dialog->directory().absolutePath();
    // As when the user picks `select`: accept() itself races the dialog's listing of its folder.
    if (!select.isEmpty()) emit dialog->fileSelected(select);
    dialog->reject();
  });
  guard.start();
  QAction* open = openAction(window);
  EXPECT_NE(open, nullptr);
  if (open == nullptr) return {};
  open->trigger();
  EXPECT_TRUE(waitFor([&] { return seen; }));
  return folder;
}

TEST_F(ReplayTest, TheTimelinesButtonPlaysAndStopsAndOnlyTheToolbarSaysPause) {
  MainWindow window(options());
  window.show();
  ReplaySession* session = openReplay(window.dashboard(), recording_);
  ASSERT_NE(session, nullptr);
  QToolButton* play = window.timeline().playButton();
  EXPECT_EQ(play->text(), QStringLiteral("Play"));
  session->setPlaying(true);
  EXPECT_EQ(play->text(), QStringLiteral("Stop"));
  int pauses = 0;
  for (QAction* action : window.findChildren<QAction*>()) pauses += action->text() == QStringLiteral("Pause") ? 1 : 0;
  for (QToolButton* button : window.findChildren<QToolButton*>()) {
    pauses += button->defaultAction() == nullptr && button->text() == QStringLiteral("Pause") ? 1 : 0;
  }
  EXPECT_EQ(pauses, 1);  // the toolbar's, which freezes the display
  play->click();
  EXPECT_FALSE(session->isPlaying());
  EXPECT_EQ(play->text(), QStringLiteral("Play"));
}

TEST_F(ReplayTest, AReplayShowsNoFollowLiveButFollowPlayhead) {
  MainWindow window(options());
  window.show();
  ASSERT_NE(toolbarAction(window, {QStringLiteral("Follow live")}), nullptr);
  openReplay(window.dashboard(), recording_);
  EXPECT_EQ(toolbarAction(window, {QStringLiteral("Follow live")}), nullptr);
  EXPECT_NE(toolbarAction(window, {QStringLiteral("Follow playhead")}), nullptr);
  window.dashboard().replays().closeReplay();
  EXPECT_NE(toolbarAction(window, {QStringLiteral("Follow live")}), nullptr);
}

TEST_F(ReplayTest, OpeningARecordingShowsTheChartsTab) {
  MainWindow window(options());
  window.show();
  window.setView(DashboardView::Ranks);
  openReplay(window.dashboard(), recording_);
  EXPECT_EQ(window.view(), DashboardView::Charts);
}

TEST_F(ReplayTest, TheOpenDialogStartsInTheFolderOfTheLastRecordingAlsoInTheNextSession) {
  const QString folder = QDir(dir_.path()).absolutePath();
  {
    MainWindow window(options());
    window.show();
    EXPECT_NE(openDialogFolder(window, recording_), folder);  // first: the default place
    ASSERT_TRUE(waitFor([&] { return window.dashboard().replays().replay() != nullptr; }));
    EXPECT_EQ(window.dashboard().replays().replay()->info().path, recording_);
    EXPECT_EQ(openDialogFolder(window), folder);
    window.close();
  }
  MainWindow again(options());
  again.show();
  EXPECT_EQ(openDialogFolder(again), folder);
}

}  // namespace
}  // namespace livemon::ui
