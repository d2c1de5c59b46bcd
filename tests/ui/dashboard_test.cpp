// The dashboard's pipeline without a widget: live and replayed events applied by one refresh, a
// seek that clears what the recording showed and keeps what arrived live, pause, and closing a
// recording, all through Dashboard and its signals.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <QSignalSpy>
#include <QTemporaryDir>

#include <livemon/clock.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/stat_registry.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::waitFor;
using test::kT0Ms;
using test::kT0Ns;
constexpr int kEvents = 121;  // one every 500 ms: 60 s

void deliverLive(Dashboard& dashboard, double y) {
  std::vector<transport::ReceivedEvent> events{test::received(
      test::makeSource("live", 77, std::nullopt, kT0Ms), Event{std::string(kStatEventName), test::atMs(kT0Ms), {{"loss.mean", y}}})};
  dashboard.ingest().deliver(events);
}

// The loss series of the source whose run is `run`.
const SeriesEntry* lossOf(const Dashboard& dashboard, const QString& run) {
  const StatRegistry& registry = dashboard.registry();
  for (SeriesId id = 0; id < registry.seriesIdEnd(); ++id) {
    const SeriesEntry* series = registry.series(id);
    if (series == nullptr || series->stat != QLatin1String("loss")) continue;
    const SourceEntry* source = registry.source(series->source);
    if (source != nullptr && source->info && QString::fromStdString(source->info->run) == run) return series;
  }
  return nullptr;
}

// The replay tests' fixture (replay_test_support.h), with a 60 s recording.
class DashboardTest : public test::ReplayTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    recording_ = dir_.filePath(QStringLiteral("run.mcap"));
    test::writeRecording(recording_.toStdString(), kEvents);
  }
};

TEST_F(DashboardTest, ARefreshAppliesLiveAndReplayedEventsAndTellsTheViews) {
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  QSignalSpy added(&dashboard, &Dashboard::seriesAdded);
  QSignalSpy updated(&dashboard, &Dashboard::updated);
  QSignalSpy replays(&dashboard.replays(), &ReplayController::replayChanged);
  dashboard.start();
  deliverLive(dashboard, 7.0);
  ReplaySession* session = openReplay(dashboard, recording_);
  ASSERT_EQ(replays.count(), 1);
  EXPECT_EQ(replays.at(0).at(0).value<ReplaySession*>(), session);

  EXPECT_EQ(dashboard.registry().sourceCount(), 2U);
  EXPECT_EQ(dashboard.eventLog().rowCount(), kEvents + 1);
  const SeriesEntry* live = lossOf(dashboard, QStringLiteral("live"));
  const SeriesEntry* replayed = lossOf(dashboard, QStringLiteral("train"));
  ASSERT_NE(live, nullptr);
  ASSERT_NE(replayed, nullptr);
  EXPECT_EQ(live->store.lastY(), 7.0);
  EXPECT_EQ(replayed->store.lastY(), static_cast<double>(kEvents - 1));
  EXPECT_GE(added.count(), 1);
  EXPECT_GE(updated.count(), 1);
  ASSERT_TRUE(dashboard.replays().playheadMs().has_value());
  EXPECT_DOUBLE_EQ(*dashboard.replays().playheadMs(), kT0Ms + 500.0 * (kEvents - 1));
}

