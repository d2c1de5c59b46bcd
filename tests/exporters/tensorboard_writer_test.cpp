// TensorboardWriter: the files are read back by a reader written here from the format's
// description (a bit-at-a-time CRC-32C and a minimal protocol buffer decoder), independent of the
// writer's table-driven CRC and its encoder.
#include <livemon/transport/tensorboard_writer.h>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/stat.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::makeEvent;

// --- an independent reader -------------------------------------------------------------------

uint32_t bitwiseCrc32c(std::string_view data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (const char c : data) {
    crc ^= static_cast<uint8_t>(c);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return crc ^ 0xFFFFFFFFu;
}

uint32_t unmask(uint32_t masked) {
  const uint32_t rotated = masked - 0xa282ead8u;
  return (rotated >> 17) | (rotated << 15);
}

template <typename T>
T readLittleEndian(std::string_view bytes, std::size_t at) {
  T value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  return value;
}

// Splits a TFRecord file into its records; fails the test on a bad CRC or a cut record.
std::vector<std::string> readRecords(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> records;
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 12) {
      ADD_FAILURE() << "record header cut at byte " << at;
      break;
    }
    const auto length = readLittleEndian<uint64_t>(bytes, at);
    EXPECT_EQ(unmask(readLittleEndian<uint32_t>(bytes, at + 8)), bitwiseCrc32c(std::string_view(bytes).substr(at, 8)))
        << "length CRC of the record at byte " << at;
    at += 12;
    if (bytes.size() - at < length + 4) {
      ADD_FAILURE() << "record data cut at byte " << at;
      break;
    }
    const std::string data = bytes.substr(at, length);
    EXPECT_EQ(unmask(readLittleEndian<uint32_t>(bytes, at + length)), bitwiseCrc32c(data))
        << "data CRC of the record at byte " << at;
    records.push_back(data);
    at += length + 4;
  }
  return records;
}

// One decoded field of a protocol buffer message.
struct Field {
  uint32_t number = 0;
  int wireType = 0;
  uint64_t scalar = 0;  // varint, fixed32, fixed64
  std::string bytes;    // length-delimited
};

uint64_t readVarint(std::string_view bytes, std::size_t& at) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= bytes.size()) throw std::runtime_error("varint cut");
    const auto byte = static_cast<uint8_t>(bytes[at++]);
    value |= uint64_t{byte & 0x7Fu} << shift;
    if ((byte & 0x80u) == 0) return value;
  }
  throw std::runtime_error("varint too long");
}

std::vector<Field> decodeMessage(std::string_view bytes) {
  std::vector<Field> fields;
  std::size_t at = 0;
  while (at < bytes.size()) {
    const uint64_t key = readVarint(bytes, at);
    Field field;
    field.number = static_cast<uint32_t>(key >> 3);
    field.wireType = static_cast<int>(key & 7);
    switch (field.wireType) {
      case 0: field.scalar = readVarint(bytes, at); break;
      case 1: field.scalar = readLittleEndian<uint64_t>(bytes, at); at += 8; break;
      case 5: field.scalar = readLittleEndian<uint32_t>(bytes, at); at += 4; break;
      case 2: {
        const uint64_t length = readVarint(bytes, at);
        field.bytes = std::string(bytes.substr(at, length));
        at += length;
        break;
      }
      default: throw std::runtime_error("unexpected wire type " + std::to_string(field.wireType));
    }
    if (at > bytes.size()) throw std::runtime_error("field cut");
    fields.push_back(std::move(field));
  }
  return fields;
}

// The parts of tensorflow.Event the writer uses.
struct TbEvent {
  double wallTime = 0;
  int64_t step = 0;
  std::optional<std::string> fileVersion;
  std::vector<std::pair<std::string, float>> scalars;  // Summary.Value tag, simple_value
};

TbEvent decodeEvent(const std::string& record) {
  TbEvent event;
  for (const Field& field : decodeMessage(record)) {
    if (field.number == 1 && field.wireType == 1) event.wallTime = std::bit_cast<double>(field.scalar);
    if (field.number == 2 && field.wireType == 0) event.step = static_cast<int64_t>(field.scalar);
    if (field.number == 3 && field.wireType == 2) event.fileVersion = field.bytes;
    if (field.number == 5 && field.wireType == 2) {
      for (const Field& value : decodeMessage(field.bytes)) {
        EXPECT_EQ(value.number, 1u);
        std::string tag;
        std::optional<float> simple;
        for (const Field& part : decodeMessage(value.bytes)) {
          if (part.number == 1 && part.wireType == 2) tag = part.bytes;
          if (part.number == 2 && part.wireType == 5) simple = std::bit_cast<float>(static_cast<uint32_t>(part.scalar));
        }
        EXPECT_TRUE(simple.has_value()) << "no simple_value for tag " << tag;
        event.scalars.emplace_back(tag, simple.value_or(0));
      }
    }
  }
  return event;
}

