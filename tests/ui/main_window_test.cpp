// The dashboard end to end: a real Publisher, the main window, its charts, log, filters,
// pause, endpoints and saved settings.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QLocale>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QLineSeries>
#include <QtTest/QTest>

#include <livemon/event_handler.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/connect_dialog.h>
#include <livemon/ui/widgets/event_log_view.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::lastY;
using test::waitFor;

transport::PublisherOptions publisherOptions() {
  transport::PublisherOptions options;
  options.bind = {"tcp://127.0.0.1:*"};
  options.heartbeatInterval = 20ms;
  options.runName = "e2e";
  options.statName.clear();  // no self-report Stats: the test knows every event
  options.linger = 500ms;
  return options;
}

// Waits until the dashboard has heard from `publisher`, and has fetched its history (empty, as
// nothing was logged yet): from then on nothing it publishes is lost to ZeroMQ's slow-joiner
// effect, and everything arrives live rather than in the history.
bool waitForPublisher(MainWindow& window, const transport::Publisher& publisher) {
  const QString endpoint = QString::fromStdString(publisher.endpoints().front());
  return waitFor([&] {
    if (window.dashboard().historyNote(endpoint) == nullptr) return false;
    for (const transport::SourceStatus& status : window.dashboard().ingest().sources()) {
      if (*status.source == publisher.identity()) return true;
    }
    return false;
  });
}

class MainWindowTest : public ::testing::Test {
 protected:
  DashboardOptions options(std::vector<std::string> endpoints) {
    DashboardOptions result;
    result.endpoints = std::move(endpoints);
    result.settingsFile = settingsDir_.filePath(QStringLiteral("livemon.ini"));
    return result;
  }

  QTemporaryDir settingsDir_;
};

