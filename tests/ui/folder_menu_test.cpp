// File → Open folder… and Close folder (FolderMenu) in the main window.
#include <gtest/gtest.h>

#include <QAction>
#include <QDir>
#include <QFileDialog>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/replay/run_folder.h>
#include <livemon/ui/widgets/folder_menu.h>
#include <livemon/ui/widgets/main_window.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::ReplayTest;
using test::waitFor;

using FolderMenuTest = ReplayTest;

TEST_F(FolderMenuTest, OpenFolderAsksForAFolderAndOpensItsRecordingsAsRunsCloseFolderTakesThemOut) {
  const QString folder = dir_.filePath(QStringLiteral("runs"));
  ASSERT_TRUE(QDir().mkpath(folder + QStringLiteral("/sub")));
  test::writeRecording((folder + QStringLiteral("/sub/a.mcap")).toStdString(), 20);
  MainWindow window(options());
  Dashboard& dashboard = window.dashboard();
  auto* menu = window.findChild<FolderMenu*>();
  ASSERT_NE(menu, nullptr);
  EXPECT_FALSE(menu->closeAction()->isVisible());

  menu->openAction()->trigger();
  auto* dialog = window.findChild<QFileDialog*>(QStringLiteral("openFolderDialog"));
  ASSERT_NE(dialog, nullptr);
  EXPECT_EQ(dialog->fileMode(), QFileDialog::Directory);
  dialog->setDirectory(folder);
  dialog->selectFile(folder);
  QMetaObject::invokeMethod(dialog, "accept");  // as its Open button does
  RunFolder* runs = dashboard.replays().folder();
  ASSERT_NE(runs, nullptr);
  EXPECT_EQ(runs->folder(), folder);
  EXPECT_EQ(dashboard.settings().recordingFolder(), folder);  // the next dialog starts there
  ASSERT_TRUE(waitFor([&] {
    dashboard.refreshNow();
    return !runs->scanning() && !runs->busy() && !runs->hasMoreToRead();
  }));
  EXPECT_EQ(runs->runs().size(), 1U);
  EXPECT_EQ(dashboard.registry().sourceCount(), 1U);
  EXPECT_TRUE(menu->closeAction()->isVisible());
  EXPECT_EQ(menu->closeAction()->text(), QStringLiteral("Close folder runs"));

  menu->closeAction()->trigger();
  dashboard.refreshNow();
  EXPECT_EQ(dashboard.replays().folder(), nullptr);
  EXPECT_EQ(dashboard.registry().sourceCount(), 0U);
  EXPECT_FALSE(menu->closeAction()->isVisible());
}

}  // namespace
}  // namespace livemon::ui
