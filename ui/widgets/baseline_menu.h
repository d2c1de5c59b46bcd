#pragma once

#include <QObject>

class QAction;
class QMenu;

namespace livemon::ui {

class ReplayController;

// GUI thread only.
// The File menu's baseline entries, kept in step with ReplayController::baselines(): "Close baseline
// NAME" while one baseline is open, a "Close baseline" submenu with an entry per baseline while
// several are, neither while none is; and "Baselines follow the live run"
// (ReplayController::setBaselinesFollowLive).
class BaselineMenu : public QObject {
  Q_OBJECT

 public:
  // Appends its entries to `file`, and is a child of it. `replays` must outlive it.
  BaselineMenu(ReplayController& replays, QMenu& file);

  // The entry shown while one baseline is open.
  QAction* closeAction() const noexcept { return close_; }
  // The submenu shown while several are: one entry per baseline, in the order opened.
  QMenu* closeMenu() const noexcept { return closeMenu_; }
  QAction* followAction() const noexcept { return follow_; }

 private:
  void rebuild();

  ReplayController& replays_;
  QAction* close_ = nullptr;
  QMenu* closeMenu_ = nullptr;
  QAction* follow_ = nullptr;
};

}  // namespace livemon::ui
