#include <livemon/ui/dashboard/dashboard.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QSettings>
#include <QStandardPaths>
#include <QTimer>

#include <livemon/transport/wire_format.h>
#include <livemon/ui/dashboard/endpoint_curves.h>
#include <livemon/ui/model/ranges_model.h>
#include <livemon/ui/model/rank_groups.h>
#include <livemon/ui/model/rank_scores_model.h>
#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

namespace {

const QString kEndpointsKey = QStringLiteral("endpoints");
const QString kAlertRulesKey = QStringLiteral("alerts/rules");
const QString kHistoryKey = QStringLiteral("ingest/history");

// The saved rules that still parse (a hand-edited settings file may hold others).
QStringList savedAlertRules(const QSettings& settings, std::vector<AlertRule>& parsed) {
  QStringList rules;
  for (const QString& text : settings.value(kAlertRulesKey).toStringList()) {
    std::optional<AlertRule> rule = parseAlertRule(text.toStdString());
    if (!rule || rules.contains(text)) continue;
    rules << text;
    parsed.push_back(std::move(*rule));
  }
  return rules;
}

std::unique_ptr<QSettings> openSettings(const QString& file) {
  if (file.isEmpty()) return std::make_unique<QSettings>(QStringLiteral("livemon"), QStringLiteral("livemon"));
  return std::make_unique<QSettings>(file, QSettings::IniFormat);
}

std::vector<std::string> chooseEndpoints(const DashboardOptions& options, const QSettings& settings) {
  if (!options.endpoints.empty() || options.exactEndpoints) return options.endpoints;
  std::vector<std::string> saved;
  for (const QString& endpoint : settings.value(kEndpointsKey).toStringList()) {
    if (!endpoint.trimmed().isEmpty()) saved.push_back(endpoint.trimmed().toStdString());
  }
  if (!saved.empty()) return saved;
  return {std::string(transport::kDefaultEndpoint)};
}

IngestWorker::Options ingestOptions(const DashboardOptions& options, std::vector<std::string> endpoints,
                                   std::vector<AlertRule> alertRules, bool history) {
  IngestWorker::Options ingest;
  ingest.history = history;
  ingest.curve = options.curve;
  ingest.alertRules = std::move(alertRules);
  ingest.endpoints = std::move(endpoints);
  ingest.staleAfter = options.staleAfter;
  ingest.staging.maxLogEntries = std::max<std::size_t>(options.logCapacity, 10'000);
  ingest.limits = options.limits;
  ingest.clock = options.ingestClock;
  return ingest;
}

}  // namespace

Dashboard::Dashboard(DashboardOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)), settings_(openSettings(options_.settingsFile)) {
  registry_ = std::make_unique<StatRegistry>(options_.seriesLimits);
  if (options_.groupRanks) registry_->setRankedLimits(options_.rankSeriesLimits);
  std::vector<AlertRule> rules;
  alertRules_ = savedAlertRules(*settings_, rules);
  fetchesHistory_ = options_.history.value_or(settings_->value(kHistoryKey, true).toBool());
  baselinesFollowLive_ = options_.baselinesFollowLive.value_or(settings_->value(kBaselineFollowKey, false).toBool());
  IngestWorker::Options ingest =
      ingestOptions(options_, chooseEndpoints(options_, *settings_), std::move(rules), fetchesHistory_);
  // The saved endpoints come with the certificates the Connect dialog gave them.
  if (options_.endpoints.empty() && !options_.exactEndpoints) ingest.endpointCurves = loadEndpointCurves(*settings_);
  ingest_ = std::make_unique<IngestWorker>(std::move(ingest));
  logModel_ = std::make_unique<EventLogModel>(options_.logCapacity);
  rangesModel_ = std::make_unique<RangesModel>(*registry_, options_.clock);
  // A recording's ranges are as old as they were at its playhead.
  rangesModel_->setReferenceTime([this](SourceId source) { return recordingPlayheadMs(source); });
  RankGroupsOptions grouping;
  grouping.enabled = options_.groupRanks;
  rankGroups_ = std::make_unique<RankGroups>(*registry_, grouping);
  rankScores_ = std::make_unique<RankScoresModel>(*registry_, options_.clock);
  rangesModel_->setMaxRows(options_.maxRangeRows);
  alerts_ = std::make_unique<AlertListModel>();

  connect(ingest_.get(), &IngestWorker::errorOccurred, this, &Dashboard::showError);
  connect(ingest_.get(), &IngestWorker::recordingFailed, this, [this](const QString& message) {
    emit recordingChanged();
    reportError(tr("Recording stopped"), message);
  });
  refreshTimer_ = new QTimer(this);
  refreshTimer_->setTimerType(Qt::PreciseTimer);
  refreshTimer_->setInterval(static_cast<int>(options_.refreshInterval.count()));
  connect(refreshTimer_, &QTimer::timeout, this, [this] { refreshUpTo(options_.rowsPerRefresh); });
  statusTimer_ = new QTimer(this);
  statusTimer_->setInterval(1000);
  connect(statusTimer_, &QTimer::timeout, this, &Dashboard::updateStatus);
}

