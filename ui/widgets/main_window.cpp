#include <livemon/ui/widgets/main_window.h>

#include <algorithm>

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QUrl>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScreen>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QWidget>

#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/alerts_dock.h>
#include <livemon/ui/widgets/baseline_menu.h>
#include <livemon/ui/widgets/folder_menu.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/chart_history_marks.h>
#include <livemon/ui/widgets/chart_view_controls.h>
#include <livemon/ui/widgets/connect_dialog.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/event_log_view.h>
#include <livemon/ui/widgets/help_menu.h>
#include <livemon/ui/widgets/ranges_view.h>
#include <livemon/ui/widgets/ranks_view.h>
#include <livemon/ui/widgets/runs_panel.h>
#include <livemon/ui/widgets/status_text.h>
#include <livemon/ui/widgets/timeline_bar.h>
#include <livemon/ui/widgets/view_menu.h>

namespace livemon::ui {

namespace {

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
    : QMainWindow(parent), dashboard_(std::make_unique<Dashboard>(std::move(options))) {
  setWindowTitle(QStringLiteral("livemon"));
  splitter_ = new QSplitter(Qt::Horizontal, this);
  views_ = new QTabWidget(splitter_);
  views_->setDocumentMode(true);
  grid_ = new ChartGrid(dashboard_->registry(), views_);
  grid_->setMaxLinesPerChart(dashboard_->options().maxLinesPerChart);
  grid_->setRunDisplay(&dashboard_->runDisplay());
  // The charts' redraw budget is timed on the same clock as the refresh's.
  if (const Clock* clock = dashboard_->options().refreshBudget.clock) grid_->setClock(*clock);
  ranges_ = new RangesView(dashboard_->registry(), dashboard_->rangesModel(), views_);
  ranges_->setViewOptions(&grid_->viewOptions());
  ranks_ = new RanksView(*dashboard_, *grid_, views_);
  views_->addTab(grid_, tr("Charts"));  // in DashboardView's order
  views_->addTab(ranges_, tr("Ranges"));
  views_->addTab(ranks_, tr("Ranks"));
  // The Ranges chart follows the grid's time range, zoom and pause.
  connect(ranges_, &RangesView::rangeRequested, grid_, [this](double min, double max) { grid_->showRange(XRange{min, max}); });
  connect(ranges_, &RangesView::resetRequested, grid_, &ChartGrid::followLive);
  logView_ = new EventLogView(dashboard_->eventLog(), splitter_);
  splitter_->addWidget(views_);
  splitter_->addWidget(logView_);
  // As the window grows the log keeps its share (ViewMenu::kDefaultLogShare to begin with).
  splitter_->setStretchFactor(0, 2);
  splitter_->setStretchFactor(1, 1);
  splitter_->setChildrenCollapsible(false);
  splitter_->setCollapsible(1, true);  // the log collapses to the edge (View › Event log)
  setCentralWidget(splitter_);

  buildFileMenu();
  buildToolbar();
  buildTimeline();
  buildStatusBar();
  alerts_ = new AlertsDock(*dashboard_, *grid_, this);
  addDockWidget(Qt::BottomDockWidgetArea, alerts_);
  alerts_->hide();  // the status bar's badge shows it once an alert is raised
  statusBar()->addPermanentWidget(alerts_->badge());
  QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
  viewMenu_ = new ViewMenu(*viewMenu, *splitter_, *views_, *logView_, *grid_, *alerts_);
  RunsPanel::addTo(*this, *dashboard_, *viewMenu);
  connect(&dashboard_->runDisplay(), &RunDisplay::changed, this, &MainWindow::followRunsOnAxis);
  addHelpMenu(*this);
  historyMarks_ = new ChartHistoryMarks(*dashboard_, *grid_, this);
  restoreSettings();
  setAcceptDrops(true);
  wireDashboard();
  dashboard_->start();
  // A recording opened by start() shows the charts, unless the command line asked for a view.
  if (const auto view = dashboard_->options().view) setView(*view);
}

MainWindow::~MainWindow() {
  // The views show the dashboard's models: they go before it.
  timeline_->setSession(nullptr);
  delete takeCentralWidget();
  delete alerts_;
}

void MainWindow::wireDashboard() {
  Dashboard* d = dashboard_.get();
  connect(d, &Dashboard::seriesAdded, grid_, &ChartGrid::addSeries);
  connect(d, &Dashboard::sourceLabelsChanged, this, [this] {
    grid_->refreshSeriesNames();
    ranges_->sourceLabelsChanged();
  });
  connect(d, &Dashboard::sourcesAboutToBeRemoved, this, [this](const RegistryRemoval& removal) {
    grid_->removeSeries(removal.series);
    if (removal.labelsChanged) grid_->refreshSeriesNames();
    ranges_->beginRemove();
  });
  connect(d, &Dashboard::sourcesRemoved, ranges_, &RangesView::endRemove);
  connect(d, &Dashboard::logChanged, logView_, &EventLogView::rowsAppended);
  connect(d, &Dashboard::updated, this, &MainWindow::redraw);
  connect(d, &Dashboard::pausedChanged, this, &MainWindow::pausedChanged);
  connect(&d->replays(), &ReplayController::replayChanged, this, &MainWindow::replayChanged);
  connect(&d->replays(), &ReplayController::folderChanged, this, &MainWindow::updateStatus);
  connect(d, &Dashboard::endpointsChanged, this, &MainWindow::endpointsChanged);
  connect(d, &Dashboard::statusUpdated, this, &MainWindow::updateStatus);
  // The chart count at once, not at the next status tick (a second later, or never before start()).
  connect(grid_, &ChartGrid::chartCountChanged, this, &MainWindow::updateSummary);
  connect(d, &Dashboard::statusUpdated, this, &MainWindow::followRunsOnAxis);  // steps may come after the runs
  connect(d, &Dashboard::recordingChanged, this, &MainWindow::updateRecordingLabel);
  connect(d, &Dashboard::message, this, [this](const QString& text, int timeoutMs) { statusBar()->showMessage(text, timeoutMs); });
  connect(d, &Dashboard::errorOccurred, this, &MainWindow::showError);
  connect(d, &Dashboard::errorReported, this, &MainWindow::reportError);
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
  new FolderMenu(dashboard_->replays(), dashboard_->settings(), *file, *this);
  QAction* close = file->addAction(tr("&Close recording"));
  connect(close, &QAction::triggered, &dashboard_->replays(), &ReplayController::closeReplay);
  new BaselineMenu(dashboard_->replays(), *file);
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
  connect(timeline_, &TimelineBar::closeRequested, &dashboard_->replays(), &ReplayController::closeReplay);
}

void MainWindow::buildToolbar() {
  QToolBar* bar = addToolBar(tr("View"));
  bar->setObjectName(QStringLiteral("viewToolBar"));
  bar->setMovable(false);
  bar->setToolButtonStyle(Qt::ToolButtonTextOnly);

  QAction* connectAction = bar->addAction(tr("Connect…"));
  connectAction->setToolTip(tr("Add or remove the publishers this dashboard listens to"));
  connect(connectAction, &QAction::triggered, this, &MainWindow::openConnectDialog);
  // The empty chart area offers the same.
  connect(grid_, &ChartGrid::connectRequested, connectAction, &QAction::trigger);
  bar->addSeparator();

  bar->addWidget(new QLabel(tr(" Range "), bar));
  rangeBox_ = new QComboBox(bar);
  rangeBox_->setObjectName(QStringLiteral("timeRange"));
  rangeBox_->addItem(tr("Last 1 min"), timeRangeKey(TimeRange::LastMinute));
  rangeBox_->addItem(tr("Last 5 min"), timeRangeKey(TimeRange::Last5Minutes));
  rangeBox_->addItem(tr("Last 30 min"), timeRangeKey(TimeRange::Last30Minutes));
  rangeBox_->addItem(tr("Whole run"), timeRangeKey(TimeRange::All));
  // The whole run unless the user chose otherwise, as in TensorBoard and W&B.
  rangeBox_->setCurrentIndex(rangeBox_->findData(timeRangeKey(TimeRange::All)));
  bar->addWidget(rangeBox_);
  connect(rangeBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (const auto range = timeRangeFromKey(rangeBox_->currentData().toString())) {
      grid_->setTimeRange(*range);
      dashboard_->replays().setTimeRange(*range);
    }
  });

