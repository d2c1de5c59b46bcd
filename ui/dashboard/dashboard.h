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

#include <livemon/transport/curve.h>
#include <QStringList>

#include <livemon/clock.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/alert_list_model.h>
#include <livemon/ui/dashboard/endpoint_health.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/model/series_store.h>
#include <livemon/ui/model/time_view.h>
#include <livemon/ui/replay/replay_session.h>

class QSettings;
class QTimer;

namespace livemon::ui {

class RangesModel;
class RankGroups;
class RankScoresModel;
class StatRegistry;
struct RegistryRemoval;

// The views beside the event log, on tabs.
enum class DashboardView { Charts, Ranges, Ranks };
// "charts" "ranges" "ranks", as the settings keep the view; an unknown key reads as Charts.
QString dashboardViewKey(DashboardView view);
DashboardView dashboardViewFromKey(const QString& key);

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
  // Samples and log rows a timed refresh applies at most (0: all), or a quarter of what waits if
  // that is more, so a backlog drains. Every window of a 256-rank run lands at once (20 480
  // samples and 5 120 rows); applied whole, it made that refresh overrun its 16 ms.
  std::size_t rowsPerRefresh = 8192;
  std::chrono::milliseconds staleAfter{3000};
  SeriesStore::Limits seriesLimits{};
  // With groupRanks, the limits of each rank's own series (drawn only when the rank is picked):
  // 64 windows at full resolution, then 64 buckets of 8, so a 256-rank run's memory levels off
  // after about 10 minutes of 1 s windows (StatRegistry::setRankedLimits).
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
  // Where the replay starts (seconds from the recording's start; default: its end), and whether
  // it plays at once.
  std::optional<double> replaySeekSeconds;
  bool replayPlay = false;
  // Whether baselines show only up to the live run's elapsed time (Dashboard::
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

// Thread-compatible: a QObject of the GUI thread; every member is for that thread. Its
// IngestWorker and ReplaySessions run threads of their own and hand their work over through the
// staging buffer and queued signals.
// The dashboard's pipeline, without a widget: it owns the ingest worker, the StatRegistry, the
// EventLogModel, the RangesModel, the replayed and baseline recordings, the recording of what is
// received, the pause buffer and the refresh timer.
//
// Data flow: the IngestWorker thread converts live events, and each ReplaySession's thread
// converts recorded ones, into the one StagingBuffer, in conversion order, so every descriptor
// precedes its samples. A refresh (about 30 Hz) takes everything staged and applies it to the
// registry, the log and the ranges; the views redraw on updated(). A seek in the replay is a new
// generation: what is staged is applied and the recording's data cleared before the window after
// the seek is read (ReplaySession::generationStarted).
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
  QSettings& settings() noexcept { return *settings_; }
  IngestWorker& ingest() noexcept { return *ingest_; }
  const StatRegistry& registry() const noexcept { return *registry_; }
  EventLogModel& eventLog() noexcept { return *logModel_; }
  RangesModel& rangesModel() noexcept { return *rangesModel_; }
  AlertListModel& alerts() noexcept { return *alerts_; }
  // The rank groups the charts show, and the Ranks view's scores (RankScorer, scored once a
  // second on options().clock; a rank it flags is raised as a "straggler" alert).
  const RankGroups& rankGroups() const noexcept { return *rankGroups_; }
  RankScoresModel& rankScores() noexcept { return *rankScores_; }

  // A rule triggered: listed in alerts() and told to the views (alertRaised), which mark the
  // chart, update the badge and notify the desktop. The rule engine's alerts arrive here.
  void raiseAlert(AlertEntry alert);

  // The user's alert rules (the built-in nan, silent and loss always run beside them), as
  // parseAlertRule reads them; saved in the settings and restored at start.
  const QStringList& alertRules() const noexcept { return alertRules_; }
  // Adds a rule (one already there is not added twice). False, with `error` set to what
  // describeAlertRuleError says, when the text is not a rule.
  bool addAlertRule(const QString& text, QString* error = nullptr);
  bool removeAlertRule(const QString& text);

