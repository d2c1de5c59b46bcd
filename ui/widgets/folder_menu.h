#pragma once

#include <QObject>

class QAction;
class QMenu;
class QWidget;

namespace livemon::ui {

class DashboardSettings;
class ReplayController;

// GUI thread only.
// The File menu's folder entries: "Open folder…", which asks for a folder (in a dialog that does
// not block the refresh) and opens its recordings as runs (ReplayController::openFolder), and
// "Close folder NAME", shown while a folder is open.
class FolderMenu : public QObject {
  Q_OBJECT

 public:
  // Appends its entries to `file`, and is a child of it. `replays` and `settings` (the dialog
  // starts in the folder of the last recording opened, and remembers the one chosen) must outlive
  // it; the dialog is a child of `window`.
  FolderMenu(ReplayController& replays, DashboardSettings& settings, QMenu& file, QWidget& window);

  QAction* openAction() const noexcept { return open_; }
  QAction* closeAction() const noexcept { return close_; }

 private:
  void choose();
  void folderChanged();

  ReplayController& replays_;
  DashboardSettings& settings_;
  QWidget& window_;
  QAction* open_ = nullptr;
  QAction* close_ = nullptr;
};

}  // namespace livemon::ui