TEST_F(MainWindowTest, PublishedStatsBecomeChartsWithTheLastValuesAndTheLogHoldsEveryEvent) {
  transport::Publisher publisher(publisherOptions());
  MainWindow window(options({publisher.endpoints().front()}));
  window.eventLogView().setShowStatWindows(true);  // hidden by default (log_window_test); read here
  window.resize(1600, 1400);
  window.show();
  ASSERT_TRUE(waitForPublisher(window, publisher));

  const double t0 = std::floor(std::chrono::duration<double, std::milli>(
                                   std::chrono::system_clock::now().time_since_epoch()).count());
  constexpr int kWindows = 20;
  for (int i = 0; i < kWindows; ++i) {
    const auto at = test::atMs(t0 + 1000.0 * i);
    logEvent(Event{std::string(kStatEventName), at,
                   {{"loss.mean", 1.0 / (i + 1)}, {"loss.min", 0.5 / (i + 1)}, {"loss.max", 2.0 / (i + 1)},
                    {"train.step_ms.p99", 10.0 + i}}});
    logEvent(Event{std::string(kTorchStatEventName), at, {{"gpu.util.value", int64_t{50} + i}}});
    logEvent(Event{"checkpoint", at, {{"path", std::string("/ckpt/") + std::to_string(i)}, {"step", int64_t{100} * i}}});
  }

  EventLogModel& log = window.dashboard().eventLog();
  ASSERT_TRUE(waitFor([&] { return log.rowCount() == 3 * kWindows; })) << log.rowCount();

  ChartGrid& grid = window.chartGrid();
  ASSERT_TRUE(waitFor([&] { return grid.chart("loss") && grid.chart("train.step_ms") && grid.chart("gpu.util"); }));
  EXPECT_EQ(grid.charts().size(), 3U);  // "checkpoint" is not a Stat

  StatChartView* loss = grid.chart("loss");
  // Source 0 is the only publisher.
  ASSERT_TRUE(waitFor([&] { return lastY(loss->line("mean", 0)) == 1.0 / kWindows; }));
  EXPECT_EQ(lastY(loss->line("min", 0)), 0.5 / kWindows);
  EXPECT_EQ(lastY(loss->line("max", 0)), 2.0 / kWindows);
  EXPECT_EQ(loss->line("mean", 0)->count(), kWindows);
  EXPECT_DOUBLE_EQ(loss->line("mean", 0)->at(kWindows - 1).x(), t0 + 1000.0 * (kWindows - 1));
  ASSERT_NE(loss->band(0), nullptr);  // min and max make a band
  EXPECT_EQ(loss->band(0)->upperSeries()->count(), kWindows);

  StatChartView* stepTime = grid.chart("train.step_ms");  // a dotted Stat name
  ASSERT_TRUE(waitFor([&] { return lastY(stepTime->line("p99", 0)) == 10.0 + kWindows - 1; }));
  StatChartView* gpu = grid.chart("gpu.util");  // torch.monitor.Stat, int64 values
  ASSERT_TRUE(waitFor([&] { return lastY(gpu->line("value", 0)) == 50.0 + kWindows - 1; }));
  // The y axis fits the visible data.
  EXPECT_LE(gpu->yRange().min, 50.0);
  EXPECT_GE(gpu->yRange().max, 50.0 + kWindows - 1);

  // The log: time, source, name, data; in order.
  const QModelIndex last = log.index(log.rowCount() - 1, EventLogModel::NameColumn);
  EXPECT_EQ(last.data().toString(), QStringLiteral("checkpoint"));
  EXPECT_EQ(log.index(log.rowCount() - 1, EventLogModel::DataColumn).data().toString(),
            QStringLiteral("path=\"/ckpt/19\", step=1900"));
  EXPECT_TRUE(log.index(0, EventLogModel::SourceColumn).data().toString().startsWith(QStringLiteral("e2e@")));

  // The log filter hides what does not match.
  window.eventLogView().setFilterText(QStringLiteral("checkpoint"));
  EXPECT_EQ(log.rowCount(), kWindows);
  for (int row = 0; row < log.rowCount(); ++row) {
    EXPECT_EQ(log.index(row, EventLogModel::NameColumn).data().toString(), QStringLiteral("checkpoint"));
  }
  window.eventLogView().setFilterText(QStringLiteral("/ckpt/7\""));
  EXPECT_EQ(log.rowCount(), 1);
  window.eventLogView().setFilterText(QStringLiteral("torch.monitor"));
  EXPECT_EQ(log.rowCount(), kWindows);
  window.eventLogView().setFilterText(QString());
  EXPECT_EQ(log.rowCount(), 3 * kWindows);

  // The chart filter hides the charts whose names do not match.
  window.setChartFilter(QStringLiteral("loss"));
  EXPECT_FALSE(loss->isHidden());
  EXPECT_TRUE(gpu->isHidden());
  EXPECT_TRUE(stepTime->isHidden());
  window.setChartFilter(QStringLiteral("*.*"));
  EXPECT_TRUE(loss->isHidden());
  EXPECT_FALSE(gpu->isHidden());
  EXPECT_FALSE(stepTime->isHidden());
}

TEST_F(MainWindowTest, PauseFreezesChartsAndLogAndResumeCatchesUp) {
  transport::Publisher publisher(publisherOptions());
  MainWindow window(options({publisher.endpoints().front()}));
  window.eventLogView().setShowStatWindows(true);  // hidden by default (log_window_test); read here
  window.resize(1400, 900);
  window.show();
  ASSERT_TRUE(waitForPublisher(window, publisher));

  const double t0 = 1'700'000'000'000.0;
  logEvent(Event{std::string(kStatEventName), test::atMs(t0), {{"loss.mean", 1.0}}});
  ASSERT_TRUE(waitFor([&] {
    StatChartView* chart = window.chartGrid().chart("loss");
    return chart != nullptr && lastY(chart->line("mean", 0)) == 1.0;
  }));
  const int rowsBefore = window.dashboard().eventLog().rowCount();

  window.dashboard().setPaused(true);
  logEvent(Event{std::string(kStatEventName), test::atMs(t0 + 1000), {{"loss.mean", 2.0}}});
  // The sample arrives (the store has it) but the chart and the log stay as they were.
  const SeriesEntry* mean = window.dashboard().registry().series(0);
  ASSERT_NE(mean, nullptr);
  ASSERT_TRUE(waitFor([&] { return mean->store.lastY() == 2.0; }));
  window.dashboard().refreshNow();
  StatChartView* chart = window.chartGrid().chart("loss");
  EXPECT_EQ(chart->line("mean", 0)->count(), 1);
  EXPECT_EQ(lastY(chart->line("mean", 0)), 1.0);
  EXPECT_EQ(window.dashboard().eventLog().rowCount(), rowsBefore);

  window.dashboard().setPaused(false);
  EXPECT_EQ(window.dashboard().eventLog().rowCount(), rowsBefore + 1);
  ASSERT_TRUE(waitFor([&] { return lastY(chart->line("mean", 0)) == 2.0; }));
}