  bar->addWidget(new QLabel(tr("  X axis "), bar));
  axisBox_ = new QComboBox(bar);
  axisBox_->addItem(tr("Wall clock"), timeAxisModeKey(TimeAxisMode::WallClock));
  axisBox_->addItem(tr("Since run start"), timeAxisModeKey(TimeAxisMode::SinceRunStart));
  axisBox_->addItem(tr("Step"), timeAxisModeKey(TimeAxisMode::Step));
  bar->addWidget(axisBox_);
  connect(axisBox_, &QComboBox::activated, this, [this] { axisChosen_ = true; });
  connect(axisBox_, &QComboBox::currentIndexChanged, this, [this] {
    if (const auto mode = timeAxisModeFromKey(axisBox_->currentData().toString())) grid_->setTimeAxisMode(*mode);
  });
  bar->addSeparator();

  chartFilter_ = new QLineEdit(bar);
  chartFilter_->setPlaceholderText(tr("Filter charts: loss|acc, * and ? wildcards…"));
  chartFilter_->setClearButtonEnabled(true);
  chartFilter_->setMinimumWidth(240);
  chartFilter_->setMaximumWidth(360);
  bar->addWidget(chartFilter_);
  connect(chartFilter_, &QLineEdit::textChanged, grid_, &ChartGrid::setNameFilter);
  bar->addSeparator();
  bar->addWidget(new ChartViewControls(grid_->viewOptions(), bar));
  bar->addSeparator();

