// A recording on the timeline, driven through the Dashboard without a widget: seeking, stepping
// and playing with a manual clock show exactly the events up to the playhead, seeking back reads
// only the visible window's chunks and the log's rows before it, events stamped after the
// playhead, times beyond the timeline's range, damaged files, and closing with batches staged.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <QSignalSpy>

#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/model/ranges_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/replay/replay_session.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::eventNs;
using test::kEvents;
using test::kT0Ms;
using test::ReplayTest;

TEST_F(ReplayTest, StepMovesBySecondsAndSpeedIsClamped) {
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  dashboard.start();
  ReplaySession* session = openReplay(dashboard, recording_);
  session->seek(eventNs(10));
  settle(dashboard, *session);
  session->step(2);  // 2 s forward: four more events
  settle(dashboard, *session);
  EXPECT_EQ(session->playheadNs(), eventNs(14));
  expectShows(dashboard, 0, 14);
  session->step(-3);
  settle(dashboard, *session);
  EXPECT_EQ(session->playheadNs(), eventNs(8));
  expectShows(dashboard, 0, 8);

  session->setSpeed(1000.0);
  EXPECT_EQ(session->speed(), ReplaySession::kMaxSpeed);
  session->setSpeed(0.01);
  EXPECT_EQ(session->speed(), ReplaySession::kMinSpeed);
  session->setSpeed(4.0);
  EXPECT_EQ(session->speed(), 4.0);
}

// Receive times are unsigned in a recording: one recorded by a machine whose clock read before
// 1970 (or crafted) holds times beyond what the timeline can place. The timeline still runs
// forward from its start, and seeking, stepping and playing stay within it.
TEST_F(ReplayTest, ATimeBeyondTheTimelinesRangeIsHeldAtItsEnd) {
  const QString path = dir_.filePath(QStringLiteral("clock.mcap"));
  {
    transport::RecordingWriter writer(path.toStdString());
    const auto source = test::makeSource("train", 4242, std::nullopt, kT0Ms);
    for (int i = 0; i < 3; ++i) {
      transport::ReceivedEvent event = test::received(
          source, Event{std::string(kStatEventName), test::atMs(kT0Ms + 500.0 * i), {{"loss.mean", double(i)}}});
      event.sequence = static_cast<uint64_t>(i);
      // The last one was received "1 ns before 1970": 2^64 - 1 in the file.
      event.receivedAt = i < 2 ? event.event.timestamp : std::chrono::system_clock::time_point(-1ns);
      transport::recordEvent(writer, event);
    }
    writer.close();
  }
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  dashboard.start();
  ReplaySession* session = openReplay(dashboard, path);
  EXPECT_EQ(session->info().startNs, eventNs(0));
  EXPECT_EQ(session->info().endNs, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(session->playheadNs(), session->info().endNs);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 3);

  session->seek(eventNs(1));
  settle(dashboard, *session);
  EXPECT_EQ(session->playheadNs(), eventNs(1));
  EXPECT_EQ(dashboard.eventLog().rowCount(), 2);
  for (int i = 0; i < 5; ++i) {  // far beyond the end, past what int64 holds: lands on it
    session->step(std::numeric_limits<int>::max());
    settle(dashboard, *session);
  }
  EXPECT_EQ(session->playheadNs(), session->info().endNs);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 3);
  for (int i = 0; i < 5; ++i) {
    session->step(std::numeric_limits<int>::min());
    settle(dashboard, *session);
  }
  EXPECT_EQ(session->playheadNs(), session->info().startNs);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 1);
}

TEST_F(ReplayTest, PlayAdvancesByTheClockTimesTheSpeedAndStopsAtTheEnd) {
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  dashboard.start();
  ReplaySession* session = openReplay(dashboard, recording_);
  QSignalSpy playing(session, &ReplaySession::playingChanged);
  session->setPlaying(true);  // at the end: starts over
  settle(dashboard, *session);
  EXPECT_EQ(session->playheadNs(), eventNs(0));
  expectShows(dashboard, 0, 0);

  session->setSpeed(2.0);
  clock_.advance(5s);  // 10 s of recording: 20 events more
  dashboard.refreshNow();
  settle(dashboard, *session);
  EXPECT_EQ(session->playheadNs(), eventNs(20));
  expectShows(dashboard, 0, 20);

  session->setSpeed(64.0);
  clock_.advance(10s);  // 640 s: past the end
  dashboard.refreshNow();
  settle(dashboard, *session);
  EXPECT_EQ(session->playheadNs(), eventNs(kEvents - 1));
  EXPECT_FALSE(session->isPlaying());
  expectShows(dashboard, 0, kEvents - 1);
  ASSERT_GE(playing.count(), 2);
  EXPECT_EQ(playing.last().at(0).toBool(), false);
}

