// A dashboard opened late receives the run from the publisher's history: a history that holds the
// whole run shows every event from the first; one cut by its byte bound is marked on the charts
// where it begins (a dashed line at the right x on the wall, relative and step axes), in the log
// and in the endpoint's tooltip; history off shows only what arrives live; a source without
// history is told in the status bar, never in a dialog; a long history is applied a time-budgeted
// slice per refresh, whole and in order. Offscreen, with a real Publisher.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <QDateTime>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/publisher.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/chart_history_marks.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/stat_chart_view.h>
#include <livemon/ui/widgets/status_text.h>

#include "stepping_clock.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::SteppingClock;
using test::waitFor;

constexpr double kSpacingMs = 100.0;  // between windows, so 2000 of them span 200 s

transport::PublisherOptions publisherOptions(std::optional<std::size_t> historyBytes) {
  transport::PublisherOptions options;
  options.bind = {"tcp://127.0.0.1:*"};
  options.heartbeatInterval = 20ms;
  options.runName = "train";
  options.statName.clear();
  options.linger = 500ms;
  options.historyBytes = historyBytes;
  options.maxBatchEvents = 10;  // many messages, so a small history drops some
  return options;
}

// Whole milliseconds since the epoch, as the charts' x.
double nowMs() {
  return std::floor(std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// Stat windows `first` .. `first + count - 1` of "loss", window i at t0 + i * kSpacingMs, step i.
void logWindows(double t0, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    Event window{std::string(kStatEventName), test::atMs(t0 + kSpacingMs * i), {{"loss.mean", 1.0 * i}}};
    window.step = i;
    logEvent(window);
  }
}

int logRowsNamed(EventLogModel& log, const QString& name, QString* data = nullptr) {
  int rows = 0;
  for (int row = 0; row < log.rowCount(); ++row) {
    if (log.data(log.index(row, EventLogModel::NameColumn)).toString() != name) continue;
    ++rows;
    if (data != nullptr) *data = log.data(log.index(row, EventLogModel::DataColumn)).toString();
  }
  return rows;
}

// Each log row: its step, or -1 for the history's own row.
std::vector<long long> loggedSteps(EventLogModel& log) {
  std::vector<long long> steps;
  for (int row = 0; row < log.rowCount(); ++row) {
    const QString name = log.data(log.index(row, EventLogModel::NameColumn)).toString();
    steps.push_back(name == QStringLiteral("livemon.history")
                        ? -1
                        : log.data(log.index(row, EventLogModel::StepColumn)).toString().toLongLong());
  }
  return steps;
}

constexpr int kHistoryWindows = 3000;
constexpr int kLiveWindows = 5;
constexpr std::size_t kPieceRows = 64;
// A budget of 4 ms on a clock read once to set the deadline and once before each further piece.
constexpr std::size_t kPiecesPerRefresh = 4;

class DashboardHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    // These tests read Stat windows in the log, which the window hides by default.
    DashboardSettings(dir_.filePath(QStringLiteral("livemon.ini"))).setLogShowsStatWindows(true);
  }

  DashboardOptions optionsFor(const std::string& endpoint) {
    DashboardOptions options;
    options.endpoints = {endpoint};
    options.exactEndpoints = true;
    options.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
    return options;
  }

  void open(DashboardOptions options) {
    window_ = std::make_unique<MainWindow>(std::move(options));
    window_->resize(1400, 900);
    window_->show();
    window_->setTimeRange(TimeRange::All);
  }

  Dashboard& dashboard() { return window_->dashboard(); }
  ChartGrid& grid() { return window_->chartGrid(); }

  const SeriesEntry* loss() {
    StatChartView* chart = grid().chart(QStringLiteral("loss"));
    if (chart == nullptr || chart->seriesIds().empty()) return nullptr;
    return dashboard().registry().series(chart->seriesIds().front());
  }

  // Where the chart puts x (in the current mode's units) for the loss line, in scene pixels.
  double pixelOf(double x) {
    StatChartView* chart = grid().chart(QStringLiteral("loss"));
    return chart->chart()->mapToPosition(QPointF(x, 0.0), chart->line(chart->seriesIds().front())).x();
  }

  // Waits until the loss chart shows one history mark where it puts x (the current mode's units).
  bool markAt(double x) {
    return waitFor([&] {
      StatChartView* chart = grid().chart(QStringLiteral("loss"));
      if (chart == nullptr) return false;
      const auto marks = window_->historyMarks().visibleMarks(*chart);
      return marks.size() == 1 && std::abs(marks.front()->line().x1() - pixelOf(x)) < 0.5;
    });
  }

  QTemporaryDir dir_;
  ManualClock clock_;  // outlives the window, whose ingest thread reads it
  std::unique_ptr<MainWindow> window_;
};

