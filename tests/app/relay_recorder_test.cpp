// RelayRecorder: what `livemonctl relay --record DIR` writes, a file per run, rotated by size and
// by time (on an injected clock), each file a readable recording.
#include <livemonctl/relay_recorder.h>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include <livemon/clock.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>

#include "test_support.h"

namespace livemon::livemonctl {
namespace {

using namespace std::chrono_literals;
using transport::WireMessage;

WireMessage message(uint64_t sequence, std::size_t events, std::size_t bytesEach = 8, std::string run = "train") {
  WireMessage m;
  m.source.run = std::move(run);
  m.source.host = "node1";
  m.source.pid = 42;
  m.source.rank = 3;
  m.source.worldSize = 8;
  m.source.localRank = 1;
  m.source.instanceId = 9;
  m.name = "step";
  m.sequence = sequence;
  for (std::size_t i = 0; i < events; ++i) {
    m.events.push_back(transport::test::makeEvent("step", {{"blob", std::string(bytesEach, 'a' + i % 26)}}));
  }
  return m;
}

// Hands `m` to the recorder as the relay does: its topic and payload as they arrived, borrowed.
void write(RelayRecorder& recorder, std::string_view topic, const WireMessage& m) {
  const std::string payload = m.kind == transport::MessageKind::Events
                                  ? transport::encodeEventsPayload(m.source, m.sequence, m.name, m.events)
                                  : transport::encodeHeartbeatPayload(m.kind, m.source, m.sequence, m.counters);
  transport::EventBatchDecoder decoder;
  std::string error;
  const transport::DecodeStatus status =
      decoder.decode(topic, payload, [&](const transport::EventBatchView& batch) { recorder.write(batch); }, &error);
  EXPECT_EQ(status, transport::DecodeStatus::Ok) << error;
}

// Events in `path`, each decoded back with its source and sequence number; `messages` counts the
// MCAP messages they came in.
std::vector<transport::ReceivedEvent> readBack(const std::filesystem::path& path, std::size_t* messages = nullptr) {
  transport::RecordingReader reader(path.string());
  transport::RecordedEventDecoder decoder(path.string());
  std::vector<transport::ReceivedEvent> events;
  std::vector<transport::ReceivedEvent> batch;
  reader.forEachMessage([&](const transport::RecordedMessage& recorded) {
    std::string error;
    EXPECT_TRUE(decoder.decode(recorded, batch, &error)) << error;
    for (auto& event : batch) events.push_back(std::move(event));
    if (messages) ++*messages;
    return true;
  });
  EXPECT_TRUE(reader.problems().empty());
  return events;
}

TEST(RelayRecorder, RotatesAfterTheTimeAndKeepsEveryEventWithItsSource) {
  transport::test::TempDir dir;
  ManualClock clock;
  RelayRecorderOptions options;
  options.dir = dir.path() / "new" / "dir";
  options.rotateAfter = 60min;
  options.closeIdleAfter = 2h;  // a run that pauses longer than that gets a new file anyway
  options.clock = &clock;
  RelayRecorder recorder(options);
  write(recorder, "step", message(0, 2));
  clock.advance(59min);
  write(recorder, "step", message(2, 1));
  ASSERT_EQ(recorder.files().size(), 1u) << "not yet an hour";
  clock.advance(1min);
  write(recorder, "step", message(3, 1));
  WireMessage heartbeat = message(0, 0);
  heartbeat.kind = transport::MessageKind::Heartbeat;
  write(recorder, std::string(transport::kHeartbeatTopic), heartbeat);
  recorder.close();
  write(recorder, "step", message(4, 1));  // after close: ignored

  ASSERT_EQ(recorder.files().size(), 2u);
  EXPECT_EQ(recorder.eventCount(), 4u);
  EXPECT_TRUE(recorder.failure().empty());
  EXPECT_EQ(recorder.files()[0].filename().string().rfind("train-20231114T", 0), 0u) << recorder.files()[0];
  EXPECT_NE(recorder.files()[0], recorder.files()[1]);
  std::size_t messages = 0;
  const auto first = readBack(recorder.files()[0], &messages);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(messages, 2u) << "each message as it arrived: a batch of two, then one";
  EXPECT_EQ(first[1].sequence, 1u);
  EXPECT_EQ(first[2].sequence, 2u);
  EXPECT_EQ(first[0].event.name, "step");
  EXPECT_EQ(first[0].source->rank, 3);
  EXPECT_EQ(first[0].source->worldSize, 8) << "the recording keeps the whole identity";
  EXPECT_EQ(first[0].source->localRank, 1);
  EXPECT_EQ(first[0].source->run, "train");
  const auto second = readBack(recorder.files()[1]);
  ASSERT_EQ(second.size(), 1u) << "the heartbeat is not recorded";
  EXPECT_EQ(second[0].sequence, 3u);
}

TEST(RelayRecorder, RotatesOnceAFileHoldsTheSize) {
  transport::test::TempDir dir;
  ManualClock clock;
  RelayRecorderOptions options;
  options.dir = dir.path();
  options.rotateBytes = 1;  // any complete chunk
  options.clock = &clock;
  RelayRecorder recorder(options);
  // Enough to fill a chunk, so bytes reach the file.
  for (uint64_t i = 0; i < 40; ++i) write(recorder, "step", message(i * 4, 4, 16 * 1024));
  recorder.close();
  ASSERT_GE(recorder.files().size(), 2u);
  std::size_t events = 0;
  for (const auto& file : recorder.files()) events += readBack(file).size();
  EXPECT_EQ(events, 160u);
}

// Not thread-safe: for a test's thread while no other opens files.
// While it lives, this process may open no more files (EMFILE), as when idle connections have
// used up a relay's descriptors.
class NoDescriptorsLeft {
 public:
  NoDescriptorsLeft() {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit limit = saved_;
    limit.rlim_cur = 0;  // no new descriptor at all; those open stay usable
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  ~NoDescriptorsLeft() { setrlimit(RLIMIT_NOFILE, &saved_); }
  NoDescriptorsLeft(const NoDescriptorsLeft&) = delete;
  NoDescriptorsLeft& operator=(const NoDescriptorsLeft&) = delete;

 private:
  rlimit saved_{};
};

// A rotation that fails (no descriptor left) is tried again retryAfter later, so the rest of the
// run is recorded, in a new file; what came in between is counted.
TEST(RelayRecorder, ARotationThatFailsIsRetriedAndTheRestOfTheRunRecorded) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizer runtime opens files itself (UBSan's type checks read the process's maps), so
  // with no descriptor left it reports a false "invalid vptr" before the recorder is reached.
  GTEST_SKIP() << "needs a process whose sanitizer runtime does not open files";
#endif
  transport::test::TempDir dir;
  ManualClock clock;
  RelayRecorderOptions options;
  options.dir = dir.path();
  options.rotateAfter = 1min;
  options.retryAfter = 1s;
  options.clock = &clock;
  RelayRecorder recorder(options);
  write(recorder, "step", message(0, 1));
  clock.advance(1min);
  {
    NoDescriptorsLeft exhausted;
    write(recorder, "step", message(1, 1));  // the rotation's new file cannot be opened
  }
  EXPECT_NE(recorder.failure(), "") << "the failure is reported";
  write(recorder, "step", message(2, 1));  // before the retry
  clock.advance(1s);
  write(recorder, "step", message(3, 1));
  write(recorder, "step", message(4, 1));
  recorder.close();
  EXPECT_EQ(recorder.eventCount(), 3u);
  EXPECT_EQ(recorder.unrecordedCount(), 2u);
  ASSERT_EQ(recorder.files().size(), 2u);
  EXPECT_EQ(readBack(recorder.files()[0]).size(), 1u);
  const auto rest = readBack(recorder.files()[1]);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].sequence, 3u);
  EXPECT_EQ(rest[1].sequence, 4u);
}