TEST_F(DashboardTest, ASeekShowsExactlyTheWindowBeforeThePlayheadAndKeepsWhatArrivedLive) {
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  dashboard.start();
  ReplaySession* session = openReplay(dashboard, recording_);
  // A window read and staged, and a live event, neither applied yet when the next seek comes:
  // they are applied before the recording's data is cleared, so only the live one remains.
  session->seek(kT0Ns + 100 * 500'000'000LL);
  // Without processing events: the read's loaded() would refresh at once.
  const auto deadline = std::chrono::steady_clock::now() + test::kDeadline;
  while (session->busy() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_FALSE(session->busy());
  deliverLive(dashboard, 3.0);
  session->seek(kT0Ns + 20 * 500'000'000LL);
  settle(dashboard, *session);
  const SeriesEntry* replayed = lossOf(dashboard, QStringLiteral("train"));
  ASSERT_NE(replayed, nullptr);
  EXPECT_EQ(replayed->store.firstX(), kT0Ms);
  EXPECT_EQ(replayed->store.lastX(), kT0Ms + 500.0 * 20);
  EXPECT_EQ(replayed->store.lastY(), 20.0);
  const SeriesEntry* live = lossOf(dashboard, QStringLiteral("live"));
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(live->store.lastY(), 3.0);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 21 + 1);

  // Forward again: only what the playhead passes is read, after what is shown.
  session->seek(kT0Ns + 60 * 500'000'000LL);
  settle(dashboard, *session);
  EXPECT_EQ(replayed->store.lastY(), 60.0);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 61 + 1);
}

TEST_F(DashboardTest, PausedItHoldsNewLogRowsButKeepsTheSamplesAndResumeShowsThem) {
  Dashboard dashboard(options());
  QSignalSpy paused(&dashboard, &Dashboard::pausedChanged);
  dashboard.start();
  dashboard.setPaused(true);
  EXPECT_TRUE(dashboard.isPaused());
  deliverLive(dashboard, 1.0);
  dashboard.refreshNow();
  EXPECT_EQ(dashboard.eventLog().rowCount(), 0);
  EXPECT_EQ(dashboard.heldLogRows(), 1U);
  const SeriesEntry* live = lossOf(dashboard, QStringLiteral("live"));
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(live->store.lastY(), 1.0);
  QSignalSpy log(&dashboard, &Dashboard::logChanged);
  dashboard.setPaused(false);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 1);
  EXPECT_EQ(dashboard.heldLogRows(), 0U);
  EXPECT_EQ(log.count(), 1);
  ASSERT_EQ(paused.count(), 2);
  EXPECT_FALSE(paused.at(1).at(0).toBool());
}

TEST_F(DashboardTest, ClosingTheReplayRemovesItsSourcesAndTellsTheViewsBeforeAndAfter) {
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  dashboard.start();
  deliverLive(dashboard, 7.0);
  openReplay(dashboard, recording_);
  ASSERT_EQ(dashboard.registry().sourceCount(), 2U);
  QSignalSpy before(&dashboard, &Dashboard::sourcesAboutToBeRemoved);
  QSignalSpy after(&dashboard, &Dashboard::sourcesRemoved);
  QSignalSpy replays(&dashboard.replays(), &ReplayController::replayChanged);
  dashboard.replays().closeReplay();
  EXPECT_EQ(dashboard.replays().replay(), nullptr);
  EXPECT_FALSE(dashboard.replays().playheadMs().has_value());
  EXPECT_EQ(before.count(), 1);
  EXPECT_EQ(after.count(), 1);
  ASSERT_EQ(replays.count(), 1);
  EXPECT_EQ(replays.at(0).at(0).value<ReplaySession*>(), nullptr);
  EXPECT_EQ(dashboard.registry().sourceCount(), 1U);
  EXPECT_EQ(lossOf(dashboard, QStringLiteral("train")), nullptr);
  EXPECT_NE(lossOf(dashboard, QStringLiteral("live")), nullptr);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 1);
}

TEST_F(DashboardTest, ARecordingThatCannotBeOpenedIsReportedWithItsReason) {
  Dashboard dashboard(options());
  QSignalSpy reported(&dashboard, &Dashboard::errorReported);
  dashboard.start();
  dashboard.replays().openRecording(dir_.filePath(QStringLiteral("missing.mcap")));
  ASSERT_TRUE(reported.wait(static_cast<int>(std::chrono::milliseconds(test::kDeadline).count())));
  EXPECT_EQ(reported.at(0).at(0).toString(), QStringLiteral("Cannot open the recording"));
  EXPECT_TRUE(dashboard.lastError().contains(QStringLiteral("missing.mcap"))) << dashboard.lastError().toStdString();
}

