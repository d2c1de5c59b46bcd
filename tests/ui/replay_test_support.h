// What the replay tests share: recordings written here (a Stat window every 500 ms from "train",
// and one with ranges), one live window, and a fixture that opens a recording in a Dashboard and
// checks that it shows exactly the events of a stretch.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <QSignalSpy>
#include <QTemporaryDir>

#include <livemon/clock.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/replay/replay_session.h>

#include "ui_test_support.h"

namespace livemon::ui::test {

inline constexpr double kT0Ms = 1'700'000'000'000.0;
inline constexpr int kEvents = 361;          // one every 500 ms: 180 s
inline constexpr int64_t kSpacingNs = 500'000'000;
inline constexpr int64_t kT0Ns = static_cast<int64_t>(kT0Ms) * 1'000'000;

inline int64_t eventNs(int i) { return kT0Ns + i * kSpacingNs; }

// Records `event` as `source` sent it, received when it happened, the `sequence`th of its source.
inline void recordAsReceived(transport::RecordingWriter& writer, const std::shared_ptr<const transport::SourceInfo>& source,
                             Event event, uint64_t sequence) {
  transport::ReceivedEvent received = test::received(source, std::move(event));
  received.sequence = sequence;
  received.receivedAt = received.event.timestamp;
  transport::recordEvent(writer, received);
}

// A Stat event per 500 ms from "train" with loss.mean = i, received when it happened, in small
// chunks so the index has many entries.
inline void writeRecording(const std::string& path, int events = kEvents) {
  transport::RecordingWriterOptions options;
  options.chunkBytes = 2048;
  transport::RecordingWriter writer(path, options);
  const auto source = makeSource("train", 4242, std::nullopt, kT0Ms);
  for (int i = 0; i < events; ++i) {
    transport::ReceivedEvent event =
        received(source, Event{std::string(kStatEventName), atMs(kT0Ms + 500.0 * i), {{"loss.mean", static_cast<double>(i)}}});
    event.sequence = static_cast<uint64_t>(i);
    event.receivedAt = event.event.timestamp;
    transport::recordEvent(writer, event);
  }
  writer.close();
}

// Twenty Stat windows, 500 ms apart, from "train" (pid `pid`): loss, as the live run sends it too,
// accuracy, which only this recording has, and the range "forward", slower than the live run's.
inline void writeRecordingWithRanges(const std::string& path, int64_t pid = 4242) {
  transport::RecordingWriter writer(path);
  const auto source = makeSource("train", pid, std::nullopt, kT0Ms);
  for (int i = 0; i < 20; ++i) {
    std::unordered_map<std::string, DataValue> data{{"loss.mean", static_cast<double>(i)}, {"accuracy.mean", 0.5}};
    addRangeWindow(data, "forward", {10, 40.0, 39.0, 75.0, 80.0});
    transport::ReceivedEvent event =
        received(source, Event{std::string(kStatEventName), atMs(kT0Ms + 500.0 * i), std::move(data)});
    event.sequence = static_cast<uint64_t>(i);
    event.receivedAt = event.event.timestamp;
    transport::recordEvent(writer, event);
  }
  writer.close();
}

// One Stat window from a live publisher "live": loss and the range "forward".
inline void deliverLiveWindow(Dashboard& dashboard) {
  std::unordered_map<std::string, DataValue> data{{"loss.mean", 7.0}};
  addRangeWindow(data, "forward", {10, 4.0, 3.9, 7.5, 8.0});
  std::vector<transport::ReceivedEvent> events{received(
      makeSource("live", 77, std::nullopt, kT0Ms), Event{std::string(kStatEventName), atMs(kT0Ms), std::move(data)})};
  dashboard.ingest().deliver(events);
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    recording_ = dir_.filePath(QStringLiteral("run.mcap"));
    writeRecording(recording_.toStdString());
    // These tests read the recordings' Stat windows in the log, which a window hides by default.
    DashboardSettings(options().settingsFile).setLogShowsStatWindows(true);
  }

  DashboardOptions options() {
    DashboardOptions result;
    result.exactEndpoints = true;  // no publishers: only what the test feeds
    result.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
    result.clock = &clock_;
    return result;
  }

  // Opens the test's recording on the timeline and waits until its first window is shown.
  ReplaySession* openReplay(Dashboard& dashboard, const QString& path) {
    ReplaySession* session = dashboard.replays().openRecording(path);
    QSignalSpy opened(session, &ReplaySession::opened);
    EXPECT_TRUE(opened.wait(static_cast<int>(std::chrono::milliseconds(kDeadline).count())));
    settle(dashboard, *session);
    return session;
  }

  static void settle(Dashboard& dashboard, ReplaySession& session) {
    ASSERT_TRUE(waitFor([&] { return !session.busy(); }));
    dashboard.refreshNow();
  }

  static const SeriesEntry* lossSeries(const Dashboard& dashboard) {
    for (SeriesId id = 0; id < dashboard.registry().seriesIdEnd(); ++id) {
      const SeriesEntry* series = dashboard.registry().series(id);
      if (series != nullptr && series->stat == QLatin1String("loss")) return series;
    }
    return nullptr;
  }

  // The loss series shows exactly events first..last (by index), and the log every event up to
  // last, as many as it holds (the recording's events are all Stat windows, which the log keeps
  // in a quarter of its rows).
  static void expectShows(Dashboard& dashboard, int first, int last) {
    const auto kept = EventLogModel::statWindowCapacity(dashboard.eventLog().capacity());
    EXPECT_EQ(dashboard.eventLog().rowCount(), std::min<int>(last + 1, static_cast<int>(kept)));
    const SeriesEntry* loss = lossSeries(dashboard);
    ASSERT_NE(loss, nullptr);
    EXPECT_EQ(loss->store.firstX(), kT0Ms + 500.0 * first);
    EXPECT_EQ(loss->store.lastX(), kT0Ms + 500.0 * last);
    EXPECT_EQ(loss->store.lastY(), static_cast<double>(last));
  }

  QTemporaryDir dir_;
  QString recording_;
  ManualClock clock_;
};

}  // namespace livemon::ui::test
