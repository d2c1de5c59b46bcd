// The dashboard's Record, through the ingest path: a peer inventing event names cannot end it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <QSignalSpy>
#include <QTemporaryDir>

#include <livemon/transport/recording.h>
#include <livemon/ui/ingest/ingest_worker.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;

TEST(IngestRecording, KeepsRecordingPastTheEventNameLimit) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const std::string path = dir.filePath(QStringLiteral("names.mcap")).toStdString();
  IngestWorker::Options options;  // no endpoints: a synthetic feed only
  IngestWorker worker(options);
  QSignalSpy failed(&worker, &IngestWorker::recordingFailed);
  worker.startRecording(path);

  // A recording holds 65535 event names; the flood brings 100 more.
  const auto source = makeSource("flood", 1);
  std::vector<transport::ReceivedEvent> events;
  for (std::size_t i = 0; i < transport::kMaxRecordingChannels + 100; ++i) {
    events.push_back(received(source, Event{"name-" + std::to_string(i), atMs(static_cast<double>(i)), {}}));
    if (events.size() == 4096) {
      worker.deliver(events);
      events.clear();
      worker.staging().take();  // as the GUI does, so the staging buffer does not fill up
    }
  }
  worker.deliver(events);
  events.clear();
  events.push_back(received(source, Event{"name-7", atMs(1e9), {}}));
  worker.deliver(events);

  const IngestWorker::RecordingStatus status = worker.recordingStatus();
  EXPECT_TRUE(status.active) << "the recording ended";
  EXPECT_EQ(status.events, transport::kMaxRecordingChannels + 1);
  EXPECT_EQ(status.notRecorded, 100u) << "the count the Record label shows";
  EXPECT_EQ(failed.count(), 0);
  worker.stopRecording();

  transport::RecordingReader reader(path);
  EXPECT_TRUE(reader.indexed());
  EXPECT_EQ(reader.summary().channels.size(), transport::kMaxRecordingChannels);
  EXPECT_EQ(reader.summary().messageCount, transport::kMaxRecordingChannels + 1);
}

}  // namespace
}  // namespace livemon::ui
