#pragma once

#include <memory>

#include <QMainWindow>
#include <QString>

#include <livemon/ui/dashboard/dashboard.h>

class QAction;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSplitter;
class QTabWidget;
class QToolBar;

namespace livemon::ui {

class AlertsDock;
class ChartGrid;
class ChartHistoryMarks;
class EventLogView;
class RangesView;
class RanksView;
class RunsPanel;
class TimelineBar;
class ViewMenu;

// GUI thread only.
// The dashboard's window: the File, View and Help menus, a toolbar (time range, x axis, chart
// filter, pause, record), the chart grid and the Ranges and Ranks views on tabs beside the event
// log (collapsible), the Runs panel and the Alerts list as docks, the replay's timeline, and a
// status bar line per endpoint. With several runs shown, stating steps, the x axis is Step unless
// the user chose one (in the toolbar, or in an earlier session: only a choice is saved). A recording opened
// shows the Charts tab. It builds and wires widgets only: the pipeline, its refresh and everything
// it holds are the Dashboard's, whose signals the widgets follow.
//
// Range Stats ("range/<name>") are charted in the grid too, like every Stat: a user filtering the
// grid for "range/" finds them, and the grid stays "a chart per Stat" whatever a publisher names
// them. The Ranges view is where they are compared.
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // Throws transport::TransportError naming an endpoint that cannot be used.
  explicit MainWindow(DashboardOptions options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  Dashboard& dashboard() noexcept { return *dashboard_; }
  const Dashboard& dashboard() const noexcept { return *dashboard_; }
  ChartGrid& chartGrid() noexcept { return *grid_; }
  EventLogView& eventLogView() noexcept { return *logView_; }
  RangesView& rangesView() noexcept { return *ranges_; }
  RanksView& ranksView() noexcept { return *ranks_; }
  TimelineBar& timeline() noexcept { return *timeline_; }
  AlertsDock& alertsDock() noexcept { return *alerts_; }
  RunsPanel& runsPanel() const;
  ViewMenu& viewMenu() noexcept { return *viewMenu_; }
  // Where each endpoint's received history begins, on the charts.
  const ChartHistoryMarks& historyMarks() const noexcept { return *historyMarks_; }

  void setTimeRange(TimeRange range);
  void setTimeAxisMode(TimeAxisMode mode);
  void setChartFilter(const QString& filter);
  void setView(DashboardView view);
  DashboardView view() const;

  // The Dashboard's limit report with the chart grid's limits filled in.
  LimitReport limitReport() const;
  // The status bar's limit line and its tooltip, as of the last status update; empty while nothing
  // was dropped.
  QString limitText() const;
  // The status bar's summary: charts, events received and dropped, log rows held while paused.
  QString summaryText() const;
  QString limitToolTip() const;
  // The toolbar's recording line: file, size and events.
  QString recordingText() const;
  void saveSettings();
  void openConnectDialog();

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildFileMenu();
  void buildToolbar();
  void buildTimeline();
  void buildStatusBar();
  void wireDashboard();
  void restoreSettings();
  void redraw();
  void replayChanged(ReplaySession* session);
  void pausedChanged(bool paused);
  void endpointsChanged();
  void updateStatus();
  void updateSummary();
  void updateRecordingLabel();
  void updateLimitLabel();
  void showError(const QString& message);
  void reportError(const QString& title, const QString& message);
  void chooseRecording(ReplayMode mode);
  void toggleRecording(bool on);
  // Step with several runs shown that state steps, wall clock otherwise, until the user chooses an axis.
  void followRunsOnAxis();

  std::unique_ptr<Dashboard> dashboard_;
  ChartGrid* grid_ = nullptr;
  EventLogView* logView_ = nullptr;
  RangesView* ranges_ = nullptr;
  RanksView* ranks_ = nullptr;
  QTabWidget* views_ = nullptr;
  QSplitter* splitter_ = nullptr;

  QComboBox* rangeBox_ = nullptr;
  QComboBox* axisBox_ = nullptr;
  QLineEdit* chartFilter_ = nullptr;
  QAction* pauseAction_ = nullptr;
  QAction* followAction_ = nullptr;  // "Follow live", "Follow playhead" in a replay
  ViewMenu* viewMenu_ = nullptr;
  QHBoxLayout* endpointLabels_ = nullptr;
  QLabel* summaryLabel_ = nullptr;
  QLabel* limitLabel_ = nullptr;
  TimelineBar* timeline_ = nullptr;
  AlertsDock* alerts_ = nullptr;
  ChartHistoryMarks* historyMarks_ = nullptr;
  QToolBar* timelineBar_ = nullptr;
  QAction* recordAction_ = nullptr;
  QLabel* recordingLabel_ = nullptr;
  QString statusNote_;  // the status bar's standing line, shown when no passing message is
  bool axisChosen_ = false;  // the user chose the x axis (now or in a saved session)
};

}  // namespace livemon::ui