std::vector<TbEvent> readEvents(const std::filesystem::path& path) {
  std::vector<TbEvent> events;
  for (const std::string& record : readRecords(path)) events.push_back(decodeEvent(record));
  return events;
}

// tag -> (step -> value)
std::map<std::string, std::map<int64_t, float>> scalarsByTag(const std::vector<TbEvent>& events) {
  std::map<std::string, std::map<int64_t, float>> byTag;
  for (const TbEvent& event : events) {
    for (const auto& [tag, value] : event.scalars) {
      EXPECT_FALSE(byTag[tag].contains(event.step)) << tag << " step " << event.step << " twice";
      byTag[tag][event.step] = value;
    }
  }
  return byTag;
}

TensorboardWriterOptions optionsFor(const std::filesystem::path& dir) {
  TensorboardWriterOptions options;
  options.logDir = dir;
  return options;
}

const auto kTime = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'700'000'123'250));

// --- tests -----------------------------------------------------------------------------------

TEST(TensorboardWriterReader, IndependentCrcMatchesTheStandardCheckValue) {
  EXPECT_EQ(bitwiseCrc32c("123456789"), 0xE3069283u);
}

TEST(TensorboardWriter, FrameTfRecordLaysOutLengthCrcDataCrc) {
  const std::string framed = frameTfRecord("hello");
  ASSERT_EQ(framed.size(), 8u + 4u + 5u + 4u);
  EXPECT_EQ(readLittleEndian<uint64_t>(framed, 0), 5u);
  EXPECT_EQ(unmask(readLittleEndian<uint32_t>(framed, 8)), bitwiseCrc32c(framed.substr(0, 8)));
  EXPECT_EQ(framed.substr(12, 5), "hello");
  EXPECT_EQ(unmask(readLittleEndian<uint32_t>(framed, 17)), bitwiseCrc32c("hello"));
}

TEST(TensorboardWriter, FileNameIsWhatTensorboardLooksFor) {
  EXPECT_EQ(TensorboardWriter::fileName(kTime, "gpu01"), "events.out.tfevents.1700000123.gpu01");
  EXPECT_EQ(TensorboardWriter::fileName(std::chrono::system_clock::time_point(std::chrono::seconds(42)), "h"),
            "events.out.tfevents.0000000042.h");
}

TEST(TensorboardWriter, NewFileHoldsOnlyTheFileVersionRecord) {
  test::TempDir dir;
  const auto before = std::chrono::system_clock::now();
  TensorboardWriter writer(optionsFor(dir.path() / "run1"));
  const auto after = std::chrono::system_clock::now();
  EXPECT_EQ(writer.path().parent_path(), dir.path() / "run1");
  EXPECT_TRUE(writer.path().filename().string().starts_with("events.out.tfevents."));
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_NE(writer.path().filename().string().find(std::string(".") + host), std::string::npos);

  const std::vector<TbEvent> events = readEvents(writer.path());  // written before the constructor returns
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fileVersion, "brain.Event:2");
  EXPECT_TRUE(events[0].scalars.empty());
  EXPECT_GE(events[0].wallTime, std::chrono::duration<double>(before.time_since_epoch()).count() - 1);
  EXPECT_LE(events[0].wallTime, std::chrono::duration<double>(after.time_since_epoch()).count() + 1);
}

TEST(TensorboardWriter, StatKeysBecomeTagsWithEventTimeAndAStepPerWindow) {
  test::TempDir dir;
  std::filesystem::path path;
  {
    TensorboardWriter writer(optionsFor(dir.path()));
    path = writer.path();
    writer.write(makeEvent("livemon.Stat", {{"loss.mean", 2.5}, {"loss.max", 4.0}}, kTime));
    writer.write(makeEvent("livemon.Stat", {{"loss.mean", 1.5}, {"loss.max", 3.0}}, kTime + 1s));
    writer.write(makeEvent("livemon.Stat", {{"step_ms.p99", 12.0}}, kTime + 2s));
    writer.write(makeEvent("torch.monitor.Stat", {{"lr.value", 0.001}}, kTime + 3s));
  }  // closing writes everything out
  const std::vector<TbEvent> events = readEvents(path);
  ASSERT_EQ(events.size(), 1u + 6u);
  EXPECT_EQ(events[0].fileVersion, "brain.Event:2");
  for (std::size_t i = 1; i < events.size(); ++i) {
    EXPECT_FALSE(events[i].fileVersion.has_value());
    EXPECT_EQ(events[i].scalars.size(), 1u);
  }
  const auto byTag = scalarsByTag(events);
  EXPECT_EQ(byTag.at("loss.mean"), (std::map<int64_t, float>{{0, 2.5f}, {1, 1.5f}}));
  EXPECT_EQ(byTag.at("loss.max"), (std::map<int64_t, float>{{0, 4.0f}, {1, 3.0f}}));
  EXPECT_EQ(byTag.at("step_ms.p99"), (std::map<int64_t, float>{{0, 12.0f}}));
  EXPECT_EQ(byTag.at("lr.value"), (std::map<int64_t, float>{{0, 0.001f}}));
  for (const TbEvent& event : events) {
    if (event.scalars.empty()) continue;
    const std::string& tag = event.scalars[0].first;
    const double expected = tag == "lr.value"      ? 1'700'000'126.25
                            : tag == "step_ms.p99" ? 1'700'000'125.25
                            : event.step == 0      ? 1'700'000'123.25
                                                   : 1'700'000'124.25;
    EXPECT_DOUBLE_EQ(event.wallTime, expected) << tag << " step " << event.step;
  }
}

