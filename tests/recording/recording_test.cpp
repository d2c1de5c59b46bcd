#include <livemon/transport/recording.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>

#include "mcap_builder.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
namespace fs = std::filesystem;
namespace mcap = test::mcap;

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ULL;

void writeFile(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A field of /proc/self/status in bytes ("VmHWM", "VmRSS").
uint64_t statusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

// How much this process's resident memory grows at its peak while `work` runs (Linux resets the
// peak through /proc/self/clear_refs).
uint64_t peakGrowth(const std::function<void()>& work) {
  std::ofstream("/proc/self/clear_refs") << "5";
  const uint64_t before = statusBytes("VmRSS");
  work();
  const uint64_t peak = statusBytes("VmHWM");
  return peak > before ? peak - before : 0;
}

std::size_t openDescriptors() {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator()));
}

std::string problemsText(const RecordingReader& reader) {
  std::string text;
  for (const auto& problem : reader.problems()) text += "byte " + std::to_string(problem.offset) + ": " + problem.what + "\n";
  return text;
}

// A few messages on channel 1 ("t"), as the records of a chunk.
std::string someRecords(int messages, uint64_t firstTime = kT0) {
  std::string records = mcap::channelRecord(1, "t");
  for (int i = 0; i < messages; ++i) {
    records += mcap::messageRecord(1, static_cast<uint32_t>(i), firstTime + static_cast<uint64_t>(i), std::to_string(i));
  }
  return records;
}

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("livemon-recording-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  struct Written {
    std::string topic;
    uint64_t logTime;
    uint64_t publishTime;
    std::string payload;
  };

  // Writes `n` messages over three topics, one microsecond apart.
  static std::vector<Written> writeMessages(RecordingWriter& writer, int n, int first = 0) {
    static const char* topics[] = {"livemon.Stat", "eval", "train.step"};
    std::vector<Written> written;
    for (int i = first; i < first + n; ++i) {
      Written w{topics[i % 3], kT0 + static_cast<uint64_t>(i) * 1000, kT0 + static_cast<uint64_t>(i) * 1000 - 7,
                "payload " + std::to_string(i) + std::string(static_cast<std::size_t>(i % 50), 'x')};
      writer.write(w.topic, w.logTime, w.publishTime, w.payload);
      written.push_back(std::move(w));
    }
    return written;
  }

  static std::vector<Written> readAll(RecordingReader& reader) {
    std::vector<Written> read;
    reader.forEachMessage([&](const RecordedMessage& m) {
      read.push_back({m.channel->topic, m.logTimeNs, m.publishTimeNs, std::string(m.payload)});
      return true;
    });
    return read;
  }

  static bool same(const std::vector<Written>& a, const std::vector<Written>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].topic != b[i].topic || a[i].logTime != b[i].logTime || a[i].publishTime != b[i].publishTime ||
          a[i].payload != b[i].payload) {
        return false;
      }
    }
    return true;
  }

  fs::path dir_;
};

TEST_F(RecordingTest, RoundTripThroughTheSummary) {
  const std::string path = file("run.mcap");
  std::vector<Written> written;
  {
    RecordingWriter writer(path, {.chunkBytes = 16 * 1024});
    written = writeMessages(writer, 3000);
    writer.close();
    EXPECT_EQ(writer.messageCount(), 3000u);
    EXPECT_EQ(writer.bytesWritten(), fs::file_size(path));
    EXPECT_LT(writer.compressedBytes(), writer.uncompressedBytes());
  }
  RecordingReader reader(path);
  EXPECT_TRUE(reader.indexed());
  EXPECT_TRUE(reader.problems().empty());
  const RecordingSummary& summary = reader.summary();
  EXPECT_EQ(summary.messageCount, 3000u);
  EXPECT_EQ(summary.startTimeNs, kT0);
  EXPECT_EQ(summary.endTimeNs, kT0 + 2999 * 1000);
  EXPECT_GT(summary.chunks.size(), 3u);
  ASSERT_EQ(summary.channels.size(), 3u);
  std::map<std::string, uint64_t> perTopic;
  for (const auto& [id, count] : summary.messageCounts) perTopic[summary.channels.at(id).topic] = count;
  EXPECT_EQ(perTopic, (std::map<std::string, uint64_t>{{"eval", 1000}, {"livemon.Stat", 1000}, {"train.step", 1000}}));
  for (const auto& [id, channel] : summary.channels) EXPECT_EQ(channel.messageEncoding, "msgpack");
  EXPECT_LT(summary.compressedBytes, summary.uncompressedBytes);
  EXPECT_TRUE(same(readAll(reader), written));
}

