#include <livemon/ui/widgets/main_window.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QStandardPaths>
#include <QUrl>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QWidget>

#include <livemon/transport/recording.h>
#include <livemon/transport/wire_format.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/connect_dialog.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/event_log_view.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/ranges_model.h>
#include <livemon/ui/widgets/ranges_view.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/timeline_bar.h>

namespace livemon::ui {

namespace {

namespace keys {
const QString kEndpoints = QStringLiteral("endpoints");
const QString kGeometry = QStringLiteral("window/geometry");
const QString kState = QStringLiteral("window/state");
const QString kSplitter = QStringLiteral("window/splitter");
const QString kTimeRange = QStringLiteral("view/timeRange");
const QString kTimeAxis = QStringLiteral("view/xAxis");
const QString kAutoScroll = QStringLiteral("log/autoScroll");
const QString kView = QStringLiteral("view/tab");
}  // namespace keys

std::unique_ptr<QSettings> openSettings(const QString& file) {
  if (file.isEmpty()) return std::make_unique<QSettings>(QStringLiteral("livemon"), QStringLiteral("livemon"));
  return std::make_unique<QSettings>(file, QSettings::IniFormat);
}

std::vector<std::string> chooseEndpoints(const DashboardOptions& options, const QSettings& settings) {
  if (!options.endpoints.empty() || options.exactEndpoints) return options.endpoints;
  std::vector<std::string> saved;
  for (const QString& endpoint : settings.value(keys::kEndpoints).toStringList()) {
    if (!endpoint.trimmed().isEmpty()) saved.push_back(endpoint.trimmed().toStdString());
  }
  if (!saved.empty()) return saved;
  return {std::string(transport::kDefaultEndpoint)};
}

IngestWorker::Options ingestOptions(const DashboardOptions& options, std::vector<std::string> endpoints) {
  IngestWorker::Options ingest;
  ingest.endpoints = std::move(endpoints);
  ingest.staleAfter = options.staleAfter;
  ingest.staging.maxLogEntries = std::max<std::size_t>(options.logCapacity, 10'000);
  ingest.limits = options.limits;
  return ingest;
}

QString stateColour(EndpointState state) {
  switch (state) {
    case EndpointState::Connected:
      return QColor(colours::kGood).name();
    case EndpointState::Stale:
      return QColor(colours::kWarn).name();
    case EndpointState::Dead:
      break;
  }
  return QColor(colours::kBad).name();
}

QString formatRate(double perSecond) {
  if (perSecond >= 10'000) return QStringLiteral("%1k").arg(perSecond / 1000.0, 0, 'f', 0);
  if (perSecond >= 1'000) return QStringLiteral("%1k").arg(perSecond / 1000.0, 0, 'f', 1);
  return QString::number(perSecond, 'f', 0);
}

QString describeHealth(const EndpointHealth& health) {
  const QLocale locale;
  QString text = QStringLiteral("<span style='color:%1'>&#9679;</span> %2 <span style='color:%1'>%3</span>")
                     .arg(stateColour(health.state), QString::fromStdString(health.endpoint).toHtmlEscaped(),
                          QString::fromUtf8(endpointStateName(health.state).data()));
  text += QStringLiteral(" · %1 ev/s").arg(formatRate(health.eventsPerSecond));
  const QString warn = QColor(colours::kWarn).name();
  if (health.gaps > 0) {
    text += QStringLiteral(" · <span style='color:%1'>%2 gaps (%3 missed)</span>")
                .arg(warn, locale.toString(static_cast<qulonglong>(health.gaps)),
                     locale.toString(static_cast<qulonglong>(health.missedEvents)));
  } else {
    text += QStringLiteral(" · no gaps");
  }
  if (health.publisherDrops > 0) {
    text += QStringLiteral(" · <span style='color:%1'>%2 dropped by publisher</span>")
                .arg(warn, locale.toString(static_cast<qulonglong>(health.publisherDrops)));
  }
  if (health.protocolErrors > 0) {
    text += QStringLiteral(" · <span style='color:%1'>%2 reconnects after protocol errors</span>")
                .arg(warn, locale.toString(static_cast<qulonglong>(health.protocolErrors)));
  }
  return text;
}

// The recordings among dropped URLs.
QStringList droppedRecordings(const QMimeData* mime) {
  QStringList paths;
  if (mime == nullptr || !mime->hasUrls()) return paths;
  for (const QUrl& url : mime->urls()) {
    if (url.isLocalFile() && url.toLocalFile().endsWith(QStringLiteral(".mcap"), Qt::CaseInsensitive)) {
      paths << url.toLocalFile();
    }
  }
  return paths;
}

}  // namespace

MainWindow::MainWindow(DashboardOptions options, QWidget* parent)
    : QMainWindow(parent), options_(std::move(options)), settings_(openSettings(options_.settingsFile)) {
  registry_ = std::make_unique<StatRegistry>(options_.seriesLimits);
  ingest_ = std::make_unique<IngestWorker>(ingestOptions(options_, chooseEndpoints(options_, *settings_)));
  logModel_ = new EventLogModel(options_.logCapacity, this);

  setWindowTitle(QStringLiteral("livemon"));
  splitter_ = new QSplitter(Qt::Horizontal, this);
  views_ = new QTabWidget(splitter_);
  views_->setDocumentMode(true);
  grid_ = new ChartGrid(*registry_, views_);
  grid_->setMaxLinesPerChart(options_.maxLinesPerChart);
  ranges_ = new RangesView(*registry_, views_);
  ranges_->model().setMaxRows(options_.maxRangeRows);
  views_->addTab(grid_, tr("Charts"));
  views_->addTab(ranges_, tr("Ranges"));
  // The Ranges chart follows the grid's time range, zoom and pause.
  connect(ranges_, &RangesView::rangeRequested, grid_, [this](double min, double max) { grid_->showRange(XRange{min, max}); });
  connect(ranges_, &RangesView::resetRequested, grid_, &ChartGrid::followLive);
  logView_ = new EventLogView(*logModel_, splitter_);
  splitter_->addWidget(views_);
  splitter_->addWidget(logView_);
  splitter_->setStretchFactor(0, 3);
  splitter_->setStretchFactor(1, 2);
  splitter_->setChildrenCollapsible(false);
  setCentralWidget(splitter_);

  buildFileMenu();
  buildToolbar();
  buildTimeline();
  buildStatusBar();
  restoreSettings();
  setAcceptDrops(true);

  connect(ingest_.get(), &IngestWorker::errorOccurred, this, &MainWindow::showError);
  connect(ingest_.get(), &IngestWorker::recordingFailed, this, [this](const QString& message) {
    recordAction_->setChecked(false);
    updateRecordingLabel();
    reportError(tr("Recording stopped"), message);
  });
  refreshTimer_ = new QTimer(this);
  refreshTimer_->setTimerType(Qt::PreciseTimer);
  refreshTimer_->setInterval(static_cast<int>(options_.refreshInterval.count()));
  connect(refreshTimer_, &QTimer::timeout, this, &MainWindow::refreshNow);
  statusTimer_ = new QTimer(this);
  statusTimer_->setInterval(1000);
  connect(statusTimer_, &QTimer::timeout, this, &MainWindow::updateStatus);

  ingest_->start();
  refreshTimer_->start();
  statusTimer_->start();
  endpointsChanged();

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

MainWindow::~MainWindow() {
  refreshTimer_->stop();
  statusTimer_->stop();
  // The replay sessions convert with the ingest worker: they go first.
  replay_.reset();
  baselines_.clear();
  ingest_->stop();
}

void MainWindow::buildFileMenu() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open recording…"));
  open->setShortcut(QKeySequence::Open);
  open->setToolTip(tr("Replay an MCAP recording on a timeline"));
  connect(open, &QAction::triggered, this, [this] { chooseRecording(ReplayMode::Replay); });
  QAction* baseline = file->addAction(tr("Open as &baseline…"));
  baseline->setToolTip(tr("Show a recorded run beside the live ones, to compare with"));
  connect(baseline, &QAction::triggered, this, [this] { chooseRecording(ReplayMode::Baseline); });
  QAction* close = file->addAction(tr("&Close recording"));
  connect(close, &QAction::triggered, this, &MainWindow::closeReplay);
  file->addSeparator();
  recordAction_ = file->addAction(tr("&Record"));
  recordAction_->setCheckable(true);
  recordAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  recordAction_->setToolTip(tr("Record every event this dashboard receives into an MCAP file"));
  connect(recordAction_, &QAction::triggered, this, &MainWindow::toggleRecording);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"));
  quit->setShortcut(QKeySequence::Quit);
  connect(quit, &QAction::triggered, this, &QWidget::close);
}

void MainWindow::buildTimeline() {
  timeline_ = new TimelineBar(this);
  timelineBar_ = new QToolBar(tr("Timeline"), this);
  timelineBar_->setObjectName(QStringLiteral("timelineToolBar"));
  timelineBar_->setMovable(false);
  timelineBar_->addWidget(timeline_);
  addToolBar(Qt::BottomToolBarArea, timelineBar_);
  timelineBar_->hide();
  connect(timeline_, &TimelineBar::closeRequested, this, &MainWindow::closeReplay);
}

void MainWindow::buildToolbar() {
  QToolBar* bar = addToolBar(tr("View"));
  bar->setObjectName(QStringLiteral("viewToolBar"));
  bar->setMovable(false);
  bar->setToolButtonStyle(Qt::ToolButtonTextOnly);

  QAction* connectAction = bar->addAction(tr("Connect…"));
  connectAction->setToolTip(tr("Add or remove the publishers this dashboard listens to"));
  connect(connectAction, &QAction::triggered, this, &MainWindow::openConnectDialog);
  bar->addSeparator();

  bar->addWidget(new QLabel(tr(" Range "), bar));
  rangeBox_ = new QComboBox(bar);
  rangeBox_->addItem(tr("Last 1 min"), timeRangeKey(TimeRange::LastMinute));
  rangeBox_->addItem(tr("Last 5 min"), timeRangeKey(TimeRange::Last5Minutes));
  rangeBox_->addItem(tr("Last 30 min"), timeRangeKey(TimeRange::Last30Minutes));
  rangeBox_->addItem(tr("All"), timeRangeKey(TimeRange::All));
  rangeBox_->setCurrentIndex(1);
  bar->addWidget(rangeBox_);
  connect(rangeBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (const auto range = timeRangeFromKey(rangeBox_->currentData().toString())) grid_->setTimeRange(*range);
    setReplayWindow();
  });

  bar->addWidget(new QLabel(tr("  X axis "), bar));
  axisBox_ = new QComboBox(bar);
  axisBox_->addItem(tr("Wall clock"), timeAxisModeKey(TimeAxisMode::WallClock));
  axisBox_->addItem(tr("Since run start"), timeAxisModeKey(TimeAxisMode::SinceRunStart));
  bar->addWidget(axisBox_);
  connect(axisBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (const auto mode = timeAxisModeFromKey(axisBox_->currentData().toString())) grid_->setTimeAxisMode(*mode);
  });
  bar->addSeparator();

  chartFilter_ = new QLineEdit(bar);
  chartFilter_->setPlaceholderText(tr("Filter charts by name (* and ? allowed)…"));
  chartFilter_->setClearButtonEnabled(true);
  chartFilter_->setMinimumWidth(240);
  chartFilter_->setMaximumWidth(360);
  bar->addWidget(chartFilter_);
  connect(chartFilter_, &QLineEdit::textChanged, grid_, &ChartGrid::setNameFilter);
  bar->addSeparator();

  pauseAction_ = bar->addAction(tr("Pause"));
  pauseAction_->setCheckable(true);
  pauseAction_->setToolTip(tr("Freeze the charts and the log; data keeps arriving and is shown on resume"));
  connect(pauseAction_, &QAction::toggled, this, &MainWindow::setPaused);

  QAction* resetAction = bar->addAction(tr("Follow live"));
  resetAction->setToolTip(tr("Undo zoom and pan on every chart (or double-click a chart)"));
  connect(resetAction, &QAction::triggered, grid_, &ChartGrid::followLive);
  bar->addSeparator();

  bar->addAction(recordAction_);
  recordingLabel_ = new QLabel(bar);
  recordingLabel_->setTextFormat(Qt::RichText);
  bar->addWidget(recordingLabel_);
}

void MainWindow::buildStatusBar() {
  auto* holder = new QWidget(statusBar());
  endpointLabels_ = new QHBoxLayout(holder);
  endpointLabels_->setContentsMargins(4, 0, 4, 0);
  endpointLabels_->setSpacing(18);
  statusBar()->addWidget(holder, 1);
  summaryLabel_ = new QLabel(statusBar());
  summaryLabel_->setStyleSheet(QStringLiteral("color: #8b929e; padding-right: 6px;"));
  statusBar()->addPermanentWidget(summaryLabel_);
  // Its own label, hidden until a limit is reached: plain text, as the names in it are no markup.
  limitLabel_ = new QLabel(statusBar());
  limitLabel_->setTextFormat(Qt::PlainText);
  // A selector, so the tooltip keeps the usual colours.
  limitLabel_->setStyleSheet(QStringLiteral("QLabel { color: %1; padding-right: 6px; }").arg(QColor(colours::kWarn).name()));
  limitLabel_->hide();
  statusBar()->addPermanentWidget(limitLabel_);
}

void MainWindow::restoreSettings() {
  if (const QByteArray geometry = settings_->value(keys::kGeometry).toByteArray(); !geometry.isEmpty()) {
    restoreGeometry(geometry);
  } else {
    const QRect available = screen() != nullptr ? screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
    resize(std::min(1600, available.width() * 9 / 10), std::min(1000, available.height() * 9 / 10));
  }
  restoreState(settings_->value(keys::kState).toByteArray());
  timelineBar_->setVisible(replay_ != nullptr);
  if (const QByteArray sizes = settings_->value(keys::kSplitter).toByteArray(); !sizes.isEmpty()) {
    splitter_->restoreState(sizes);
  } else {
    splitter_->setSizes({width() * 3 / 5, width() * 2 / 5});
  }
  const int range = rangeBox_->findData(settings_->value(keys::kTimeRange).toString());
  if (range >= 0) rangeBox_->setCurrentIndex(range);
  const int axis = axisBox_->findData(settings_->value(keys::kTimeAxis).toString());
  if (axis >= 0) axisBox_->setCurrentIndex(axis);
  if (const auto key = timeRangeFromKey(rangeBox_->currentData().toString())) grid_->setTimeRange(*key);
  if (const auto mode = timeAxisModeFromKey(axisBox_->currentData().toString())) grid_->setTimeAxisMode(*mode);
  logView_->setAutoScroll(settings_->value(keys::kAutoScroll, true).toBool());
  setView(options_.view.value_or(settings_->value(keys::kView).toString() == QLatin1String("ranges")
                                     ? DashboardView::Ranges
                                     : DashboardView::Charts));
}

void MainWindow::saveSettings() {
  settings_->setValue(keys::kEndpoints, endpoints());
  settings_->setValue(keys::kGeometry, saveGeometry());
  settings_->setValue(keys::kState, saveState());
  settings_->setValue(keys::kSplitter, splitter_->saveState());
  settings_->setValue(keys::kTimeRange, rangeBox_->currentData().toString());
  settings_->setValue(keys::kTimeAxis, axisBox_->currentData().toString());
  settings_->setValue(keys::kAutoScroll, logView_->autoScroll());
  settings_->setValue(keys::kView, view() == DashboardView::Ranges ? QStringLiteral("ranges") : QStringLiteral("charts"));
  settings_->sync();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveSettings();
  QMainWindow::closeEvent(event);
}

QStringList MainWindow::endpoints() const {
  QStringList result;
  for (const transport::EndpointStatus& status : ingest_->endpoints()) {
    if (status.endpoint) result << QString::fromStdString(*status.endpoint);
  }
  return result;
}

void MainWindow::setPaused(bool paused) {
  if (paused == paused_) return;
  paused_ = paused;
  grid_->setPaused(paused);
  ranges_->setPaused(paused);
  if (pauseAction_->isChecked() != paused) pauseAction_->setChecked(paused);
  pauseAction_->setText(paused ? tr("Resume") : tr("Pause"));
  if (!paused && !heldLog_.empty()) {
    std::vector<LogEntry> held(std::make_move_iterator(heldLog_.begin()), std::make_move_iterator(heldLog_.end()));
    heldLog_.clear();
    heldBytes_ = 0;
    logModel_->append(std::move(held));
    logView_->rowsAppended();
  }
}

void MainWindow::setTimeRange(TimeRange range) {
  const int index = rangeBox_->findData(timeRangeKey(range));
  if (index >= 0) rangeBox_->setCurrentIndex(index);
  grid_->setTimeRange(range);
}

void MainWindow::setTimeAxisMode(TimeAxisMode mode) {
  const int index = axisBox_->findData(timeAxisModeKey(mode));
  if (index >= 0) axisBox_->setCurrentIndex(index);
  grid_->setTimeAxisMode(mode);
}

void MainWindow::setChartFilter(const QString& filter) {
  chartFilter_->setText(filter);
  grid_->setNameFilter(filter);
}

void MainWindow::setView(DashboardView view) {
  views_->setCurrentWidget(view == DashboardView::Ranges ? static_cast<QWidget*>(ranges_) : grid_);
}

DashboardView MainWindow::view() const {
  return views_->currentWidget() == ranges_ ? DashboardView::Ranges : DashboardView::Charts;
}

void MainWindow::refreshNow() {
  const auto start = std::chrono::steady_clock::now();
  // Replayed batches are taken before the staging buffer: the staging buffer then holds the
  // sources, names and series they use.
  std::vector<IngestBatch> replayed;
  bool clearReplay = false;
  if (replay_) {
    replay_->tick();
    replayed = replay_->takeBatches();
    clearReplay = replay_->generation() != replayGeneration_;
    replayGeneration_ = replay_->generation();
  }
  for (const auto& baseline : baselines_) {
    for (IngestBatch& batch : baseline->takeBatches()) replayed.push_back(std::move(batch));
  }
  IngestBatch batch = ingest_->staging().take();
  applyBatch(batch);
  if (clearReplay) clearReplayed(replay_->endpointLabel());
  for (IngestBatch& replayBatch : replayed) applyBatch(replayBatch);
  grid_->setPlayhead(replay_ && replay_->isOpen() ? std::optional<double>(static_cast<double>(replay_->playheadNs()) / 1e6)
                                                  : std::nullopt);
  grid_->refresh();
  ranges_->refresh(grid_->renderContext());
  emit refreshed(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

void MainWindow::applyBatch(IngestBatch& batch) {
  if (!batch.empty()) {
    const RegistryChanges changes = registry_->apply(batch);
    for (SourceId id : changes.newSources) {
      if (const SourceEntry* source = registry_->source(id)) logModel_->setSourceLabel(id, source->description);
    }
    for (const NameDescriptor& name : batch.names) logModel_->setEventName(name.id, QString::fromStdString(name.name));
    grid_->addSeries(changes.newSeries);
    ranges_->apply(batch, changes);
    if (changes.labelsChanged) grid_->refreshSeriesNames();
    if (!batch.log.empty()) {
      if (paused_) {
        for (LogEntry& entry : batch.log) {
          heldBytes_ += entry.data.size();
          heldLog_.push_back(std::move(entry));
        }
        // Held within what the log itself would keep, in rows and in bytes.
        while (heldLog_.size() > 1 &&
               (heldLog_.size() > logModel_->capacity() || heldBytes_ > logModel_->byteBudget())) {
          heldBytes_ -= heldLog_.front().data.size();
          heldLog_.pop_front();
        }
      } else {
        logModel_->append(std::move(batch.log));
        logView_->rowsAppended();
      }
    }
  }
}

// A seek: the recording's samples, range values and log rows go, but its sources and series stay,
// as the window read after the seek brings them straight back.
void MainWindow::clearReplayed(const QString& endpoint) {
  std::vector<char> replayedSource(registry_->sourceIdEnd(), 0);
  for (std::size_t id = 0; id < replayedSource.size(); ++id) {
    const SourceEntry* source = registry_->source(static_cast<SourceId>(id));
    replayedSource[id] = source != nullptr && source->endpoint == endpoint ? 1 : 0;
  }
  registry_->clearSamples([&](const SourceEntry& source) { return replayedSource[source.id] != 0; });
  ranges_->model().clearValues([&](SourceId id) { return id < replayedSource.size() && replayedSource[id] != 0; });
  removeLogRows(replayedSource);
}

// The recording was closed: its sources go, with every line, chart, range row and log row of theirs.
void MainWindow::removeReplayed(const QString& endpoint) {
  const RegistryRemoval removal =
      registry_->removeSources([&endpoint](const SourceEntry& source) { return source.endpoint == endpoint; });
  if (removal.empty()) return;
  grid_->removeSeries(removal.series);
  if (removal.labelsChanged) grid_->refreshSeriesNames();
  ranges_->remove(removal);
  std::vector<char> removedSource(registry_->sourceIdEnd(), 0);
  for (SourceId id : removal.sources) removedSource[id] = 1;
  removeLogRows(removedSource);
  ingest_->forgetSources(removal.sources);
}

void MainWindow::removeLogRows(const std::vector<char>& ofSource) {
  const auto of = [&ofSource](const LogEntry& entry) {
    return entry.source < ofSource.size() && ofSource[entry.source] != 0;
  };
  if (logModel_->removeIf(of) > 0) logView_->rowsAppended();
  std::erase_if(heldLog_, of);
  heldBytes_ = 0;
  for (const LogEntry& entry : heldLog_) heldBytes_ += entry.data.size();
}

ReplaySession* MainWindow::openRecording(const QString& path, ReplayMode mode) {
  auto session = std::make_unique<ReplaySession>(*ingest_, options_.clock);
  ReplaySession* raw = session.get();
  const QString name = QFileInfo(path).fileName();
  connect(raw, &ReplaySession::openFailed, this,
          [this](const QString& message) { reportError(tr("Cannot open the recording"), message); });
  connect(raw, &ReplaySession::problemFound, this, &MainWindow::showError);
  connect(raw, &ReplaySession::progress, this, [this, name](const QString& what, qint64 done, qint64 total) {
    if (total > 0) statusBar()->showMessage(tr("%1 %2… %3 %").arg(what, name).arg(100 * done / total), 2000);
  });
  // A window read in full is shown at once, not on the next tick.
  connect(raw, &ReplaySession::loaded, this, &MainWindow::refreshNow);
  connect(raw, &ReplaySession::opened, this, [this, raw, name] {
    statusBar()->showMessage(tr("Opened %1: %2 events").arg(name, QLocale().toString(static_cast<qulonglong>(raw->info().events))), 5000);
    for (const QString& problem : raw->info().problems) showError(QStringLiteral("%1: %2").arg(name, problem));
  });
  if (mode == ReplayMode::Replay) {
    if (replay_) closeReplay();
    replay_ = std::move(session);
    setReplayWindow();
    timeline_->setSession(raw);
    timelineBar_->show();
    setWindowTitle(QStringLiteral("livemon — %1").arg(name));
  } else {
    baselines_.push_back(std::move(session));
  }
  raw->open(path, mode);
  return raw;
}

void MainWindow::closeReplay() {
  if (!replay_) return;
  timeline_->setSession(nullptr);
  timelineBar_->hide();
  const QString endpoint = replay_->endpointLabel();
  // Destroying the session first joins its worker, so nothing converts the recording's events any
  // more; descriptors it staged that no refresh has applied yet are applied now, so that their
  // sources are removed with the rest instead of turning up after.
  replay_.reset();
  IngestBatch staged = ingest_->staging().take();
  applyBatch(staged);
  removeReplayed(endpoint);
  replayGeneration_ = 0;
  grid_->setPlayhead(std::nullopt);
  endpointsChanged();
}

void MainWindow::setReplayWindow() {
  if (!replay_) return;
  const std::optional<TimeRange> range = timeRangeFromKey(rangeBox_->currentData().toString());
  const std::optional<double> seconds = range ? timeRangeSeconds(*range) : std::nullopt;
  replay_->setWindow(seconds ? std::optional<std::chrono::nanoseconds>(std::chrono::nanoseconds(
                                   static_cast<int64_t>(*seconds * 1e9)))
                             : std::nullopt);
}

void MainWindow::chooseRecording(ReplayMode mode) {
  const QString path = QFileDialog::getOpenFileName(
      this, mode == ReplayMode::Replay ? tr("Open recording") : tr("Open recording as baseline"),
      QFileInfo(defaultRecordingPath()).absolutePath(), tr("MCAP recordings (*.mcap);;All files (*)"));
  if (!path.isEmpty()) openRecording(path, mode);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedRecordings(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QStringList paths = droppedRecordings(event->mimeData());
  if (paths.isEmpty()) return;
  event->acceptProposedAction();
  openRecording(paths.front());
  for (qsizetype i = 1; i < paths.size(); ++i) openRecording(paths[i], ReplayMode::Baseline);
}

QString MainWindow::defaultRecordingPath() {
  QString directory = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  if (directory.isEmpty() || !QFileInfo(directory).isDir()) directory = QDir::homePath();
  return QDir(directory).filePath(
      QStringLiteral("livemon-%1.mcap").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))));
}

void MainWindow::toggleRecording(bool on) {
  if (!on) {
    stopRecording();
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Record to"), defaultRecordingPath(),
                                                    tr("MCAP recordings (*.mcap)"));
  if (path.isEmpty() || !startRecording(path)) recordAction_->setChecked(false);
}

bool MainWindow::startRecording(const QString& path) {
  try {
    ingest_->startRecording(path.toStdString());
  } catch (const std::exception& error) {
    recordAction_->setChecked(false);
    reportError(tr("Cannot record"), QString::fromStdString(error.what()));
    return false;
  }
  recordAction_->setChecked(true);
  recordAction_->setText(tr("Stop recording"));
  updateRecordingLabel();
  return true;
}

void MainWindow::stopRecording() {
  try {
    const IngestWorker::RecordingStatus status = ingest_->stopRecording();
    if (!status.path.empty()) {
      statusBar()->showMessage(tr("Recorded %1 events into %2")
                                   .arg(QLocale().toString(static_cast<qulonglong>(status.events)),
                                        QString::fromStdString(status.path)),
                               10'000);
    }
  } catch (const std::exception& error) {
    reportError(tr("Recording incomplete"), QString::fromStdString(error.what()));
  }
  recordAction_->setChecked(false);
  updateRecordingLabel();
}

bool MainWindow::isRecording() const { return ingest_->recordingStatus().active; }

QString MainWindow::recordingText() const { return recordingLabel_->text(); }

void MainWindow::updateRecordingLabel() {
  const IngestWorker::RecordingStatus status = ingest_->recordingStatus();
  recordAction_->setText(status.active ? tr("Stop recording") : tr("Record"));
  if (!status.active) {
    recordingLabel_->clear();
    recordingLabel_->setToolTip(QString());
    return;
  }
  const QLocale locale;
  recordingLabel_->setText(QStringLiteral("<span style='color:%1'>&#9679;</span> %2 · %3 · %4 events")
                               .arg(QColor(colours::kBad).name(),
                                    QFileInfo(QString::fromStdString(status.path)).fileName().toHtmlEscaped(),
                                    locale.formattedDataSize(static_cast<qint64>(status.bytes)),
                                    locale.toString(static_cast<qulonglong>(status.events))));
  recordingLabel_->setToolTip(QString::fromStdString(status.path));
  if (status.notRecorded > 0) {
    recordingLabel_->setText(recordingLabel_->text() +
                             tr(" · %1 not recorded").arg(locale.toString(static_cast<qulonglong>(status.notRecorded))));
    recordingLabel_->setToolTip(tr("%1\nEvents of more than %2 distinct names are not recorded.")
                                    .arg(QString::fromStdString(status.path))
                                    .arg(locale.toString(static_cast<qulonglong>(transport::kMaxRecordingChannels))));
  }
}

void MainWindow::reportError(const QString& title, const QString& message) {
  lastError_ = message;
  showError(message);
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // not exec(): the dashboard keeps refreshing behind it
}

void MainWindow::endpointsChanged() {
  if (replay_) return;  // the title names the recording
  const QStringList current = endpoints();
  setWindowTitle(current.isEmpty() ? QStringLiteral("livemon") : QStringLiteral("livemon — %1").arg(current.join(QStringLiteral(", "))));
  updateStatus();
}

void MainWindow::updateStatus() {
  updateRecordingLabel();
  updateLimitLabel();
  health_ = healthTracker_.update(ingest_->endpoints(), ingest_->sources(), std::chrono::steady_clock::now());
  // One label per endpoint, reused while the list stays the same length.
  while (endpointLabels_->count() > static_cast<int>(health_.size())) {
    QLayoutItem* item = endpointLabels_->takeAt(endpointLabels_->count() - 1);
    delete item->widget();
    delete item;
  }
  while (endpointLabels_->count() < static_cast<int>(health_.size())) {
    auto* label = new QLabel(endpointLabels_->parentWidget());
    label->setTextFormat(Qt::RichText);
    endpointLabels_->addWidget(label);
  }
  for (std::size_t i = 0; i < health_.size(); ++i) {
    auto* label = qobject_cast<QLabel*>(endpointLabels_->itemAt(static_cast<int>(i))->widget());
    label->setText(describeHealth(health_[i]));
    label->setToolTip(tr("%n publisher(s) last heard here", nullptr, static_cast<int>(health_[i].sources)));
  }
  if (health_.empty() && replay_) {
    statusBar()->showMessage(tr("Replaying %1").arg(replay_->info().path));
  } else if (health_.empty()) {
    statusBar()->showMessage(tr("Not connected: add an endpoint with Connect…"));
  } else {
    statusBar()->clearMessage();
  }

  const QLocale locale;
  const transport::SubscriberStats stats = ingest_->stats();
  QString summary = tr("%n chart(s)", nullptr, static_cast<int>(grid_->charts().size()));
  if (paused_) summary = tr("Paused (%1 log rows held)").arg(locale.toString(static_cast<qulonglong>(heldLog_.size()))) + QStringLiteral(" · ") + summary;
  const uint64_t bad = stats.malformed + stats.oversized + stats.unsupported;
  if (bad > 0) summary += tr(" · %1 bad messages skipped").arg(locale.toString(static_cast<qulonglong>(bad)));
  // Beyond the subscriber's limits: gaps on what it forgot go uncounted until heard again.
  const uint64_t forgotten = stats.topicsEvicted + stats.sourcesEvicted;
  if (forgotten > 0) summary += tr(" · %1 topics or sources forgotten").arg(locale.toString(static_cast<qulonglong>(forgotten)));
  const uint64_t dropped = ingest_->staging().droppedLogEntries() + ingest_->staging().droppedSamples();
  if (dropped > 0) summary += tr(" · %1 dropped by the dashboard").arg(locale.toString(static_cast<qulonglong>(dropped)));
  summaryLabel_->setText(summary);
  summaryLabel_->setToolTip(stats.lastError.empty() ? QString() : tr("Last bad message: %1").arg(QString::fromStdString(stats.lastError)));
}

LimitReport MainWindow::limitReport() const {
  LimitReport report;
  report.limits = ingest_->limits();
  report.drops = ingest_->limitDrops();
  report.maxLinesPerChart = grid_->maxLinesPerChart();
  report.undrawnLines = grid_->undrawnLineCount();
  report.maxRangeRows = ranges_->model().maxRows();
  report.unlistedRanges = ranges_->model().unlistedCount();
  return report;
}

QString MainWindow::limitText() const { return limitLabel_->text(); }

QString MainWindow::limitToolTip() const { return limitLabel_->toolTip(); }

void MainWindow::updateLimitLabel() {
  const LimitReport report = limitReport();
  limitLabel_->setText(limitSummary(report));
  limitLabel_->setToolTip(limitDetails(report));
  limitLabel_->setVisible(report.any());
}

void MainWindow::showError(const QString& message) {
  qWarning("livemon: %s", qUtf8Printable(message));
  statusBar()->showMessage(message, 10'000);
}

void MainWindow::openConnectDialog() {
  ConnectDialog dialog(*ingest_, this);
  connect(&dialog, &ConnectDialog::endpointsChanged, this, &MainWindow::endpointsChanged);
  dialog.exec();
}

}  // namespace livemon::ui
