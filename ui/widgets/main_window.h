#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QMainWindow>
#include <QString>
#include <QStringList>

#include <livemon/clock.h>
#include <livemon/ui/model/endpoint_health.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/ingest/ingest_batch.h>
#include <livemon/ui/ingest/ingest_limits.h>
#include <livemon/ui/replay/replay_session.h>
#include <livemon/ui/model/series_store.h>
#include <livemon/ui/model/time_view.h>

class QAction;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSettings;
class QSplitter;
class QTabWidget;
class QTimer;
class QToolBar;

namespace livemon::ui {

class ChartGrid;
class EventLogView;
class IngestWorker;
class RangesView;
class StatRegistry;
class TimelineBar;

// The views beside the event log, on tabs.
enum class DashboardView { Charts, Ranges };

// Thread-safety: a plain value type.
// How a MainWindow starts.
struct DashboardOptions {
  // Endpoints to subscribe to. Empty: those saved in the settings, or else
  // transport::kDefaultEndpoint; with exactEndpoints, exactly these (none: a synthetic feed
  // through IngestWorker::deliver only).
  std::vector<std::string> endpoints;
  bool exactEndpoints = false;
  std::size_t logCapacity = EventLogModel::kDefaultCapacity;
  // Settings file (INI). Empty: the user's livemon settings.
  QString settingsFile;
  std::chrono::milliseconds refreshInterval{33};
  std::chrono::milliseconds staleAfter{3000};
  SeriesStore::Limits seriesLimits{};
  // What publishers and recordings may make the dashboard hold, and what its views show at most.
  IngestLimits limits{};
  std::size_t maxLinesPerChart = kDefaultMaxLinesPerChart;
  std::size_t maxRangeRows = kDefaultMaxRangeRows;
  // The view shown first. None: the one shown when the last session ended.
  std::optional<DashboardView> view;
  // Recordings to open at start: the first on the timeline, the baselines beside it.
  QString replay;
  QStringList baselines;
  // Where the replay starts (seconds from the recording's start; default: its end), and whether
  // it plays at once.
  std::optional<double> replaySeekSeconds;
  bool replayPlay = false;
  // Drives replay playback; nullptr: the system clock. Must outlive the window.
  Clock* clock = nullptr;
};

// Thread-compatible: a widget, used on the GUI thread only.
// The dashboard: a toolbar (time range, x axis, chart filter, pause, endpoints), the chart grid
// and the Ranges view on tabs beside the event log, and a status bar line per endpoint.
//
// Data flow: an IngestWorker thread receives and converts events into its StagingBuffer; a GUI
// timer (about 30 Hz) takes everything staged in one batch, applies it to the StatRegistry, the
// EventLogModel and the RangesView, and lets the ChartGrid and the RangesView redraw what is on
// screen and changed.
//
// Range Stats ("range/<name>") are charted in the grid too, like every Stat: a user filtering the
// grid for "range/" finds them, and the grid stays "a chart per Stat" whatever a publisher names
// them. The Ranges view is where they are compared.
//
// Paused: samples still go into the stores (nothing is lost) but the charts stay as they were and
// new log rows are held back (up to the log's capacity) until resumed.
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // Throws transport::TransportError naming an endpoint that cannot be used.
  explicit MainWindow(DashboardOptions options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  IngestWorker& ingest() noexcept { return *ingest_; }
  const StatRegistry& registry() const noexcept { return *registry_; }
  ChartGrid& chartGrid() noexcept { return *grid_; }
  EventLogModel& eventLog() noexcept { return *logModel_; }
  EventLogView& eventLogView() noexcept { return *logView_; }
  RangesView& rangesView() noexcept { return *ranges_; }

  bool isPaused() const noexcept { return paused_; }
  void setPaused(bool paused);
  void setTimeRange(TimeRange range);
  void setTimeAxisMode(TimeAxisMode mode);
  void setChartFilter(const QString& filter);
  void setView(DashboardView view);
  DashboardView view() const;
  QStringList endpoints() const;
  // The per-endpoint health shown in the status bar, as of the last status update.
  const std::vector<EndpointHealth>& endpointHealth() const noexcept { return health_; }

  // One refresh now, as the timer would do it.
  void refreshNow();
  // Updates the status bar now (the timer does it every second).
  void updateStatus();
  // What the limits dropped, as of now; the status bar shows it (limitSummary) from the last update.
  LimitReport limitReport() const;
  // The status bar's limit line and its tooltip, as of the last status update; empty while nothing
  // was dropped.
  QString limitText() const;
  QString limitToolTip() const;
  void saveSettings();
  void openConnectDialog();

  // Opens a recording (asynchronously: the session's opened() or openFailed() follows). Replay:
  // on the timeline, replacing one replayed before; Baseline: its runs join as "baseline: RUN"
  // sources. Returns the session.
  ReplaySession* openRecording(const QString& path, ReplayMode mode = ReplayMode::Replay);
  // The recording on the timeline, if any.
  ReplaySession* replay() const noexcept { return replay_.get(); }
  // Stops replaying: the recording's sources leave the dashboard with all their data (lines,
  // charts only they had, range rows, log rows); opened again, they return as new sources.
  void closeReplay();
  TimelineBar& timeline() noexcept { return *timeline_; }
  // Records every event received from now on into `path`. False, with the error shown, when the
  // file cannot be created.
  bool startRecording(const QString& path);
  void stopRecording();
  bool isRecording() const;
  // The toolbar's recording line: file, size and events.
  QString recordingText() const;
  // The last error shown (a recording that cannot be opened or written).
  const QString& lastError() const noexcept { return lastError_; }
  // A file name for a new recording, in the user's documents directory.
  static QString defaultRecordingPath();

 signals:
  // After every refresh, with how long it took.
  void refreshed(qint64 nanoseconds);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildToolbar();
  void buildStatusBar();
  void restoreSettings();
  void showError(const QString& message);
  void endpointsChanged();
  void buildFileMenu();
  void buildTimeline();
  void applyBatch(IngestBatch& batch);
  void clearReplayed(const QString& endpoint);
  void removeReplayed(const QString& endpoint);
  // Removes the log rows (shown and held) of the sources whose entry in `ofSource` is set.
  void removeLogRows(const std::vector<char>& ofSource);
  void reportError(const QString& title, const QString& message);
  void updateRecordingLabel();
  void updateLimitLabel();
  void setReplayWindow();
  void chooseRecording(ReplayMode mode);
  void toggleRecording(bool on);

  DashboardOptions options_;
  std::unique_ptr<QSettings> settings_;
  std::unique_ptr<StatRegistry> registry_;
  std::unique_ptr<IngestWorker> ingest_;
  EventLogModel* logModel_ = nullptr;
  ChartGrid* grid_ = nullptr;
  EventLogView* logView_ = nullptr;
  RangesView* ranges_ = nullptr;
  QTabWidget* views_ = nullptr;
  QSplitter* splitter_ = nullptr;

  QComboBox* rangeBox_ = nullptr;
  QComboBox* axisBox_ = nullptr;
  QLineEdit* chartFilter_ = nullptr;
  QAction* pauseAction_ = nullptr;
  QHBoxLayout* endpointLabels_ = nullptr;
  QLabel* summaryLabel_ = nullptr;
  QLabel* limitLabel_ = nullptr;
  QTimer* refreshTimer_ = nullptr;
  QTimer* statusTimer_ = nullptr;

  bool paused_ = false;
  std::deque<LogEntry> heldLog_;  // log rows received while paused
  std::size_t heldBytes_ = 0;     // their data bytes
  EndpointHealthTracker healthTracker_;
  std::vector<EndpointHealth> health_;

  // Record and replay.
  std::unique_ptr<ReplaySession> replay_;
  std::vector<std::unique_ptr<ReplaySession>> baselines_;
  uint64_t replayGeneration_ = 0;  // of replay_, as last applied
  TimelineBar* timeline_ = nullptr;
  QToolBar* timelineBar_ = nullptr;
  QAction* recordAction_ = nullptr;
  QLabel* recordingLabel_ = nullptr;
  QString lastError_;
};

}  // namespace livemon::ui
