// livemonctl record, info, export and replay as separate processes, as a user runs them, including
// a recorder killed with SIGKILL and one that runs into a file-size limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <filesystem>
#include <random>
#include <fstream>
#include <sstream>

#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/subscriber.h>

#include "json_lines.h"
#include "mcap_builder.h"
#include "raw_subscriber.h"
#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::livemonctl {
namespace {

using namespace transport;

using namespace std::chrono_literals;
using test::ChildProcess;
using ::testing::HasSubstr;

// Logs `name` events carrying their index and `padding` random letters (which do not compress),
// until `done()`; returns how many.
int logUntil(const std::string& name, const std::function<bool()>& done, std::size_t padding = 16) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> letter('a', 'z');
  int i = 0;
  for (; !done(); ++i) {
    std::string pad(padding, ' ');
    for (char& c : pad) c = static_cast<char>(letter(rng));
    logEvent(Event{name, std::chrono::system_clock::now(), {{"i", int64_t{i}}, {"pad", std::move(pad)}}});
  }
  return i;
}

SubscriberCallbacks onEvent(std::function<void(ReceivedEvent&)> handle) {
  SubscriberCallbacks callbacks;
  callbacks.onEvent = std::move(handle);
  return callbacks;
}

// Events of `topic` in the complete chunks of `path` (a recording still being written), however
// they were batched.
uint64_t recorded(const std::string& path, const std::string& topic) {
  try {
    RecordingReader reader(path);
    RecordedEventDecoder decoder(path);
    std::vector<ReceivedEvent> batch;
    uint64_t n = 0;
    reader.forEachMessage([&](const RecordedMessage& m) {
      if (m.channel->topic == topic && decoder.decode(m, batch)) n += batch.size();
      return true;
    });
    return n;
  } catch (const RecordingError&) {
    return 0;  // not created yet
  }
}

class LivemonctlRecordingTest : public ::testing::Test {
 protected:
  std::string file(const std::string& name) const { return (dir_.path() / name).string(); }

  // Starts `livemonctl record` on the publisher's endpoint and waits until it hears the publisher.
  std::unique_ptr<ChildProcess> startRecorder(const std::string& output, const std::vector<std::string>& prefix = {}) {
    std::vector<std::string> argv = prefix;
    argv.insert(argv.end(), {livemonctlPath(), "record", publisher_.endpoints().front(), "-o", output});
    auto recorder = std::make_unique<ChildProcess>(argv);
    // The recorder says so when the first event of a source arrives; keep publishing until then.
    EXPECT_TRUE(recorder->readStderrUntil([&](const std::string& err) {
      logEvent(Event{"warmup", std::chrono::system_clock::now(), {}});
      return err.find("source joined") != std::string::npos;
    }));
    return recorder;
  }

  test::TempDir dir_;
  Publisher publisher_{test::testPublisherOptions()};
};

TEST_F(LivemonctlRecordingTest, RecordThenInfoAndExportSeeEveryEvent) {
  const std::string path = file("run.mcap");
  auto recorder = startRecorder(path);
  for (int i = 0; i < 300; ++i) {
    logEvent(Event{"marked", std::chrono::system_clock::now(), {{"i", int64_t{i}}, {"loss", 1.0 / (i + 1)}}});
  }
  // The recorder writes a chunk at least once a second; wait until all of them are in the file.
  ASSERT_TRUE(test::waitUntil([&] { return recorded(path, "marked") == 300; }));
  recorder->signal(SIGINT);
  ASSERT_EQ(recorder->exitCode(), 0) << recorder->err();
  EXPECT_THAT(recorder->out(), HasSubstr("wrote "));
  EXPECT_THAT(recorder->out(), HasSubstr(path));

  ChildProcess info({livemonctlPath(), "info", "--json", path});
  ASSERT_EQ(info.exitCode(), 0) << info.err();
  const test::Json summary = test::parseJson(info.out());
  EXPECT_EQ(summary["indexed"], true);
  test::Json markedChannel;
  for (const test::Json& channel : summary["channels"]) {
    if (channel["topic"] == "marked") markedChannel = channel;
  }
  EXPECT_EQ(markedChannel["encoding"], "msgpack") << info.out();
  EXPECT_EQ(markedChannel["events"], 300) << info.out();
  // Logged back to back, the events left the publisher in batches, which the recording keeps as
  // they arrived (docs/recording-format.md, version 2).
  EXPECT_LT(markedChannel["messages"], 300) << info.out();
  EXPECT_GE(markedChannel["messages"], 1) << info.out();
  EXPECT_EQ(summary["format"], 2) << info.out();
  ASSERT_FALSE(summary["sources"].empty()) << info.out();
  EXPECT_EQ(summary["sources"][0]["run"], "test");

  ChildProcess exported({livemonctlPath(), "export", path, "--format", "jsonl"});
  ASSERT_EQ(exported.exitCode(), 0) << exported.err();
  int marked = 0;
  for (const test::Json& event : test::parseJsonLines(exported.out())) marked += event["name"] == "marked";
  EXPECT_EQ(marked, 300);
}