TEST_F(RecordingTest, EmptyRecordingIsValid) {
  const std::string path = file("empty.mcap");
  { RecordingWriter writer(path); }
  RecordingReader reader(path);
  EXPECT_TRUE(reader.indexed());
  EXPECT_EQ(reader.summary().messageCount, 0u);
  EXPECT_TRUE(readAll(reader).empty());
}

TEST_F(RecordingTest, TimeRangeReadsOnlyTheChunksThatOverlapIt) {
  const std::string path = file("range.mcap");
  {
    RecordingWriter writer(path, {.chunkBytes = 4 * 1024});
    writeMessages(writer, 5000);
  }
  RecordingReader reader(path);
  const std::size_t allChunks = reader.summary().chunks.size();
  ASSERT_GT(allChunks, 20u);
  const uint64_t from = kT0 + 2000 * 1000;
  const uint64_t to = kT0 + 2099 * 1000;
  uint64_t chunksRead = 0;
  std::vector<uint64_t> times;
  reader.forEachMessage(
      from, to,
      [&](const RecordedMessage& m) {
        times.push_back(m.logTimeNs);
        return true;
      },
      [&](uint64_t, uint64_t total) { chunksRead = total; });
  ASSERT_EQ(times.size(), 100u);
  EXPECT_EQ(times.front(), from);
  EXPECT_EQ(times.back(), to);
  EXPECT_LE(chunksRead, 3u) << "the chunk index should limit the read to the chunks that overlap";
}

TEST_F(RecordingTest, StoppingEarlyStops) {
  const std::string path = file("stop.mcap");
  {
    RecordingWriter writer(path);
    writeMessages(writer, 100);
  }
  RecordingReader reader(path);
  int seen = 0;
  reader.forEachMessage([&](const RecordedMessage&) { return ++seen < 10; });
  EXPECT_EQ(seen, 10);
}

TEST_F(RecordingTest, ChunksAreWrittenOnceTheyAreOldEnough) {
  ManualClock clock;
  const std::string path = file("age.mcap");
  RecordingWriter writer(path, {.maxChunkAge = 1000ms, .clock = &clock});
  const uint64_t headerOnly = writer.bytesWritten();
  writeMessages(writer, 1);
  clock.advance(999ms);
  writer.flushIfDue();
  EXPECT_EQ(writer.bytesWritten(), headerOnly);
  clock.advance(1ms);
  writer.flushIfDue();
  EXPECT_GT(writer.bytesWritten(), headerOnly);

  // While the writer is still open, the file already holds that message.
  RecordingReader reader(path);
  EXPECT_FALSE(reader.indexed());
  EXPECT_EQ(reader.summary().messageCount, 1u);
  ASSERT_EQ(reader.problems().size(), 1u);
  EXPECT_THAT(reader.problems()[0].what, HasSubstr("not closed"));
  EXPECT_EQ(reader.problems()[0].offset, writer.bytesWritten());
}