  bool isPaused() const noexcept { return paused_; }
  void setPaused(bool paused);
  // Log rows received while paused, shown on resume.
  std::size_t heldLogRows() const noexcept { return heldLog_.size(); }
  // The time range the charts show: a replay reads this much before its playhead.
  void setTimeRange(TimeRange range);
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
  // The same, applying at most `rows` samples and log rows (0: all), or a quarter of what waits
  // if that is more; the rest waits for the next. The timer calls it with
  // DashboardOptions::rowsPerRefresh. A window's rank-group points are made after all of it.
  void refreshUpTo(std::size_t rows);
  // Updates the endpoint health, then signals statusUpdated(); a timer calls it every second.
  void updateStatus();
  // What the limits dropped, as of now (the chart limits are the window's: left at zero here).
  LimitReport limitReport() const;

  // Opens a recording (asynchronously: the session's opened() or openFailed() follows). Replay:
  // on the timeline once it has opened, replacing one replayed before; Baseline: its runs join as
  // "baseline: RUN" sources. A file refused (not a recording, unreadable) is reported
  // (errorReported) and changes nothing: the dashboard stays live, empty, or on the recording it
  // was replaying. Returns the session; a refused one stays valid until the next call.
  ReplaySession* openRecording(const QString& path, ReplayMode mode = ReplayMode::Replay);
  // The recording on the timeline, if any (one still being opened is not, until it opens).
  ReplaySession* replay() const noexcept { return replay_.get(); }
  // The recording being opened for the timeline, if any.
  ReplaySession* openingReplay() const noexcept { return openingReplay_.get(); }
  // The replay's playhead in ms since the Unix epoch, while a replay is open.
  std::optional<double> playheadMs() const;
  // The same on the "Since run start" axis: seconds since the start of the recording's earliest
  // run (the registry's transform); std::nullopt until its sources are known.
  std::optional<double> playheadSinceRunStart() const;
  // Stops replaying, and abandons a recording still being opened for the timeline: the
  // recording's sources leave the dashboard with all their data (lines, charts only they had,
  // range rows, log rows); opened again, they return as new sources.
  void closeReplay();

  // The recordings opened as baselines, those still opening included, in the order opened.
  std::vector<ReplaySession*> baselines() const;
  // Closes a baseline (one of baselines(); others are ignored): its sources leave the dashboard
  // with all their data, as a closed replay's do.
  void closeBaseline(ReplaySession* baseline);
  // Following: each baseline's playhead is its run's start plus the live run's elapsed time (the
  // newest live source's time since its start, on options().clock), so both runs are compared at
  // the same age; without a live source, and not following, a baseline shows up to its end.
  // Either way a baseline holds only the time range before its playhead, as a replay does.
  // Saved in the settings.
  bool baselinesFollowLive() const noexcept { return baselinesFollowLive_; }
  void setBaselinesFollowLive(bool follow);
  // The live run's elapsed time as following baselines use it; std::nullopt without a live source.
  std::optional<std::chrono::nanoseconds> liveElapsed() const;

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
  void pausedChanged(bool paused);
  // A recording went on the timeline, or left it (nullptr).
  void replayChanged(ReplaySession* session);
  void endpointsChanged();
  void statusUpdated();
  void recordingChanged();
  // A passing note for the status bar, shown for `timeoutMs` (0: until the next).
  void message(const QString& text, int timeoutMs);
  // A failure to show in the status bar; errorReported is one the user must acknowledge.
  void errorOccurred(const QString& message);
  void errorReported(const QString& title, const QString& message);
  // A rule triggered (raiseAlert); it is already in alerts().
  void alertRaised(const AlertEntry& alert);
  // An endpoint's history came (or did not): applied after its events, and in historyNotes().
  void historyNoted(const HistoryNote& note);
  void alertRulesChanged();
  // A rank group or a rank in one appeared.
  void ranksChanged();
  // A baseline was opened, refused or closed (baselines()).
  void baselinesChanged();