  pauseAction_ = bar->addAction(tr("Pause"));
  pauseAction_->setCheckable(true);
  pauseAction_->setToolTip(tr("Freeze the charts and the log; data keeps arriving and is shown on resume"));
  connect(pauseAction_, &QAction::toggled, dashboard_.get(), &Dashboard::setPaused);

  followAction_ = bar->addAction(tr("Follow live"));
  followAction_->setObjectName(QStringLiteral("followLive"));
  followAction_->setToolTip(tr("Undo zoom and pan on every chart (or double-click a chart)"));
  connect(followAction_, &QAction::triggered, grid_, &ChartGrid::followLive);
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
  summaryLabel_->setStyleSheet(dimTextStyle(QStringLiteral("padding-right: 6px;")));
  statusBar()->addPermanentWidget(summaryLabel_);
  // Its own label, hidden until a limit is reached: plain text, as the names in it are no markup.
  limitLabel_ = new QLabel(statusBar());
  limitLabel_->setTextFormat(Qt::PlainText);
  // A selector, so the tooltip keeps the usual colours.
  limitLabel_->setStyleSheet(QStringLiteral("QLabel { color: %1; padding-right: 6px; }").arg(QColor(colours::warn()).name()));
  limitLabel_->hide();
  statusBar()->addPermanentWidget(limitLabel_);
}

void MainWindow::restoreSettings() {
  const DashboardSettings& settings = dashboard_->settings();
  const DashboardSettings::WindowLayout layout = settings.windowLayout();
  if (!layout.geometry.isEmpty()) {
    restoreGeometry(layout.geometry);
  } else {
    const QRect available = screen() != nullptr ? screen()->availableGeometry() : QRect(0, 0, 1600, 1000);
    resize(std::min(1600, available.width() * 9 / 10), std::min(1000, available.height() * 9 / 10));
  }
  restoreState(layout.state);
  timelineBar_->setVisible(dashboard_->replays().replay() != nullptr);
  if (!layout.splitter.isEmpty()) {
    splitter_->restoreState(layout.splitter);
  } else {
    const int log = static_cast<int>(width() * ViewMenu::kDefaultLogShare);
    splitter_->setSizes({width() - log, log});
    viewMenu_->giveLogDefaultWidthOnShow();  // again at the size the window is shown at
  }
  if (const auto range = settings.timeRange()) rangeBox_->setCurrentIndex(rangeBox_->findData(timeRangeKey(*range)));
  if (const auto mode = settings.timeAxisMode()) axisBox_->setCurrentIndex(axisBox_->findData(timeAxisModeKey(*mode)));
  axisChosen_ = settings.timeAxisMode().has_value();
  if (const auto key = timeRangeFromKey(rangeBox_->currentData().toString())) setTimeRange(*key);
  if (const auto mode = timeAxisModeFromKey(axisBox_->currentData().toString())) grid_->setTimeAxisMode(*mode);
  logView_->setAutoScroll(settings.logAutoScroll());
  logView_->setShowStatWindows(settings.logShowsStatWindows());
  viewMenu_->setTheme(themeNamed(settings.theme()).value_or(Theme::Dark));
  grid_->restoreChoices(settings.chartChoices(), settings.chartView());
  setView(dashboard_->options().view.value_or(settings.view()));
}

void MainWindow::saveSettings() {
  DashboardSettings& settings = dashboard_->settings();
  settings.setEndpoints(dashboard_->endpoints());
  settings.setEndpointCurves(dashboard_->ingest().endpointCurves());
  settings.setWindowLayout({saveGeometry(), saveState(), splitter_->saveState()});
  if (const auto range = timeRangeFromKey(rangeBox_->currentData().toString())) settings.setTimeRange(*range);
  const auto mode = timeAxisModeFromKey(axisBox_->currentData().toString());
  if (mode && axisChosen_) settings.setTimeAxisMode(*mode);
  settings.setLogAutoScroll(logView_->autoScroll());
  settings.setLogShowsStatWindows(logView_->showStatWindows());
  settings.setTheme(themeName(currentTheme()));
  settings.setChartChoices(grid_->choices());
  settings.setChartView(grid_->viewOptions().state());
  settings.setView(view());
  settings.sync();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // An enlarged chart is not kept, and the splitter is saved with the log beside the grid.
  grid_->setEnlarged(std::nullopt);
  saveSettings();
  QMainWindow::closeEvent(event);
}

void MainWindow::redraw() {
  grid_->setPlayhead(dashboard_->replays().playheadMs(), dashboard_->replays().playheadSinceRunStart());
  grid_->refresh();
  ranges_->refresh(grid_->renderContext());
  timeline_->updateMarks(dashboard_->registry(), &dashboard_->alertCentre().alerts());
}

void MainWindow::pausedChanged(bool paused) {
  grid_->setPaused(paused);
  ranges_->setPaused(paused);
  if (pauseAction_->isChecked() != paused) pauseAction_->setChecked(paused);
  pauseAction_->setText(paused ? tr("Resume") : tr("Pause"));
}

void MainWindow::replayChanged(ReplaySession* session) {
  timeline_->setSession(session);
  timelineBar_->setVisible(session != nullptr);
  // The charts follow the playhead in a replay, not live data.
  followAction_->setText(session != nullptr ? tr("Follow playhead") : tr("Follow live"));
  followAction_->setToolTip(session != nullptr ? tr("Undo zoom and pan on every chart: show the span up to the playhead")
                                               : tr("Undo zoom and pan on every chart (or double-click a chart)"));
  if (session != nullptr) {
    setView(DashboardView::Charts);  // what a recording holds is charted first
    setWindowTitle(QStringLiteral("livemon — %1").arg(QFileInfo(session->endpointLabel()).fileName()));
  } else {
    grid_->setPlayhead(std::nullopt);
  }
}

void MainWindow::setTimeRange(TimeRange range) {
  const int index = rangeBox_->findData(timeRangeKey(range));
  if (index >= 0) rangeBox_->setCurrentIndex(index);
  grid_->setTimeRange(range);
  dashboard_->replays().setTimeRange(range);
}

void MainWindow::setTimeAxisMode(TimeAxisMode mode) {
  axisChosen_ = true;
  const int index = axisBox_->findData(timeAxisModeKey(mode));
  if (index >= 0) axisBox_->setCurrentIndex(index);
  grid_->setTimeAxisMode(mode);
}

void MainWindow::setChartFilter(const QString& filter) {
  chartFilter_->setText(filter);
  grid_->setNameFilter(filter);
}

void MainWindow::setView(DashboardView view) { views_->setCurrentIndex(static_cast<int>(view)); }

DashboardView MainWindow::view() const { return static_cast<DashboardView>(std::max(0, views_->currentIndex())); }

void MainWindow::chooseRecording(ReplayMode mode) {
  // In the folder of the last recording opened here, kept for the next session.
  QString folder = dashboard_->settings().recordingFolder();
  if (folder.isEmpty() || !QFileInfo(folder).isDir()) folder = QFileInfo(Dashboard::defaultRecordingPath()).absolutePath();
  auto* dialog = new QFileDialog(this, mode == ReplayMode::Replay ? tr("Open recording") : tr("Open recording as baseline"),
                                 folder, tr("MCAP recordings (*.mcap);;All files (*)"));
  dialog->setObjectName(QStringLiteral("openRecordingDialog"));
  dialog->setFileMode(QFileDialog::ExistingFile);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QFileDialog::fileSelected, this, [this, mode](const QString& path) {
    dashboard_->settings().setRecordingFolder(QFileInfo(path).absolutePath());
    dashboard_->replays().openRecording(path, mode);
  });
  dialog->open();  // not exec(): the dashboard keeps refreshing behind it
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (!droppedRecordings(event->mimeData()).isEmpty()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QStringList paths = droppedRecordings(event->mimeData());
  if (paths.isEmpty()) return;
  event->acceptProposedAction();
  dashboard_->replays().openRecording(paths.front());
  for (qsizetype i = 1; i < paths.size(); ++i) dashboard_->replays().openRecording(paths[i], ReplayMode::Baseline);
}

void MainWindow::toggleRecording(bool on) {
  if (!on) {
    dashboard_->stopRecording();
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Record to"), Dashboard::defaultRecordingPath(),
                                                    tr("MCAP recordings (*.mcap)"));
  if (path.isEmpty() || !dashboard_->startRecording(path)) recordAction_->setChecked(false);
}

QString MainWindow::recordingText() const { return recordingLabel_->text(); }

void MainWindow::updateRecordingLabel() {
  const IngestWorker::RecordingStatus status = dashboard_->recordingStatus();
  recordAction_->setChecked(status.active);
  recordAction_->setText(status.active ? tr("Stop recording") : tr("Record"));
  const StatusText text = recordingStatusText(status);
  recordingLabel_->setText(text.text);
  recordingLabel_->setToolTip(text.toolTip);
}

void MainWindow::reportError(const QString& title, const QString& message) {
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // not exec(): the dashboard keeps refreshing behind it
}

void MainWindow::showError(const QString& message) { statusBar()->showMessage(message, 10'000); }

void MainWindow::endpointsChanged() {
  grid_->setEndpoints(dashboard_->endpoints());
  if (dashboard_->replays().replay() != nullptr) return;  // the title names the recording
  const QStringList current = dashboard_->endpoints();
  setWindowTitle(current.isEmpty() ? QStringLiteral("livemon") : QStringLiteral("livemon — %1").arg(current.join(QStringLiteral(", "))));
  dashboard_->updateStatus();
}

void MainWindow::updateStatus() {
  updateRecordingLabel();
  updateLimitLabel();
  const std::vector<EndpointHealth>& health = dashboard_->endpointHealth();
  showEndpointHealth(*endpointLabels_, health);
  grid_->setWaitingNote(refusedNote(health));
  const ReplayController& replays = dashboard_->replays();
  const QString replayed = replays.replay() != nullptr ? replays.replay()->info().path : QString();
  const QString folder = replays.folder() != nullptr ? replays.folder()->folder() : QString();
  const QString note = standingNote(health.size(), replayed, folder);
  // An error or a passing note keeps the status bar for its time; this line comes back after.
  const QString shown = statusBar()->currentMessage();
  if (shown.isEmpty() || shown == statusNote_) statusBar()->showMessage(note);
  statusNote_ = note;
  updateSummary();
}

void MainWindow::updateSummary() {
  IngestWorker& ingest = dashboard_->ingest();
  const StatusText summary = summaryStatusText(
      ingest.stats(), ingest.staging().droppedLogEntries() + ingest.staging().droppedSamples(), grid_->charts().size(),
      dashboard_->isPaused() ? std::optional<std::size_t>(dashboard_->heldLogRows()) : std::nullopt);
  summaryLabel_->setText(summary.text);
  summaryLabel_->setToolTip(summary.toolTip);
}

LimitReport MainWindow::limitReport() const {
  LimitReport report = dashboard_->limitReport();
  report.maxLinesPerChart = grid_->maxLinesPerChart();
  report.undrawnLines = grid_->undrawnLineCount();
  return report;
}

QString MainWindow::limitText() const { return limitLabel_->text(); }

QString MainWindow::summaryText() const { return summaryLabel_->text(); }

QString MainWindow::limitToolTip() const { return limitLabel_->toolTip(); }

void MainWindow::updateLimitLabel() {
  const LimitReport report = limitReport();
  limitLabel_->setText(limitSummary(report));
  limitLabel_->setToolTip(limitDetails(report));
  limitLabel_->setVisible(report.any());
}

void MainWindow::openConnectDialog() {
  ConnectDialog dialog(dashboard_->ingest(), this);
  connect(&dialog, &ConnectDialog::endpointsChanged, this, &MainWindow::endpointsChanged);
  dialog.exec();
}

}  // namespace livemon::ui
