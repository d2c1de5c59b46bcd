// RecordingHistoryArchive: a relay's history older than it holds, from the recordings it writes
// (`livemonctl relay --record DIR`). It serves the files of this run it was told of and nothing
// else in the directory, never through a symbolic link, and one call opens at most one file.
#include <livemon/transport/recording_history.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <livemon/transport/recording.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

constexpr int64_t kBefore = 1'000'000;

// A closed recording at `path` of `count` messages on `topic`, logged at `first`, `first` + 1, ...
void writeRecording(const std::filesystem::path& path, const std::string& topic, int count = 3, uint64_t first = 1) {
  RecordingWriter writer(path.string());
  for (uint64_t i = first; i < first + static_cast<uint64_t>(count); ++i) writer.write(topic, i, i, "payload");
  writer.close();
}

// Every topic the archive serves, piece by piece; `calls` counts the next() calls.
std::multiset<std::string> readAll(HistoryArchive& archive, int* calls = nullptr) {
  HistoryArchive::Cursor cursor;
  std::vector<HistoryMessage> piece;
  std::multiset<std::string> topics;
  int made = 0;
  while (archive.next(cursor, kBefore, piece) && made < 10'000) {
    ++made;
    for (const HistoryMessage& message : piece) topics.insert(message.topic);
    piece.clear();
  }
  if (calls != nullptr) *calls = made;
  return topics;
}

// Issue 29, item 6: every *.mcap in the directory was served, symbolic links followed.
TEST(RecordingHistory, ServesOnlyThisRunsRecordingsNeverThroughASymbolicLink) {
  test::TempDir dir;
  test::TempDir elsewhere;
  writeRecording(dir.path() / "relay-20260101T000000Z.mcap", "earlier.run");  // an earlier run's
  writeRecording(dir.path() / "notes.mcap", "foreign");                       // put there by someone else
  writeRecording(elsewhere.path() / "secret.mcap", "elsewhere");
  std::filesystem::create_symlink(elsewhere.path() / "secret.mcap", dir.path() / "relay-20261127T000000Z.mcap");
  writeRecording(dir.path() / "relay-20261127T000001Z.mcap", "this.run");

  RecordingHistoryArchive archive;
  EXPECT_FALSE(archive.add(dir.path() / "relay-20261127T000000Z.mcap")) << "a symbolic link is refused";
  EXPECT_FALSE(archive.add(dir.path() / "missing.mcap"));
  ASSERT_TRUE(archive.add(dir.path() / "relay-20261127T000001Z.mcap"));
  EXPECT_EQ(readAll(archive), (std::multiset<std::string>{"this.run", "this.run", "this.run"}));
}

TEST(RecordingHistory, AFileReplacedAfterItWasAddedIsNotServed) {
  test::TempDir dir;
  test::TempDir elsewhere;
  const auto own = dir.path() / "relay-a.mcap";
  const auto swapped = dir.path() / "relay-b.mcap";
  writeRecording(own, "this.run");
  writeRecording(swapped, "this.run");
  RecordingHistoryArchive archive;
  ASSERT_TRUE(archive.add(own));
  ASSERT_TRUE(archive.add(swapped));

  // One replaced by a symbolic link to a file elsewhere, the other by another file under its name.
  writeRecording(elsewhere.path() / "secret.mcap", "elsewhere");
  std::filesystem::remove(own);
  std::filesystem::create_symlink(elsewhere.path() / "secret.mcap", own);
  writeRecording(dir.path() / "other.mcap", "foreign");
  std::filesystem::rename(dir.path() / "other.mcap", swapped);
  EXPECT_TRUE(readAll(archive).empty());
}

