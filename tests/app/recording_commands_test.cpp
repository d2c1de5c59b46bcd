#include <livemonctl/export.h>
#include <livemonctl/info.h>
#include <livemonctl/replay.h>
#include <livemonctl/time_bound.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <livemon/clock.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemonctl/command.h>

#include "json_lines.h"
#include "recorded_sample.h"
#include "test_support.h"

namespace livemon::livemonctl {
namespace {

using namespace transport;

using namespace std::chrono_literals;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test::Json;
using test::kT0;
using test::received;
using test::source;

class RecordingCommandsTest : public ::testing::Test {
 protected:
  void writeSample() { test::writeSampleRecording(path_); }

  test::TempDir temp_;  // removed with its contents after each test
  fs::path dir_ = temp_.path();
  std::string path_ = (dir_ / "run.mcap").string();
  std::atomic<bool> stop_{false};
};

TEST_F(RecordingCommandsTest, InfoCountsByNameAndSource) {
  writeSample();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runInfo({.path = path_}, out, err), 0) << err.str();
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("closed cleanly"));
  EXPECT_THAT(text, HasSubstr("events       12\n"));
  EXPECT_THAT(text, HasSubstr("duration     9.000 s"));
  EXPECT_THAT(text, ::testing::ContainsRegex("livemon.Stat +10\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("eval +2\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("train@node-1:100 rank 0 +10\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("eval@node-1:200 +2\n"));
}

TEST_F(RecordingCommandsTest, InfoJsonCarriesTheSameFigures) {
  writeSample();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runInfo({.path = path_, .json = true}, out, err), 0);
  // One line, spaced as it has always been printed (scripts may rely on the bytes).
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(text.rfind("{\"path\": ", 0), 0u) << text;
  const Json json = test::parseJson(text);
  EXPECT_EQ(json["path"], path_);
  EXPECT_EQ(json["events"], 12);
  EXPECT_EQ(json["indexed"], true);
  EXPECT_EQ(json["start_ns"].get<uint64_t>() + 9'000'000'000, json["end_ns"].get<uint64_t>());
  EXPECT_EQ(json["duration_s"], 9.0);
  EXPECT_TRUE(json["duration_s"].is_number_float());
  Json stats;
  for (const Json& channel : json["channels"]) {
    if (channel["topic"] == "livemon.Stat") stats = channel;
  }
  EXPECT_EQ(stats["encoding"], "msgpack") << json;
  EXPECT_EQ(stats["events"], 10) << json;
  Json evaluator;
  for (const Json& source : json["sources"]) {
    if (source["run"] == "eval") evaluator = source;
  }
  EXPECT_EQ(evaluator["host"], "node-1") << json;
  EXPECT_EQ(evaluator["pid"], 200) << json;
  EXPECT_TRUE(evaluator["rank"].is_null()) << json;
  EXPECT_TRUE(evaluator["world_size"].is_null()) << json;
  EXPECT_TRUE(evaluator["local_rank"].is_null()) << json;
  EXPECT_EQ(evaluator["events"], 2) << json;
  EXPECT_EQ(json["problems"], Json::array());
  EXPECT_EQ(json["undecodable"], 0);
}

// A trainer whose events carry steps (its own `step`, or an int field "step"; a float field states
// none), restarted part way (steps go back), and an evaluator without steps.
void writeRestartedStepsRecording(const std::string& path) {
  RecordingWriter writer(path);
  const auto trainer = source("train", 100, 0);
  const auto evaluator = source("eval", 200);
  uint64_t sequence = 0;
  for (int64_t step : {10, 20, 30, 5}) {
    ReceivedEvent event = received(trainer, sequence, "livemon.Stat", std::chrono::seconds(sequence), {{"loss.mean", 1.0}});
    event.event.step = step;
    recordEvent(writer, event);
    ++sequence;
  }
  recordEvent(writer, received(trainer, sequence++, "batch", 5s, {{"step", int64_t{7}}}));
  recordEvent(writer, received(trainer, sequence++, "batch", 6s, {{"step", 8.0}}));
  recordEvent(writer, received(evaluator, 0, "eval", 7s, {{"accuracy", 0.5}}));
}

TEST_F(RecordingCommandsTest, InfoShowsTheStepRangeOverallAndPerSource) {
  writeRestartedStepsRecording(path_);
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runInfo({.path = path_}, out, err), 0) << err.str();
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("steps        10 to 7 in 5 events (lowest 5, highest 30)\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("train@node-1:100 rank 0 +6\n    steps 10 to 7 in 5 events \\(lowest 5, highest 30\\)\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("eval@node-1:200 +1\n    no steps\n"));
}

TEST_F(RecordingCommandsTest, InfoJsonCarriesTheStepRanges) {
  writeRestartedStepsRecording(path_);
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runInfo({.path = path_, .json = true}, out, err), 0) << err.str();
  const Json json = test::parseJson(out.str());
  const Json restarted = Json::parse(R"({"events": 5, "first": 10, "last": 7, "min": 5, "max": 30})");
  const Json none = Json::parse(R"({"events": 0, "first": null, "last": null, "min": null, "max": null})");
  std::map<std::string, Json> byRun;
  for (const Json& source : json["sources"]) byRun[source["run"]] = source;
  EXPECT_EQ(byRun["train"]["events"], 6) << json;
  EXPECT_EQ(byRun["train"]["steps"], restarted) << json;
  EXPECT_EQ(byRun["eval"]["events"], 1) << json;
  EXPECT_EQ(byRun["eval"]["steps"], none) << json;
  EXPECT_EQ(json["steps"], restarted) << "over the whole recording";
}

TEST_F(RecordingCommandsTest, InfoSaysWhenNoEventCarriesAStep) {
  writeSample();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runInfo({.path = path_}, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("steps        none (no steps in any event)\n"));
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("train@node-1:100 rank 0 +10\n    no steps\n"));
  out.str("");
  ASSERT_EQ(runInfo({.path = path_, .json = true}, out, err), 0) << err.str();
  const Json json = test::parseJson(out.str());
  EXPECT_EQ(json["steps"]["events"], 0) << json;
  EXPECT_TRUE(json["steps"]["first"].is_null()) << json;
}

