#include <livemon/ui/main_window.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
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

#include <livemon/transport/wire_format.h>
#include <livemon/ui/chart_grid.h>
#include <livemon/ui/connect_dialog.h>
#include <livemon/ui/dashboard_style.h>
#include <livemon/ui/event_log_view.h>
#include <livemon/ui/ingest_worker.h>
#include <livemon/ui/ranges_view.h>
#include <livemon/ui/stat_registry.h>

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
  return text;
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
  ranges_ = new RangesView(*registry_, views_);
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

  buildToolbar();
  buildStatusBar();
  restoreSettings();

  connect(ingest_.get(), &IngestWorker::errorOccurred, this, &MainWindow::showError);
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
}

MainWindow::~MainWindow() {
  refreshTimer_->stop();
  statusTimer_->stop();
  ingest_->stop();
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
}

void MainWindow::restoreSettings() {
  if (const QByteArray geometry = settings_->value(keys::kGeometry).toByteArray(); !geometry.isEmpty()) {
    restoreGeometry(geometry);
  } else {
    const QRect available = screen() != nullptr ? screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
    resize(std::min(1600, available.width() * 9 / 10), std::min(1000, available.height() * 9 / 10));
  }
  restoreState(settings_->value(keys::kState).toByteArray());
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
  IngestBatch batch = ingest_->staging().take();
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
        heldLog_.insert(heldLog_.end(), std::make_move_iterator(batch.log.begin()), std::make_move_iterator(batch.log.end()));
        while (heldLog_.size() > logModel_->capacity()) heldLog_.pop_front();
      } else {
        logModel_->append(std::move(batch.log));
        logView_->rowsAppended();
      }
    }
  }
  grid_->refresh();
  ranges_->refresh(grid_->renderContext());
  emit refreshed(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

void MainWindow::endpointsChanged() {
  const QStringList current = endpoints();
  setWindowTitle(current.isEmpty() ? QStringLiteral("livemon") : QStringLiteral("livemon — %1").arg(current.join(QStringLiteral(", "))));
  updateStatus();
}

void MainWindow::updateStatus() {
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
  if (health_.empty()) {
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
  const uint64_t dropped = ingest_->staging().droppedLogEntries() + ingest_->staging().droppedSamples();
  if (dropped > 0) summary += tr(" · %1 dropped by the dashboard").arg(locale.toString(static_cast<qulonglong>(dropped)));
  summaryLabel_->setText(summary);
  summaryLabel_->setToolTip(stats.lastError.empty() ? QString() : tr("Last bad message: %1").arg(QString::fromStdString(stats.lastError)));
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