QString dashboardViewKey(DashboardView view) {
  switch (view) {
    case DashboardView::Ranges:
      return QStringLiteral("ranges");
    case DashboardView::Ranks:
      return QStringLiteral("ranks");
    case DashboardView::Charts:
      break;
  }
  return QStringLiteral("charts");
}

DashboardView dashboardViewFromKey(const QString& key) {
  if (key == QLatin1String("ranges")) return DashboardView::Ranges;
  if (key == QLatin1String("ranks")) return DashboardView::Ranks;
  return DashboardView::Charts;
}

Dashboard::~Dashboard() {
  refreshTimer_->stop();
  statusTimer_->stop();
  // The replay sessions stage through the ingest worker: they go first.
  openingReplay_.reset();
  replay_.reset();
  baselines_.clear();
  refused_.reset();
  ingest_->stop();
}

void Dashboard::start() {
  ingest_->start();
  refreshTimer_->start();
  statusTimer_->start();
  emit endpointsChanged();

  if (!options_.replay.isEmpty()) {
    ReplaySession* session = openRecording(options_.replay);
    connect(session, &ReplaySession::opened, this, [this, session] {
      if (options_.replaySeekSeconds) {
        session->seek(session->info().startNs + static_cast<int64_t>(*options_.replaySeekSeconds * 1e9));
      }
      if (options_.replayPlay) session->setPlaying(true);
    });
  }
  for (const QString& baseline : options_.baselines) openRecording(baseline, ReplayMode::Baseline);
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

void Dashboard::setTimeRange(TimeRange range) {
  timeRange_ = range;
  setReplayWindow();
}

void Dashboard::refreshNow() { refreshUpTo(0); }

void Dashboard::refreshUpTo(std::size_t quota) {
  const auto start = std::chrono::steady_clock::now();
  if (replay_) replay_->tick();
  moveBaselines();
  applyStaged(quota);
  raiseRankAlerts();
  emit updated();
  emit refreshed(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

void Dashboard::applyBatch(IngestBatch& batch, bool last) {
  if (batch.empty()) return;
  const RegistryChanges changes = registry_->apply(batch);
  for (SourceId id : changes.newSources) {
    if (const SourceEntry* source = registry_->source(id)) logModel_->setSourceLabel(id, source->description);
  }
  for (const NameDescriptor& name : batch.names) logModel_->setEventName(name.id, QString::fromStdString(name.name));
  // A ranked source's own series are charted through its rank group (RankGroups).
  const RankGroupUpdate groups = rankGroups_->observe(batch, changes);
  // A window's points once all of it is in (a batch applied in pieces).
  if (last) rankGroups_->addPoints();
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
  raiseStagedAlerts(batch.alerts);
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
void Dashboard::clearReplayed(const QString& endpoint) {
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
void Dashboard::removeReplayed(const QString& endpoint) {
  const RegistryRemoval removal =
      registry_->removeSources([&endpoint](const SourceEntry& source) { return source.endpoint == endpoint; });
  if (removal.empty()) return;
  rankGroups_->removed(removal);
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

ReplaySession* Dashboard::openRecording(const QString& path, ReplayMode mode) {
  refused_.reset();
  auto session = std::make_unique<ReplaySession>(*ingest_, options_.clock);
  ReplaySession* raw = session.get();
  const QString name = QFileInfo(path).fileName();
  connect(raw, &ReplaySession::openFailed, this, [this, raw](const QString& text) {
    setAsideRefused(raw);
    reportError(tr("Cannot open the recording"), text);
  });
  connect(raw, &ReplaySession::problemFound, this, &Dashboard::showError);
  connect(raw, &ReplaySession::progress, this, [this, name](const QString& what, qint64 done, qint64 total) {
    if (total > 0) emit message(tr("%1 %2… %3 %").arg(what, name).arg(100 * done / total), 2000);
  });
  // A window read in full is shown at once, not on the next tick.
  connect(raw, &ReplaySession::loaded, this, &Dashboard::refreshNow);
  connect(raw, &ReplaySession::opened, this, [this, raw, name] {
    emit message(tr("Opened %1: %2 events").arg(name, QLocale().toString(static_cast<qulonglong>(raw->info().events))), 5000);
    for (const QString& problem : raw->info().problems) showError(QStringLiteral("%1: %2").arg(name, problem));
  });
  raw->setWindow(replayWindow());
  if (mode == ReplayMode::Replay) {
    // The log shows what led up to the playhead, as far back as it holds; a baseline's log rows
    // are only its charts' time range, as its data.
    raw->setLogBackfill(logModel_->capacity());
    // The first generation starts as the file opens, before anything of it is read: the
    // recording replaces the one shown then. Nothing of the old generation is staged any more:
    // what was is applied, then cleared with the rest of what the recording showed, before the
    // new window arrives behind it.
    connect(raw, &ReplaySession::generationStarted, this, [this, raw] {
      if (raw == openingReplay_.get()) promoteOpeningReplay();
      applyStaged();
      clearReplayed(raw->endpointLabel());
    });
    openingReplay_ = std::move(session);
  } else {
    connect(raw, &ReplaySession::generationStarted, this, [this, raw] {
      applyStaged();
      clearReplayed(raw->endpointLabel());
    });
    if (baselinesFollowLive_) raw->setStartAt(liveElapsed());
    baselines_.push_back(std::move(session));
  }
  raw->open(path, mode);
  if (mode == ReplayMode::Baseline) emit baselinesChanged();
  return raw;
}

std::optional<double> Dashboard::playheadMs() const {
  if (!replay_ || !replay_->isOpen()) return std::nullopt;
  return static_cast<double>(replay_->playheadNs()) / 1e6;
}

void Dashboard::promoteOpeningReplay() {
  closeShownReplay();
  replay_ = std::move(openingReplay_);
  emit replayChanged(replay_.get());
}

void Dashboard::setAsideRefused(ReplaySession* session) {
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

void Dashboard::closeReplay() {
  openingReplay_.reset();
  closeShownReplay();
}

void Dashboard::closeShownReplay() {
  if (!replay_) return;
  emit replayChanged(nullptr);
  const QString endpoint = replay_->endpointLabel();
  // Destroying the session first joins its worker, so nothing stages the recording's events any
  // more; what it staged is applied now, so that its sources are removed with the rest instead
  // of turning up after.
  replay_.reset();
  applyStaged();
  removeReplayed(endpoint);
  emit endpointsChanged();
}

std::optional<std::chrono::nanoseconds> Dashboard::replayWindow() const {
  const std::optional<double> seconds = timeRangeSeconds(timeRange_);
  if (!seconds) return std::nullopt;
  return std::chrono::nanoseconds(static_cast<int64_t>(*seconds * 1e9));
}

void Dashboard::setReplayWindow() {
  if (replay_) replay_->setWindow(replayWindow());
  if (openingReplay_) openingReplay_->setWindow(replayWindow());
  for (const auto& baseline : baselines_) baseline->setWindow(replayWindow());
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
  emit statusUpdated();
}

LimitReport Dashboard::limitReport() const {
  LimitReport report;
  report.limits = ingest_->limits();
  report.drops = ingest_->limitDrops();
  report.maxRangeRows = rangesModel_->maxRows();
  report.unlistedRanges = rangesModel_->unlistedCount();
  return report;
}

void Dashboard::raiseStagedAlerts(std::vector<StagedAlert>& alerts) {
  for (StagedAlert& staged : alerts) {
    const Alert& alert = staged.alert;
    AlertEntry entry;
    entry.timeMs = std::chrono::duration<double, std::milli>(alert.time.time_since_epoch()).count();
    const SourceEntry* source = staged.source ? registry_->source(*staged.source) : nullptr;
    entry.source = source != nullptr ? source->label : QString::fromStdString(describe(alert.source));
    if (source != nullptr) entry.sourceId = source->id;
    entry.kind = QString::fromUtf8(alertRuleKindName(alert.kind).data(),
                                   static_cast<qsizetype>(alertRuleKindName(alert.kind).size()));
    entry.rule = QString::fromStdString(alert.rule);
    entry.key = QString::fromStdString(alert.key);
    entry.value = alert.value;
    entry.message = QString::fromStdString(alert.message);
    entry.step = alert.step;
    raiseAlert(std::move(entry));
  }
}

bool Dashboard::addAlertRule(const QString& text, QString* error) {
  const QString trimmed = text.trimmed();
  AlertRuleError parseError;
  const std::optional<AlertRule> rule = parseAlertRule(trimmed.toStdString(), &parseError);
  if (!rule) {
    if (error != nullptr) *error = QString::fromStdString(describeAlertRuleError(trimmed.toStdString(), parseError));
    return false;
  }
  if (!alertRules_.contains(trimmed)) {
    alertRules_ << trimmed;
    applyAlertRules();
  }
  return true;
}

bool Dashboard::removeAlertRule(const QString& text) {
  if (!alertRules_.removeOne(text)) return false;
  applyAlertRules();
  return true;
}

void Dashboard::applyAlertRules() {
  std::vector<AlertRule> rules;
  for (const QString& text : alertRules_) {
    if (std::optional<AlertRule> rule = parseAlertRule(text.toStdString())) rules.push_back(std::move(*rule));
  }
  ingest_->setAlertRules(std::move(rules));
  settings_->setValue(kAlertRulesKey, alertRules_);
  emit alertRulesChanged();
}

// A rank RankScorer flagged is an alert like a rule's: listed, marked and notified once per
// stretch of flagged windows.
void Dashboard::raiseRankAlerts() {
  for (const RankFlagged& flagged : rankScores_->tick()) {
    const RankScorerOptions& scoring = rankScores_->scoring();
    AlertEntry entry;
    entry.timeMs = flagged.timeMs;
    entry.sourceId = flagged.source;
    const SourceEntry* source = flagged.source ? registry_->source(*flagged.source) : nullptr;
    entry.source = source != nullptr ? source->label : QStringLiteral("%1 r%2").arg(flagged.run).arg(flagged.score.rank);
    entry.kind = QStringLiteral("straggler");
    entry.key = QString::fromStdString(scoring.key);
    entry.rule = QStringLiteral("%1 score < %2 for %3 windows").arg(entry.key).arg(scoring.threshold).arg(scoring.windows);
    entry.value = flagged.score.score;
    entry.message = tr("Rank %1 of run %2 is a straggler: its %3 is %4, a score of %5 against the median of its ranks.")
                        .arg(flagged.score.rank)
                        .arg(flagged.run, entry.key, QString::number(flagged.score.value, 'g', 4),
                             QString::number(flagged.score.score, 'f', 2));
    raiseAlert(std::move(entry));
  }
}

void Dashboard::raiseAlert(AlertEntry alert) {
  alerts_->append(alert);
  emit alertRaised(alert);
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
