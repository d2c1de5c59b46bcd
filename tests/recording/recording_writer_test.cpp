// Where a RecordingWriter writes: a recording goes to a file of its own at the path it was given,
// never through a symbolic link put there and never into an existing file's bytes (another name
// for them, a hard link, or a reader holding them open keep what they had).
#include <livemon/transport/recording.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.h"

namespace livemon::transport {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr uint64_t kT0 = 1'700'000'000'000'000'000ULL;

void writeFile(const fs::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

class RecordingWriterFileTest : public ::testing::Test {
 protected:
  test::TempDir temp_;
  fs::path dir_ = temp_.path();
  fs::path path_ = dir_ / "run.mcap";
  fs::path elsewhere_ = dir_ / "precious.txt";
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