TEST_F(ReplayTest, SeekingBackReadsOnlyTheChunksOfTheVisibleWindowAndTheLogBeforeIt) {
  DashboardOptions smallLog = options();
  smallLog.logCapacity = 60;
  Dashboard dashboard(smallLog);
  dashboard.replays().setTimeRange(TimeRange::LastMinute);
  dashboard.start();
  ReplaySession* session = openReplay(dashboard, recording_);
  const uint64_t chunks = session->info().chunks;
  ASSERT_GE(chunks, 20U);  // the test means something only with many chunks
  // At the end: the last minute, both ends included: events 240..360.
  expectShows(dashboard, 240, kEvents - 1);

  const uint64_t chunksBefore = session->chunksRead();
  const uint64_t messagesBefore = session->messagesRead();
  session->seek(eventNs(250));
  settle(dashboard, *session);
  expectShows(dashboard, 130, 250);  // 60 s before the playhead
  // The window's events, and the log's 60 rows before it (capacity 60).
  EXPECT_EQ(session->messagesRead() - messagesBefore, 121U + 60U);
  EXPECT_LT(session->chunksRead() - chunksBefore, chunks);
}

TEST_F(ReplayTest, ATruncatedFileShowsWhatIsReadableAndAGarbledOneFailsNamingTheOffset) {
  const std::filesystem::path original = recording_.toStdString();
  const auto size = std::filesystem::file_size(original);
  const QString truncated = dir_.filePath(QStringLiteral("truncated.mcap"));
  std::filesystem::copy_file(original, truncated.toStdString());
  std::filesystem::resize_file(truncated.toStdString(), size / 2);

  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  dashboard.start();
  ReplaySession* session = openReplay(dashboard, truncated);
  EXPECT_FALSE(session->info().indexed);
  EXPECT_GT(session->info().messages, 0U);
  EXPECT_LT(session->info().messages, static_cast<uint64_t>(kEvents));
  ASSERT_FALSE(session->info().problems.isEmpty());
  EXPECT_TRUE(session->info().problems.front().startsWith(QStringLiteral("byte ")));
  EXPECT_EQ(dashboard.eventLog().rowCount(), static_cast<int>(session->info().messages));

  const QString garbled = dir_.filePath(QStringLiteral("garbled.mcap"));
  {
    std::ofstream out(garbled.toStdString(), std::ios::binary);
    out << "\x89MCAP0\r\n" << std::string(64, '\x5a');
  }
  ReplaySession* bad = dashboard.replays().openRecording(garbled);
  QSignalSpy failed(bad, &ReplaySession::openFailed);
  ASSERT_TRUE(failed.wait(30'000));
  const QString message = failed.front().at(0).toString();
  EXPECT_TRUE(message.contains(QStringLiteral("garbled.mcap"))) << message.toStdString();
  EXPECT_TRUE(message.contains(QStringLiteral("byte 8"))) << message.toStdString();
  EXPECT_EQ(dashboard.lastError(), message);
  EXPECT_FALSE(bad->isOpen());
}

// Closing a replay whose reads were staged but not yet applied (no refresh came between): what it
// staged is applied and removed with it, so none of its sources, series or log rows turn up
// after, while the live source stays.
TEST_F(ReplayTest, ClosingAReplayDropsWhatItStagedButNoRefreshApplied) {
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  std::vector<transport::ReceivedEvent> live{
      test::received(test::makeSource("live", 77, std::nullopt, kT0Ms),
                     Event{std::string(kStatEventName), test::atMs(kT0Ms), {{"loss.mean", 7.0}}})};
  dashboard.ingest().deliver(live);
  dashboard.refreshNow();
  ASSERT_EQ(dashboard.registry().sourceCount(), 1U);

  ReplaySession* session = dashboard.replays().openRecording(recording_);
  QSignalSpy opened(session, &ReplaySession::opened);
  ASSERT_TRUE(opened.wait(30'000));
  // Without processing events, so that the read's loaded() (which refreshes) is not delivered:
  // the recording's batches stay staged.
  const auto deadline = std::chrono::steady_clock::now() + test::kDeadline;
  while (session->busy() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_FALSE(session->busy());
  ASSERT_EQ(dashboard.registry().sourceCount(), 1U);  // nothing of the recording applied yet

  dashboard.replays().closeReplay();
  EXPECT_EQ(dashboard.replays().replay(), nullptr);
  EXPECT_EQ(dashboard.registry().sourceCount(), 1U);
  QCoreApplication::processEvents();  // a loaded() still queued finds its session gone
  dashboard.refreshNow();

  ASSERT_EQ(dashboard.registry().sourceCount(), 1U);
  EXPECT_EQ(dashboard.registry().source(0)->label, QStringLiteral("live"));
  std::size_t series = 0;
  for (SeriesId id = 0; id < dashboard.registry().seriesIdEnd(); ++id) {
    if (const SeriesEntry* entry = dashboard.registry().series(id)) {
      EXPECT_EQ(entry->source, 0U);
      ++series;
    }
  }
  EXPECT_EQ(series, 1U);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 1);
}

// A replayed range is as old as it was at the playhead: an hour of wall time later it is not
// dimmed as stopped, while one the playhead has left behind is.
TEST_F(ReplayTest, AReplayedRangeIsDimmedByThePlayheadNotTheWallClock) {
  const QString path = dir_.filePath(QStringLiteral("ranges.mcap"));
  test::writeRecordingWithRanges(path.toStdString());
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  openReplay(dashboard, path);
  clock_.advance(1h);
  dashboard.rangesModel().publish();
  ASSERT_EQ(dashboard.rangesModel().rowCount(), 1);
  EXPECT_FALSE(dashboard.rangesModel().isStale(0));
}

// The texts of a column of the log, oldest first.
QStringList logColumn(Dashboard& dashboard, int column) {
  QStringList texts;
  EventLogModel& log = dashboard.eventLog();
  for (int row = 0; row < log.rowCount(); ++row) texts << log.index(row, column).data().toString();
  return texts;
}

// The log shows the recording's events up to the playhead as far back as it holds, not only the
// charts' time range before it, and seeks with the playhead; the charts keep to their range.
TEST_F(ReplayTest, TheLogShowsTheEventsUpToThePlayheadAsFarBackAsItHoldsAndSeeksWithIt) {
  DashboardOptions options400 = options();
  options400.logCapacity = 400;  // 100 Stat windows, and the recording's events are all Stat windows
  Dashboard dashboard(options400);
  dashboard.replays().setTimeRange(TimeRange::LastMinute);
  ReplaySession* session = openReplay(dashboard, recording_);
  // At the end: the last 100 events in the log, the last minute (events 240..360) in the chart.
  expectShows(dashboard, 240, kEvents - 1);
  QStringList data = logColumn(dashboard, EventLogModel::DataColumn);
  ASSERT_EQ(data.size(), 100);
  EXPECT_EQ(data.front(), QStringLiteral("loss.mean=261"));
  EXPECT_EQ(data.back(), QStringLiteral("loss.mean=360"));

  // Back near the start: everything up to the playhead, fewer than the log holds.
  session->seek(eventNs(50));
  settle(dashboard, *session);
  expectShows(dashboard, 0, 50);
  data = logColumn(dashboard, EventLogModel::DataColumn);
  ASSERT_EQ(data.size(), 51);
  EXPECT_EQ(data.front(), QStringLiteral("loss.mean=0"));

  // Forward again, with a seek: the log is rebuilt up to the new playhead, in order.
  session->seek(eventNs(300));
  settle(dashboard, *session);
  expectShows(dashboard, 180, 300);
  data = logColumn(dashboard, EventLogModel::DataColumn);
  ASSERT_EQ(data.size(), 100);
  for (int i = 0; i < data.size(); ++i) EXPECT_EQ(data[i], QStringLiteral("loss.mean=%1").arg(201 + i));
}

// A publisher whose clock runs ahead of the recorder's: its event received at 5 s is stamped 7 s.
// The playhead is the one time base: it is shown once the playhead reaches 7 s, not before (where
// it would lie beyond the charts' right edge), and at the end whatever its stamp.
TEST_F(ReplayTest, AnEventStampedAfterThePlayheadIsShownOnceThePlayheadReachesIt) {
  const QString path = dir_.filePath(QStringLiteral("ahead.mcap"));
  {
    transport::RecordingWriter writer(path.toStdString());
    const auto source = test::makeSource("train", 4242, std::nullopt, kT0Ms);
    for (int i = 0; i < 20; ++i) {
      const auto write = [&](const std::string& name, double stampMs, double receivedMs, const std::string& key) {
        transport::ReceivedEvent event =
            test::received(source, Event{name, test::atMs(stampMs), {{key, static_cast<double>(i)}}});
        event.receivedAt = test::atMs(receivedMs);
        transport::recordEvent(writer, event);
      };
      write(std::string(kStatEventName), kT0Ms + 500.0 * i, kT0Ms + 500.0 * i, "loss.mean");
      if (i == 10) write("ahead", kT0Ms + 7000.0, kT0Ms + 5000.0, "value");
      if (i == 18) write("beyond", kT0Ms + 60'000.0, kT0Ms + 9000.0, "value");  // after the end
    }
    writer.close();
  }
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  ReplaySession* session = openReplay(dashboard, path);
  const auto names = [&] { return logColumn(dashboard, EventLogModel::NameColumn); };
  // At the end everything is shown.
  EXPECT_TRUE(names().contains(QStringLiteral("ahead")));
  EXPECT_TRUE(names().contains(QStringLiteral("beyond")));

  session->seek(eventNs(12));  // 6 s: received, but stamped 7 s
  settle(dashboard, *session);
  EXPECT_EQ(names().size(), 13);
  EXPECT_FALSE(names().contains(QStringLiteral("ahead")));
  session->step(1);  // 7 s
  settle(dashboard, *session);
  EXPECT_EQ(names().size(), 16);
  EXPECT_EQ(names()[13], QStringLiteral("ahead"));  // in the order received
  EXPECT_FALSE(names().contains(QStringLiteral("beyond")));
}

}  // namespace
}  // namespace livemon::ui