// Issue 29, item 4b: one call listed the whole directory and opened files until one held
// something, so recordings that hold nothing for the answer were all opened in one call.
TEST(RecordingHistory, OneCallOpensAtMostOneFile) {
  test::TempDir dir;
  RecordingHistoryArchive archive;
  constexpr int kFiles = 30;
  for (int i = 0; i < kFiles; ++i) {
    const auto path = dir.path() / ("relay-" + std::to_string(i) + ".mcap");
    if (i % 2 == 0) {
      writeRecording(path, "late", 1, kBefore + 10);  // logged after what the answer asks for
    } else {
      std::ofstream(path) << "not a recording";
    }
    ASSERT_TRUE(archive.add(path));
  }
  int calls = 0;
  EXPECT_TRUE(readAll(archive, &calls).empty());
  EXPECT_GE(calls, kFiles - 1) << "the files were opened in fewer calls";
}

TEST(RecordingHistory, ReadsOnThroughFilesAddedAfterItRanOut) {
  test::TempDir dir;
  RecordingHistoryArchive archive;
  writeRecording(dir.path() / "relay-1.mcap", "first", 2);
  ASSERT_TRUE(archive.add(dir.path() / "relay-1.mcap"));
  HistoryArchive::Cursor cursor;
  std::vector<HistoryMessage> piece;
  std::size_t messages = 0;
  while (archive.next(cursor, kBefore, piece)) {
    messages += piece.size();
    piece.clear();
  }
  EXPECT_EQ(messages, 2u);
  writeRecording(dir.path() / "relay-2.mcap", "second", 1, 5);
  ASSERT_TRUE(archive.add(dir.path() / "relay-2.mcap"));
  archive.resume(cursor);
  while (archive.next(cursor, kBefore, piece)) {
    messages += piece.size();
  }
  ASSERT_EQ(messages, 3u);
  EXPECT_EQ(piece.back().topic, "second");
}

// Issue 31: the relay writes a file per run, several at once, so the files' log times interleave.
// Each file is read from where its own last piece ended: what a file added later holds from before
// the last message of the one before is served too, and a resume reads every file on.
TEST(RecordingHistory, FilesWrittenAtOnceAreEachReadWhole) {
  test::TempDir dir;
  RecordingHistoryArchive archive;
  {
    RecordingWriter a((dir.path() / "a.mcap").string());
    RecordingWriter b((dir.path() / "b.mcap").string());
    for (uint64_t t = 1; t <= 6; ++t) (t % 2 == 1 ? a : b).write(t % 2 == 1 ? "a" : "b", t, t, "payload");
  }
  ASSERT_TRUE(archive.add(dir.path() / "a.mcap"));
  ASSERT_TRUE(archive.add(dir.path() / "b.mcap"));
  EXPECT_EQ(readAll(archive), (std::multiset<std::string>{"a", "a", "a", "b", "b", "b"}));

  // Answered up to t = 4, then both files read on to what came before 7.
  HistoryArchive::Cursor cursor;
  std::vector<HistoryMessage> piece;
  std::multiset<std::string> topics;
  while (archive.next(cursor, 5, piece)) {
    for (const HistoryMessage& message : piece) topics.insert(message.topic);
    piece.clear();
  }
  EXPECT_EQ(topics, (std::multiset<std::string>{"a", "a", "b", "b"}));
  archive.resume(cursor);
  while (archive.next(cursor, 7, piece)) {
    for (const HistoryMessage& message : piece) topics.insert(message.topic);
    piece.clear();
  }
  EXPECT_EQ(topics, (std::multiset<std::string>{"a", "a", "a", "b", "b", "b"})) << "each message once";
}

// Bytes this process has read so far (read(2), pread(2), ...): /proc/self/io's rchar.
uint64_t bytesReadSoFar() {
  std::ifstream io("/proc/self/io");
  std::string key;
  uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  ADD_FAILURE() << "no rchar in /proc/self/io";
  return 0;
}

