#include <livemon/ui/dashboard/dashboard.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>
#include <map>

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QStandardPaths>
#include <QTimer>

#include <livemon/transport/wire_format.h>
#include <livemon/ui/model/ranges_model.h>
#include <livemon/ui/model/rank_groups.h>
#include <livemon/ui/model/rank_scores_model.h>
#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/runs_model.h>
#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

namespace {

std::vector<std::string> chooseEndpoints(const DashboardOptions& options, const DashboardSettings& settings) {
  if (!options.endpoints.empty() || options.exactEndpoints) return options.endpoints;
  std::vector<std::string> saved = settings.endpoints();
  if (!saved.empty()) return saved;
  return {std::string(transport::kDefaultEndpoint)};
}

IngestWorker::Options ingestOptions(const DashboardOptions& options, const DashboardSettings& settings,
                                   std::vector<AlertRule> alertRules, bool history) {
  IngestWorker::Options ingest;
  ingest.history = history;
  ingest.curve = options.curve;
  ingest.alertRules = std::move(alertRules);
  ingest.endpoints = chooseEndpoints(options, settings);
  // The saved endpoints come with the certificates the Connect dialog gave them.
  if (options.endpoints.empty() && !options.exactEndpoints) ingest.endpointCurves = settings.endpointCurves();
  ingest.staleAfter = options.staleAfter;
  ingest.staging.maxLogEntries = std::max<std::size_t>(options.logCapacity, 10'000);
  ingest.limits = options.limits;
  // Drawn a line each at full size, ranks' lines cost what any line does.
  if (!options.groupRanks) ingest.limits.maxRankedSeries = 0;
  ingest.clock = options.ingestClock;
  return ingest;
}

}  // namespace

Dashboard::Dashboard(DashboardOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)), settings_(options_.settingsFile) {
  registry_ = std::make_unique<StatRegistry>(options_.seriesLimits);
  if (options_.groupRanks) registry_->setRankedLimits(options_.rankSeriesLimits);
  alerts_ = std::make_unique<AlertCentre>(*registry_, settings_);
  fetchesHistory_ = options_.history.value_or(settings_.fetchHistory());
  ingest_ = std::make_unique<IngestWorker>(ingestOptions(options_, settings_, alerts_->engineRules(), fetchesHistory_));
  logModel_ = std::make_unique<EventLogModel>(options_.logCapacity);
  rangesModel_ = std::make_unique<RangesModel>(*registry_, options_.clock);
  rangesModel_->setMaxRows(options_.maxRangeRows);
  RankGroupsOptions grouping;
  grouping.enabled = options_.groupRanks;
  rankGroups_ = std::make_unique<RankGroups>(*registry_, grouping);
  rankScores_ = std::make_unique<RankScoresModel>(*registry_, options_.clock);

  ReplayControllerOptions replaying;
  replaying.clock = options_.clock;
  replaying.logBackfill = logModel_->capacity();
  replaying.folderLimits = options_.folderLimits;
  replaying.baselinesFollowLive = options_.baselinesFollowLive.value_or(settings_.baselinesFollowLive());
  replays_ = std::make_unique<ReplayController>(*ingest_, *registry_, settings_, replaying);
  runDisplay_ = std::make_unique<RunDisplay>();
  runDisplay_->restoreColours(settings_.runColours());
  runs_ = std::make_unique<RunsModel>(*registry_, *runDisplay_);
  runs_->setSummaryKeys(settings_.runSummaryKeys());
  runs_->setBest(settings_.runBestIsMax() ? RunsModel::Best::Max : RunsModel::Best::Min);
  // A new run's colour is kept at once, so a crash does not lose it.
  connect(runDisplay_.get(), &RunDisplay::changed, this, [this, kept = runDisplay_->colours().size()]() mutable {
    if (runDisplay_->colours().size() == kept) return;
    kept = runDisplay_->colours().size();
    settings_.setRunColours(runDisplay_->colours());
  });
  // A recording's ranges are as old as they were at its playhead.
  rangesModel_->setReferenceTime([this](SourceId source) { return replays_->playheadMsOf(source); });
  connect(replays_.get(), &ReplayController::recordingCleared, this, &Dashboard::clearRecording);
  connect(replays_.get(), &ReplayController::recordingClosed, this, &Dashboard::removeRecording);
  // A window read in full is shown at once, not on the next tick.
  connect(replays_.get(), &ReplayController::windowLoaded, this, &Dashboard::refreshNow);
  connect(replays_.get(), &ReplayController::message, this, &Dashboard::message);
  connect(replays_.get(), &ReplayController::problemFound, this, &Dashboard::showError);
  connect(replays_.get(), &ReplayController::errorReported, this, &Dashboard::reportError);
  connect(alerts_.get(), &AlertCentre::rulesChanged, this, [this] { ingest_->setAlertRules(alerts_->engineRules()); });

  connect(ingest_.get(), &IngestWorker::errorOccurred, this, &Dashboard::showError);
  connect(ingest_.get(), &IngestWorker::recordingFailed, this, [this](const QString& message) {
    emit recordingChanged();
    reportError(tr("Recording stopped"), message);
  });
  refreshTimer_ = new QTimer(this);
  refreshTimer_->setTimerType(Qt::PreciseTimer);
  refreshTimer_->setInterval(static_cast<int>(options_.refreshInterval.count()));
  connect(refreshTimer_, &QTimer::timeout, this, [this] { refreshUpTo(options_.refreshBudget.pieceRows); });
  statusTimer_ = new QTimer(this);
  statusTimer_->setInterval(1000);
  connect(statusTimer_, &QTimer::timeout, this, &Dashboard::updateStatus);
}

