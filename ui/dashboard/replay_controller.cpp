#include <livemon/ui/dashboard/replay_controller.h>

#include <algorithm>

#include <QFileInfo>
#include <QLocale>
#include <QStringList>

#include <livemon/ui/dashboard/dashboard_settings.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

ReplayController::ReplayController(IngestWorker& ingest, const StatRegistry& registry, DashboardSettings& settings,
                                   ReplayControllerOptions options, QObject* parent)
    : QObject(parent),
      ingest_(ingest),
      registry_(registry),
      settings_(settings),
      options_(options),
      baselinesFollowLive_(options.baselinesFollowLive) {}

ReplayController::~ReplayController() {
  folder_.reset();
  openingReplay_.reset();
  replay_.reset();
  baselines_.clear();
  refused_.reset();
}

ReplaySession* ReplayController::openRecording(const QString& path, ReplayMode mode) {
  refused_.reset();
  auto session = std::make_unique<ReplaySession>(ingest_, options_.clock);
  ReplaySession* raw = session.get();
  const QString name = QFileInfo(path).fileName();
  connect(raw, &ReplaySession::openFailed, this, [this, raw](const QString& text) {
    setAsideRefused(raw);
    emit errorReported(tr("Cannot open the recording"), text);
  });
  connect(raw, &ReplaySession::problemFound, this, &ReplayController::problemFound);
  connect(raw, &ReplaySession::progress, this, [this, name](const QString& what, qint64 done, qint64 total) {
    if (total > 0) emit message(tr("%1 %2… %3 %").arg(what, name).arg(100 * done / total), 2000);
  });
  connect(raw, &ReplaySession::loaded, this, &ReplayController::windowLoaded);
  connect(raw, &ReplaySession::opened, this, [this, raw, name] {
    const RecordingInfo& info = raw->info();
    emit message(info.events > 0 || info.messages == 0
                     ? tr("Opened %1: %2 events").arg(name, QLocale().toString(static_cast<qulonglong>(info.events)))
                     : tr("Opened %1: %2 messages of events").arg(name, QLocale().toString(static_cast<qulonglong>(info.messages))),
                 5000);
    for (const QString& problem : raw->info().problems) emit problemFound(QStringLiteral("%1: %2").arg(name, problem));
  });
  raw->setWindow(window());
  if (mode == ReplayMode::Replay) {
    // The log shows what led up to the playhead, as far back as it holds; a baseline's log rows
    // are only its charts' time range, as its data.
    raw->setLogBackfill(options_.logBackfill);
    // The first generation starts as the file opens, before anything of it is read: the
    // recording replaces the one shown then. Nothing of the old generation is staged any more:
    // what was is applied, then cleared with the rest of what the recording showed, before the
    // new window arrives behind it.
    connect(raw, &ReplaySession::generationStarted, this, [this, raw] {
      if (raw == openingReplay_.get()) promoteOpeningReplay();
      emit recordingCleared(raw->endpointLabel());
    });
    openingReplay_ = std::move(session);
  } else {
    connect(raw, &ReplaySession::generationStarted, this, [this, raw] { emit recordingCleared(raw->endpointLabel()); });
    if (baselinesFollowLive_) raw->setStartAt(liveElapsed());
    baselines_.push_back(std::move(session));
  }
  raw->open(path, mode);
  if (mode == ReplayMode::Baseline) emit baselinesChanged();
  return raw;
}

void ReplayController::promoteOpeningReplay() {
  closeShownReplay();
  replay_ = std::move(openingReplay_);
  emit replayChanged(replay_.get());
}

void ReplayController::setAsideRefused(ReplaySession* session) {
  if (session == openingReplay_.get()) {
    refused_ = std::move(openingReplay_);
    return;
  }
  const auto found = std::find_if(baselines_.begin(), baselines_.end(),
                                  [session](const std::unique_ptr<ReplaySession>& baseline) { return baseline.get() == session; });
  if (found == baselines_.end()) return;
  refused_ = std::move(*found);
  baselines_.erase(found);
  emit baselinesChanged();
}

void ReplayController::closeReplay() {
  openingReplay_.reset();
  closeShownReplay();
}

void ReplayController::closeShownReplay() {
  if (!replay_) return;
  emit replayChanged(nullptr);
  const QString endpoint = replay_->endpointLabel();
  // Destroying the session first joins its worker, so nothing stages the recording's events any
  // more; what it staged is applied by the receiver, so that its sources are removed with the
  // rest instead of turning up after.
  replay_.reset();
  emit recordingClosed(endpoint, ReplayMode::Replay);
}