TEST_F(DashboardTest, ARaisedAlertIsListedAndToldToTheViews) {
  Dashboard dashboard(options());
  std::vector<AlertEntry> told;
  QObject::connect(&dashboard.alertCentre(), &AlertCentre::alertRaised, [&](const AlertEntry& alert) { told.push_back(alert); });
  AlertEntry alert;
  alert.timeMs = kT0Ms;
  alert.source = QStringLiteral("train@host:4242");
  alert.kind = QStringLiteral("nan");
  alert.rule = QStringLiteral("nan");
  alert.key = QStringLiteral("loss.mean");
  alert.message = QStringLiteral("loss.mean became NaN");
  dashboard.alertCentre().raise(alert);
  ASSERT_EQ(told.size(), 1U);
  EXPECT_EQ(told[0].message, alert.message);
  ASSERT_EQ(dashboard.alertCentre().alerts().rowCount(), 1);
  EXPECT_EQ(dashboard.alertCentre().alerts().entry(0)->rule, QStringLiteral("nan"));
  EXPECT_EQ(dashboard.alertCentre().alerts().unseen(), 1U);
}

// `livemon /etc/passwd.mcap`, or File → Open of a file that is no recording: the error is
// reported and the dashboard stays as it was, empty, live, or replaying the recording before.
TEST_F(DashboardTest, ARefusedFileLeavesTheDashboardAsItWasBefore) {
  const QString notARecording = dir_.filePath(QStringLiteral("passwd.mcap"));
  {
    std::ofstream out(notARecording.toStdString());
    out << "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
  }
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  dashboard.start();
  QSignalSpy replays(&dashboard.replays(), &ReplayController::replayChanged);
  QSignalSpy reported(&dashboard, &Dashboard::errorReported);

  ReplaySession* refused = dashboard.replays().openRecording(notARecording);
  ASSERT_TRUE(reported.wait(static_cast<int>(std::chrono::milliseconds(test::kDeadline).count())));
  EXPECT_FALSE(refused->isOpen());
  EXPECT_EQ(dashboard.replays().replay(), nullptr);
  EXPECT_FALSE(dashboard.replays().playheadMs().has_value());
  EXPECT_EQ(replays.count(), 0);
  EXPECT_TRUE(dashboard.lastError().contains(QStringLiteral("passwd.mcap"))) << dashboard.lastError().toStdString();

  // Live and replaying: a refused second file leaves the first on the timeline with its data.
  deliverLive(dashboard, 7.0);
  ReplaySession* first = openReplay(dashboard, recording_);
  ASSERT_EQ(dashboard.replays().replay(), first);
  replays.clear();
  reported.clear();
  dashboard.replays().openRecording(notARecording);
  ASSERT_TRUE(reported.wait(static_cast<int>(std::chrono::milliseconds(test::kDeadline).count())));
  dashboard.refreshNow();
  EXPECT_EQ(dashboard.replays().replay(), first);
  EXPECT_TRUE(first->isOpen());
  EXPECT_EQ(replays.count(), 0);
  EXPECT_EQ(dashboard.registry().sourceCount(), 2U);
  EXPECT_NE(lossOf(dashboard, QStringLiteral("train")), nullptr);
  EXPECT_NE(lossOf(dashboard, QStringLiteral("live")), nullptr);
  EXPECT_EQ(dashboard.eventLog().rowCount(), kEvents + 1);
}

TEST_F(DashboardTest, RanksDrawnALineEachAtFullSizeCountAgainstTheLineLimit) {
  DashboardOptions grouped = options();
  Dashboard groupedDashboard(grouped);
  EXPECT_EQ(groupedDashboard.ingest().limits().maxRankedSeries, grouped.limits.maxRankedSeries);
  EXPECT_GT(groupedDashboard.ingest().limits().maxRankedSeries, 0U);

  DashboardOptions lines = options();
  lines.groupRanks = false;
  Dashboard linesDashboard(lines);
  EXPECT_EQ(linesDashboard.ingest().limits().maxRankedSeries, 0U);
  EXPECT_EQ(linesDashboard.ingest().limits().maxSeries, lines.limits.maxSeries);
}

}  // namespace
}  // namespace livemon::ui