// Writes `count` messages on `topic` of `bytes` random bytes each (which zstd cannot shrink),
// logged at 1, 2, ... to `writer`.
void writeIncompressible(RecordingWriter& writer, const std::string& topic, int count, std::size_t bytes) {
  std::mt19937_64 random(29);
  std::string payload(bytes, '\0');
  for (int i = 1; i <= count; ++i) {
    for (std::size_t at = 0; at + 8 <= payload.size(); at += 8) {
      const uint64_t bits = random();
      payload.replace(at, 8, reinterpret_cast<const char*>(&bits), 8);
    }
    writer.write(topic, static_cast<uint64_t>(i), static_cast<uint64_t>(i), payload);
  }
}

// Issue 29, item 4b: a recording still being written (no summary yet, as the relay's current one
// is) was scanned whole when the archive opened it, in one next() call, however large it was.
TEST(RecordingHistory, AnUnclosedRecordingIsScannedAPartPerCall) {
  test::TempDir dir;
  const auto path = dir.path() / "relay-open.mcap";
  RecordingWriter writer(path.string());  // left open until the end: no summary
  constexpr int kMessages = 8192;         // of 4 KiB that zstd cannot shrink: 32 MiB
  writeIncompressible(writer, "train.loss", kMessages, 4096);
  writer.flush();
  const uint64_t fileBytes = std::filesystem::file_size(path);
  ASSERT_GE(fileBytes, 8 * RecordingHistoryArchive::kScanBytesPerCall);

  RecordingHistoryArchive archive;
  ASSERT_TRUE(archive.add(path));
  HistoryArchive::Cursor cursor;
  std::vector<HistoryMessage> piece;
  uint64_t mostInOneCall = 0;
  std::size_t messages = 0;
  int calls = 0;
  for (bool more = true; more && calls < 10'000; ++calls) {
    const uint64_t before = bytesReadSoFar();
    more = archive.next(cursor, kBefore, piece);
    mostInOneCall = std::max(mostInOneCall, bytesReadSoFar() - before);
    for (const HistoryMessage& message : piece) {
      EXPECT_EQ(message.keptNs, static_cast<int64_t>(messages + 1)) << "oldest first, each once";
      ++messages;
    }
    piece.clear();
  }
  EXPECT_EQ(messages, static_cast<std::size_t>(kMessages)) << "the whole recording, part by part";
  EXPECT_LE(mostInOneCall, 2 * RecordingHistoryArchive::kScanBytesPerCall)
      << "one call read " << mostInOneCall << " bytes of a recording of " << fileBytes;
  EXPECT_GE(calls, static_cast<int>(fileBytes / RecordingHistoryArchive::kScanBytesPerCall));
}

// A piece held up to 512 messages however large: 512 batches of 4 MiB, which a publisher may send
// and the relay records, were 2 GiB in memory for one answer at once.
TEST(RecordingHistory, APieceOfLargeMessagesIsBoundedInBytes) {
  test::TempDir dir;
  const auto path = dir.path() / "relay-large.mcap";
  constexpr int kMessages = 400;  // of 64 KiB that zstd cannot shrink: 25 MiB
  {
    RecordingWriter writer(path.string());
    writeIncompressible(writer, "train.batch", kMessages, 64 * 1024);
    writer.close();
  }
  RecordingHistoryArchive archive;
  ASSERT_TRUE(archive.add(path));
  HistoryArchive::Cursor cursor;
  std::vector<HistoryMessage> piece;
  std::size_t messages = 0;
  std::size_t largestPiece = 0;
  for (int calls = 0; archive.next(cursor, kBefore, piece) && calls < 10'000; ++calls) {
    std::size_t bytes = 0;
    for (const HistoryMessage& message : piece) {
      EXPECT_EQ(message.keptNs, static_cast<int64_t>(messages + 1)) << "oldest first, each once";
      bytes += message.payload->size();
      ++messages;
    }
    largestPiece = std::max(largestPiece, bytes);
    piece.clear();
  }
  EXPECT_EQ(messages, static_cast<std::size_t>(kMessages));
  EXPECT_LE(largestPiece, RecordingHistoryArchive::kPieceBytes + 64 * 1024);
}

}  // namespace
}  // namespace livemon::transport