std::vector<ReplaySession*> ReplayController::baselines() const {
  std::vector<ReplaySession*> result;
  result.reserve(baselines_.size());
  for (const auto& baseline : baselines_) result.push_back(baseline.get());
  return result;
}

void ReplayController::closeBaseline(ReplaySession* baseline) {
  const auto found = std::find_if(baselines_.begin(), baselines_.end(),
                                  [baseline](const std::unique_ptr<ReplaySession>& open) { return open.get() == baseline; });
  if (found == baselines_.end()) return;
  const QString endpoint = (*found)->endpointLabel();
  // As closing a replay: the session's worker is joined first.
  baselines_.erase(found);
  emit recordingClosed(endpoint, ReplayMode::Baseline);
  emit baselinesChanged();
}

RunFolder* ReplayController::openFolder(const QString& folder) {
  closeFolder();
  folder_ = std::make_unique<RunFolder>(ingest_, options_.folderLimits, options_.clock);
  RunFolder* raw = folder_.get();
  connect(raw, &RunFolder::scanned, this, &ReplayController::reportFolderScan);
  connect(raw, &RunFolder::problemFound, this, &ReplayController::problemFound);
  // Read a slice at a time, asked for by each refresh (tick()) and applied by the next ones: not
  // at once, as a replay's window is, which would redraw every chart for every slice.
  connect(raw, &RunFolder::runReplaced, this, [this, raw](const QString& endpoint) {
    emit recordingClosed(endpoint, ReplayMode::Folder);
    raw->forget(endpoint);
  });
  folderReport_ = {};
  raw->open(folder);
  emit folderChanged(raw);
  return raw;
}

void ReplayController::closeFolder() {
  if (!folder_) return;
  // As closing a replay: its reader is joined first, so nothing of it is staged any more; every
  // run it read goes, those whose opening was still on its way here too.
  const std::vector<QString> endpoints = folder_->close();
  folder_.reset();
  emit folderChanged(nullptr);
  for (const QString& endpoint : endpoints) emit recordingClosed(endpoint, ReplayMode::Folder);
}