 private:
  // A taken batch, or a piece of one: `last` is its last piece (or the whole).
  struct Piece {
    IngestBatch batch;
    bool last = true;
  };
  void applyStaged(std::size_t quota = 0);
  // Queues `taken` for applying, cut into pieces of at most `pieceRows` rows (0: whole).
  void carry(IngestBatch&& taken, std::size_t pieceRows);
  void applyBatch(IngestBatch& batch, bool last = true);
  void applyLog(IngestBatch& batch);
  void raiseStagedAlerts(std::vector<StagedAlert>& alerts);
  void raiseRankAlerts();
  void noteHistory(std::vector<HistoryNote>& notes);
  void clearReplayed(const QString& endpoint);
  void removeReplayed(const QString& endpoint);
  // Removes the log rows (shown and held) of the sources whose entry in `ofSource` is set.
  void removeLogRows(const std::vector<char>& ofSource);
  void setReplayWindow();
  // The playhead of the recording (replay or baseline) `source` comes from, in ms since the Unix
  // epoch; std::nullopt for a live source.
  std::optional<double> recordingPlayheadMs(SourceId source) const;
  // Moves each open baseline's playhead where baselinesFollowLive() puts it.
  void moveBaselines();
  // Where a baseline's playhead goes now (receive time, ns since the Unix epoch).
  int64_t baselineTarget(const ReplaySession& baseline, std::optional<std::chrono::nanoseconds> elapsed) const;
  std::optional<std::chrono::nanoseconds> replayWindow() const;
  // The recording being opened has opened: it replaces the one on the timeline.
  void promoteOpeningReplay();
  void closeShownReplay();
  // Keeps a refused session (the sender of openFailed) aside until the next openRecording.
  void setAsideRefused(ReplaySession* session);
  void showError(const QString& message);
  void reportError(const QString& title, const QString& message);

  DashboardOptions options_;
  std::unique_ptr<QSettings> settings_;
  // Declared before what refers to them, so they go last.
  std::unique_ptr<StatRegistry> registry_;
  std::unique_ptr<IngestWorker> ingest_;
  std::unique_ptr<EventLogModel> logModel_;
  std::unique_ptr<RangesModel> rangesModel_;
  std::unique_ptr<AlertListModel> alerts_;
  std::unique_ptr<RankGroups> rankGroups_;
  std::unique_ptr<RankScoresModel> rankScores_;
  QTimer* refreshTimer_ = nullptr;
  QTimer* statusTimer_ = nullptr;
  TimeRange timeRange_ = TimeRange::Last5Minutes;

  // Taken from the staging buffer, not applied yet (in order).
  std::deque<Piece> carry_;
  std::size_t carriedRows_ = 0;  // their samples and log rows

  bool paused_ = false;
  std::deque<LogEntry> heldLog_;  // log rows received while paused
  std::size_t heldBytes_ = 0;     // their data bytes
  EndpointHealthTracker healthTracker_;
  std::vector<EndpointHealth> health_;

  std::unique_ptr<ReplaySession> replay_;
  // Until it opens, what the dashboard shows is left as it is: a refused file changes nothing.
  std::unique_ptr<ReplaySession> openingReplay_;
  std::vector<std::unique_ptr<ReplaySession>> baselines_;
  // The last refused session: not deleted inside its own signal, and callers may still hold it.
  std::unique_ptr<ReplaySession> refused_;
  QString lastError_;
  QStringList alertRules_;
  void applyAlertRules();
  bool fetchesHistory_ = true;
  static const QString kBaselineFollowKey;  // the setting of baselinesFollowLive()
  bool baselinesFollowLive_ = false;
  std::vector<HistoryNote> historyNotes_;  // one per endpoint
};

}  // namespace livemon::ui