TEST_F(DashboardHistoryTest, AHistoryCutByItsBoundIsMarkedWhereItBeginsOnEveryAxisInTheLogAndTheTooltip) {
  transport::Publisher publisher(publisherOptions(16 * 1024));
  const double t0 = nowMs();  // after the publisher started, as in a run
  logWindows(t0, 0, 2000);
  ASSERT_TRUE(waitFor([&] { return publisher.publishedCount() == 2000; }));
  ASSERT_GT(publisher.stats().historyDropped, 0U) << "the run is older than what the publisher keeps";
  const std::string endpoint = publisher.endpoints().front();

  open(optionsFor(endpoint));
  ASSERT_TRUE(waitFor([&] { return dashboard().historyNote(QString::fromStdString(endpoint)) != nullptr; }));
  const HistoryNote note = *dashboard().historyNote(QString::fromStdString(endpoint));
  EXPECT_EQ(note.outcome, transport::HistoryOutcome::Received);
  ASSERT_TRUE(note.marksBeginning());
  // The newest windows are what was kept: the line begins at the history's oldest window.
  ASSERT_TRUE(waitFor([&] { return loss() != nullptr && loss()->store.lastY() == 1999.0; }));
  EXPECT_NEAR(*loss()->store.firstX(), *note.oldestMs, 0.01);
  EXPECT_GT(*note.oldestMs, t0);
  const double firstWindow = std::round((*note.oldestMs - t0) / kSpacingMs);
  EXPECT_NEAR(*note.oldestMs, t0 + kSpacingMs * firstWindow, 0.01) << "a window's time";
  ASSERT_TRUE(note.firstStep.has_value());
  EXPECT_EQ(*note.firstStep, firstWindow) << "the Step axis marks the first step received";

  // Wall clock: at the oldest window's time, labelled, with a tooltip that says why.
  ASSERT_TRUE(markAt(*note.oldestMs));
  StatChartView* chart = grid().chart(QStringLiteral("loss"));
  const QGraphicsLineItem* line = window_->historyMarks().visibleMarks(*chart).front();
  EXPECT_EQ(line->pen().style(), Qt::DashLine);
  const QGraphicsSimpleTextItem* label = window_->historyMarks().labelOf(line);
  ASSERT_NE(label, nullptr);
  EXPECT_TRUE(label->isVisible());
  EXPECT_EQ(label->text(), QStringLiteral("history begins"));
  EXPECT_TRUE(label->toolTip().contains(QStringLiteral("newest"))) << label->toolTip().toStdString();
  EXPECT_TRUE(label->toolTip().contains(QStringLiteral("not kept"))) << label->toolTip().toStdString();

  // Since run start: seconds after the publisher started.
  const SourceEntry* source = dashboard().registry().source(loss()->source);
  ASSERT_TRUE(source != nullptr && source->startMs.has_value());
  window_->setTimeAxisMode(TimeAxisMode::SinceRunStart);
  EXPECT_TRUE(markAt((*note.oldestMs - *source->startMs) / 1000.0));
  // Step: the first step received.
  window_->setTimeAxisMode(TimeAxisMode::Step);
  EXPECT_TRUE(markAt(firstWindow));

  // The log and the endpoint's tooltip say from when.
  const QString from = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(*note.oldestMs)).toString(QStringLiteral("HH:mm:ss"));
  const QString said = QStringLiteral("history from %1 (older not kept)").arg(from);
  ASSERT_TRUE(waitFor([&] { return logRowsNamed(dashboard().eventLog(), QStringLiteral("livemon.history")) == 1; }));
  QString row;
  logRowsNamed(dashboard().eventLog(), QStringLiteral("livemon.history"), &row);
  EXPECT_TRUE(row.contains(said)) << row.toStdString();
  dashboard().updateStatus();
  ASSERT_EQ(dashboard().endpointHealth().size(), 1U);
  EXPECT_TRUE(describeHealthToolTip(dashboard().endpointHealth().front()).contains(said));
  EXPECT_EQ(describeHistory(note), said);
}