TEST_F(LivemonctlRecordingTest, KilledRecorderLeavesAReadableFile) {
  const std::string path = file("killed.mcap");
  auto recorder = startRecorder(path);
  // Publish until at least two chunks have reached the file (a chunk is written at least once a
  // second), then kill the recorder without warning.
  logUntil("before-kill", [&] {
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    return !error && size > 4096 && RecordingReader(path).summary().chunks.size() >= 2;
  });
  recorder->signal(SIGKILL);
  recorder->wait();

  ChildProcess info({livemonctlPath(), "info", path});
  ASSERT_EQ(info.exitCode(), 0) << info.err();
  EXPECT_THAT(info.out(), HasSubstr("not closed cleanly"));
  EXPECT_THAT(info.out(), HasSubstr("before-kill"));
  RecordingReader reader(path);
  EXPECT_GE(reader.summary().chunks.size(), 2u);
  uint64_t read = 0;
  reader.forEachMessage([&](const RecordedMessage&) { return ++read, true; });
  EXPECT_EQ(read, reader.summary().messageCount);
}

TEST_F(LivemonctlRecordingTest, FileSizeLimitIsAClearErrorAndTheFileStaysReadable) {
  const std::string path = file("limited.mcap");
  // ulimit -f counts 512-byte blocks in /bin/sh: 64 KiB.
  ChildProcess recorder({"/bin/sh", "-c", std::string("ulimit -f 128 && exec ") + livemonctlPath() + " record " +
                                              publisher_.endpoints().front() + " -o " + path});
  std::optional<int> status;
  logUntil("filler", [&] {
    status = recorder.wait(1ms);
    return status.has_value();
  }, 512);
  ASSERT_TRUE(WIFEXITED(*status)) << "the recorder died from a signal instead of reporting the limit";
  EXPECT_EQ(WEXITSTATUS(*status), 1);
  EXPECT_THAT(recorder.err(), HasSubstr("limited.mcap"));
  EXPECT_THAT(recorder.err(), HasSubstr("File too large"));

  RecordingReader reader(path);
  EXPECT_FALSE(reader.indexed());
  EXPECT_GT(reader.summary().messageCount, 0u);
  EXPECT_LE(std::filesystem::file_size(path), 64u * 1024);
}

TEST_F(LivemonctlRecordingTest, ReplayRepublishesWithTheOriginalSources) {
  const std::string path = file("replay.mcap");
  {
    auto recorder = startRecorder(path);
    for (int i = 0; i < 50; ++i) logEvent(Event{"replayed", std::chrono::system_clock::now(), {{"i", int64_t{i}}}});
    ASSERT_TRUE(test::waitUntil([&] { return recorded(path, "replayed") == 50; }));
    recorder->signal(SIGINT);
    ASSERT_EQ(recorder->exitCode(), 0);
  }
  const std::string endpoint = "ipc://" + file("replay.sock");
  Subscriber subscriber(test::connectTo({endpoint}, 100000, {"replayed"}));
  ChildProcess replay({livemonctlPath(), "replay", path, "--publish", endpoint, "--speed", "20"});
  std::vector<int64_t> indexes;
  ASSERT_TRUE(test::pollUntil(
      subscriber, onEvent([&](ReceivedEvent& e) {
        EXPECT_EQ(*e.source, publisher_.identity());
        indexes.push_back(std::get<int64_t>(e.event.data.at("i")));
      }),
      [&] { return indexes.size() >= 50; }));
  EXPECT_EQ(replay.exitCode(), 0) << replay.err();
  ASSERT_EQ(indexes.size(), 50u);
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(indexes[static_cast<std::size_t>(i)], i);
  EXPECT_THAT(replay.out(), HasSubstr("replayed"));
}

