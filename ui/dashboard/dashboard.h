#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QObject>
#include <QString>
#include <QStringList>

#include <livemon/clock.h>
#include <livemon/transport/curve.h>
#include <livemon/ui/dashboard/alert_centre.h>
#include <livemon/ui/dashboard/dashboard_settings.h>
#include <livemon/ui/dashboard/endpoint_health.h>
#include <livemon/ui/dashboard/replay_controller.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/model/series_store.h>

class QTimer;

namespace livemon::ui {

class RangesModel;
class RankGroups;
class RankScoresModel;
class RunDisplay;
class RunsModel;
class StatRegistry;
struct RegistryRemoval;

// Thread-safety: a plain value type.
// How a Dashboard (and the MainWindow showing it) starts.
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
  // Thread-safety: a plain value type.
  // How much a timed refresh applies of what waits (Dashboard::refreshUpTo). What is staged is cut
  // into pieces of at most `pieceRows` samples and log rows (0: whole); a refresh applies one
  // piece, then more while less than `time` has passed on `clock` since it began, and leaves the
  // rest, in order, to the next. Every window of a 256-rank run lands at once (20 480 samples and
  // 5 120 rows), and a late joiner's history as batches of 300 000 rows: applied whole, or a
  // quarter of the backlog at a time, they made refreshes of 21-77 ms.
  struct RefreshBudget {
    std::size_t pieceRows = 8192;
    // Zero: one piece per refresh.
    std::chrono::microseconds time{6000};
    // Times the budget; nullptr: the system clock. Must outlive the dashboard.
    Clock* clock = nullptr;
  };
  RefreshBudget refreshBudget{};
  std::chrono::milliseconds staleAfter{3000};
  SeriesStore::Limits seriesLimits{};
  // With groupRanks, the limits of each rank's own series (drawn only when the rank is picked):
  // 64 windows at full resolution, then 64 buckets of 8, so a 256-rank run's memory levels off
  // after about 10 minutes of 1 s windows (StatRegistry::setRankedLimits); a run of more than 64
  // ranks keeps its share of what 64 would, at least 8 of each (StatRegistry::rankedLimitsFor).
  SeriesStore::Limits rankSeriesLimits{64, 64, 8};
  // What publishers and recordings may make the dashboard hold, and what its views show at most.
  IngestLimits limits{};
  std::size_t maxLinesPerChart = kDefaultMaxLinesPerChart;
  std::size_t maxRangeRows = kDefaultMaxRangeRows;
  // The ranks of a run charted as one median line per aggregation over a min–max band
  // (RankGroups); false: a line per rank.
  bool groupRanks = true;
  // The view shown first. None: the one shown when the last session ended.
  std::optional<DashboardView> view;
  // Recordings to open at start: the first on the timeline, the baselines beside it.
  QString replay;
  QStringList baselines;
  // A folder whose recordings open as runs (ReplayController::openFolder); empty: none. What it
  // opens and reads at most.
  QString folder;
  RunFolderLimits folderLimits{};
  // Where the replay starts (seconds from the recording's start; default: its end), and whether
  // it plays at once.
  std::optional<double> replaySeekSeconds;
  bool replayPlay = false;
  // Whether baselines show only up to the live run's elapsed time (ReplayController::
  // setBaselinesFollowLive). Unset: the setting "baseline/followLive", false unless set true.
  std::optional<bool> baselinesFollowLive;
  // Drives replay playback; nullptr: the system clock. Must outlive the dashboard.
  Clock* clock = nullptr;
  // Measures the live sources' silence (IngestWorker::Options::clock); nullptr: the system clock.
  // Must outlive the dashboard.
  Clock* ingestClock = nullptr;
  // Whether each endpoint's history (the run so far) is fetched before its live events
  // (IngestWorker::Options::history). Unset: the setting "ingest/history", true unless set false.
  std::optional<bool> history;
  // CURVE toward every endpoint (`livemon --curve-server FILE --curve-client FILE`); the default
  // follows LIVEMON_CURVE_SERVER and LIVEMON_CURVE_CLIENT.
  transport::CurveOptions curve = transport::clientCurveFromEnvironment();
};

