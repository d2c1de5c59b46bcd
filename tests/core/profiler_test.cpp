// Profiler: the schedule against torch.profiler's semantics, the state machine and onTraceReady,
// and the traces it hands over (JSON checked by an independent parser, tests/core/check_chrome_trace.py).
#include <livemon/profiler.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_paths.h"

namespace livemon {
namespace {

namespace fs = std::filesystem;

// '.' None, 'w' Warmup, 'r' Record, 'S' RecordAndSave.
char letter(ProfilerAction action) {
  switch (action) {
    case ProfilerAction::None: return '.';
    case ProfilerAction::Warmup: return 'w';
    case ProfilerAction::Record: return 'r';
    case ProfilerAction::RecordAndSave: return 'S';
  }
  return '?';
}

struct ScheduleCase {
  int64_t wait, warmup, active, repeat, skipFirst;
  std::string expected;  // the action of steps 0, 1, 2, ... as torch.profiler.schedule gives it
};

TEST(Schedule, GivesTorchsActionForEveryStep) {
  const std::vector<ScheduleCase> cases = {
      {1, 1, 2, 0, 0, ".wrS.wrS.wrS.wrS"},
      {0, 0, 1, 0, 0, "SSSSSS"},
      {0, 0, 1, 2, 0, "SS......"},
      {2, 1, 3, 2, 1, "...wrrS..wrrS......."},
      {0, 2, 1, 1, 3, "...wwS......"},
      {3, 0, 1, 0, 0, "...S...S...S"},
      {0, 1, 4, 1, 0, "wrrrS......"},
  };
  for (const ScheduleCase& c : cases) {
    const Schedule schedule(c.wait, c.warmup, c.active, c.repeat, c.skipFirst);
    std::string actual;
    for (std::size_t step = 0; step < c.expected.size(); ++step) actual += letter(schedule(static_cast<int64_t>(step)));
    EXPECT_EQ(actual, c.expected) << "wait=" << c.wait << " warmup=" << c.warmup << " active=" << c.active
                                  << " repeat=" << c.repeat << " skip_first=" << c.skipFirst;
  }
}

TEST(Schedule, RejectsBadArgumentsByName) {
  auto messageOf = [](auto make) {
    try {
      make();
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(messageOf([] { Schedule(-1, 0, 1); }).find("wait"), std::string::npos);
  EXPECT_NE(messageOf([] { Schedule(0, -1, 1); }).find("warmup"), std::string::npos);
  EXPECT_NE(messageOf([] { Schedule(0, 0, 0); }).find("active"), std::string::npos);
  EXPECT_NE(messageOf([] { Schedule(0, 0, 1, -2); }).find("repeat"), std::string::npos);
  EXPECT_NE(messageOf([] { Schedule(0, 0, 1, 0, -1); }).find("skip_first"), std::string::npos);
}

TEST(ProfilerAction, HasTorchsNames) {
  EXPECT_EQ(profilerActionName(ProfilerAction::None), "NONE");
  EXPECT_EQ(profilerActionName(ProfilerAction::Warmup), "WARMUP");
  EXPECT_EQ(profilerActionName(ProfilerAction::Record), "RECORD");
  EXPECT_EQ(profilerActionName(ProfilerAction::RecordAndSave), "RECORD_AND_SAVE");
}

std::set<std::string> userRangeNames(const Trace& trace) {
  std::set<std::string> names;
  for (const TraceRange& range : trace.ranges) {
    if (!range.name.starts_with("ProfilerStep#")) names.insert(std::string(range.name));
  }
  return names;
}

// Steps `steps` times with one range "s<step>" per step; returns the traces handed over.
std::vector<Trace> runSteps(ProfilerOptions options, int steps, bool stopAtEnd = true) {
  std::vector<Trace> traces;
  options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
  Profiler profiler(std::move(options));
  profiler.start();
  for (int i = 0; i < steps; ++i) {
    { RecordFunction range(std::string("s") + std::to_string(profiler.stepNum())); }
    profiler.step();
  }
  if (stopAtEnd) profiler.stop();
  return traces;
}

TEST(Profiler, HandsOverOneTracePerCycleWithTheRangesOfItsActiveSteps) {
  ProfilerOptions options;
  options.schedule = Schedule(1, 1, 2, 2);
  const std::vector<Trace> traces = runSteps(options, 12);
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(traces[0].step, 3);
  EXPECT_EQ(userRangeNames(traces[0]), (std::set<std::string>{"s2", "s3"}));
  EXPECT_EQ(traces[1].step, 7);
  EXPECT_EQ(userRangeNames(traces[1]), (std::set<std::string>{"s6", "s7"}));
  for (const Trace& trace : traces) {
    EXPECT_EQ(trace.pid, static_cast<int64_t>(getpid()));
    EXPECT_LE(trace.startNs, trace.endNs);
    for (const TraceRange& range : trace.ranges) {
      EXPECT_LE(trace.startNs, range.startNs);
      EXPECT_LE(range.startNs, range.endNs);
      EXPECT_LE(range.endNs, trace.endNs);
    }
  }
}

TEST(Profiler, StopWhileRecordingHandsOverThePartialCycleButNotWhileWarmingUp) {
  ProfilerOptions options;
  options.schedule = Schedule(1, 1, 3);
  // Steps 0..2 done: the profiler is in step 3, a Record step.
  std::vector<Trace> traces = runSteps(options, 3);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0].step, 3);
  EXPECT_EQ(userRangeNames(traces[0]), (std::set<std::string>{"s2"}));
  // In step 1, a Warmup step.
  traces = runSteps(options, 1);
  EXPECT_TRUE(traces.empty());
}

TEST(Profiler, WithoutAScheduleRecordsFromStartToStop) {
  const std::vector<Trace> traces = runSteps(ProfilerOptions{}, 5);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(userRangeNames(traces[0]), (std::set<std::string>{"s0", "s1", "s2", "s3", "s4"}));
  for (const TraceRange& range : traces[0].ranges) EXPECT_FALSE(range.name.starts_with("ProfilerStep#"));
}

TEST(Profiler, StepRangesEncloseEachRecordedStep) {
  ProfilerOptions options;
  options.schedule = Schedule(0, 1, 2, 1);
  const std::vector<Trace> traces = runSteps(options, 4);
  ASSERT_EQ(traces.size(), 1u);
  std::set<std::string> steps;
  for (const TraceRange& range : traces[0].ranges) {
    if (range.name.starts_with("ProfilerStep#")) {
      steps.insert(std::string(range.name));
      EXPECT_EQ(range.depth, 0);
    } else {
      EXPECT_EQ(range.depth, 1) << range.name;
    }
  }
  EXPECT_EQ(steps, (std::set<std::string>{"ProfilerStep#1", "ProfilerStep#2"}));
}

TEST(Profiler, OnlyOneRunsAtATime) {
  Profiler first;
  Profiler second;
  first.start();
  EXPECT_THROW(second.start(), std::logic_error);
  first.stop();
  EXPECT_NO_THROW(second.start());
  EXPECT_TRUE(second.running());
}

TEST(Profiler, AThrowingHandlerLeavesStepWithTheStateAdvanced) {
  ProfilerOptions options;
  options.schedule = Schedule(0, 0, 1);
  options.onTraceReady = [](const Trace&) { throw std::runtime_error("disk full"); };
  Profiler profiler(options);
  profiler.start();
  EXPECT_THROW(profiler.step(), std::runtime_error);
  EXPECT_EQ(profiler.stepNum(), 1);
  EXPECT_EQ(profiler.currentAction(), ProfilerAction::RecordAndSave);
  EXPECT_TRUE(profiler.running());
}  // the destructor's stop() throws again, and swallows it

const TraceRange* rangeNamed(const Trace& trace, std::string_view name) {
  for (const TraceRange& range : trace.ranges) {
    if (range.name == name) return &range;
  }
  return nullptr;
}

// A range timed for range stats has a known start: when recording starts inside it, the trace
// holds it as the parent of what was recorded, not its children alone.
TEST(Profiler, ATraceStartedInsideATimedRangeHoldsThatRangeAsItsParent) {
  setRangeStatsEnabled(true);
  std::vector<Trace> traces;
  ProfilerOptions options;
  options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
  Profiler profiler(options);
  {
    RecordFunction step("train_step");
    { RecordFunction done("data"); }  // ended before recording: not in the trace
    profiler.start();
    { RecordFunction child("forward"); }
  }
  profiler.stop();
  setRangeStatsEnabled(false);
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(userRangeNames(traces[0]), (std::set<std::string>{"train_step", "forward"}));
  const TraceRange* parent = rangeNamed(traces[0], "train_step");
  const TraceRange* child = rangeNamed(traces[0], "forward");
  ASSERT_TRUE(parent != nullptr && child != nullptr);
  EXPECT_LT(parent->startNs, traces[0].startNs) << "its start is when it opened, before recording";
  EXPECT_LE(parent->startNs, child->startNs);
  EXPECT_GE(parent->endNs, child->endNs);
  EXPECT_EQ(parent->depth, 0);
  EXPECT_EQ(child->depth, 1);
  EXPECT_EQ(&traces[0].ranges.front(), parent) << "enclosing ranges come first";
}

// With a schedule, ranges opened while warming up are buffered: one still open when the active
// steps begin is kept with its start (it used to be cut as "started before recording").
TEST(Profiler, ARangeOpenedWhileWarmingUpEnclosesWhatTheActiveStepRecorded) {
  std::vector<Trace> traces;
  ProfilerOptions options;
  options.schedule = Schedule(0, 1, 1, 1);  // warmup, then one RecordAndSave step
  options.rangeStats = false;
  options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
  Profiler profiler(options);
  profiler.start();
  {
    RecordFunction epoch("epoch");
    EXPECT_TRUE(epoch.active());
    profiler.step();  // recording starts inside "epoch"
    { RecordFunction inner("inner"); }
  }
  profiler.step();
  ASSERT_EQ(traces.size(), 1u);
  const TraceRange* epoch = rangeNamed(traces[0], "epoch");
  const TraceRange* inner = rangeNamed(traces[0], "inner");
  ASSERT_TRUE(epoch != nullptr) << "the enclosing range is missing";
  ASSERT_TRUE(inner != nullptr);
  EXPECT_LT(epoch->startNs, traces[0].startNs);
  EXPECT_LE(epoch->startNs, inner->startNs);
  EXPECT_GE(epoch->endNs, inner->endNs);
  EXPECT_LT(epoch->depth, inner->depth);
}

// Nothing was timed when this range opened, so its start was never read.
TEST(Profiler, RangesOpenedWhileNothingWasTimedAreLeftOut) {
  std::vector<Trace> traces;
  ProfilerOptions options;
  options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
  Profiler profiler(options);
  {
    RecordFunction before("before");
    EXPECT_FALSE(before.active());
    profiler.start();
    RecordFunction during("during");
    EXPECT_TRUE(during.active());
  }
  profiler.stop();
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(userRangeNames(traces[0]), (std::set<std::string>{"during"}));
}

TEST(Profiler, DurationsCoverWhatTheRangeEnclosed) {
  std::vector<Trace> traces;
  ProfilerOptions options;
  options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
  Profiler profiler(options);
  profiler.start();
  {
    LIVEMON_RECORD_FUNCTION("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // what is measured, not a synchronisation
  }
  profiler.stop();
  ASSERT_EQ(traces.size(), 1u);
  ASSERT_EQ(traces[0].ranges.size(), 1u);
  EXPECT_EQ(traces[0].ranges[0].name, "sleep");
  EXPECT_GE(traces[0].ranges[0].endNs - traces[0].ranges[0].startNs, 10'000'000);
}

TEST(Profiler, CollectsEveryRangeOfConcurrentThreadsIncludingExitedOnes) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5000;  // more than one buffer chunk per thread
  std::vector<Trace> traces;
  ProfilerOptions options;
  options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
  Profiler profiler(options);
  profiler.start();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      setThreadName(std::string("worker-") + std::to_string(t));
      for (int i = 0; i < kPerThread; ++i) {
        LIVEMON_RECORD_FUNCTION("outer");
        LIVEMON_RECORD_FUNCTION("inner");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();  // the threads have exited before the collection
  profiler.stop();
  ASSERT_EQ(traces.size(), 1u);
  const Trace& trace = traces[0];
  EXPECT_EQ(trace.ranges.size(), static_cast<std::size_t>(kThreads * kPerThread * 2));
  EXPECT_EQ(trace.droppedRanges, 0u);
  std::set<std::string> threadNames;
  for (const TraceThread& thread : trace.threads) threadNames.insert(thread.name);
  EXPECT_EQ(threadNames, (std::set<std::string>{"worker-0", "worker-1", "worker-2", "worker-3"}));
  for (const TraceRange& range : trace.ranges) EXPECT_EQ(range.depth, range.name == "outer" ? 0 : 1);
}

TEST(Profiler, AThreadBeyondItsBufferCapDropsAndCountsInsteadOfGrowing) {
  // A thread holds 256 blocks of 4096 ranges between two collections. The block it was writing at
  // the last collection may already be partly used, so the cap is that minus under one block.
  constexpr uint64_t kCap = 256u * 4096u;
  constexpr uint64_t kRecorded = kCap + 1000;
  std::vector<Trace> traces;
  ProfilerOptions options;
  options.rangeStats = false;
  options.onTraceReady = [&](const Trace& trace) { traces.push_back(trace); };
  Profiler profiler(options);
  profiler.start();
  for (uint64_t i = 0; i < kRecorded; ++i) {
    LIVEMON_RECORD_FUNCTION("flood");
  }
  profiler.stop();
  ASSERT_EQ(traces.size(), 1u);
  const uint64_t kept = traces[0].ranges.size();
  EXPECT_LE(kept, kCap);
  EXPECT_GT(kept, kCap - 4096);
  EXPECT_EQ(kept + traces[0].droppedRanges, kRecorded);  // every range kept or counted
  EXPECT_EQ(nlohmann::json::parse(chromeTraceJson(traces[0]))["otherData"]["dropped_ranges"].get<uint64_t>(),
            traces[0].droppedRanges);

  // The collection freed the buffer: the next recording keeps everything again.
  profiler.start();
  for (int i = 0; i < 10; ++i) {
    LIVEMON_RECORD_FUNCTION("after");
  }
  profiler.stop();
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(traces[1].ranges.size(), 10u);
  EXPECT_EQ(traces[1].droppedRanges, 0u);
}

TEST(Profiler, CollectsWhileThreadsKeepRecording) {
  std::atomic<bool> done{false};
  std::atomic<int64_t> recorded{0};
  int64_t collected = 0;
  ProfilerOptions options;
  options.schedule = Schedule(0, 0, 1);  // a trace every step
  options.onTraceReady = [&](const Trace& trace) {
    for (const TraceRange& range : trace.ranges) collected += range.name == "busy";
  };
  Profiler profiler(options);
  profiler.start();
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      while (!done.load(std::memory_order_relaxed)) {
        LIVEMON_RECORD_FUNCTION("busy");
        recorded.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  while (recorded.load() < 1000) std::this_thread::yield();  // the threads are recording
  for (int i = 0; i < 200; ++i) profiler.step();
  done = true;
  for (std::thread& thread : threads) thread.join();
  profiler.stop();
  EXPECT_GT(collected, 0);
  EXPECT_LE(collected, recorded.load());
}

fs::path freshDirectory(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("livemon-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir;
}

int runChecker(const std::string& arguments) {
  const char* python = std::getenv("LIVEMON_TEST_PYTHON");
  const std::string command = std::string(python != nullptr ? python : "/usr/bin/python3") + " " +
                              livemon::test_paths::sourceDir() + "/tests/core/check_chrome_trace.py " + arguments;
  return std::system(command.c_str());
}

TEST(ChromeTrace, HandlerWritesFilesThatParseAndNestPerThread) {
  const fs::path dir = freshDirectory("trace") / "nested" / "dir";
  ProfilerOptions options;
  options.schedule = Schedule(0, 0, 2, 2);
  options.onTraceReady = chromeTraceHandler(dir, "worker");
  Profiler profiler(options);
  profiler.start();
  setThreadName("main \"loop\"");
  for (int step = 0; step < 4; ++step) {
    std::thread helper([] {
      LIVEMON_RECORD_FUNCTION("helper");
      LIVEMON_RECORD_FUNCTION("helper\\inner");
    });
    {
      LIVEMON_RECORD_FUNCTION("train_step");
      { LIVEMON_RECORD_FUNCTION("forward"); }
      {
        LIVEMON_RECORD_FUNCTION("backward");
        LIVEMON_RECORD_FUNCTION("grad \"sync\"");
      }
      // A name that is not valid UTF-8 (a truncated "é"): the file must still be valid JSON.
      { LIVEMON_RECORD_FUNCTION("optimizer \xc3"); }
    }
    helper.join();
    profiler.step();
  }
  profiler.stop();
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path().filename().string());
  ASSERT_EQ(files.size(), 2u);
  for (const std::string& file : files) {
    EXPECT_TRUE(file.starts_with("worker.")) << file;
    EXPECT_TRUE(file.ends_with(".pt.trace.json")) << file;
  }
  EXPECT_EQ(runChecker("--min-files 2 --min-threads 2 "
                       "--expect-names 'train_step,forward,backward,grad \"sync\",helper,helper\\inner,optimizer \xef\xbf\xbd' " +
                       dir.string()),
            0);
  fs::remove_all(dir.parent_path().parent_path());
}

TEST(ChromeTrace, JsonHoldsCompleteEventsInMicrosecondsAndThreadNames) {
  Trace trace;
  trace.pid = 42;
  trace.threads = {{7, "main"}};
  trace.ranges = {{"forward", 7, 1'000'500, 3'000'750, 0}};
  const std::string json = chromeTraceJson(trace);
  // Byte for byte: one event per line, times in microseconds with the nanoseconds kept.
  EXPECT_EQ(json,
            "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"producer\":\"livemon\",\"step\":0,\"dropped_ranges\":0},"
            "\"traceEvents\":[\n"
            "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":42,\"tid\":0,\"args\":{\"name\":\"livemon\"}},\n"
            "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":42,\"tid\":7,\"args\":{\"name\":\"main\"}},\n"
            "{\"ph\":\"X\",\"cat\":\"cpu\",\"name\":\"forward\",\"pid\":42,\"tid\":7,\"ts\":1000.500,\"dur\":2000.250,"
            "\"args\":{\"depth\":0}}\n"
            "]}\n");
  // And as a trace viewer reads it.
  const nlohmann::json parsed = nlohmann::json::parse(json);
  const nlohmann::json& events = parsed["traceEvents"];
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[1]["args"]["name"], "main");
  EXPECT_EQ(events[2]["ph"], "X");
  EXPECT_EQ(events[2]["name"], "forward");
  EXPECT_EQ(events[2]["tid"], 7);
  EXPECT_DOUBLE_EQ(events[2]["ts"].get<double>(), 1000.5);
  EXPECT_DOUBLE_EQ(events[2]["dur"].get<double>(), 2000.25);
}

TEST(ChromeTrace, ErrorsNameThePath) {
  const fs::path dir = freshDirectory("not-a-dir");
  fs::create_directories(dir);
  const fs::path file = dir / "file";
  std::ofstream(file) << "x";
  try {
    writeChromeTraceToDir(Trace{}, file / "sub");
    FAIL() << "no exception";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find((file / "sub").string()), std::string::npos) << error.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace livemon
