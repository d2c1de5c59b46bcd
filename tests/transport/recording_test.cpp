#include <livemon/transport/recording.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ULL;

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

}  // namespace
}  // namespace livemon::transport
