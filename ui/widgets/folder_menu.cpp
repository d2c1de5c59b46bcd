#include <livemon/ui/widgets/folder_menu.h>

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/dashboard/dashboard_settings.h>
#include <livemon/ui/dashboard/replay_controller.h>

namespace livemon::ui {

FolderMenu::FolderMenu(ReplayController& replays, DashboardSettings& settings, QMenu& file, QWidget& window)
    : QObject(&file), replays_(replays), settings_(settings), window_(window) {
  open_ = file.addAction(tr("Open &folder…"));
  open_->setToolTip(tr("Open every recording in a folder, its subfolders too, as runs side by side"));
  connect(open_, &QAction::triggered, this, &FolderMenu::choose);
  close_ = file.addAction(tr("Close folder"));
  connect(close_, &QAction::triggered, &replays_, &ReplayController::closeFolder);
  connect(&replays_, &ReplayController::folderChanged, this, &FolderMenu::folderChanged);
  folderChanged();
}

void FolderMenu::choose() {
  QString start = settings_.recordingFolder();
  if (start.isEmpty() || !QFileInfo(start).isDir()) start = QFileInfo(Dashboard::defaultRecordingPath()).absolutePath();
  auto* dialog = new QFileDialog(&window_, tr("Open a folder of runs"), start);
  dialog->setObjectName(QStringLiteral("openFolderDialog"));
  dialog->setFileMode(QFileDialog::Directory);
  dialog->setOption(QFileDialog::ShowDirsOnly);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& folder) {
    settings_.setRecordingFolder(folder);
    replays_.openFolder(folder);
  });
  dialog->open();  // not exec(): the dashboard keeps refreshing behind it
}

void FolderMenu::folderChanged() {
  const RunFolder* folder = replays_.folder();
  close_->setVisible(folder != nullptr);
  if (folder != nullptr) close_->setText(tr("Close folder %1").arg(QDir(folder->folder()).dirName()));
}

}  // namespace livemon::ui