TEST(TensorboardWriter, OtherEventsAreIgnoredUnlessAsked) {
  test::TempDir dir;
  const Event eval = makeEvent("eval", {{"accuracy", 0.75}, {"epoch", int64_t{3}}, {"best", true}, {"note", "x"}}, kTime);
  std::filesystem::path quiet;
  std::filesystem::path all;
  {
    TensorboardWriter quietWriter(optionsFor(dir.path() / "quiet"));
    auto allOptions = optionsFor(dir.path() / "all");
    allOptions.allEvents = true;
    TensorboardWriter allWriter(allOptions);
    quiet = quietWriter.path();
    all = allWriter.path();
    for (TensorboardWriter* writer : {&quietWriter, &allWriter}) {
      writer->write(eval);
      writer->write(makeEvent("eval", {{"accuracy", 0.8}}, kTime + 1s));
      writer->write(makeEvent("notes", {{"text", "strings are not scalars"}}, kTime));
    }
  }
  EXPECT_EQ(readEvents(quiet).size(), 1u);  // file_version only
  const auto byTag = scalarsByTag(readEvents(all));
  EXPECT_EQ(byTag.size(), 3u);
  EXPECT_EQ(byTag.at("eval/accuracy"), (std::map<int64_t, float>{{0, 0.75f}, {1, 0.8f}}));
  EXPECT_EQ(byTag.at("eval/epoch"), (std::map<int64_t, float>{{0, 3.0f}}));
  EXPECT_EQ(byTag.at("eval/best"), (std::map<int64_t, float>{{0, 1.0f}}));
}

TEST(TensorboardWriter, HandlerWritesTheWindowsOfARealStat) {
  test::TempDir dir;
  ManualClock clock;
  std::filesystem::path path;
  {
    TensorboardWriter writer(optionsFor(dir.path()));
    path = writer.path();
    const EventHandlerHandle handle = registerEventHandler(writer.handler());
    {
      Stat stat("tb_test.loss", {Aggregation::Mean, Aggregation::Count}, 1000ms, std::numeric_limits<int64_t>::max(),
                clock);
      for (int window = 0; window < 3; ++window) {
        stat.add(window);
        stat.add(window + 2.0);
        clock.advance(1000ms);
      }
    }
    unregisterEventHandler(handle);
  }
  const auto byTag = scalarsByTag(readEvents(path));
  EXPECT_EQ(byTag.at("tb_test.loss.mean"), (std::map<int64_t, float>{{0, 1.0f}, {1, 2.0f}, {2, 3.0f}}));
  EXPECT_EQ(byTag.at("tb_test.loss.count"), (std::map<int64_t, float>{{0, 2.0f}, {1, 2.0f}, {2, 2.0f}}));
}

TEST(TensorboardWriter, WriterThreadWritesWithoutAnExplicitFlush) {
  test::TempDir dir;
  auto options = optionsFor(dir.path());
  options.flushInterval = 5ms;
  TensorboardWriter writer(options);
  writer.write(makeEvent("livemon.Stat", {{"a.value", 1.0}}, kTime));
  EXPECT_TRUE(test::waitUntil([&] { return writer.stats().records == 2; }));
  EXPECT_EQ(readEvents(writer.path()).size(), 2u);
  EXPECT_EQ(writer.stats().scalars, 1u);
}

TEST(TensorboardWriter, FlushWritesAtOnce) {
  test::TempDir dir;
  auto options = optionsFor(dir.path());
  options.flushInterval = std::chrono::hours(1);
  TensorboardWriter writer(options);
  writer.write(makeEvent("livemon.Stat", {{"a.value", 1.0}, {"a.max", 2.0}}, kTime));
  writer.flush();
  EXPECT_EQ(readEvents(writer.path()).size(), 3u);
  EXPECT_EQ(writer.stats().records, 3u);
}