TEST_F(MainWindowTest, EndpointsAreAddedAndRemovedWhileRunning) {
  MainWindow window(options({"tcp://127.0.0.1:1"}));
  transport::Publisher publisher(publisherOptions());
  ConnectDialog dialog(window.dashboard().ingest());
  EXPECT_EQ(dialog.endpoints(), QStringList{QStringLiteral("tcp://127.0.0.1:1")});

  ASSERT_EQ(dialog.addEndpoint(QString::fromStdString(publisher.endpoints().front())), ConnectDialog::AddResult::Added);
  EXPECT_EQ(window.dashboard().endpoints().size(), 2);
  ASSERT_TRUE(waitForPublisher(window, publisher));
  logEvent(Event{"hello", std::chrono::system_clock::now(), {{"n", int64_t{1}}}});
  ASSERT_TRUE(waitFor([&] { return window.dashboard().eventLog().rowCount() == 1; }));

  EXPECT_EQ(dialog.addEndpoint(QStringLiteral("nonsense://x")), ConnectDialog::AddResult::Refused);  // nothing changes
  EXPECT_EQ(window.dashboard().endpoints().size(), 2);
  EXPECT_TRUE(dialog.removeEndpoint(QStringLiteral("tcp://127.0.0.1:1")));
  EXPECT_EQ(window.dashboard().endpoints(), QStringList{QString::fromStdString(publisher.endpoints().front())});

  window.dashboard().updateStatus();
  ASSERT_EQ(window.dashboard().endpointHealth().size(), 1U);
  EXPECT_EQ(window.dashboard().endpointHealth().front().state, EndpointState::Connected);
}

TEST_F(MainWindowTest, AnEndpointThatRefusesThisSideSaysWhyInTheStatusBarAndWhereTheChartsWouldBe) {
  // A CURVE publisher; the dashboard has no keys.
  QTemporaryDir keys;
  const std::string secret = QDir(keys.path()).filePath(QStringLiteral("server.key_secret")).toStdString();
  std::ofstream(secret) << transport::curveCertificateText(transport::generateCurveKeyPair(), true);
  ASSERT_TRUE(QDir(keys.path()).mkdir(QStringLiteral("allow")));
  transport::PublisherOptions secured = publisherOptions();
  secured.curve.certificate = secret;
  secured.curve.allow = QDir(keys.path()).filePath(QStringLiteral("allow")).toStdString();
  transport::Publisher publisher(secured);
  MainWindow window(options({publisher.endpoints().front()}));

  ASSERT_TRUE(waitFor([&] {
    window.dashboard().updateStatus();
    const std::vector<EndpointHealth>& health = window.dashboard().endpointHealth();
    return health.size() == 1 && health.front().state == EndpointState::Refused;
  }));
  const std::string why = window.dashboard().endpointHealth().front().handshakeError;
  EXPECT_NE(why.find("CURVE"), std::string::npos) << why;
  const QString placeholder = window.chartGrid().placeholderText();
  EXPECT_TRUE(placeholder.contains(QString::fromStdString(publisher.endpoints().front() + ": " + why)))
      << placeholder.toStdString();
}

