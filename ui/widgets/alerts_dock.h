#pragma once

#include <QDockWidget>

class QListWidget;
class QSystemTrayIcon;
class QTableView;
class QToolButton;

namespace livemon::ui {

class ChartAlertMarkers;
class ChartAlertMenu;
class ChartGrid;
class Dashboard;
struct AlertEntry;

// GUI thread only.
// The alerts' user interface: a dock with the Alerts list (time, source, rule, value; the message
// as tooltip), a badge for the status bar counting the alerts not yet seen (a click shows the
// list), and a desktop notification per alert (a tray message where the platform has a tray).
// Below the list, the user's rules (Dashboard::alertRules), each removable; new ones come from a
// chart title's context menu (ChartAlertMenu, which the dock installs on the grid's charts, with
// ChartAlertMarkers: a marker at each alert's time on its chart).
// Double-clicking an alert jumps to it (showAlert): a replay's playhead moves there, live the
// charts show the minute around it (with the wall-clock axis), and the grid scrolls to the chart of
// its key, which flashes (ChartFlash).
class AlertsDock : public QDockWidget {
  Q_OBJECT

 public:
  // `dashboard` and `grid` must outlive the dock.
  AlertsDock(Dashboard& dashboard, ChartGrid& grid, QWidget* parent = nullptr);

  QTableView* table() const noexcept { return table_; }
  // The user's rules, one item each; the selected one goes with removeSelectedRule().
  QListWidget* rules() const noexcept { return rules_; }
  void removeSelectedRule();
  ChartAlertMenu& chartMenu() const noexcept { return *chartMenu_; }
  // The red triangles at each alert's time on the charts of its key.
  ChartAlertMarkers& chartMarkers() const noexcept { return *chartMarkers_; }
  // For the status bar; hidden until an alert is raised.
  QToolButton* badge() const noexcept { return badge_; }
  // What a double-click on the alert's row does: jumpTo its time, then scrolls the grid to its
  // chart and flashes it.
  void showAlert(const AlertEntry& alert);
  // Moves the replay's playhead, or the charts, to `timeMs` (ms since the Unix epoch).
  void jumpTo(double timeMs);
  // The last desktop notification's text (empty: none yet), for tests and platforms without a tray.
  const QString& lastNotification() const noexcept { return lastNotification_; }

 signals:
  void jumped(double timeMs);

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  void alertRaised(const AlertEntry& alert);
  void updateBadge();
  void showRules();

  Dashboard& dashboard_;
  ChartGrid& grid_;
  QTableView* table_ = nullptr;
  QListWidget* rules_ = nullptr;
  ChartAlertMenu* chartMenu_ = nullptr;
  ChartAlertMarkers* chartMarkers_ = nullptr;
  QToolButton* badge_ = nullptr;
  QSystemTrayIcon* tray_ = nullptr;
  QString lastNotification_;
};

}  // namespace livemon::ui