// GUI thread only. Its IngestWorker and the ReplaySessions of its ReplayController run threads of
// their own and hand their work over through the staging buffer and queued signals.
// The dashboard's pipeline, without a widget: it owns the ingest worker (and the recording of what
// is received), the StatRegistry, the EventLogModel, the RangesModel, the rank groups and scores,
// the pause buffer and the refresh timer; and beside them the ReplayController (the replayed and
// baseline recordings), the AlertCentre and the DashboardSettings; and the runs: the Runs panel's
// RunsModel (a row per run, with its config and summaries) and the RunDisplay (the runs' colours,
// kept in the settings, and which runs the charts show).
//
// Data flow: the IngestWorker thread converts live events, and each ReplaySession's thread
// converts recorded ones, into the one StagingBuffer, in conversion order, so every descriptor
// precedes its samples. A refresh (about 30 Hz) takes everything staged and applies it to the
// registry, the log and the ranges, then raises the alerts that came with it; the views redraw on
// updated(). A backlog (a late joiner's history) is applied a time-budgeted slice per refresh
// (DashboardOptions::refreshBudget), in the order it was staged. A seek in the replay is a new generation: what is staged is applied and the
// recording's data cleared before the window after the seek is read
// (ReplayController::recordingCleared).
//
// Paused: samples still go into the stores (nothing is lost) but new log rows are held back (up to
// the log's capacity, in rows and bytes) until resumed; the views freeze on pausedChanged().
class Dashboard : public QObject {
  Q_OBJECT

 public:
  // Throws transport::TransportError naming an endpoint that cannot be used.
  explicit Dashboard(DashboardOptions options = {}, QObject* parent = nullptr);
  ~Dashboard() override;

  // Starts receiving and refreshing, and opens the recordings named in the options. Separate from
  // the constructor, so that views connect to the signals first.
  void start();

  const DashboardOptions& options() const noexcept { return options_; }
  // Where the dashboard and its window keep what they restore next time.
  DashboardSettings& settings() noexcept { return settings_; }
  IngestWorker& ingest() noexcept { return *ingest_; }
  const StatRegistry& registry() const noexcept { return *registry_; }
  EventLogModel& eventLog() noexcept { return *logModel_; }
  RangesModel& rangesModel() noexcept { return *rangesModel_; }
  // The rank groups the charts show, and the Ranks view's scores (RankScorer, scored once a
  // second on options().clock; a rank it flags is raised as a "straggler" alert).
  const RankGroups& rankGroups() const noexcept { return *rankGroups_; }
  RankScoresModel& rankScores() noexcept { return *rankScores_; }
  // The alerts raised and the user's rules.
  AlertCentre& alertCentre() noexcept { return *alerts_; }
  // A row per run, live or recorded, refreshed with the status (once a second).
  RunsModel& runs() noexcept { return *runs_; }
  // The runs' colours and which are shown, for the charts and the Runs panel.
  RunDisplay& runDisplay() noexcept { return *runDisplay_; }
  // The replayed recording on the timeline and the baselines.
  ReplayController& replays() noexcept { return *replays_; }
  const ReplayController& replays() const noexcept { return *replays_; }

  bool isPaused() const noexcept { return paused_; }
  void setPaused(bool paused);
  // Log rows received while paused, shown on resume.
  std::size_t heldLogRows() const noexcept { return heldLog_.size(); }
  QStringList endpoints() const;
  // The per-endpoint health, as of the last status update.
  const std::vector<EndpointHealth>& endpointHealth() const noexcept { return health_; }
  // Whether histories are fetched (DashboardOptions::history, or the setting).
  bool fetchesHistory() const noexcept { return fetchesHistory_; }
  // How each endpoint's history came, the latest per endpoint, in the order they came.
  const std::vector<HistoryNote>& historyNotes() const noexcept { return historyNotes_; }
  // The latest note of `endpoint`; nullptr when no history of it came.
  const HistoryNote* historyNote(const QString& endpoint) const;

  // Takes what is staged and applies all of it, then signals updated() and refreshed().
  void refreshNow();
  // The same, applying pieces of at most `rows` samples and log rows (0: all at once): one, then
  // more while the refresh is within DashboardOptions::refreshBudget's time; the rest waits, in
  // order, for the next. The timer calls it with refreshBudget.pieceRows. A window's rank-group
  // points are made after all of it, and a history's note after all of its events.
  void refreshUpTo(std::size_t rows);
  // Samples and log rows taken from the staging buffer and left for the next refreshes.
  std::size_t waitingRows() const noexcept { return carriedRows_; }
  // Updates the endpoint health, then signals statusUpdated(); a timer calls it every second.
  void updateStatus();
  // What the limits dropped, as of now (the chart limits are the window's: left at zero here).
  LimitReport limitReport() const;

  // Records every event received from now on into `path`. False, with the error reported, when
  // the file cannot be created.
  bool startRecording(const QString& path);
  void stopRecording();
  bool isRecording() const;
  IngestWorker::RecordingStatus recordingStatus() const;
  // A file name for a new recording, in the user's documents directory.
  static QString defaultRecordingPath();
  // The last error reported (a recording that cannot be opened or written).
  const QString& lastError() const noexcept { return lastError_; }