Dashboard::~Dashboard() {
  refreshTimer_->stop();
  statusTimer_->stop();
  // The replay sessions stage through the ingest worker: they go first.
  replays_.reset();
  ingest_->stop();
}

void Dashboard::start() {
  ingest_->start();
  refreshTimer_->start();
  statusTimer_->start();
  emit endpointsChanged();

  if (!options_.replay.isEmpty()) {
    ReplaySession* session = replays_->openRecording(options_.replay);
    connect(session, &ReplaySession::opened, this, [this, session] {
      if (options_.replaySeekSeconds) {
        session->seek(session->info().startNs + static_cast<int64_t>(*options_.replaySeekSeconds * 1e9));
      }
      if (options_.replayPlay) session->setPlaying(true);
    });
  }
  for (const QString& baseline : options_.baselines) replays_->openRecording(baseline, ReplayMode::Baseline);
  if (!options_.folder.isEmpty()) replays_->openFolder(options_.folder);
}

QStringList Dashboard::endpoints() const {
  QStringList result;
  for (const transport::EndpointStatus& status : ingest_->endpoints()) {
    if (status.endpoint) result << QString::fromStdString(*status.endpoint);
  }
  return result;
}

void Dashboard::setPaused(bool paused) {
  if (paused == paused_) return;
  paused_ = paused;
  if (!paused && !heldLog_.empty()) {
    std::vector<LogEntry> held(std::make_move_iterator(heldLog_.begin()), std::make_move_iterator(heldLog_.end()));
    heldLog_.clear();
    heldBytes_ = 0;
    logModel_->append(std::move(held));
    ingest_->staging().recycle(logModel_->takeEvicted());
    emit logChanged();
  }
  emit pausedChanged(paused);
}

void Dashboard::refreshNow() { refreshUpTo(0); }