TEST_F(MainWindowTest, SettingsRestoreEndpointsViewAndLayout) {
  {
    MainWindow window(options({"tcp://127.0.0.1:5601", "tcp://127.0.0.1:5602"}));
    window.resize(1234, 777);
    window.setTimeRange(TimeRange::Last30Minutes);
    window.setTimeAxisMode(TimeAxisMode::Step);  // the X axis box offers it, and it is saved
    window.eventLogView().setAutoScroll(false);
    window.show();
    window.close();  // saves
  }
  MainWindow restored(options({}));  // no endpoints given: the saved ones
  EXPECT_EQ(restored.dashboard().endpoints(), (QStringList{QStringLiteral("tcp://127.0.0.1:5601"), QStringLiteral("tcp://127.0.0.1:5602")}));
  EXPECT_EQ(restored.chartGrid().timeView().range(), TimeRange::Last30Minutes);
  EXPECT_EQ(restored.chartGrid().timeView().mode(), TimeAxisMode::Step);
  EXPECT_FALSE(restored.eventLogView().autoScroll());
  EXPECT_EQ(restored.size(), QSize(1234, 777));
}

TEST_F(MainWindowTest, SettingsRestorePinnedChartsAndCollapsedSections) {
  {
    MainWindow window(options({}));
    window.chartGrid().setPinned(QStringLiteral("eval.accuracy"), true);
    window.chartGrid().setSectionCollapsed(QStringLiteral("range/"), true);
    window.chartGrid().setSectionCollapsed(QStringLiteral("system"), true);
    window.chartGrid().setSectionCollapsed(QStringLiteral("system"), false);
    window.show();
    window.close();  // saves
  }
  MainWindow restored(options({}));
  EXPECT_TRUE(restored.chartGrid().isPinned(QStringLiteral("eval.accuracy")));
  EXPECT_FALSE(restored.chartGrid().isPinned(QStringLiteral("train.loss")));
  EXPECT_TRUE(restored.chartGrid().isSectionCollapsed(QStringLiteral("range/")));
  EXPECT_FALSE(restored.chartGrid().isSectionCollapsed(QStringLiteral("system")));
}

TEST_F(MainWindowTest, WithoutEndpointsOrSettingsItListensOnTheDefault) {
  MainWindow window(options({}));
  EXPECT_EQ(window.dashboard().endpoints(), QStringList{QStringLiteral("tcp://127.0.0.1:5555")});
}