// A replay serves subscribers as a training job does, so a peer cannot make it hold a huge
// subscription either (libzmq would keep some 64 bytes of memory per byte of it).
TEST_F(LivemonctlRecordingTest, ReplayRefusesAHugeSubscriptionFrame) {
  const std::string path = file("replay.mcap");
  {
    auto recorder = startRecorder(path);
    logEvent(Event{"replayed", std::chrono::system_clock::now(), {{"i", int64_t{0}}}});
    ASSERT_TRUE(test::waitUntil([&] { return recorded(path, "replayed") == 1; }));
    recorder->signal(SIGINT);
    ASSERT_EQ(recorder->exitCode(), 0);
  }
  ChildProcess replay({livemonctlPath(), "replay", path, "--publish", "tcp://127.0.0.1:*", "--loop"});
  std::string endpoint;
  ASSERT_TRUE(replay.readStdoutUntil([&](const std::string& out) {
    const std::size_t at = out.find(" on tcp://");
    const std::size_t end = at == std::string::npos ? at : out.find(' ', at + 4);
    if (end == std::string::npos) return false;
    endpoint = out.substr(at + 4, end - at - 4);
    return true;
  })) << replay.err();

  test::RawSubscriber hostile(endpoint);
  ASSERT_TRUE(hostile.open());
  EXPECT_FALSE(hostile.subscribeHuge(8 * 1024 * 1024)) << "the replay took the whole frame";

  Subscriber subscriber(test::connectTo({endpoint}, 1000, {"replayed"}));
  uint64_t received = 0;
  EXPECT_TRUE(test::pollUntil(subscriber, onEvent([&](ReceivedEvent&) { ++received; }), [&] { return received > 0; }))
      << "a well-behaved subscriber still receives the replay";
  replay.signal(SIGINT);
  EXPECT_EQ(replay.exitCode(), 0) << replay.err();
}

TEST_F(LivemonctlRecordingTest, RecorderKeepsRecordingPastTheEventNameLimit) {
  // A recording holds at most 65535 event names (MCAP channel ids are 16 bits). A peer sending
  // more must not end the recording: the rest is counted, and known names are still recorded.
  PublisherOptions options = test::testPublisherOptions();
  options.runName = "flood";
  options.slowSubscriber = SlowSubscriberPolicy::WaitForSlowest;  // nothing lost on the way
  Publisher flood(options);
  const std::string path = file("names.mcap");
  ChildProcess recorder({livemonctlPath(), "record", flood.endpoints().front(), "-o", path});
  ASSERT_TRUE(recorder.readStderrUntil([&](const std::string& err) {
    logEvent(Event{"warmup", std::chrono::system_clock::now(), {}});
    return err.find("source joined: flood") != std::string::npos;
  }));
  uint64_t logged = flood.publishedCount() + flood.droppedCount();
  auto logPaced = [&](const std::string& name) {
    logEvent(Event{name, std::chrono::system_clock::now(), {}});
    // Let the publisher's queue drain now and then, so none of it is dropped.
    if (++logged % 1000 == 0) {
      ASSERT_TRUE(test::waitUntil([&] { return flood.publishedCount() + flood.droppedCount() >= logged; }));
    }
  };
  for (int i = 0; i < 65535 + 100; ++i) logPaced("name-" + std::to_string(i));
  for (int i = 0; i < 10; ++i) logPaced("name-7");
  ASSERT_TRUE(test::waitUntil([&] { return recorded(path, "name-7") == 11; }));
  recorder.signal(SIGINT);
  ASSERT_EQ(recorder.exitCode(), 0) << recorder.err();
  EXPECT_THAT(recorder.out(), HasSubstr("wrote "));
  EXPECT_THAT(recorder.out(), ::testing::ContainsRegex("[0-9]+ events not recorded")) << recorder.out();
  RecordingReader reader(path);
  EXPECT_TRUE(reader.indexed());
  EXPECT_EQ(reader.summary().channels.size(), 65535u);
}

// A recording of `times.size()` events of one source, with a Statistics record that claims the
// recording starts at `claimedStart`.
std::string craftedRecording(const std::vector<uint64_t>& times, uint64_t claimedStart) {
  SourceInfo source;
  source.run = "crafted";
  source.host = "h";
  source.pid = 1;
  source.instanceId = 99;
  std::string records = test::mcap::channelRecord(1, "tick");
  for (std::size_t i = 0; i < times.size(); ++i) {
    const Event event{"tick", fromWireTime(static_cast<int64_t>(times[i])), {{"i", static_cast<int64_t>(i)}}};
    records += test::mcap::messageRecord(1, static_cast<uint32_t>(i), times[i], encodeEventsPayload(source, i, "tick", {event}));
  }
  test::mcap::File bytes;
  const std::string chunk = test::mcap::chunkRecord({.records = records, .startTime = times.front(), .endTime = times.back()});
  const uint64_t chunkAt = bytes.add(chunk);
  return bytes.closed({test::mcap::channelRecord(1, "tick"),
                       test::mcap::statisticsRecord(times.size(), 1, 1, claimedStart, times.back()),
                       test::mcap::chunkIndexRecord({times.front(), times.back(), chunkAt, chunk.size(), 0, 0})});
}