void Dashboard::refreshUpTo(std::size_t quota) {
  const auto start = std::chrono::steady_clock::now();
  replays_->tick();
  applyStaged(quota);
  alerts_->raiseFlaggedRanks(rankScores_->tick(), rankScores_->scoring());
  emit applied(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  emit updated();
  emit refreshed(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

void Dashboard::applyBatch(IngestBatch& batch, bool last) {
  if (batch.empty()) return;
  const RegistryChanges changes = registry_->apply(batch);
  runs_->apply(batch);
  for (SourceId id : changes.newSources) {
    if (const SourceEntry* source = registry_->source(id)) logModel_->setSourceLabel(id, logSourceLabel(*source->info));
  }
  for (const NameDescriptor& name : batch.names) logModel_->setEventName(name.id, QString::fromStdString(name.name));
  // A ranked source's own series are charted through its rank group (RankGroups).
  const RankGroupUpdate groups = rankGroups_->observe(batch, changes);
  // A window's points once all of it is in (a batch applied in pieces).
  if (last) rankGroups_->addPoints();
  runs_->addSeries(groups.chartSeries);
  if (!groups.chartSeries.empty()) emit seriesAdded(groups.chartSeries);
  if (groups.ranksChanged) emit ranksChanged();
  rankScores_->observe(batch);
  rangesModel_->apply(batch);
  if (changes.labelsChanged) {
    rangesModel_->sourceLabelsChanged();
    emit sourceLabelsChanged();
  }
  applyLog(batch);
  // After the data and log rows of the events that raised them.
  alerts_->raiseStaged(batch.alerts);
  noteHistory(batch.history);
}

void Dashboard::noteHistory(std::vector<HistoryNote>& notes) {
  for (HistoryNote& note : notes) {
    // Not a dialog: a source without history is not an error the user must acknowledge.
    if (!note.empty()) {
      emit message(QStringLiteral("%1: %2").arg(QString::fromStdString(note.endpoint), describeHistory(note)),
                   note.outcome == transport::HistoryOutcome::Received ? 5000 : 10'000);
    }
    std::erase_if(historyNotes_, [&](const HistoryNote& old) { return old.endpoint == note.endpoint; });
    historyNotes_.push_back(std::move(note));
    emit historyNoted(historyNotes_.back());
  }
}

const HistoryNote* Dashboard::historyNote(const QString& endpoint) const {
  const std::string wanted = endpoint.toStdString();
  for (const HistoryNote& note : historyNotes_) {
    if (note.endpoint == wanted) return &note;
  }
  return nullptr;
}

void Dashboard::applyLog(IngestBatch& batch) {
  if (batch.log.empty()) return;
  if (paused_) {
    for (LogEntry& entry : batch.log) {
      heldBytes_ += entry.data.size();
      heldLog_.push_back(std::move(entry));
    }
    // Held within what the log itself would keep, in rows and in bytes.
    while (heldLog_.size() > 1 && (heldLog_.size() > logModel_->capacity() || heldBytes_ > logModel_->byteBudget())) {
      heldBytes_ -= heldLog_.front().data.size();
      heldLog_.pop_front();
    }
  } else {
    logModel_->append(std::move(batch.log));
    ingest_->staging().recycle(logModel_->takeEvicted());
    emit logChanged();
  }
}

// A seek: the recording's samples, range values and log rows go, but its sources and series stay,
// as the window read after the seek brings them straight back.
void Dashboard::clearRecording(const QString& endpoint) {
  applyStaged();
  std::vector<char> replayedSource(registry_->sourceIdEnd(), 0);
  for (std::size_t id = 0; id < replayedSource.size(); ++id) {
    const SourceEntry* source = registry_->source(static_cast<SourceId>(id));
    replayedSource[id] = source != nullptr && source->endpoint == endpoint ? 1 : 0;
  }
  // A derived source (a rank group) has an id beyond the received ones.
  registry_->clearSamples([&](const SourceEntry& source) {
    return source.id < replayedSource.size() ? replayedSource[source.id] != 0 : source.endpoint == endpoint;
  });
  rankGroups_->clearSamples(endpoint);
  rangesModel_->clearValues([&](SourceId id) { return id < replayedSource.size() && replayedSource[id] != 0; });
  removeLogRows(replayedSource);
}

// The recording was closed: its sources go, with every line, chart, range row and log row of theirs.
void Dashboard::removeRecording(const QString& endpoint, ReplayMode mode) {
  applyStaged();
  removeSources(endpoint);
  // The timeline's recording named the window; the live endpoints name it again.
  if (mode == ReplayMode::Replay) emit endpointsChanged();
}

void Dashboard::removeSources(const QString& endpoint) {
  const RegistryRemoval removal =
      registry_->removeSources([&endpoint](const SourceEntry& source) { return source.endpoint == endpoint; });
  if (removal.empty()) return;
  rankGroups_->removed(removal);
  runs_->removeSources(removal.sources, removal.series);
  emit sourcesAboutToBeRemoved(removal);
  rangesModel_->removeSources(removal.sources);
  if (removal.labelsChanged) rangesModel_->sourceLabelsChanged();
  emit sourcesRemoved(removal);
  std::vector<char> removedSource(registry_->sourceIdEnd(), 0);
  std::vector<SourceId> received;  // not the derived ones
  for (SourceId id : removal.sources) {
    if (id >= removedSource.size()) continue;
    removedSource[id] = 1;
    received.push_back(id);
  }
  removeLogRows(removedSource);
  ingest_->forgetSources(received);
}

void Dashboard::removeLogRows(const std::vector<char>& ofSource) {
  const auto of = [&ofSource](const LogEntry& entry) {
    return entry.source < ofSource.size() && ofSource[entry.source] != 0;
  };
  if (logModel_->removeIf(of) > 0) emit logChanged();
  std::erase_if(heldLog_, of);
  heldBytes_ = 0;
  for (const LogEntry& entry : heldLog_) heldBytes_ += entry.data.size();
}

bool Dashboard::startRecording(const QString& path) {
  try {
    ingest_->startRecording(path.toStdString());
  } catch (const std::exception& error) {
    emit recordingChanged();
    reportError(tr("Cannot record"), QString::fromStdString(error.what()));
    return false;
  }
  emit recordingChanged();
  return true;
}

void Dashboard::stopRecording() {
  try {
    const IngestWorker::RecordingStatus status = ingest_->stopRecording();
    if (!status.path.empty()) {
      emit message(tr("Recorded %1 events into %2")
                       .arg(QLocale().toString(static_cast<qulonglong>(status.events)), QString::fromStdString(status.path)),
                   10'000);
    }
  } catch (const std::exception& error) {
    reportError(tr("Recording incomplete"), QString::fromStdString(error.what()));
  }
  emit recordingChanged();
}

QString Dashboard::defaultRecordingPath() {
  QString directory = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (directory.isEmpty() || !QFileInfo(directory).isDir()) directory = QDir::homePath();
  return QDir(directory).filePath(
      QStringLiteral("livemon-%1.mcap").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
}

bool Dashboard::isRecording() const { return ingest_->recordingStatus().active; }

IngestWorker::RecordingStatus Dashboard::recordingStatus() const { return ingest_->recordingStatus(); }

void Dashboard::updateStatus() {
  health_ = healthTracker_.update(ingest_->endpoints(), ingest_->sources(), std::chrono::steady_clock::now());
  for (EndpointHealth& health : health_) {
    if (const HistoryNote* note = historyNote(QString::fromStdString(health.endpoint))) {
      health.history = describeHistory(*note).toStdString();
    }
  }
  refreshRuns();
  emit statusUpdated();
}

void Dashboard::refreshRuns() {
  std::map<transport::SourceInfo, transport::SourceState> heard;
  for (const transport::SourceStatus& status : ingest_->sources()) {
    if (status.source) heard[*status.source] = status.state;
  }
  runs_->refresh([&](const SourceEntry& source) {
    if (replays_->playheadMsOf(source.id)) return RunState::Recorded;
    const auto found = source.info ? heard.find(*source.info) : heard.end();
    // One the subscriber does not list (fed through IngestWorker::deliver) is taken as live.
    if (found == heard.end()) return RunState::Live;
    switch (found->second) {
      case transport::SourceState::Alive: return RunState::Live;
      case transport::SourceState::Stale: return RunState::Stopped;
      case transport::SourceState::Gone: return RunState::Finished;
    }
    return RunState::Live;
  });
}

LimitReport Dashboard::limitReport() const {
  LimitReport report;
  report.limits = ingest_->limits();
  report.drops = ingest_->limitDrops();
  report.maxRangeRows = rangesModel_->maxRows();
  report.unlistedRanges = rangesModel_->unlistedCount();
  return report;
}

void Dashboard::showError(const QString& text) {
  qWarning("livemon: %s", qUtf8Printable(text));
  emit errorOccurred(text);
}

void Dashboard::reportError(const QString& title, const QString& text) {
  lastError_ = text;
  showError(text);
  emit errorReported(title, text);
}

}  // namespace livemon::ui