TEST_F(RecordingCommandsTest, InfoTextEscapesWhatPublishersChose) {
  {
    RecordingWriter writer(path_);
    recordEvent(writer, received(source("run\x1b[2J", 300), 0, "name\x1b]0;pwned\x07\nfake line", 1s, {}));
  }
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runInfo({.path = path_}, out, err), 0) << err.str();
  const std::string text = out.str();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_EQ(text.find("\nfake line"), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("name\\u001b]0;pwned\\u0007\\nfake line"));
  EXPECT_THAT(text, HasSubstr("run\\u001b[2J@node-1:300"));
}

TEST_F(RecordingCommandsTest, ExportWritesTimesAtBothEndsOfTheRange) {
  {
    RecordingWriter writer(path_);
    for (int64_t ns : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
      ReceivedEvent event = received(source("train", 100), 0, "edge", 1s, {{"x", 1.0}});
      event.event.timestamp = fromWireTime(ns);
      recordEvent(writer, event);
    }
  }
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runExport({.path = path_}, stop_, out, err), 0) << err.str();
  const std::vector<Json> events = test::parseJsonLines(out.str());
  ASSERT_EQ(events.size(), 2u) << out.str();
  std::map<int64_t, std::string> times;
  for (const Json& event : events) times[event["ts"].get<int64_t>()] = event["time"];
  EXPECT_EQ(times, (std::map<int64_t, std::string>{{std::numeric_limits<int64_t>::min(), "1677-09-21T00:12:43.145224192Z"},
                                                   {std::numeric_limits<int64_t>::max(), "2262-04-11T23:47:16.854775807Z"}}));
}

