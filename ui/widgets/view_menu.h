#pragma once

#include <QList>
#include <QObject>

#include <livemon/ui/widgets/dashboard_style.h>

class QAction;
class QDockWidget;
class QMenu;
class QSplitter;
class QTabWidget;

namespace livemon::ui {

class ChartGrid;
class EventLogView;

// GUI thread only.
// The window's View menu and the event log's place beside the charts. The menu switches the tabs
// (Charts, Ranges, Ranks), shows or collapses the event log, lists the Stat windows in it or not,
// shows the Alerts list, and picks the theme (dark or light). The log collapses to the splitter's edge (its handle drags it back)
// rather than hiding, so the splitter's saved state keeps it; an enlarged chart takes its room
// (the log is hidden until the grid comes back).
class ViewMenu : public QObject {
  Q_OBJECT

 public:
  // The log's share of the window's width where no session saved one.
  static constexpr double kDefaultLogShare = 0.34;

  // Adds the menu to `menu` (empty, in the window's menu bar). The splitter holds the views (its
  // first widget) and `log` (its second); all must outlive this object.
  ViewMenu(QMenu& menu, QSplitter& splitter, QTabWidget& views, EventLogView& log, ChartGrid& grid,
           QDockWidget& alerts);

  QAction* logAction() const noexcept { return logAction_; }
  QAction* statWindowsAction() const noexcept { return statWindowsAction_; }
  // Shows the log beside the charts (at its last width, or the default share), or collapses it.
  void setLogShown(bool shown);
  bool logShown() const;
  // No session saved the splitter: when the window is first shown (its size known), the log gets
  // kDefaultLogShare of the width.
  void giveLogDefaultWidthOnShow();
  // Switches the whole application to `theme` (applyTheme) and checks its entry.
  void setTheme(Theme theme);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void enlargedChanged(bool enlarged);
  void syncLogAction();

  QSplitter& splitter_;
  EventLogView& log_;
  QAction* logAction_ = nullptr;
  QAction* statWindowsAction_ = nullptr;
  QAction* darkAction_ = nullptr;
  QAction* lightAction_ = nullptr;
  int logWidth_ = 0;          // the log's width before it was collapsed
  bool defaultWidthPending_ = false;
  QList<int> beforeEnlarge_;  // the splitter's sizes when a chart was enlarged
};

}  // namespace livemon::ui