TEST_F(RecordingTest, KilledWriterLeavesEveryCompleteChunkReadable) {
  const std::string path = file("killed.mcap");
  const pid_t child = fork();
  if (child == 0) {
    RecordingWriter writer(path, {.chunkBytes = 8 * 1024});
    writeMessages(writer, 2000);  // several complete chunks, and an open one
    writer.flush();
    writeMessages(writer, 10, 2000);  // in the open chunk: lost with the process
    raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  RecordingReader reader(path);
  EXPECT_FALSE(reader.indexed());
  EXPECT_EQ(reader.summary().messageCount, 2000u);
  const auto read = readAll(reader);
  ASSERT_EQ(read.size(), 2000u);
  EXPECT_EQ(read.back().payload, "payload 1999" + std::string(1999 % 50, 'x'));
}

TEST_F(RecordingTest, TruncatedFilesAreReadUpToTheCutAndSayWhere) {
  const std::string path = file("whole.mcap");
  {
    RecordingWriter writer(path, {.chunkBytes = 2 * 1024});
    writeMessages(writer, 400);
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::vector<RecordingChunk> chunks = RecordingReader(path).summary().chunks;

  const std::string cut = file("cut.mcap");
  for (std::size_t size = 0; size < bytes.size(); size += 61) {
    std::ofstream(cut, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(size));
    try {
      RecordingReader reader(cut);
      EXPECT_FALSE(reader.indexed()) << size;
      // Exactly the messages of the chunks that end before the cut are readable, in order.
      uint64_t lastCompleteEnd = 0;
      bool anyComplete = false;
      for (const auto& chunk : chunks) {
        if (chunk.offset + chunk.length <= size) {
          lastCompleteEnd = chunk.endTimeNs;
          anyComplete = true;
        }
      }
      const std::size_t expected = anyComplete ? static_cast<std::size_t>((lastCompleteEnd - kT0) / 1000 + 1) : 0;
      const auto read = readAll(reader);
      ASSERT_EQ(read.size(), expected) << "cut at " << size;
      for (std::size_t i = 0; i < read.size(); ++i) ASSERT_EQ(read[i].logTime, kT0 + i * 1000) << size;
      ASSERT_FALSE(reader.problems().empty()) << "cut at " << size << " went unreported";
      EXPECT_LE(reader.problems().back().offset, size);
    } catch (const RecordingError& error) {
      EXPECT_LT(size, 30u) << "only a cut inside the header may refuse the whole file: " << error.what();
    }
  }
}

TEST_F(RecordingTest, FlippedBytesAreReportedNeverReadAsData) {
  const std::string path = file("original.mcap");
  std::vector<Written> written;
  {
    RecordingWriter writer(path, {.chunkBytes = 2 * 1024});
    written = writeMessages(writer, 300);
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> originals;
  for (const auto& w : written) originals.insert(w.payload);

  std::mt19937 rng(11);
  const std::string damaged = file("damaged.mcap");
  for (int trial = 0; trial < 200; ++trial) {
    std::string copy = bytes;
    const std::size_t at = std::uniform_int_distribution<std::size_t>(8, copy.size() - 9)(rng);
    copy[at] = static_cast<char>(copy[at] ^ (1 << (trial % 8)));
    std::ofstream(damaged, std::ios::binary | std::ios::trunc).write(copy.data(), static_cast<std::streamsize>(copy.size()));
    try {
      RecordingReader reader(damaged);
      std::size_t read = 0;
      reader.forEachMessage([&](const RecordedMessage& m) {
        // A payload that comes out is one that went in: checksums keep damage from passing as data.
        EXPECT_TRUE(originals.count(std::string(m.payload))) << "flip at " << at;
        ++read;
        return true;
      });
      if (read < written.size()) {
        EXPECT_FALSE(reader.problems().empty()) << "flip at " << at << " lost messages without saying so";
      }
    } catch (const RecordingError& error) {
      EXPECT_THAT(error.what(), HasSubstr("damaged.mcap"));
    }
  }
}

TEST_F(RecordingTest, FileSizeLimitGivesAClearErrorAndAReadableFile) {
  const std::string path = file("limited.mcap");
  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(pipeFds[0]);
    signal(SIGXFSZ, SIG_IGN);  // so write(2) fails with EFBIG instead of killing the process
    rlimit limit{64 * 1024, 64 * 1024};
    setrlimit(RLIMIT_FSIZE, &limit);
    try {
      RecordingWriter writer(path, {.chunkBytes = 4 * 1024, .zstdLevel = 1});
      for (int round = 0;; ++round) writeMessages(writer, 100, round * 100);
    } catch (const RecordingError& error) {
      const std::string message = error.what();
      (void)!write(pipeFds[1], message.data(), message.size());
      _exit(3);
    }
    _exit(0);
  }
  close(pipeFds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, static_cast<std::size_t>(n));
  close(pipeFds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_THAT(message, HasSubstr("limited.mcap"));
  EXPECT_THAT(message, HasSubstr("File too large"));

  RecordingReader reader(path);
  EXPECT_FALSE(reader.indexed());
  EXPECT_GT(reader.summary().messageCount, 0u);
  const auto read = readAll(reader);
  EXPECT_EQ(read.size(), reader.summary().messageCount);
  for (std::size_t i = 0; i < read.size(); ++i) ASSERT_EQ(read[i].logTime, kT0 + i * 1000);
}

TEST_F(RecordingTest, NotARecordingIsRefusedNamingTheFile) {
  const std::string path = file("notes.txt");
  std::ofstream(path) << "just some text, long enough to not be a short file\n";
  try {
    RecordingReader reader(path);
    FAIL() << "opened a text file as a recording";
  } catch (const RecordingError& error) {
    EXPECT_THAT(error.what(), HasSubstr("notes.txt"));
    EXPECT_THAT(error.what(), HasSubstr("not an MCAP recording"));
    EXPECT_EQ(error.offset(), 0u);
  }
  EXPECT_THROW(RecordingReader(file("missing.mcap")), RecordingError);
  std::ofstream(file("empty.mcap"));
  EXPECT_THROW(RecordingReader(file("empty.mcap")), RecordingError);
}

TEST_F(RecordingTest, UnwritablePathIsRefusedNamingIt) {
  try {
    RecordingWriter writer(file("no/such/dir/run.mcap"));
    FAIL();
  } catch (const RecordingError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no/such/dir/run.mcap"));
    EXPECT_THAT(error.what(), HasSubstr("No such file or directory"));
  }
}

TEST_F(RecordingTest, WriteAfterCloseThrows) {
  RecordingWriter writer(file("closed.mcap"));
  writer.close();
  EXPECT_THROW(writer.write("x", kT0, kT0, "p"), RecordingError);
  EXPECT_NO_THROW(writer.close());
}

TEST_F(RecordingTest, AChunkClaimingAGibibyteAllocatesNothing) {
  // 85 bytes: magic, header and one chunk whose header claims 1 GiB of records, with a zstd
  // frame that holds two bytes.
  mcap::File bytes;
  const uint64_t chunkAt = bytes.add(mcap::chunkRecord({.records = "ab", .uncompressedSize = uint64_t{1} << 30}));
  const std::string path = file("claims.mcap");
  writeFile(path, bytes.unclosed());
  const uint64_t growth = peakGrowth([&] {
    RecordingReader reader(path);
    reader.forEachMessage([](const RecordedMessage&) { return true; });
    EXPECT_THAT(problemsText(reader), HasSubstr("byte " + std::to_string(chunkAt) + ": "));
  });
  EXPECT_LT(growth, uint64_t{64} << 20) << "reading an 85-byte file must not allocate what it claims";
}

TEST_F(RecordingTest, ZstdBombsAreRefusedBeforeTheyInflate) {
  // 64 MiB of zeros in a few kilobytes: inflated, the zeros read as millions of empty records.
  const uint64_t inflated = uint64_t{64} << 20;
  mcap::File bytes;
  const std::string bomb = mcap::zstdZeros(inflated);
  const uint64_t chunkAt = bytes.add(mcap::chunkRecord({.stored = bomb, .uncompressedSize = inflated}));
  const uint64_t goodAt = bytes.add(mcap::chunkRecord({.records = someRecords(3), .startTime = kT0, .endTime = kT0 + 2}));
  const std::string path = file("bomb.mcap");
  writeFile(path, bytes.unclosed());

  const uint64_t growth = peakGrowth([&] {
    RecordingReader reader(path);
    EXPECT_EQ(reader.summary().messageCount, 3u) << "the chunk after the bomb is still read";
    EXPECT_THAT(problemsText(reader), HasSubstr("byte " + std::to_string(chunkAt) + ": "));
    EXPECT_THAT(problemsText(reader), HasSubstr("compress")) << problemsText(reader);
    EXPECT_THAT(problemsText(reader), ::testing::Not(HasSubstr("byte " + std::to_string(goodAt))));
    // Refused from its header: not a byte inflated, no record walked but the good chunk's four.
    EXPECT_EQ(reader.readStats().bytesDecompressed, someRecords(3).size());
    EXPECT_EQ(reader.readStats().recordsVisited, 4u);
  });
  EXPECT_LT(growth, uint64_t{16} << 20);
}

TEST_F(RecordingTest, RecordsThatDoNotBelongInAChunkAreDamage) {
  // Zeros inside a chunk read as records of opcode 0 and no content: damage, not millions of
  // records to skip.
  mcap::File bytes;
  const uint64_t chunkAt = bytes.add(mcap::chunkRecord({.records = std::string(4096, '\0')}));
  const std::string path = file("zeros.mcap");
  writeFile(path, bytes.unclosed());
  RecordingReader reader(path);
  EXPECT_THAT(problemsText(reader), HasSubstr("byte " + std::to_string(chunkAt) + ": "));
  EXPECT_THAT(problemsText(reader), HasSubstr("record 0x00"));
  EXPECT_EQ(reader.readStats().recordsVisited, 1u);
}

TEST_F(RecordingTest, DuplicateChunkIndexEntriesAreRefused) {
  mcap::File bytes;
  const std::string chunk = mcap::chunkRecord({.records = someRecords(3), .startTime = kT0, .endTime = kT0 + 2});
  const uint64_t chunkAt = bytes.add(chunk);
  const mcap::ChunkIndexEntry entry{kT0, kT0 + 2, chunkAt, chunk.size(), 0, 0};
  std::vector<std::string> summary{mcap::channelRecord(1, "t"), mcap::statisticsRecord(3, 1, 16, kT0, kT0 + 2)};
  for (int i = 0; i < 16; ++i) summary.push_back(mcap::chunkIndexRecord(entry));
  const std::string path = file("duplicates.mcap");
  writeFile(path, bytes.closed(summary));

  RecordingReader reader(path);
  EXPECT_EQ(reader.summary().chunks.size(), 1u);
  EXPECT_THAT(problemsText(reader), HasSubstr("chunk index lists the chunk at byte " + std::to_string(chunkAt) + " twice"));
  uint64_t read = 0;
  reader.forEachMessage([&](const RecordedMessage&) { return ++read, true; });
  EXPECT_EQ(read, 3u) << "each chunk is read once";
  EXPECT_EQ(reader.readStats().chunksRead, 2u) << "once to scan the file, once to read it";
}

TEST_F(RecordingTest, OverlappingChunkIndexEntriesAreRefused) {
  mcap::File bytes;
  const std::string chunk = mcap::chunkRecord({.records = someRecords(3), .startTime = kT0, .endTime = kT0 + 2});
  const uint64_t chunkAt = bytes.add(chunk);
  const uint64_t secondAt = bytes.add(mcap::chunkRecord({.records = someRecords(2, kT0 + 3), .startTime = kT0 + 3, .endTime = kT0 + 4}));
  std::vector<std::string> summary{mcap::channelRecord(1, "t"), mcap::statisticsRecord(5, 1, 2, kT0, kT0 + 4),
                                   mcap::chunkIndexRecord({kT0, kT0 + 2, chunkAt, chunk.size(), 0, 0}),
                                   mcap::chunkIndexRecord({kT0 + 3, kT0 + 4, chunkAt + 10, secondAt + 5 - chunkAt, 0, 0})};
  const std::string path = file("overlap.mcap");
  writeFile(path, bytes.closed(summary));

  RecordingReader reader(path);
  EXPECT_THAT(problemsText(reader), HasSubstr("overlap"));
  uint64_t read = 0;
  reader.forEachMessage([&](const RecordedMessage&) { return ++read, true; });
  EXPECT_EQ(read, 5u);
}

TEST_F(RecordingTest, AFileTruncatedWhileOpenIsAnErrorNamingTheOffsetNotASignal) {
  const std::string path = file("shrinking.mcap");
  {
    RecordingWriter writer(path, {.chunkBytes = 4 * 1024});
    writeMessages(writer, 3000);
  }
  RecordingReader reader(path);
  ASSERT_TRUE(reader.indexed());
  const auto chunks = reader.summary().chunks;
  ASSERT_GT(chunks.size(), 4u);
  const uint64_t cut = chunks[chunks.size() / 2].offset + 100;  // inside a chunk
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut)), 0);

  uint64_t read = 0;
  reader.forEachMessage([&](const RecordedMessage&) { return ++read, true; });
  EXPECT_GT(read, 0u);
  EXPECT_LT(read, 3000u);
  ASSERT_FALSE(reader.problems().empty());
  EXPECT_EQ(reader.problems().front().offset, cut) << problemsText(reader);
  EXPECT_THAT(reader.problems().front().what, HasSubstr("truncated")) << problemsText(reader);

  // Rewritten in place with other bytes: damage, reported, never read as data.
  writeFile(path, std::string(static_cast<std::size_t>(chunks.back().offset + chunks.back().length), 'z'));
  read = 0;
  reader.forEachMessage([&](const RecordedMessage&) { return ++read, true; });
  EXPECT_EQ(read, 0u);
}

