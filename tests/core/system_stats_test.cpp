// SystemStatsSampler: /proc parsing on synthetic files (malformed and missing ones skipped), the
// CPU percentage from two reads, and GPU Stats through a stand-in NVML library or none at all.
#include <livemon/system_stats.h>

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <livemon/clock.h>
#include <livemon/event.h>

#include "event_recorder.h"
#include "scoped_environment.h"
#include "system_probe.h"
#include "test_paths.h"

namespace livemon {
namespace {

using namespace std::chrono_literals;
using testing::EventRecorder;

// A /proc of our own, in a temporary directory.
class FakeProc {
 public:
  FakeProc() {
    std::string pattern = (std::filesystem::temp_directory_path() / "livemon-proc-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
    std::filesystem::create_directory(root_ / "self");
  }
  ~FakeProc() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(root_ / name) << text; }
  // /proc/self/stat with these utime and stime, and a command name that tries to confuse a parser.
  void writeCpuTicks(uint64_t user, uint64_t system) const {
    write("self/stat", "4242 (py (worker) 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 " + std::to_string(user) + " " +
                           std::to_string(system) + " 0 0 20 0 3 0 12345 1000000 2000 18446744073709551615\n");
  }
  void writeAll() const {
    writeCpuTicks(100, 50);
    write("self/statm", "50000 2500 300 10 0 4000 0\n");
    write("meminfo", "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    6000000 kB\n");
  }
  std::string root() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

SystemStatsOptions testOptions(const FakeProc& proc, ManualClock& clock) {
  SystemStatsOptions options;
  options.procRoot = proc.root();
  options.nvmlLibrary.clear();
  options.clock = &clock;
  options.window = 1000ms;
  options.backgroundThread = false;
  return options;
}

// Every Stat key of the recorded windows with its last value.
std::map<std::string, double> statValues(const EventRecorder& recorder) {
  std::map<std::string, double> values;
  for (const Event& event : recorder.named(kStatEventName)) {
    for (const auto& [key, value] : event.data) values[key] = std::get<double>(value);
  }
  return values;
}

const double kTicksPerSecond = static_cast<double>(sysconf(_SC_CLK_TCK));
const double kPageSize = static_cast<double>(sysconf(_SC_PAGESIZE));

TEST(ProcParsing, ReadsCpuTicksPastACommandNameWithSpacesAndParentheses) {
  EXPECT_EQ(detail::parseProcessCpuTicks("1 (a) b) R 1 1 1 0 -1 0 0 0 0 0 7 5 0 0"), 12u);
  EXPECT_EQ(detail::parseProcessCpuTicks("1 (x) R 1 1 1 0 -1 0 0 0 0 0 0 0"), 0u);
}

TEST(ProcParsing, MalformedCpuTicksAreRefused) {
  EXPECT_FALSE(detail::parseProcessCpuTicks(""));
  EXPECT_FALSE(detail::parseProcessCpuTicks("1 no parenthesis R 1 1 1 0 -1 0 0 0 0 0 7 5"));
  EXPECT_FALSE(detail::parseProcessCpuTicks("1 (x) R 1 1 1 0 -1 0 0 0 0 0 7")) << "stime missing";
  EXPECT_FALSE(detail::parseProcessCpuTicks("1 (x) R 1 1 1 0 -1 0 0 0 0 0 -7 5")) << "negative";
  EXPECT_FALSE(detail::parseProcessCpuTicks("1 (x) R 1 1 1 0 -1 0 0 0 0 0 7x 5"));
  EXPECT_FALSE(detail::parseProcessCpuTicks("1 (x) R 1 1 1 0 -1 0 0 0 0 0 99999999999999999999 5")) << "overflow";
  EXPECT_FALSE(detail::parseProcessCpuTicks("1 (x) R 1 1 1 0 -1 0 0 0 0 0 18446744073709551615 1")) << "sum overflow";
}

TEST(ProcParsing, ResidentPagesAreStatmsSecondField) {
  EXPECT_EQ(detail::parseResidentPages("50000 2500 300 10 0 4000 0\n"), 2500u);
  EXPECT_FALSE(detail::parseResidentPages("50000\n"));
  EXPECT_FALSE(detail::parseResidentPages("50000 lots"));
  EXPECT_FALSE(detail::parseResidentPages(""));
}

TEST(ProcParsing, HostMemoryUsedIsTotalLessAvailable) {
  EXPECT_EQ(detail::parseHostMemoryUsedBytes("MemTotal: 1000 kB\nMemFree: 10 kB\nMemAvailable: 400 kB\n"), 600u * 1024);
  EXPECT_FALSE(detail::parseHostMemoryUsedBytes("MemTotal: 1000 kB\nMemFree: 10 kB\n")) << "no MemAvailable";
  EXPECT_FALSE(detail::parseHostMemoryUsedBytes("MemTotal: 1000 kB\nMemAvailable: 4000 kB\n")) << "more free than there is";
  EXPECT_FALSE(detail::parseHostMemoryUsedBytes("MemTotal: 1000 MB\nMemAvailable: 400 kB\n")) << "unknown unit";
  EXPECT_FALSE(detail::parseHostMemoryUsedBytes("MemTotal: 99999999999999999999 kB\nMemAvailable: 1 kB\n"));
  EXPECT_FALSE(detail::parseHostMemoryUsedBytes("XMemTotal: 1000 kB\nMemAvailable: 400 kB\n")) << "not a line's start";
}

TEST(ProcParsing, FilesLongerThanTheirBoundAreNotRead) {
  FakeProc proc;
  proc.write("big", std::string(100, 'x'));
  EXPECT_EQ(detail::readSmallFile(proc.root() + "/big", 100), std::string(100, 'x'));
  EXPECT_FALSE(detail::readSmallFile(proc.root() + "/big", 99));
  EXPECT_FALSE(detail::readSmallFile(proc.root() + "/missing", 100));
}

TEST(SystemStatsSampler, PublishesCpuPercentFromTwoReadsAndMemoryFromEach) {
  FakeProc proc;
  proc.writeAll();
  ManualClock clock;
  EventRecorder recorder;
  {
    SystemStatsSampler sampler(testOptions(proc, clock));
    sampler.sampleNow();
    clock.advance(500ms);
    // Half a second of wall time, 25 ticks of CPU time (user and system): 50 % at 100 ticks/s.
    proc.writeCpuTicks(100 + 20, 50 + 5);
    sampler.sampleNow();
    EXPECT_EQ(sampler.samples(), 2u);
    clock.advance(1000ms);  // closes the window
  }
  const auto values = statValues(recorder);
  ASSERT_TRUE(values.contains("system.cpu_percent.value")) << "keys: " << values.size();
  const double expected = 100.0 * (25 / kTicksPerSecond) / 0.5;
  EXPECT_NEAR(values.at("system.cpu_percent.value"), expected, 1e-9);
  EXPECT_NEAR(values.at("system.cpu_percent.max"), expected, 1e-9);
  EXPECT_EQ(values.at("system.rss_bytes.value"), 2500 * kPageSize);
  EXPECT_EQ(values.at("system.host_memory_used_bytes.value"), 10000000.0 * 1024);
  EXPECT_EQ(values.at("system.host_memory_used_bytes.max"), 10000000.0 * 1024);
  for (const auto& [key, value] : values) EXPECT_EQ(key.rfind("system.gpu", 0), std::string::npos) << key;
}

TEST(SystemStatsSampler, CpuPercentIsOverTheTimeBetweenReadsAndOneCoreIsAHundred) {
  FakeProc proc;
  proc.writeAll();
  ManualClock clock;
  EventRecorder recorder;
  SystemStatsOptions options = testOptions(proc, clock);
  options.prefix = "host7";
  SystemStatsSampler sampler(options);
  sampler.sampleNow();
  // Three seconds of CPU time in two seconds: a process busy on one and a half cores.
  clock.advance(2000ms);
  proc.writeCpuTicks(100 + static_cast<uint64_t>(3 * kTicksPerSecond), 50);
  sampler.sampleNow();
  clock.advance(1000ms);
  const auto values = statValues(recorder);
  ASSERT_TRUE(values.contains("host7.cpu_percent.value"));
  EXPECT_NEAR(values.at("host7.cpu_percent.value"), 150.0, 1e-9);
}

TEST(SystemStatsSampler, MalformedOrMissingFilesAreSkippedAndTheRestIsPublished) {
  FakeProc proc;
  proc.writeAll();
  proc.write("self/statm", "garbage\n");
  std::filesystem::remove(std::filesystem::path(proc.root()) / "meminfo");
  ManualClock clock;
  EventRecorder recorder;
  {
    SystemStatsSampler sampler(testOptions(proc, clock));
    sampler.sampleNow();
    clock.advance(100ms);
    proc.write("self/stat", "4242 (py) S 1 2 3");  // cut short: no CPU sample, and the next starts afresh
    sampler.sampleNow();
    clock.advance(100ms);
    proc.writeCpuTicks(100, 50);
    sampler.sampleNow();
    clock.advance(100ms);
    proc.writeCpuTicks(110, 50);  // 10 ticks in 0.1 s: one core at 100 ticks/s
    sampler.sampleNow();
    EXPECT_EQ(sampler.samples(), 4u);
    clock.advance(1000ms);
  }
  const auto values = statValues(recorder);
  EXPECT_FALSE(values.contains("system.rss_bytes.value"));
  EXPECT_FALSE(values.contains("system.host_memory_used_bytes.value"));
  ASSERT_TRUE(values.contains("system.cpu_percent.value"));
  const double expected = 100.0 * (10 / kTicksPerSecond) / 0.1;
  EXPECT_NEAR(values.at("system.cpu_percent.value"), expected, 1e-9);
  EXPECT_NEAR(values.at("system.cpu_percent.max"), expected, 1e-9) << "no sample across the unreadable read";
}

TEST(SystemStatsSampler, CpuTicksGoingBackwardsGiveNoSample) {
  FakeProc proc;
  proc.writeAll();
  proc.writeCpuTicks(1000, 1000);
  ManualClock clock;
  EventRecorder recorder;
  {
    SystemStatsSampler sampler(testOptions(proc, clock));
    sampler.sampleNow();
    clock.advance(100ms);
    proc.writeCpuTicks(10, 10);
    sampler.sampleNow();
    clock.advance(1000ms);
  }
  EXPECT_FALSE(statValues(recorder).contains("system.cpu_percent.value"));
}

TEST(SystemStatsSampler, WithoutNvmlThereAreNoGpuStatsAndNoError) {
  FakeProc proc;
  proc.writeAll();
  ManualClock clock;
  EventRecorder recorder;
  SystemStatsOptions options = testOptions(proc, clock);
  options.nvmlLibrary = proc.root() + "/libnvidia-ml.so.1";  // not there
  {
    SystemStatsSampler sampler(options);
    EXPECT_EQ(sampler.gpuCount(), 0u);
    EXPECT_NE(sampler.gpuStatus().find("NVML not loaded"), std::string::npos) << sampler.gpuStatus();
    sampler.sampleNow();
    clock.advance(1000ms);
  }
  const auto values = statValues(recorder);
  EXPECT_TRUE(values.contains("system.rss_bytes.value"));
  for (const auto& [key, value] : values) EXPECT_EQ(key.find("gpu"), std::string::npos) << key;
}

TEST(SystemStatsSampler, AFakeNvmlGivesEachGpuItsStatsAndSkipsWhatItCannotRead) {
  FakeProc proc;
  proc.writeAll();
  ManualClock clock;
  EventRecorder recorder;
  SystemStatsOptions options = testOptions(proc, clock);
  options.nvmlLibrary = livemon::test_paths::builtFile("fake_nvml");
  {
    SystemStatsSampler sampler(options);
    EXPECT_EQ(sampler.gpuCount(), 2u);
    EXPECT_EQ(sampler.gpuStatus(), "NVML: 2 GPUs");
    sampler.sampleNow();
    clock.advance(1000ms);
  }
  const auto values = statValues(recorder);
  EXPECT_EQ(values.at("system.gpu0.util.value"), 40.0);
  EXPECT_EQ(values.at("system.gpu0.util.mean"), 40.0);
  EXPECT_EQ(values.at("system.gpu1.util.max"), 90.0);
  EXPECT_EQ(values.at("system.gpu0.memory_used_bytes.value"), 1024.0 * 1024 * 1024);
  EXPECT_EQ(values.at("system.gpu1.memory_used_bytes.max"), 2048.0 * 1024 * 1024);
  EXPECT_EQ(values.at("system.gpu0.temperature_c.value"), 61.0);
  EXPECT_FALSE(values.contains("system.gpu1.temperature_c.value")) << "NVML_ERROR_NOT_SUPPORTED: skipped";
  EXPECT_EQ(values.at("system.gpu0.power_w.value"), 250.5);
  EXPECT_EQ(values.at("system.gpu1.power_w.value"), 251.5);
  EXPECT_TRUE(values.contains("system.cpu_percent.value") == false) << "one read: no CPU span yet";
}

TEST(SystemStatsSampler, AnNvmlThatFailsToInitializeGivesNoGpuStats) {
  FakeProc proc;
  proc.writeAll();
  ManualClock clock;
  EventRecorder recorder;
  SystemStatsOptions options = testOptions(proc, clock);
  options.nvmlLibrary = livemon::test_paths::builtFile("fake_nvml");
  setenv("FAKE_NVML_INIT_FAILS", "1", 1);
  {
    SystemStatsSampler sampler(options);
    unsetenv("FAKE_NVML_INIT_FAILS");
    EXPECT_EQ(sampler.gpuCount(), 0u);
    EXPECT_NE(sampler.gpuStatus().find("nvmlInit_v2"), std::string::npos) << sampler.gpuStatus();
    sampler.sampleNow();
    clock.advance(1000ms);
  }
  for (const auto& [key, value] : statValues(recorder)) EXPECT_EQ(key.find("gpu"), std::string::npos) << key;
}

TEST(SystemStatsSampler, ALibraryWithoutNvmlsFunctionsIsNotUsed) {
  FakeProc proc;
  ManualClock clock;
  SystemStatsOptions options = testOptions(proc, clock);
  options.nvmlLibrary = "libc.so.6";
  SystemStatsSampler sampler(options);
  EXPECT_EQ(sampler.gpuCount(), 0u);
  EXPECT_NE(sampler.gpuStatus().find("lacks nvmlInit_v2"), std::string::npos) << sampler.gpuStatus();
}

TEST(SystemStatsSampler, BadOptionsAreRefusedByName) {
  auto refusal = [](SystemStatsOptions options) -> std::string {
    options.backgroundThread = false;
    try {
      SystemStatsSampler sampler(options);
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "";
  };
  SystemStatsOptions options;
  options.prefix.clear();
  EXPECT_NE(refusal(options).find("prefix"), std::string::npos);
  options = {};
  options.window = 0ms;
  EXPECT_NE(refusal(options).find("window"), std::string::npos);
  options = {};
  options.period = 0ms;
  EXPECT_NE(refusal(options).find("period"), std::string::npos);
}

TEST(SystemStatsSampler, TheThreadSamplesTheRealProcessEveryPeriod) {
  EventRecorder recorder;
  SystemStatsOptions options;
  options.period = 5ms;
  options.window = 5ms;
  options.nvmlLibrary.clear();
  std::set<std::string> keys;
  {
    SystemStatsSampler sampler(options);
    // The real /proc: RSS and host memory from the first read on, CPU from the second.
    for (std::size_t seen = 1; seen < 1000 && !keys.contains("system.cpu_percent.value"); ++seen) {
      ASSERT_TRUE(recorder.waitFor(seen, 30s));
      for (const auto& [key, value] : statValues(recorder)) keys.insert(key);
    }
  }
  EXPECT_TRUE(keys.contains("system.cpu_percent.value"));
  EXPECT_TRUE(keys.contains("system.rss_bytes.value"));
  EXPECT_TRUE(keys.contains("system.host_memory_used_bytes.value"));
  EXPECT_GT(statValues(recorder).at("system.rss_bytes.max"), 0.0);
}

TEST(SharedSystemStatsSampler, OneSamplerServesTheProcessUntilTheLastHolderLetsGo) {
  auto first = sharedSystemStatsSampler(2000ms);
  auto second = sharedSystemStatsSampler(300ms);
  EXPECT_EQ(first.get(), second.get());
  EXPECT_EQ(second->options().window, 2000ms) << "the running sampler, not a second one";
  EXPECT_EQ(first->options().prefix, "system");
  first.reset();
  second.reset();
  auto third = sharedSystemStatsSampler(300ms);
  EXPECT_EQ(third->options().window, 300ms) << "a fresh sampler once none held it";
}

TEST(EnableSystemStats, TheProcessSamplesWhileAHandleLivesAndStopsWithTheLast) {
  EventRecorder recorder;
  SystemStatsHandle first = enableSystemStats(50ms);
  ASSERT_TRUE(first);
  SystemStatsHandle second = enableSystemStats(2000ms);
  EXPECT_EQ(first.sampler(), second.sampler()) << "one sampler for the process";
  EXPECT_EQ(second.sampler()->options().window, 50ms) << "the running sampler keeps its window";
  EXPECT_EQ(sharedSystemStatsSampler(3000ms).get(), first.sampler()) << "the same one the publishers share";
  // Its Stats reach the process's event handlers like any other Stat.
  ASSERT_TRUE(recorder.waitFor(1, 30s));
  EXPECT_TRUE(statValues(recorder).contains("system.rss_bytes.value"));
  first.reset();
  EXPECT_FALSE(first);
  EXPECT_EQ(second.sampler()->options().window, 50ms) << "still on: the second handle holds it";
  second.reset();
  SystemStatsHandle third = enableSystemStats(300ms);
  EXPECT_EQ(third.sampler()->options().window, 300ms) << "a fresh sampler once no handle held it";
}

TEST(EnableSystemStats, AnEmptyHandleHoldsNothingAndABadWindowIsRefused) {
  const SystemStatsHandle empty;
  EXPECT_FALSE(empty);
  EXPECT_EQ(empty.sampler(), nullptr);
  try {
    static_cast<void>(enableSystemStats(0ms));
    FAIL() << "a zero window was taken";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("window"), std::string::npos) << error.what();
  }
}

TEST(EnableSystemStats, TheEnvironmentVariableAsksWithOneAndIsRefusedWithAnythingElse) {
  testing::ScopedEnvironment variable("LIVEMON_SYSTEM_STATS");
  EXPECT_FALSE(systemStatsRequested()) << "unset";
  variable.set("");
  EXPECT_FALSE(systemStatsRequested());
  variable.set("0");
  EXPECT_FALSE(systemStatsRequested());
  variable.set("1");
  EXPECT_TRUE(systemStatsRequested());
  variable.set("yes");
  try {
    systemStatsRequested();
    FAIL() << "\"yes\" was taken";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("LIVEMON_SYSTEM_STATS"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("yes"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace livemon