TEST_F(DashboardHistoryTest, AHistoryOfTheWholeRunShowsEveryEventFromTheFirstAndNoMark) {
  transport::Publisher publisher(publisherOptions(std::nullopt));  // the default: 32 MiB
  const double t0 = nowMs();
  logWindows(t0, 0, 300);
  ASSERT_TRUE(waitFor([&] { return publisher.publishedCount() == 300; }));
  const std::string endpoint = publisher.endpoints().front();

  open(optionsFor(endpoint));
  ASSERT_TRUE(waitFor([&] { return dashboard().historyNote(QString::fromStdString(endpoint)) != nullptr; }));
  const HistoryNote note = *dashboard().historyNote(QString::fromStdString(endpoint));
  EXPECT_EQ(note.outcome, transport::HistoryOutcome::Received);
  EXPECT_FALSE(note.truncated);
  EXPECT_EQ(note.events, 300U);
  EXPECT_EQ(describeHistory(note), QStringLiteral("history: received 300 events"));
  ASSERT_TRUE(waitFor([&] { return loss() != nullptr && loss()->store.appendedCount() == 300; }));
  EXPECT_NEAR(*loss()->store.firstX(), t0, 0.01) << "from the run's first window";
  EXPECT_EQ(loss()->store.lastY(), 299.0);
  ASSERT_TRUE(waitFor([&] { return logRowsNamed(dashboard().eventLog(), QString::fromUtf8(kStatEventName.data())) == 300; }));

  // Then live, after the history, without a gap.
  logWindows(t0, 300, 5);
  ASSERT_TRUE(waitFor([&] { return loss()->store.appendedCount() == 305; }));
  EXPECT_EQ(dashboard().ingest().stats().gaps, 0U);
  grid().refresh();
  EXPECT_TRUE(window_->historyMarks().visibleMarks(*grid().chart(QStringLiteral("loss"))).empty());
  QString row;
  EXPECT_EQ(logRowsNamed(dashboard().eventLog(), QStringLiteral("livemon.history"), &row), 1);
  EXPECT_TRUE(row.contains(QStringLiteral("history: received 300 events"))) << row.toStdString();
}

TEST_F(DashboardHistoryTest, WithHistoryOffOnlyWhatArrivesLiveIsShown) {
  transport::Publisher publisher(publisherOptions(std::nullopt));
  const double t0 = nowMs();
  logWindows(t0, 0, 100);
  ASSERT_TRUE(waitFor([&] { return publisher.publishedCount() == 100; }));
  const std::string endpoint = publisher.endpoints().front();

  DashboardOptions options = optionsFor(endpoint);
  options.history = false;
  open(options);
  EXPECT_FALSE(dashboard().fetchesHistory());
  ASSERT_TRUE(waitFor([&] { return !dashboard().ingest().sources().empty(); })) << "heartbeats: subscribed";
  logWindows(t0, 100, 5);
  ASSERT_TRUE(waitFor([&] { return loss() != nullptr && loss()->store.appendedCount() == 5; }));
  EXPECT_NEAR(*loss()->store.firstX(), t0 + kSpacingMs * 100, 0.01);
  EXPECT_TRUE(dashboard().historyNotes().empty());
  EXPECT_EQ(dashboard().ingest().stats().historyEvents, 0U);
  EXPECT_EQ(logRowsNamed(dashboard().eventLog(), QStringLiteral("livemon.history")), 0);
}

TEST_F(DashboardHistoryTest, TheSettingTurnsHistoryOffAndTheOptionWins) {
  const QString file = dir_.filePath(QStringLiteral("livemon.ini"));
  {
    QSettings settings(file, QSettings::IniFormat);
    settings.setValue(QStringLiteral("ingest/history"), false);
  }
  DashboardOptions options;
  options.exactEndpoints = true;
  options.settingsFile = file;
  EXPECT_FALSE(Dashboard(options).fetchesHistory());
  options.history = true;
  EXPECT_TRUE(Dashboard(options).fetchesHistory());
  DashboardOptions defaults;
  defaults.exactEndpoints = true;
  defaults.settingsFile = dir_.filePath(QStringLiteral("other.ini"));
  EXPECT_TRUE(Dashboard(defaults).fetchesHistory()) << "on by default";
}