TEST(TensorboardWriter, TwoWritersInOneDirectoryGetTwoFiles) {
  test::TempDir dir;
  TensorboardWriter first(optionsFor(dir.path()));
  TensorboardWriter second(optionsFor(dir.path()));
  EXPECT_NE(first.path(), second.path());
  EXPECT_EQ(readEvents(first.path()).size(), 1u);
  EXPECT_EQ(readEvents(second.path()).size(), 1u);
}

TEST(TensorboardWriter, ManyThreadsKeepEveryTagsStepsConsecutive) {
  test::TempDir dir;
  constexpr int kThreads = 4;
  constexpr int kEventsPerThread = 500;
  std::filesystem::path path;
  {
    auto options = optionsFor(dir.path());
    options.flushInterval = 1ms;
    TensorboardWriter writer(options);
    path = writer.path();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&writer, t] {
        for (int i = 0; i < kEventsPerThread; ++i) {
          writer.write(makeEvent("livemon.Stat", {{"shared.value", double(i)}, {"own" + std::to_string(t) + ".value", 1.0}}));
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
  const auto byTag = scalarsByTag(readEvents(path));
  ASSERT_EQ(byTag.size(), kThreads + 1u);
  for (const auto& [tag, points] : byTag) {
    const std::size_t expected = tag == "shared.value" ? kThreads * kEventsPerThread : kEventsPerThread;
    ASSERT_EQ(points.size(), expected) << tag;
    EXPECT_EQ(points.rbegin()->first, static_cast<int64_t>(expected) - 1) << tag;  // steps 0..n-1
  }
}

TEST(TensorboardWriter, EventsAfterCloseAreDroppedAndCounted) {
  test::TempDir dir;
  auto writer = std::make_unique<TensorboardWriter>(optionsFor(dir.path()));
  const EventHandler handler = writer->handler();
  writer->close();
  writer->close();  // a second close does nothing
  writer->write(makeEvent("livemon.Stat", {{"a.value", 1.0}}, kTime));
  EXPECT_EQ(writer->stats().droppedEvents, 1u);
  const std::filesystem::path path = writer->path();
  writer.reset();
  handler(makeEvent("livemon.Stat", {{"a.value", 1.0}}, kTime));  // the handler outlives the writer safely
  EXPECT_EQ(readEvents(path).size(), 1u);
}

TEST(TensorboardWriter, FullBufferDropsAndCountsInsteadOfWaiting) {
  test::TempDir dir;
  auto options = optionsFor(dir.path());
  options.flushInterval = std::chrono::hours(1);
  options.maxPendingBytes = 200;
  TensorboardWriter writer(options);
  for (int i = 0; i < 50; ++i) writer.write(makeEvent("livemon.Stat", {{"a.value", double(i)}}, kTime));
  writer.flush();
  const TensorboardWriterStats stats = writer.stats();
  EXPECT_GT(stats.droppedEvents, 0u);
  EXPECT_EQ(stats.scalars + stats.droppedEvents, 50u);
  EXPECT_EQ(readEvents(writer.path()).size(), 1u + stats.scalars);
}

TEST(TensorboardWriter, AForkedChildLeavesTheFileToTheParent) {
  test::TempDir dir;
  auto options = optionsFor(dir.path());
  options.flushInterval = std::chrono::hours(1);
  auto writer = std::make_unique<TensorboardWriter>(options);
  writer->write(makeEvent("livemon.Stat", {{"parent.value", 1.0}}, kTime));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A DataLoader worker: it logs, flushes and destroys its copy (which must neither hang nor
    // touch the parent's file), then exits as workers do, without the parent's exit handlers.
    writer->write(makeEvent("livemon.Stat", {{"child.value", 2.0}}, kTime));
    writer->flush();
    writer.reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::filesystem::path path = writer->path();
  writer.reset();
  const auto byTag = scalarsByTag(readEvents(path));
  EXPECT_EQ(byTag.size(), 1u);
  EXPECT_TRUE(byTag.contains("parent.value"));
}

TEST(TensorboardWriter, BadArgumentsNameWhatIsWrong) {
  test::TempDir dir;
  try {
    TensorboardWriter writer(TensorboardWriterOptions{});
    FAIL() << "an empty logDir was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("logDir"), std::string::npos) << error.what();
  }
  auto options = optionsFor(dir.path());
  options.flushInterval = 0ms;
  EXPECT_THROW(TensorboardWriter{options}, std::invalid_argument);

  const std::filesystem::path file = dir.path() / "not-a-directory";
  std::ofstream(file) << "x";
  try {
    TensorboardWriter writer(optionsFor(file / "run"));
    FAIL() << "a log directory under a regular file was accepted";
  } catch (const std::system_error& error) {
    EXPECT_NE(std::string(error.what()).find(file.string()), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace livemon::transport