TEST_F(RecordingTest, AFileTruncatedWhileItIsScannedIsAnErrorNamingTheOffset) {
  const std::string whole = file("whole.mcap");
  {
    RecordingWriter writer(whole, {.chunkBytes = 4 * 1024});
    writeMessages(writer, 3000);
  }
  const std::string bytes = readFile(whole);
  const std::string path = file("unclosed.mcap");
  writeFile(path, bytes.substr(0, bytes.size() - 200));  // no summary: opening scans the chunks
  const uint64_t cut = bytes.size() / 2;
  bool truncated = false;
  RecordingReader reader(path, [&](uint64_t, uint64_t) {
    if (!truncated) {
      ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(cut)), 0);
    }
    truncated = true;
  });
  EXPECT_FALSE(reader.indexed());
  EXPECT_LT(reader.summary().messageCount, 3000u);
  EXPECT_THAT(problemsText(reader), HasSubstr("byte " + std::to_string(cut) + ": ")) << problemsText(reader);
  EXPECT_THAT(problemsText(reader), HasSubstr("truncated")) << problemsText(reader);
}

TEST_F(RecordingTest, FailedOpensLeaveNoDescriptorBehind) {
  const std::string text = file("notes.txt");
  std::ofstream(text) << "just some text, long enough to not be a short file\n";
  const std::string noHeader = file("no-header.mcap");
  writeFile(noHeader, std::string(mcap::kMagic) + std::string(40, '\x07'));
  const std::size_t before = openDescriptors();
  for (int i = 0; i < 100; ++i) {
    EXPECT_THROW(RecordingReader{text}, RecordingError);
    EXPECT_THROW(RecordingReader{noHeader}, RecordingError);
    EXPECT_THROW(RecordingReader{dir_.string()}, RecordingError);
  }
  EXPECT_EQ(openDescriptors(), before);
}