TEST_F(DashboardHistoryTest, ASourceWithoutHistoryIsToldInTheStatusBarNotInADialog) {
  // Advertises no history (a hand-made publisher); the wait for one runs on an injected clock.
  transport::PayloadPublisherOptions publisherOptions;
  publisherOptions.bind = {"tcp://127.0.0.1:*"};
  publisherOptions.linger = 0ms;
  transport::PayloadPublisher publisher(publisherOptions);
  DashboardOptions options = optionsFor(publisher.endpoints().front());
  options.ingestClock = &clock_;
  open(options);
  QSignalSpy reported(&dashboard(), &Dashboard::errorReported);
  clock_.advance(4s);  // past SubscriberOptions::historyWait

  ASSERT_TRUE(waitFor([&] { return !dashboard().historyNotes().empty(); }));
  const HistoryNote& note = dashboard().historyNotes().front();
  EXPECT_EQ(note.outcome, transport::HistoryOutcome::Unavailable);
  EXPECT_FALSE(note.marksBeginning());
  EXPECT_TRUE(describeHistory(note).startsWith(QStringLiteral("no history: "))) << describeHistory(note).toStdString();
  EXPECT_TRUE(window_->statusBar()->currentMessage().contains(QStringLiteral("no history: ")))
      << window_->statusBar()->currentMessage().toStdString();
  EXPECT_EQ(reported.count(), 0);
  EXPECT_TRUE(window_->findChildren<QMessageBox*>().isEmpty());
  dashboard().updateStatus();
  ASSERT_EQ(dashboard().endpointHealth().size(), 1U);
  EXPECT_TRUE(describeHealthToolTip(dashboard().endpointHealth().front()).contains(QStringLiteral("no history: ")));
}

// A late joiner's history applied in slices: every refresh applies at most what its time budget
// allows (one piece, then more while the injected clock, which moves a millisecond each time it is
// read, says the budget is not spent), never a share of the backlog; at the end every window is in
// the log exactly once and in order, the history's row right after its last event, and live events
// after it. The refresh timer is kept from firing, so only the test's refreshes apply anything.
TEST_F(DashboardHistoryTest, AHistoryIsAppliedOverManyRefreshesEachWithinItsBudgetWholeAndInOrder) {
  transport::Publisher publisher(publisherOptions(std::nullopt));
  const double t0 = nowMs();
  logWindows(t0, 0, kHistoryWindows);
  ASSERT_TRUE(waitFor([&] { return publisher.publishedCount() == kHistoryWindows; }));

  SteppingClock clock(1ms);
  DashboardOptions options;
  options.endpoints = publisher.endpoints();
  options.exactEndpoints = true;
  options.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
  options.history = true;
  options.refreshInterval = std::chrono::hours(1);  // only the test's refreshes
  options.refreshBudget = {kPieceRows, 4ms, &clock};
  Dashboard dashboard(options);
  dashboard.eventLog().setShowStatWindows(true);
  dashboard.start();
  // The whole history received before the first refresh: a backlog of 6 000 rows.
  ASSERT_TRUE(waitFor([&] { return dashboard.ingest().stats().historyEvents == kHistoryWindows; }));

  // A window is a sample and a log row, and a piece cuts both at the same fraction: a refresh
  // adds at most its pieces' share of the log rows.
  const int maxRowsPerRefresh = static_cast<int>(kPiecesPerRefresh * (kPieceRows / 2 + 1));
  int refreshes = 0;
  int previous = 0;
  std::size_t mostWaiting = 0;
  const auto done = [&] { return !dashboard.historyNotes().empty(); };
  ASSERT_TRUE(waitFor([&] {
    dashboard.refreshUpTo(kPieceRows);
    ++refreshes;
    const int rows = dashboard.eventLog().rowCount();
    EXPECT_LE(rows - previous, maxRowsPerRefresh) << "refresh " << refreshes;
    previous = rows;
    mostWaiting = std::max(mostWaiting, dashboard.waitingRows());
    return done();
  }));
  EXPECT_GE(refreshes, kHistoryWindows / maxRowsPerRefresh) << "applied in slices";
  EXPECT_GT(mostWaiting, 0U) << "the rest left for the next refreshes";
  ASSERT_EQ(dashboard.historyNotes().size(), 1U);
  EXPECT_EQ(dashboard.historyNotes().front().events, static_cast<uint64_t>(kHistoryWindows));

  logWindows(t0, kHistoryWindows, kLiveWindows);
  ASSERT_TRUE(waitFor([&] {
    dashboard.refreshUpTo(kPieceRows);
    return dashboard.eventLog().rowCount() == kHistoryWindows + 1 + kLiveWindows;
  }));
  std::vector<long long> expected;
  for (int i = 0; i < kHistoryWindows; ++i) expected.push_back(i);
  expected.push_back(-1);  // the history's row, after its events
  for (int i = kHistoryWindows; i < kHistoryWindows + kLiveWindows; ++i) expected.push_back(i);
  EXPECT_EQ(loggedSteps(dashboard.eventLog()), expected);
  EXPECT_EQ(dashboard.waitingRows(), 0U);
}

}  // namespace
}  // namespace livemon::ui