// As in TensorBoard and W&B, a first start shows the whole run; a range the user picks is kept.
TEST_F(MainWindowTest, AFreshDashboardShowsTheWholeRun) {
  MainWindow window(options({"tcp://127.0.0.1:5604"}));
  window.resize(1600, 1000);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  const auto* range = window.findChild<QComboBox*>(QStringLiteral("timeRange"));
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(range->currentText(), QStringLiteral("Whole run"));
  EXPECT_EQ(window.chartGrid().timeView().range(), TimeRange::All);
  EXPECT_EQ(window.dashboard().replays().timeRange(), TimeRange::All);

  // 20 minutes of a run, a value every 10 s, ending now.
  const auto source = test::makeSource("train", 100);
  const double now = std::chrono::duration<double, std::milli>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double start = now - 20 * 60 * 1000.0;
  std::vector<transport::ReceivedEvent> events;
  for (int i = 0; i <= 120; ++i) {
    events.push_back(test::received(source, Event{"livemon.Stat", test::atMs(start + 10'000.0 * i), {{"loss.mean", 1.0 * i}}}));
  }
  window.dashboard().ingest().deliver(events);
  StatChartView* chart = nullptr;
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    chart = window.chartGrid().chart(QStringLiteral("loss"));
    return chart != nullptr && chart->isOnScreen() && chart->line(QStringLiteral("mean"), 0) != nullptr &&
           chart->line(QStringLiteral("mean"), 0)->count() == 121;
  }));
  EXPECT_LE(chart->xRange().min, start) << "the first point is in view";
  EXPECT_GE(chart->xRange().max, now);
  // The status bar counts the chart as soon as it is made, not at the next status tick.
  EXPECT_TRUE(window.summaryText().startsWith(QStringLiteral("1 chart"))) << window.summaryText().toStdString();
}

// With nothing publishing, the chart area says what to do next: start the job (where the
// dashboard connects), or run the demo, or connect elsewhere with the toolbar's Connect… action.
TEST_F(MainWindowTest, TheEmptyChartAreaSaysWhatToDoAndOffersConnect) {
  MainWindow window(options({"tcp://127.0.0.1:5605"}));
  window.resize(1600, 1000);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  const QString text = window.chartGrid().placeholderText();
  EXPECT_TRUE(text.contains(QStringLiteral("livemonctl demo"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("tcp://127.0.0.1:5605"))) << text.toStdString();

  auto* button = window.chartGrid().findChild<QAbstractButton*>(QStringLiteral("emptyConnect"));
  ASSERT_NE(button, nullptr);
  EXPECT_TRUE(button->isVisible());
  QAction* action = nullptr;
  for (QAction* candidate : window.findChildren<QAction*>()) {
    if (candidate->text() == QStringLiteral("Connect…")) action = candidate;
  }
  ASSERT_NE(action, nullptr);
  QSignalSpy triggered(action, &QAction::triggered);
  // The action opens the modal Connect dialog: close it as soon as it shows.
  bool dialogShown = false;
  QTimer closer;
  closer.setInterval(10);
  QObject::connect(&closer, &QTimer::timeout, [&] {
    if (auto* dialog = qobject_cast<ConnectDialog*>(QApplication::activeModalWidget())) {
      dialogShown = true;
      dialog->reject();
    }
  });
  closer.start();
  button->click();
  closer.stop();
  EXPECT_EQ(triggered.count(), 1);
  EXPECT_TRUE(dialogShown);

  // The endpoints named follow the ones connected to.
  window.dashboard().ingest().addEndpoint("tcp://127.0.0.1:5606");
  emit window.dashboard().endpointsChanged();
  EXPECT_TRUE(window.chartGrid().placeholderText().contains(QStringLiteral("tcp://127.0.0.1:5606")));
}

TEST_F(MainWindowTest, RecordingALiveRunKeepsEveryEventTheDashboardReceived) {
  transport::Publisher publisher(publisherOptions());
  MainWindow window(options({publisher.endpoints().front()}));
  ASSERT_TRUE(waitForPublisher(window, publisher));
  const QString path = settingsDir_.filePath(QStringLiteral("live.mcap"));
  ASSERT_TRUE(window.dashboard().startRecording(path)) << window.dashboard().lastError().toStdString();

  const double t0 = std::floor(std::chrono::duration<double, std::milli>(
                                   std::chrono::system_clock::now().time_since_epoch()).count());
  constexpr int kEvents = 500;
  for (int i = 0; i < kEvents; ++i) {
    logEvent(Event{"step", test::atMs(t0 + i), {{"i", int64_t{i}}, {"tag", std::string("s") + std::to_string(i)}}});
  }
  EventLogModel& log = window.dashboard().eventLog();
  ASSERT_TRUE(waitFor([&] { return log.rowCount() == kEvents; })) << log.rowCount();
  window.dashboard().stopRecording();
  EXPECT_FALSE(window.dashboard().isRecording());

  // Every event shown is in the file, in order, with its data and its publisher, in the messages
  // they arrived in.
  transport::RecordingReader reader(path.toStdString());
  EXPECT_TRUE(reader.indexed());
  EXPECT_TRUE(reader.problems().empty());
  transport::RecordedEventDecoder decoder(path.toStdString());
  int next = 0;
  std::vector<transport::ReceivedEvent> batch;
  reader.forEachMessage([&](const transport::RecordedMessage& message) {
    std::string error;
    EXPECT_TRUE(decoder.decode(message, batch, &error)) << error;
    for (const transport::ReceivedEvent& received : batch) {
      if (received.event.name != "step") continue;
      EXPECT_EQ(std::get<int64_t>(received.event.data.at("i")), next);
      EXPECT_EQ(std::get<std::string>(received.event.data.at("tag")), "s" + std::to_string(next));
      EXPECT_EQ(received.source->run, "e2e");
      ++next;
    }
    return true;
  });
  EXPECT_EQ(next, kEvents);
}

// "<prefix><i><suffix>", built in place (GCC 12 warns wrongly on chained operator+ at -O3).
std::string numbered(const char* prefix, int i, const char* suffix = "") {
  std::string text(prefix);
  text += std::to_string(i);
  text += suffix;
  return text;
}

TEST_F(MainWindowTest, AFloodOfInventedNamesStopsAtTheLimitsTheStatusBarSaysSoAndKnownDataStillShows) {
  DashboardOptions dashboard = options({});
  dashboard.exactEndpoints = true;  // a synthetic feed, through the ingest worker as received events go
  dashboard.groupRanks = false;     // a line per ranked source, so that the flood fills the charts
  MainWindow window(dashboard);
  window.resize(1600, 1000);
  window.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&window));
  const IngestLimits limits = window.dashboard().ingest().limits();
  const auto train = test::makeSource("train", 1, 0);
  const auto window1 = [&](double ms, double loss) {
    std::vector<transport::ReceivedEvent> events{
        test::received(train, Event{std::string(kStatEventName), test::atMs(ms), {{"loss.mean", loss}}})};
    window.dashboard().ingest().deliver(events);
  };
  constexpr double kT0 = 1'700'000'000'000.0;
  window1(kT0, 1.0);
  window.dashboard().refreshNow();
  window.dashboard().updateStatus();
  EXPECT_TRUE(window.limitText().isEmpty());

  constexpr int kFlood = 100'000;
  std::vector<transport::ReceivedEvent> names;
  for (int i = 0; i < kFlood; ++i) {
    names.push_back(test::received(train, Event{std::string(kStatEventName), test::atMs(kT0 + i), {{numbered("step", i, ".mean"), 1.0}}}));
  }
  window.dashboard().ingest().deliver(names);
  window.dashboard().refreshNow();
  ChartGrid& grid = window.chartGrid();
  EXPECT_EQ(window.dashboard().registry().seriesCount(), limits.maxCharts);
  EXPECT_EQ(grid.charts().size() + static_cast<std::size_t>(grid.pendingChartCount()), limits.maxCharts);

  std::vector<transport::ReceivedEvent> sources;
  for (int i = 0; i < kFlood; ++i) {
    sources.push_back(test::received(test::makeSource("flood", 10 + i, i),
                                     Event{std::string(kStatEventName), test::atMs(kT0 + i), {{"loss.mean", 9.0}}}));
  }
  window.dashboard().ingest().deliver(sources);
  window.dashboard().refreshNow();
  EXPECT_EQ(window.dashboard().registry().sourceCount(), limits.maxSources);
  EXPECT_EQ(window.dashboard().registry().seriesCount(), limits.maxCharts + limits.maxSources - 1);
  EXPECT_EQ(window.dashboard().eventLog().receivedCount(), 1 + kFlood + (limits.maxSources - 1));

  // The run known before the flood keeps getting its points on its chart.
  window1(kT0 + 200'000, 2.0);
  StatChartView* loss = nullptr;
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    loss = grid.chart(QStringLiteral("loss"));
    return loss != nullptr && lastY(loss->line(QStringLiteral("mean"), 0)) == 2.0;
  }));
  EXPECT_EQ(loss->lineCount(), window.chartGrid().maxLinesPerChart());
  EXPECT_EQ(grid.undrawnLineCount(), limits.maxSources - window.chartGrid().maxLinesPerChart());

  window.dashboard().updateStatus();
  const QLocale locale;
  const QString text = window.limitText();
  EXPECT_TRUE(text.startsWith(QStringLiteral("⚠ dropped %1 events of over %2 new sources beyond the %3-source limit")
                                  .arg(locale.toString(static_cast<qulonglong>(kFlood - (limits.maxSources - 1))),
                                       locale.toString(static_cast<qulonglong>(DistinctCounter::kDefaultCapacity)),
                                       locale.toString(static_cast<qulonglong>(limits.maxSources)))))
      << text.toStdString();
  EXPECT_TRUE(text.endsWith(QStringLiteral("+2 more"))) << text.toStdString();
  const QString details = window.limitToolTip();
  EXPECT_TRUE(details.contains(QStringLiteral("at most %1 charts").arg(locale.toString(static_cast<qulonglong>(limits.maxCharts)))))
      << details.toStdString();
  EXPECT_TRUE(details.contains(QStringLiteral("lines not drawn"))) << details.toStdString();
}

TEST_F(MainWindowTest, AnUnusableEndpointIsRefusedWithItsName) {
  try {
    MainWindow window(options({"nonsense://x"}));
    FAIL() << "expected an exception";
  } catch (const std::exception& error) {
    EXPECT_NE(std::string(error.what()).find("nonsense://x"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace livemon::ui