TEST_F(RecordingTest, DamageInsideAChunkIsReportedAtTheChunksFileOffset) {
  mcap::File bytes;
  // A channel and two messages (97 bytes), then three bytes: a record header cut short.
  const uint64_t chunkAt = bytes.add(mcap::chunkRecord({.records = someRecords(2) + std::string("\x05\x01\x00", 3)}));
  const std::string path = file("cut-record.mcap");
  writeFile(path, bytes.unclosed());
  RecordingReader reader(path);
  ASSERT_FALSE(reader.problems().empty());
  EXPECT_EQ(reader.problems().front().offset, chunkAt) << problemsText(reader);
  EXPECT_THAT(reader.problems().front().what, HasSubstr("(record 3, at byte 97 of the chunk")) << problemsText(reader);
}

TEST_F(RecordingTest, ManyEventNamesAreRecordedUpToTheChannelLimitAndTheRestCounted) {
  const std::string path = file("names.mcap");
  {
    RecordingWriter writer(path, {.chunkBytes = 256 * 1024});
    for (int i = 0; i < 65535 + 10; ++i) {
      EXPECT_NO_THROW(writer.write("name-" + std::to_string(i), kT0 + static_cast<uint64_t>(i), kT0, "p"));
    }
    writer.write("name-7", kT0 + 70000, kT0, "still recorded");
    writer.close();
    EXPECT_EQ(writer.messageCount(), 65535u + 1u);
  }
  RecordingReader reader(path);
  EXPECT_TRUE(reader.indexed());
  EXPECT_EQ(reader.summary().channels.size(), 65535u);
  EXPECT_EQ(reader.summary().messageCount, 65535u + 1u);
}