TEST_F(LivemonctlRecordingTest, ReplayNeverWaitsForACraftedStartOrALongGap) {
  constexpr uint64_t kT0 = 1'700'000'000'000'000'000ULL;
  const std::string endpoint = "ipc://" + file("replay.sock");
  const std::vector<std::pair<std::vector<uint64_t>, std::vector<std::string>>> cases = {
      // The summary says the recording starts in 1970: 54 years before its first event.
      {{kT0, kT0 + 1'000'000, kT0 + 2'000'000}, {}},
      // An hour without events, and a clock that went backwards.
      {{kT0, kT0 + 3'600'000'000'000ULL, kT0 + 5'000'000}, {"--max-gap", "0.05"}},
  };
  for (const auto& [times, extra] : cases) {
    const std::string path = file("crafted.mcap");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << craftedRecording(times, 0);
    Subscriber subscriber(test::connectTo({endpoint}, 1000, {"tick"}));
    std::vector<std::string> argv{livemonctlPath(), "replay", path, "--publish", endpoint};
    argv.insert(argv.end(), extra.begin(), extra.end());
    ChildProcess replay(argv);
    std::size_t ticks = 0;
    test::pollUntil(subscriber, onEvent([&](ReceivedEvent&) { ++ticks; }), [&] { return ticks == times.size(); });
    EXPECT_EQ(ticks, times.size()) << replay.err();
    ASSERT_EQ(replay.exitCode(), 0) << "replay still waiting: " << replay.err();
    if (!extra.empty()) {
      EXPECT_THAT(replay.err(), HasSubstr("cut to 0.05 s")) << replay.err();
    }
  }
}

TEST_F(LivemonctlRecordingTest, CtrlCStopsAnExportWithStatus130) {
  const std::string path = file("long.mcap");
  constexpr int kEvents = 100000;
  {
    RecordingWriter writer(path);
    ReceivedEvent event;
    event.source = std::make_shared<const SourceInfo>(publisher_.identity());
    for (int i = 0; i < kEvents; ++i) {
      event.event = Event{"step", std::chrono::system_clock::now(), {{"i", int64_t{i}}}};
      event.sequence = static_cast<uint64_t>(i);
      event.receivedAt = event.event.timestamp;
      recordEvent(writer, event);
    }
  }
  // Its standard output is read only after Ctrl-C: megabytes of JSON cannot all have been
  // written by then, so the export is still running when the signal comes.
  ChildProcess exporter({livemonctlPath(), "export", path});
  ASSERT_TRUE(exporter.readStdoutUntil([](const std::string& out) { return out.find('\n') != std::string::npos; }));
  exporter.signal(SIGINT);
  EXPECT_EQ(exporter.exitCode(), 130) << exporter.err();
  EXPECT_THAT(exporter.err(), HasSubstr("interrupted"));
  EXPECT_LT(std::count(exporter.out().begin(), exporter.out().end(), '\n'), kEvents);
}

TEST(LivemonctlRecordingCli, BadArgumentsExitTwoWithUsage) {
  const std::vector<std::vector<std::string>> cases = {
      {"record"},                                              // no -o
      {"record", "-o"},                                        // -o without a file
      {"record", "-o", "x.mcap", "--duration", "-1"},
      {"info"},
      {"info", "/no/such/file.mcap"},
      {"export", "/no/such/file.mcap"},
      {"export", "/dev/null", "--format", "xml"},
      {"replay", "/dev/null", "--speed", "0"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv{livemonctlPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess child(argv);
    EXPECT_EQ(child.exitCode(), 2) << testing::PrintToString(args);
    EXPECT_THAT(child.err(), HasSubstr("Usage:")) << testing::PrintToString(args);
  }
}

TEST(LivemonctlRecordingCli, HelpOnEveryCommand) {
  for (const char* command : {"record", "info", "export", "replay"}) {
    ChildProcess child({livemonctlPath(), command, "--help"});
    EXPECT_EQ(child.exitCode(), 0) << command;
    EXPECT_THAT(child.out(), HasSubstr("Usage:")) << command;
  }
}

TEST(LivemonctlRecordingCli, NotARecordingIsRefusedNamingTheFile) {
  test::TempDir dir;
  const std::string path = (dir.path() / "notes.mcap").string();
  std::ofstream(path) << "these are notes, not a recording";
  for (const char* command : {"info", "export", "replay"}) {
    ChildProcess child({livemonctlPath(), command, path});
    EXPECT_EQ(child.exitCode(), 1) << command;
    EXPECT_THAT(child.err(), HasSubstr("notes.mcap: byte 0: not an MCAP recording")) << command;
  }
}

}  // namespace
}  // namespace livemon::livemonctl