void ReplayController::reportFolderScan(const FolderScanReport& report) {
  if (report == folderReport_) return;
  folderReport_ = report;
  const QLocale locale;
  QStringList parts{report.runs == 1 ? tr("%1: 1 run").arg(report.folder)
                                      : tr("%1: %2 runs").arg(report.folder, locale.toString(static_cast<qulonglong>(report.runs)))};
  if (report.leftOut > 0) {
    parts << tr("left out: %1 (only the newest %2 are opened)")
                 .arg(locale.toString(static_cast<qulonglong>(report.leftOut)))
                 .arg(options_.folderLimits.maxRuns);
  }
  if (report.waiting > 0) parts << tr("%1 being written (added once complete)").arg(report.waiting);
  if (report.failed > 0) parts << tr("%1 unreadable").arg(report.failed);
  if (report.truncated) {
    parts << tr("not all of it was looked at (over %1 entries, or %2 folders deep)")
                 .arg(locale.toString(static_cast<qulonglong>(options_.folderLimits.scan.maxEntries)))
                 .arg(options_.folderLimits.scan.maxDepth);
  }
  const bool leftSomething = report.leftOut > 0 || report.truncated || report.failed > 0;
  emit message(parts.join(QStringLiteral("; ")), leftSomething ? 30'000 : 5000);
}

std::optional<std::chrono::nanoseconds> ReplayController::window() const {
  const std::optional<double> seconds = timeRangeSeconds(timeRange_);
  if (!seconds) return std::nullopt;
  return std::chrono::nanoseconds(static_cast<int64_t>(*seconds * 1e9));
}

void ReplayController::setTimeRange(TimeRange range) {
  timeRange_ = range;
  if (replay_) replay_->setWindow(window());
  if (openingReplay_) openingReplay_->setWindow(window());
  for (const auto& baseline : baselines_) baseline->setWindow(window());
}

void ReplayController::tick() {
  if (replay_) replay_->tick();
  if (folder_) folder_->readMore();
  moveBaselines();
}

std::optional<double> ReplayController::playheadMs() const {
  if (!replay_ || !replay_->isOpen()) return std::nullopt;
  return static_cast<double>(replay_->playheadNs()) / 1e6;
}

std::optional<double> ReplayController::runStartMs(const QString& endpoint) const {
  std::optional<double> startMs;
  for (SourceId id = 0; id < registry_.sourceIdEnd(); ++id) {
    const SourceEntry* source = registry_.source(id);
    if (source == nullptr || !source->startMs || source->endpoint != endpoint) continue;
    startMs = std::min(startMs.value_or(*source->startMs), *source->startMs);
  }
  return startMs;
}

std::optional<double> ReplayController::playheadSinceRunStart() const {
  const std::optional<double> playhead = playheadMs();
  if (!playhead) return std::nullopt;
  // The earliest run's: the others' lines end before it, as they started later.
  const std::optional<double> startMs = runStartMs(replay_->endpointLabel());
  if (!startMs) return std::nullopt;
  return (*playhead - *startMs) / 1000.0;
}

std::optional<double> ReplayController::playheadMsOf(SourceId id) const {
  const SourceEntry* source = registry_.source(id);
  if (source == nullptr) return std::nullopt;
  const auto playhead = [](const ReplaySession& session) { return static_cast<double>(session.playheadNs()) / 1e6; };
  if (replay_ && replay_->isOpen() && source->endpoint == replay_->endpointLabel()) return playhead(*replay_);
  for (const auto& baseline : baselines_) {
    if (baseline->isOpen() && source->endpoint == baseline->endpointLabel()) return playhead(*baseline);
  }
  // A folder's run is shown whole: as of its end.
  if (const FolderRun* run = folder_ ? folder_->run(source->endpoint) : nullptr) {
    return static_cast<double>(run->info.endNs) / 1e6;
  }
  return std::nullopt;
}

void ReplayController::setBaselinesFollowLive(bool follow) {
  settings_.setBaselinesFollowLive(follow);
  if (follow == baselinesFollowLive_) return;
  baselinesFollowLive_ = follow;
  moveBaselines();
}

std::optional<std::chrono::nanoseconds> ReplayController::liveElapsed() const {
  // The sources of recordings are not live: their endpoint is the recording's label.
  QStringList recorded;
  if (replay_) recorded << replay_->endpointLabel();
  if (openingReplay_) recorded << openingReplay_->endpointLabel();
  for (const auto& baseline : baselines_) recorded << baseline->endpointLabel();
  if (folder_) {
    for (const FolderRun& run : folder_->runs()) recorded << run.endpoint;
  }
  // The newest run: the one most likely being compared (ranks of one run start together).
  std::optional<double> startMs;
  for (SourceId id = 0; id < registry_.sourceIdEnd(); ++id) {
    const SourceEntry* source = registry_.source(id);
    if (source == nullptr || !source->startMs || recorded.contains(source->endpoint)) continue;
    startMs = std::max(startMs.value_or(*source->startMs), *source->startMs);
  }
  if (!startMs) return std::nullopt;
  const Clock& clock = options_.clock != nullptr ? *options_.clock : systemClock();
  const double nowMs = std::chrono::duration<double, std::milli>(clock.wallNow().time_since_epoch()).count();
  return std::chrono::nanoseconds(static_cast<int64_t>(std::max(0.0, nowMs - *startMs) * 1e6));
}

int64_t ReplayController::baselineTarget(const ReplaySession& baseline,
                                         std::optional<std::chrono::nanoseconds> elapsed) const {
  const RecordingInfo& info = baseline.info();
  if (!baselinesFollowLive_ || !elapsed) return info.endNs;
  // From the baseline run's own start (the axis "Since run start" counts from it too), which a
  // recording begun mid-run lies before; until its sources are known, from the recording's start.
  const std::optional<double> startMs = runStartMs(baseline.endpointLabel());
  const double startNs = startMs ? *startMs * 1e6 : static_cast<double>(info.startNs);
  const double target = startNs + static_cast<double>(elapsed->count());
  // Beyond the timeline's ends it stops at them (moveTo clamps); the double keeps the sum from
  // overflowing.
  if (target >= static_cast<double>(info.endNs)) return info.endNs;
  if (target <= static_cast<double>(info.startNs)) return info.startNs;
  return static_cast<int64_t>(target);
}

void ReplayController::moveBaselines() {
  if (baselines_.empty()) return;
  const std::optional<std::chrono::nanoseconds> elapsed = baselinesFollowLive_ ? liveElapsed() : std::nullopt;
  for (const auto& baseline : baselines_) {
    if (baseline->isOpen()) baseline->moveTo(baselineTarget(*baseline, elapsed));
  }
}

}  // namespace livemon::ui