TEST_F(RecordingCommandsTest, InfoAndExportStopWhenAskedWithStatus130) {
  writeSample();
  stop_ = true;
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runInfo({.path = path_}, stop_, out, err), kInterruptedExitCode);
  EXPECT_EQ(out.str(), "") << "an interrupted summary would be wrong";
  EXPECT_THAT(err.str(), HasSubstr("interrupted"));
  err.str("");
  EXPECT_EQ(runExport({.path = path_}, stop_, out, err), kInterruptedExitCode);
  EXPECT_THAT(err.str(), HasSubstr("interrupted"));
  EXPECT_EQ(out.str(), "");
}

TEST(ReplayPacer, WaitsTheGapsBetweenLogTimesDividedBySpeed) {
  ReplayPacer pacer(2.0, 10s);
  EXPECT_EQ(pacer.next(5'000'000'000), 0ns) << "the first event goes at once, whatever the summary says";
  EXPECT_EQ(pacer.next(7'000'000'000), 1s);
  EXPECT_EQ(pacer.next(7'000'000'001), 0ns);
  EXPECT_FALSE(pacer.cut());
}

TEST(ReplayPacer, NeverWaitsBackwardsOrLongerThanTheCap) {
  ReplayPacer pacer(0.01, 3s);
  EXPECT_EQ(pacer.next(UINT64_MAX), 0ns);
  EXPECT_EQ(pacer.next(0), 0ns) << "a clock that went backwards";
  EXPECT_EQ(pacer.next(UINT64_MAX), 3s);
  EXPECT_TRUE(pacer.cut());
  EXPECT_EQ(pacer.recordedGapNs(), UINT64_MAX);
  EXPECT_EQ(pacer.next(UINT64_MAX), 0ns);
  EXPECT_EQ(pacer.next(UINT64_MAX - 1), 0ns);
  EXPECT_EQ(pacer.cutCount(), 1u);
  ReplayPacer fast(10000.0, 0ns);
  EXPECT_EQ(fast.next(0), 0ns);
  EXPECT_EQ(fast.next(1'000'000'000'000'000'000), 0ns);
  EXPECT_THROW(ReplayPacer(0.0, 1s), std::invalid_argument);
  EXPECT_THROW(ReplayPacer(std::numeric_limits<double>::quiet_NaN(), 1s), std::invalid_argument);
  EXPECT_THROW(ReplayPacer(std::numeric_limits<double>::infinity(), 1s), std::invalid_argument);
  EXPECT_THROW(ReplayPacer(1.0, -1ns), std::invalid_argument);
}

TEST_F(RecordingCommandsTest, ReplayCutsLongGapsAndSaysSo) {
  {
    RecordingWriter writer(path_);
    const auto trainer = source("train", 100, 0);
    recordEvent(writer, received(trainer, 0, "tick", 0ms, {}));
    recordEvent(writer, received(trainer, 1, "tick", 1h, {}));            // a night without events
    recordEvent(writer, received(trainer, 2, "tick", 1h + 500ms, {}));
    recordEvent(writer, received(trainer, 3, "tick", 1h - 10s, {}));      // received out of order
  }
  ManualClock clock;
  const auto begin = clock.now();
  std::vector<std::chrono::nanoseconds> sleeps;
  ReplayOptions options;
  options.path = path_;
  options.endpoint = "ipc://" + (dir_ / "replay.sock").string();
  options.waitForSubscriber = 0ms;
  options.maxGap = 2s;
  options.clock = &clock;
  options.sleepUntil = [&](std::chrono::steady_clock::time_point t) {
    sleeps.push_back(t - clock.now());
    clock.set(std::max(t, clock.now()));
  };
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runReplay(options, stop_, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("replayed 4 events"));
  EXPECT_THAT(err.str(), HasSubstr("3600.0 s without events before 2025-11-22 18:00:00.003 UTC cut to 2 s")) << err.str();
  // 2 s for the night, 0.5 s after it, nothing for the late arrival.
  EXPECT_EQ(clock.now() - begin, 2500ms);
  for (const auto& sleep : sleeps) EXPECT_LE(sleep, 50ms) << "waits are sliced, so Ctrl-C is seen at once";
}

TEST_F(RecordingCommandsTest, InfoOnAFileThatIsNotARecordingFails) {
  std::ofstream(path_) << "hello";
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runInfo({.path = path_}, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr("run.mcap"));
  EXPECT_THAT(err.str(), HasSubstr("not an MCAP recording"));
}

TEST_F(RecordingCommandsTest, ExportJsonLinesWithinATimeRange) {
  writeSample();
  std::ostringstream out;
  std::ostringstream err;
  // Receive times run from 0.003 s to 9.003 s after the first event; 4..7 s holds windows 4, 5, 6
  // and the first eval.
  ASSERT_EQ(runExport({.path = path_, .format = ExportFormat::JsonLines, .from = "3.5", .to = "6.5"}, stop_, out, err),
            0)
      << err.str();
  const std::vector<Json> events = test::parseJsonLines(out.str());
  ASSERT_EQ(events.size(), 4u) << out.str();
  EXPECT_EQ(events[0]["name"], "livemon.Stat");
  EXPECT_EQ(events[0]["data"]["loss.mean"], 0.2);
  EXPECT_EQ(events[1]["name"], "eval");
  EXPECT_EQ(events[1]["data"]["epoch"], 1);
  EXPECT_TRUE(events[1]["data"]["epoch"].is_number_integer());
  EXPECT_THAT(err.str(), HasSubstr("exported 4 events"));
}

TEST_F(RecordingCommandsTest, ExportCsvHasARowPerFieldAndQuotesText) {
  writeSample();
  const std::string csv = (dir_ / "out.csv").string();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runExport({.path = path_, .format = ExportFormat::Csv, .output = csv, .from = "8.5"}, stop_, out, err), 0)
      << err.str();
  std::ifstream in(csv);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 2u + 4u);  // header, window 9 (2 fields), the second eval (4 fields)
  EXPECT_EQ(lines[0], "time_ns,time,source,name,seq,key,type,value,step");
  EXPECT_THAT(lines[1], HasSubstr(",train@node-1:100 rank 0,livemon.Stat,9,loss.count,double,100.0"));
  EXPECT_THAT(out.str(), ::testing::IsEmpty());
  bool quoted = false;
  for (const auto& line : lines) quoted = quoted || line.ends_with(",note,string,\"best, \"\"so far\"\"\",");
  EXPECT_TRUE(quoted) << "text with commas and quotes must be quoted CSV";
}

// Events with a step, one with an int field "step", one without: what the step column shows.
void writeSteppedRecording(const std::string& path) {
  RecordingWriter writer(path);
  const auto trainer = source("train", 100, 0);
  ReceivedEvent window = received(trainer, 0, "livemon.Stat", 1s, {{"loss.mean", 0.5}, {"loss.max", 0.75}});
  window.event.step = 40;
  recordEvent(writer, window);
  recordEvent(writer, received(trainer, 0, "eval", 2s,
                               {{"accuracy", 0.25}, {"step", int64_t{50}}, {"note", std::string("a,\"b\"")}}));
  recordEvent(writer, received(trainer, 0, "tick", 3s, {{"done", true}}));
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(RecordingCommandsTest, ExportCsvWideHasARowPerEventAndAColumnPerKey) {
  writeSteppedRecording(path_);
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runExport({.path = path_, .format = ExportFormat::Csv, .wide = true}, stop_, out, err), 0) << err.str();
  const auto lines = linesOf(out.str());
  ASSERT_EQ(lines.size(), 4u) << out.str();
  // Keys in byte order; the "step" field is the step column, not a key column of its own.
  EXPECT_EQ(lines[0], "time_ns,time,source,name,step,accuracy,done,loss.max,loss.mean,note");
  EXPECT_THAT(lines[1], ::testing::EndsWith(",train@node-1:100 rank 0,livemon.Stat,40,,,0.75,0.5,"));
  EXPECT_THAT(lines[2], ::testing::EndsWith(",train@node-1:100 rank 0,eval,50,0.25,,,,\"a,\"\"b\"\"\""));
  EXPECT_THAT(lines[3], ::testing::EndsWith(",train@node-1:100 rank 0,tick,,,true,,,"));
  EXPECT_THAT(lines[1], ::testing::StartsWith(std::to_string(toWireTime(kT0 + 1003ms)) + ","))
      << "receive time in ns, as in the narrow export";
  EXPECT_THAT(err.str(), HasSubstr("exported 3 events"));
}

TEST_F(RecordingCommandsTest, ExportShowsTheStepInEveryFormat) {
  writeSteppedRecording(path_);
  std::ostringstream json;
  std::ostringstream csv;
  std::ostringstream err;
  ASSERT_EQ(runExport({.path = path_}, stop_, json, err), 0) << err.str();
  const std::vector<Json> objects = test::parseJsonLines(json.str());
  ASSERT_EQ(objects.size(), 3u);
  EXPECT_EQ(objects[0]["seq"], 0);
  EXPECT_EQ(objects[0]["step"], 40);
  EXPECT_EQ(objects[1]["step"], 50);
  EXPECT_FALSE(objects[2].contains("step"));
  ASSERT_EQ(runExport({.path = path_, .format = ExportFormat::Csv}, stop_, csv, err), 0) << err.str();
  const auto rows = linesOf(csv.str());
  ASSERT_EQ(rows.size(), 1u + 2u + 3u + 1u);
  EXPECT_THAT(rows[1], ::testing::EndsWith(",livemon.Stat,0,loss.max,double,0.75,40"));
  EXPECT_THAT(rows[6], ::testing::EndsWith(",tick,0,done,bool,true,"));
}

// A spreadsheet runs a cell starting with = + - @ (or a tab or CR before one) as a formula, and a
// publisher chooses names and text: such text cells get a leading ' inside quotes, so they show as
// the text they are. Numbers, negative and not finite ones too, stay numbers.
TEST_F(RecordingCommandsTest, ExportCsvNeutralisesTextThatASpreadsheetWouldRunAsAFormula) {
  {
    RecordingWriter writer(path_);
    recordEvent(writer, received(source("=HYPERLINK(\"x\")", 100), 0, "+name", 1s,
                                 {{"@key", std::string("=1+2")},
                                  {"minus", std::string("-2+3")},
                                  {"plus", std::string("+cmd")},
                                  {"at", std::string("@SUM(A1)")},
                                  {"tab", std::string("\t=1")},
                                  {"cr", std::string("\r=1")},
                                  {"fine", std::string("a=b")},
                                  {"neg", -1.5},
                                  {"ninf", -std::numeric_limits<double>::infinity()},
                                  {"nan", std::numeric_limits<double>::quiet_NaN()},
                                  {"int", int64_t{-7}}}));
  }
  std::ostringstream narrow;
  std::ostringstream wide;
  std::ostringstream err;
  ASSERT_EQ(runExport({.path = path_, .format = ExportFormat::Csv}, stop_, narrow, err), 0) << err.str();
  const std::string text = narrow.str();
  for (const char* cells : {",\"'=HYPERLINK(\"\"x\"\")@node-1:100\",\"'+name\",0,", ",\"'@key\",string,\"'=1+2\",",
                            ",minus,string,\"'-2+3\",", ",plus,string,\"'+cmd\",", ",at,string,\"'@SUM(A1)\",",
                            ",tab,string,\"'\t=1\",", ",cr,string,\"'\r=1\",", ",fine,string,a=b,", ",neg,double,-1.5,",
                            ",ninf,double,-inf,", ",nan,double,nan,", ",int,int,-7,"}) {
    EXPECT_THAT(text, HasSubstr(cells));
  }
  ASSERT_EQ(runExport({.path = path_, .format = ExportFormat::Csv, .wide = true}, stop_, wide, err), 0) << err.str();
  const auto lines = linesOf(wide.str());
  ASSERT_EQ(lines.size(), 2u) << wide.str();
  EXPECT_EQ(lines[0], "time_ns,time,source,name,step,\"'@key\",at,cr,fine,int,minus,nan,neg,ninf,plus,tab");
  EXPECT_THAT(lines[1], ::testing::EndsWith(",\"'=1+2\",\"'@SUM(A1)\",\"'\r=1\",a=b,-7,\"'-2+3\",nan,-1.5,-inf,"
                                           "\"'+cmd\",\"'\t=1\""));
}

TEST_F(RecordingCommandsTest, ExportWideOfARecordingWithoutStepsLeavesTheColumnEmpty) {
  writeSample();
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runExport({.path = path_, .format = ExportFormat::Csv, .from = "8.5", .wide = true}, stop_, out, err), 0)
      << err.str();
  const auto lines = linesOf(out.str());
  ASSERT_EQ(lines.size(), 3u) << out.str();
  EXPECT_EQ(lines[0], "time_ns,time,source,name,step,accuracy,epoch,final,loss.count,loss.mean,note");
  EXPECT_THAT(lines[1], ::testing::EndsWith(",livemon.Stat,,,,,100.0,0.1,"));
}

TEST_F(RecordingCommandsTest, ExportWideCapsTheColumnsAndCountsWhatItLeftOut) {
  {
    RecordingWriter writer(path_);
    const auto trainer = source("train", 100, 0);
    // 5 events of 1000 distinct keys each, written from the end of the key order backwards, so
    // the columns kept must be chosen by order, not by arrival.
    for (int e = 4; e >= 0; --e) {
      std::unordered_map<std::string, DataValue> data;
      for (int k = 0; k < 1000; ++k) {
        char key[16];
        std::snprintf(key, sizeof key, "k%05d", e * 1000 + k);
        data.emplace(key, 1.0);
      }
      recordEvent(writer, received(trainer, static_cast<uint64_t>(4 - e), "many", std::chrono::seconds(4 - e), data));
    }
  }
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runExport({.path = path_, .format = ExportFormat::Csv, .wide = true}, stop_, out, err), 0) << err.str();
  const auto lines = linesOf(out.str());
  ASSERT_EQ(lines.size(), 6u);
  const auto columns = std::count(lines[0].begin(), lines[0].end(), ',') + 1;
  EXPECT_EQ(columns, 5 + static_cast<long>(kMaxWideColumns));
  EXPECT_THAT(lines[0], ::testing::EndsWith(",k04095"));
  EXPECT_THAT(err.str(), HasSubstr("904 data key(s) beyond the limit of 4096 columns left out"));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), ','), columns - 1) << "row " << i;
  }
}