 signals:
  // New series were registered: a line each, on their Stat's chart.
  void seriesAdded(const std::vector<SeriesId>& series);
  // A source's short label changed: lines and rows named after it are renamed.
  void sourceLabelsChanged();
  // Sources are being removed (with `removal.series`) from the registry: the views drop their
  // lines now; the RangesModel still holds their rows until sourcesRemoved().
  void sourcesAboutToBeRemoved(const RegistryRemoval& removal);
  void sourcesRemoved(const RegistryRemoval& removal);
  // Rows were appended to or removed from the event log.
  void logChanged();
  // A refresh applied what was staged: the views redraw what is on screen and changed.
  void updated();
  // After every refresh, with how long it took (views' redraws included).
  void refreshed(qint64 nanoseconds);
  // In every refresh, before updated(), with how long applying what was staged took (replays'
  // tick included, redraws not).
  void applied(qint64 nanoseconds);
  void pausedChanged(bool paused);
  void endpointsChanged();
  void statusUpdated();
  void recordingChanged();
  // A passing note for the status bar, shown for `timeoutMs` (0: until the next).
  void message(const QString& text, int timeoutMs);
  // A failure to show in the status bar; errorReported is one the user must acknowledge.
  void errorOccurred(const QString& message);
  void errorReported(const QString& title, const QString& message);
  // An endpoint's history came (or did not): applied after its events, and in historyNotes().
  void historyNoted(const HistoryNote& note);
  // A rank group or a rank in one appeared.
  void ranksChanged();

 private:
  // A taken batch waiting to be applied in `pieces` pieces, `next` the first not applied. It is
  // cut a piece at a time, as each is applied, so a refresh's work follows what it applies, not
  // what waits.
  struct Carried {
    IngestBatch batch;
    std::size_t pieces = 1;
    std::size_t next = 0;
  };
  void applyStaged(std::size_t quota = 0);
  // Queues `taken` for applying, in pieces of at most `pieceRows` rows (0: whole).
  void carry(IngestBatch&& taken, std::size_t pieceRows);
  // Cuts `carried`'s next piece: samples and log rows at the same fraction, its descriptors in the
  // first and what must follow all of them (alerts, history notes) in the last.
  static IngestBatch nextPiece(Carried& carried);
  void applyBatch(IngestBatch& batch, bool last = true);
  void applyLog(IngestBatch& batch);
  void noteHistory(std::vector<HistoryNote>& notes);
  // What ReplayController asks: a recording's data cleared after a seek, its sources removed
  // when it is closed; each after applying what is staged.
  void clearRecording(const QString& endpoint);
  void removeRecording(const QString& endpoint, ReplayMode mode);
  // Removes the sources heard on `endpoint` from the registry, the views, the ranges and the log.
  void removeSources(const QString& endpoint);
  // Removes the log rows (shown and held) of the sources whose entry in `ofSource` is set.
  void removeLogRows(const std::vector<char>& ofSource);
  // What the Runs panel says of a source's state: recorded, or as its subscriber sees it.
  void refreshRuns();
  void showError(const QString& message);
  void reportError(const QString& title, const QString& message);

  DashboardOptions options_;
  DashboardSettings settings_;
  // Declared before what refers to them, so they go last.
  std::unique_ptr<StatRegistry> registry_;
  std::unique_ptr<IngestWorker> ingest_;
  std::unique_ptr<EventLogModel> logModel_;
  std::unique_ptr<RangesModel> rangesModel_;
  std::unique_ptr<RankGroups> rankGroups_;
  std::unique_ptr<RankScoresModel> rankScores_;
  std::unique_ptr<AlertCentre> alerts_;
  std::unique_ptr<ReplayController> replays_;
  std::unique_ptr<RunDisplay> runDisplay_;
  std::unique_ptr<RunsModel> runs_;
  QTimer* refreshTimer_ = nullptr;
  QTimer* statusTimer_ = nullptr;

  // Taken from the staging buffer, not applied yet (in order).
  std::deque<Carried> carry_;
  std::size_t carriedRows_ = 0;  // their samples and log rows

  bool paused_ = false;
  std::deque<LogEntry> heldLog_;  // log rows received while paused
  std::size_t heldBytes_ = 0;     // their data bytes
  EndpointHealthTracker healthTracker_;
  std::vector<EndpointHealth> health_;
  std::vector<HistoryNote> historyNotes_;  // one per endpoint
  bool fetchesHistory_ = true;
  QString lastError_;
};

}  // namespace livemon::ui