TEST_F(RecordingTest, EvenTheMostRepetitiveRecordsAreWrittenSoReadersAcceptThem) {
  // 60 KB of one letter per message inflates more than any reader allows a chunk to: the writer
  // pads such chunks instead of storing them uncompressed, so the file stays small.
  const std::string path = file("repetitive.mcap");
  const std::string payload(60'000, 'a');
  {
    RecordingWriter writer(path, {.chunkBytes = 512 * 1024});
    for (int i = 0; i < 200; ++i) writer.write("same", kT0 + static_cast<uint64_t>(i), kT0, payload);
    writer.close();
    EXPECT_GE(writer.compressedBytes(), writer.uncompressedBytes() / kMaxRecordingCompressionRatio);
    EXPECT_LT(fs::file_size(path), writer.uncompressedBytes() / 500);
  }
  RecordingReader reader(path);
  EXPECT_TRUE(reader.problems().empty()) << problemsText(reader);
  uint64_t read = 0;
  reader.forEachMessage([&](const RecordedMessage& m) { return read += m.payload == payload, true; });
  EXPECT_EQ(read, 200u);
  EXPECT_TRUE(reader.problems().empty()) << problemsText(reader);
  for (const auto& chunk : reader.summary().chunks) EXPECT_EQ(chunk.compression, "zstd");
}

TEST_F(RecordingTest, TooLongTopicsAreCountedNotWritten) {
  RecordingWriter writer(file("long-topic.mcap"));
  EXPECT_FALSE(writer.write(std::string(kMaxRecordingTopicBytes + 1, 't'), kT0, kT0, "p"));
  EXPECT_TRUE(writer.write(std::string(kMaxRecordingTopicBytes, 't'), kT0, kT0, "p"));
  EXPECT_EQ(writer.droppedCount(), 1u);
  EXPECT_EQ(writer.messageCount(), 1u);
}

TEST_F(RecordingTest, AProblemIsListedOnceHoweverOftenItsChunkIsRead) {
  const std::string path = file("damaged.mcap");
  {
    RecordingWriter writer(path, {.chunkBytes = 2 * 1024});
    writeMessages(writer, 300);
  }
  std::string bytes = readFile(path);
  const RecordingChunk chunk = RecordingReader(path).summary().chunks.at(1);
  bytes[chunk.offset + chunk.length - 3] ^= 0x40;  // inside its compressed records
  writeFile(path, bytes);
  RecordingReader reader(path);
  for (int i = 0; i < 3; ++i) reader.forEachMessage([](const RecordedMessage&) { return true; });
  ASSERT_EQ(reader.problems().size(), 1u) << problemsText(reader);
  EXPECT_EQ(reader.unlistedProblems(), 0u);
}

TEST_F(RecordingTest, AStopFlagEndsAScanOrAReadAtTheNextRecord) {
  const std::string closed = file("closed.mcap");
  {
    RecordingWriter writer(closed, {.chunkBytes = 4 * 1024});
    writeMessages(writer, 3000);
  }
  const std::string bytes = readFile(closed);
  const std::string unclosed = file("unclosed.mcap");
  writeFile(unclosed, bytes.substr(0, bytes.size() - 200));

  std::atomic<bool> stop{false};
  uint64_t progressCalls = 0;
  try {
    RecordingReader reader(unclosed, [&](uint64_t, uint64_t) { ++progressCalls, stop = true; }, &stop);
    FAIL() << "the scan went on after the stop flag was set";
  } catch (const RecordingStopped& stopped) {
    EXPECT_THAT(stopped.what(), HasSubstr("unclosed.mcap"));
    EXPECT_THAT(stopped.what(), HasSubstr("stopped"));
  }
  EXPECT_EQ(progressCalls, 1u);

  stop = false;
  RecordingReader reader(closed, {}, &stop);
  uint64_t seen = 0;
  reader.forEachMessage([&](const RecordedMessage&) {
    if (++seen == 5) stop = true;
    return true;  // the flag alone stops it
  });
  EXPECT_EQ(seen, 5u);
  EXPECT_EQ(reader.readStats().chunksRead, 1u);
  EXPECT_TRUE(reader.problems().empty()) << "stopping is not damage: " << problemsText(reader);
}

// Writes one message and closes; the file then reads back as a recording holding it.
void record(const fs::path& path, RecordingWriterOptions options = {}) {
  RecordingWriter writer(path.string(), std::move(options));
  writer.write("t", kT0, kT0, "payload");
  writer.close();
}

uint64_t messagesIn(const fs::path& path) {
  RecordingReader reader(path.string());
  return reader.summary().messageCount;
}

// The file names in `dir`, so a test sees that nothing was left behind.
std::vector<std::string> namesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Where a RecordingWriter writes: a recording goes to a file of its own at the path it was given,
// never through a symbolic link put there and never into an existing file's bytes (another name
// for them, a hard link, or a reader holding them open keep what they had).
class RecordingWriterFileTest : public RecordingTest {
 protected:
  void SetUp() override {
    RecordingTest::SetUp();
    path_ = dir_ / "run.mcap";
    elsewhere_ = dir_ / "precious.txt";
  }
  fs::path path_;
  fs::path elsewhere_;
};

TEST_F(RecordingWriterFileTest, ASymbolicLinkAtThePathIsRefusedAndItsTargetLeftAlone) {
  writeFile(elsewhere_, "precious");
  fs::create_symlink(elsewhere_, path_);
  try {
    RecordingWriter writer(path_.string());
    FAIL() << "wrote through a symbolic link";
  } catch (const RecordingError& error) {
    EXPECT_THAT(error.what(), HasSubstr(path_.string()));
    EXPECT_THAT(error.what(), HasSubstr("symbolic link"));
  }
  EXPECT_EQ(readFile(elsewhere_), "precious");
  EXPECT_TRUE(fs::is_symlink(path_));
  EXPECT_EQ(namesIn(dir_), (std::vector<std::string>{"precious.txt", "run.mcap"}));
}

TEST_F(RecordingWriterFileTest, ADanglingSymbolicLinkDoesNotCreateItsTarget) {
  fs::create_symlink(elsewhere_, path_);
  EXPECT_THROW(RecordingWriter(path_.string()), RecordingError);
  EXPECT_FALSE(fs::exists(elsewhere_));
}

TEST_F(RecordingWriterFileTest, AnExistingFileIsReplacedNotTruncated) {
  writeFile(path_, "an earlier file");
  const fs::path otherName = dir_ / "other-name";
  fs::create_hard_link(path_, otherName);
  record(path_);
  EXPECT_EQ(messagesIn(path_), 1u);
  EXPECT_EQ(readFile(otherName), "an earlier file") << "the existing file's bytes were written over";
  EXPECT_EQ(namesIn(dir_), (std::vector<std::string>{"other-name", "run.mcap"})) << "no temporary file left";
}

TEST_F(RecordingWriterFileTest, AnExclusiveWriterRefusesAnExistingFileAndLeavesIt) {
  writeFile(path_, "an earlier file");
  try {
    RecordingWriter writer(path_.string(), {.exclusive = true});
    FAIL() << "opened an existing file";
  } catch (const RecordingError& error) {
    EXPECT_THAT(error.what(), HasSubstr(path_.string()));
    EXPECT_THAT(error.what(), HasSubstr("File exists"));
  }
  EXPECT_EQ(readFile(path_), "an earlier file");
  record(dir_ / "fresh.mcap", {.exclusive = true});
  EXPECT_EQ(messagesIn(dir_ / "fresh.mcap"), 1u);
}

TEST_F(RecordingWriterFileTest, ADirectoryAtThePathIsRefusedNamingIt) {
  fs::create_directory(path_);
  try {
    RecordingWriter writer(path_.string());
    FAIL();
  } catch (const RecordingError& error) {
    EXPECT_THAT(error.what(), HasSubstr(path_.string()));
  }
  EXPECT_EQ(namesIn(dir_), (std::vector<std::string>{"run.mcap"})) << "no temporary file left";
}

TEST_F(RecordingWriterFileTest, NewAndReplacingFilesGetTheModeTheUmaskGives) {
  const mode_t old = ::umask(022);
  record(path_);
  writeFile(dir_ / "again.mcap", "old");
  ::chmod((dir_ / "again.mcap").c_str(), 0600);
  record(dir_ / "again.mcap");
  ::umask(old);
  EXPECT_EQ(fs::status(path_).permissions(), fs::perms(0644));
  EXPECT_EQ(fs::status(dir_ / "again.mcap").permissions(), fs::perms(0644));
}

}  // namespace
}  // namespace livemon::transport