TEST_F(RecordingCommandsTest, ExportWideNeedsCsv) {
  writeSample();
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runExport({.path = path_, .format = ExportFormat::JsonLines, .wide = true}, stop_, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--wide needs --format csv"));
  EXPECT_THAT(out.str(), ::testing::IsEmpty());
}

TEST_F(RecordingCommandsTest, ExportRejectsABadTimeBound) {
  writeSample();
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runExport({.path = path_, .from = "yesterday"}, stop_, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("--from yesterday"));
}

TEST_F(RecordingCommandsTest, TimeBoundsAreSecondsFromTheStartOrUtcTimes) {
  const uint64_t start = 1'000'000'000'000'000'000ULL;
  EXPECT_EQ(parseTimeBound("0", start), start);
  EXPECT_EQ(parseTimeBound("1.5", start), start + 1'500'000'000ULL);
  EXPECT_EQ(parseTimeBound("2025-11-22T17:00:00Z", start), 1'763'830'800'000'000'000ULL);
  EXPECT_EQ(parseTimeBound("2025-11-22T17:00:00.25Z", start), 1'763'830'800'250'000'000ULL);
  EXPECT_EQ(parseTimeBound("-1", start), std::nullopt);
  EXPECT_EQ(parseTimeBound("2025-11-22 17:00", start), std::nullopt);
  EXPECT_EQ(parseTimeBound("2025-11-22T17:00:00", start), std::nullopt);  // no zone: ambiguous
  EXPECT_EQ(parseTimeBound("", start), std::nullopt);
}

}  // namespace
}  // namespace livemon::livemonctl