// Issue 31: a cluster's recordings are a folder of runs. Each run's events go to a file of its own,
// named by the run and the time it started.
TEST(RelayRecorder, WritesAFilePerRunNamedByRunAndStartTime) {
  transport::test::TempDir dir;
  ManualClock clock;
  RelayRecorderOptions options;
  options.dir = dir.path();
  options.clock = &clock;
  RelayRecorder recorder(options);
  write(recorder, "step", message(0, 2, 8, "lr-1e-3"));
  clock.advance(2s);
  write(recorder, "step", message(0, 1, 8, "lr-3e-4"));
  write(recorder, "step", message(2, 1, 8, "lr-1e-3"));
  recorder.close();
  ASSERT_EQ(recorder.files().size(), 2u);
  EXPECT_EQ(recorder.files()[0].filename(), "lr-1e-3-20231114T221320Z.mcap");
  EXPECT_EQ(recorder.files()[1].filename(), "lr-3e-4-20231114T221322Z.mcap");
  const auto first = readBack(recorder.files()[0]);
  ASSERT_EQ(first.size(), 3u);
  for (const auto& event : first) EXPECT_EQ(event.source->run, "lr-1e-3");
  EXPECT_EQ(readBack(recorder.files()[1]).size(), 1u);
}

TEST(RelayRecorder, ARunNameBecomesASafeBoundedFileName) {
  EXPECT_EQ(runFileStem("lr-1e-3_seed.2"), "lr-1e-3_seed.2");
  EXPECT_EQ(runFileStem(""), "run");
  EXPECT_EQ(runFileStem(".."), "_.");
  EXPECT_EQ(runFileStem("../../etc/passwd"), "_._.__etc_passwd");
  EXPECT_EQ(runFileStem("a/b\\c d\n"), "a_b_c_d_");
  EXPECT_EQ(runFileStem(".hidden"), "_hidden");
  EXPECT_EQ(runFileStem("r\xc3\xa9sum\xc3\xa9"), "r__sum__") << "bytes beyond ASCII too";
  EXPECT_EQ(runFileStem(std::string(5000, 'x')).size(), kMaxRunFileStemBytes);
}

