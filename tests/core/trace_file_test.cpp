// writeChromeTrace where others may write the directory too (a shared /tmp): the trace goes to a
// file of its own under a name no one can guess, renamed into place, with the mode the umask
// gives; nothing at a predictable name beside it is written through.
#include <livemon/profiler.h>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace livemon {
namespace {

namespace fs = std::filesystem;

// A fresh directory, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "livemon-trace-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void writeFile(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> namesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

Trace someTrace() {
  Trace trace;
  trace.pid = 7;
  trace.threads.push_back(TraceThread{1, "main"});
  trace.ranges.push_back(TraceRange{"forward", 1, 1000, 2000, 0});
  return trace;
}

TEST(TraceFile, NothingPlacedAtAGuessableNameBesideTheTraceIsWrittenThrough) {
  TempDir temp;
  const fs::path victim = temp.path() / "victim.txt";
  writeFile(victim, "precious");
  const fs::path path = temp.path() / "t.json";
  const std::vector<std::string> guesses = {"t.json.tmp" + std::to_string(::getpid()), "t.json.tmp",
                                            "t.json.partial" + std::to_string(::getpid())};
  for (const std::string& guess : guesses) fs::create_symlink(victim, temp.path() / guess);
  const mode_t old = ::umask(022);
  writeChromeTrace(someTrace(), path);
  ::umask(old);
  EXPECT_EQ(readFile(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(readFile(path), chromeTraceJson(someTrace()));
  EXPECT_EQ(fs::status(path).permissions(), fs::perms(0644));
  std::vector<std::string> expected = guesses;
  expected.insert(expected.end(), {"t.json", "victim.txt"});
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(namesIn(temp.path()), expected) << "a temporary file left behind";
}

TEST(TraceFile, AnEarlierTraceIsReplacedNotWrittenInto) {
  TempDir temp;
  const fs::path path = temp.path() / "t.json";
  writeFile(path, "an earlier trace");
  fs::create_hard_link(path, temp.path() / "other-name");
  writeChromeTrace(someTrace(), path);
  EXPECT_EQ(readFile(temp.path() / "other-name"), "an earlier trace");
  EXPECT_EQ(readFile(path), chromeTraceJson(someTrace()));
  EXPECT_EQ(namesIn(temp.path()), (std::vector<std::string>{"other-name", "t.json"}));
}

TEST(TraceFile, AFailureNamesThePathAndLeavesNothingBehind) {
  TempDir temp;
  fs::create_directory(temp.path() / "t.json");
  try {
    writeChromeTrace(someTrace(), temp.path() / "t.json");
    FAIL() << "wrote over a directory";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("t.json"), std::string::npos) << error.what();
  }
  EXPECT_EQ(namesIn(temp.path()), (std::vector<std::string>{"t.json"}));
  EXPECT_THROW(writeChromeTrace(someTrace(), temp.path() / "missing" / "t.json"), std::runtime_error);
}

}  // namespace
}  // namespace livemon