// A peer that makes up run names gets at most maxOpenFiles files of their own at once; the runs
// beyond share one file until a run file is closed (here: idle), and nothing leaves the directory.
TEST(RelayRecorder, RunsBeyondTheOpenFilesShareOneFile) {
  transport::test::TempDir dir;
  ManualClock clock;
  RelayRecorderOptions options;
  options.dir = dir.path() / "rec";
  options.maxOpenFiles = 2;
  options.closeIdleAfter = 1min;
  options.clock = &clock;
  RelayRecorder recorder(options);
  for (const char* run : {"../a", "/b", "c", "d"}) write(recorder, "step", message(0, 1, 8, run));
  EXPECT_EQ(recorder.openFileCount(), 3u) << "two runs' own and the shared one";
  EXPECT_EQ(recorder.sharedCount(), 2u);
  ASSERT_EQ(recorder.files().size(), 3u);
  EXPECT_EQ(recorder.files()[2].filename().string().rfind("+shared-", 0), 0u) << recorder.files()[2];
  for (const auto& file : recorder.files()) EXPECT_EQ(file.parent_path(), options.dir) << file;

  // "c" goes on; "../a" and "/b" stop. A minute later their files are closed, and "d" gets one.
  clock.advance(50s);
  write(recorder, "step", message(1, 1, 8, "c"));
  clock.advance(20s);
  write(recorder, "step", message(1, 1, 8, "d"));
  EXPECT_EQ(recorder.files().size(), 4u);
  EXPECT_EQ(recorder.files()[3].filename().string().rfind("d-", 0), 0u) << recorder.files()[3];
  recorder.close();
  std::map<std::string, std::size_t> events;  // per run, over every file
  for (const auto& file : recorder.files()) {
    for (const auto& event : readBack(file)) ++events[event.source->run];
  }
  EXPECT_EQ(events, (std::map<std::string, std::size_t>{{"../a", 1}, {"/b", 1}, {"c", 2}, {"d", 2}}));
  EXPECT_EQ(recorder.eventCount(), 6u);
}

TEST(RelayRecorder, ADirectoryThatCannotBeCreatedIsAnError) {
  transport::test::TempDir dir;
  std::ofstream(dir.path() / "file") << "x";
  RelayRecorderOptions options;
  options.dir = dir.path() / "file" / "sub";
  EXPECT_THROW(RelayRecorder{options}, transport::RecordingError);
}

}  // namespace
}  // namespace livemon::livemonctl
