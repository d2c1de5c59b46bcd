// `livemonctl runs`: the runs in folders of recordings, with their configs and a summary of a key;
// damaged files are reported and the others still listed. The acceptance test of issue 31 for the
// terminal runs the real program: a config set through `demo --config` reaches the demo's
// recording and `runs --json`.
#include <livemonctl/runs.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <livemon/run_config.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemonctl/command.h>
#include <livemonctl/export.h>
#include <livemonctl/run_index.h>

#include "json_lines.h"
#include "recorded_sample.h"
#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::livemonctl {
namespace {

using namespace std::chrono_literals;
using transport::RecordingWriter;
using transport::test::ChildProcess;
using transport::test::Json;
using transport::test::received;
using transport::test::source;

// Writes a run's recording: its config, then `losses` as train.loss.mean windows at steps 10, 20,
// ... and one eval per window, each a second apart after `start`.
void writeRun(const std::filesystem::path& path, const std::string& run, const RunConfig& config,
              const std::vector<double>& losses, std::chrono::seconds start = 0s,
              RecordingWriter::Options writerOptions = {}) {
  RecordingWriter writer(path.string(), writerOptions);
  const auto from = source(run, 100);
  uint64_t sequence = 0;
  std::unordered_map<std::string, DataValue> configData(config.begin(), config.end());
  transport::recordEvent(writer, received(from, sequence++, std::string(kRunConfigEventName), start, configData));
  for (std::size_t i = 0; i < losses.size(); ++i) {
    const auto at = start + std::chrono::seconds(i + 1);
    auto window = received(from, sequence++, std::string(kStatEventName), at, {{"train.loss.mean", losses[i]}});
    window.event.step = static_cast<int64_t>(10 * (i + 1));
    transport::recordEvent(writer, window);
    transport::recordEvent(writer, received(from, sequence++, "eval", at,
                                            {{"accuracy", 1.0 - losses[i]}, {"step", static_cast<int64_t>(10 * (i + 1))}}));
  }
}

class RunsTest : public ::testing::Test {
 protected:
  int runs(RunsOptions options) {
    out_.str("");
    err_.str("");
    return runRuns(options, stop_, out_, err_);
  }
  Json json(std::vector<std::string> keys = {}, bool bestMax = false) {
    EXPECT_EQ(runs({.paths = {dir_.path().string()}, .keys = std::move(keys), .bestMax = bestMax, .json = true}), 0)
        << err_.str();
    return transport::test::parseJson(out_.str());
  }

  std::atomic<bool> stop_{false};
  std::ostringstream out_;
  std::ostringstream err_;
  transport::test::TempDir dir_;
};

TEST_F(RunsTest, ListsEachRunWithItsConfigAndSortsByTheBestValueOfTheKey) {
  std::filesystem::create_directories(dir_.path() / "sweep" / "deeper");
  writeRun(dir_.path() / "sweep" / "a.mcap", "lr-1e-4", {{"lr", 1e-4}, {"optimizer", std::string("adam")}},
           {0.9, 0.5, 0.45});
  writeRun(dir_.path() / "sweep" / "deeper" / "b.mcap", "lr-1e-3", {{"lr", 1e-3}, {"batch", int64_t{64}}},
           {0.8, 0.2, 0.3}, 100s);
  std::ofstream(dir_.path() / "notes.txt") << "not a recording, not read";

  const Json byLoss = json({"train.loss.mean"});
  ASSERT_EQ(byLoss["runs"].size(), 2u) << out_.str();
  const Json& best = byLoss["runs"][0];
  EXPECT_EQ(best["name"], "lr-1e-3") << "the lowest loss first";
  EXPECT_EQ(best["config"], Json::parse(R"({"lr": 0.001, "batch": 64})"));
  EXPECT_EQ(best["file"], (dir_.path() / "sweep" / "deeper" / "b.mcap").string());
  EXPECT_EQ(best["state"], "finished");
  EXPECT_EQ(best["last_step"], 30);
  EXPECT_DOUBLE_EQ(best["duration_s"].get<double>(), 3.0);
  const Json& loss = best["summary"]["train.loss.mean"];
  EXPECT_EQ(loss["last"], 0.3);
  EXPECT_EQ(loss["min"], 0.2);
  EXPECT_EQ(loss["max"], 0.8);
  EXPECT_EQ(loss["best_step"], 20);
  EXPECT_EQ(byLoss["runs"][1]["config"]["optimizer"], "adam");

  // An event's field, the highest best.
  const Json byAccuracy = json({"eval.accuracy"}, true);
  EXPECT_EQ(byAccuracy["runs"][0]["name"], "lr-1e-3");
  EXPECT_DOUBLE_EQ(byAccuracy["runs"][0]["summary"]["eval.accuracy"]["best"].get<double>(), 0.8);
  EXPECT_EQ(byAccuracy["runs"][0]["summary"]["eval.accuracy"]["best_step"], 20);
  EXPECT_EQ(byAccuracy["runs"][1]["name"], "lr-1e-4");

  // The table: a row per run, a column per config key.
  ASSERT_EQ(runs({.paths = {dir_.path().string()}, .keys = {"train.loss.mean"}}), 0) << err_.str();
  std::istringstream table(out_.str());
  std::string header, first, second;
  std::getline(table, header);
  std::getline(table, first);
  std::getline(table, second);
  EXPECT_EQ(header.rfind("RUN ", 0), 0u) << out_.str();
  for (const char* column : {"STATE", "batch", "lr", "optimizer", "train.loss.mean min", "best at step"}) {
    EXPECT_NE(header.find(column), std::string::npos) << column << '\n' << out_.str();
  }
  EXPECT_EQ(first.rfind("lr-1e-3 ", 0), 0u) << out_.str();
  EXPECT_NE(first.find("finished"), std::string::npos) << out_.str();
  EXPECT_EQ(second.rfind("lr-1e-4 ", 0), 0u) << out_.str();
  EXPECT_NE(second.find(" 0.0001 "), std::string::npos) << "a config's numbers in one notation\n" << out_.str();
  EXPECT_NE(first.find(" 0.001 "), std::string::npos) << out_.str();
  EXPECT_EQ(err_.str(), "");
}

// A key shorter than a Stat event's name ("livemon.Stat.") is no field of it: an event's key
// such as eval.loss, looked for in a file of Stat windows, once threw out of range.
TEST_F(RunsTest, AKeyShorterThanTheStatEventsNameIsLookedForWithoutFailing) {
  writeRun(dir_.path() / "a.mcap", "short", {{"lr", 1e-4}}, {0.9, 0.5});
  for (const std::string key : {"eval.loss", "e.l", "x"}) {
    const Json listed = json({key});
    ASSERT_EQ(listed["runs"].size(), 1u) << key;
    EXPECT_FALSE(listed["runs"][0]["summary"].contains(key)) << key << ": " << out_.str();
  }
  EXPECT_EQ(json({"eval.accuracy"})["runs"][0]["summary"]["eval.accuracy"]["last"], 0.5);
}

// A run recorded in several files (a relay's rotated ones) is one row; its config is the newest.
TEST_F(RunsTest, ARunInSeveralFilesIsOneRow) {
  writeRun(dir_.path() / "train-1.mcap", "train", {{"lr", 1e-3}}, {0.9, 0.7});
  writeRun(dir_.path() / "train-2.mcap", "train", {{"lr", 5e-4}}, {0.4, 0.5}, 60s);
  const Json all = json({"train.loss.mean"});
  ASSERT_EQ(all["runs"].size(), 1u) << out_.str();
  const Json& run = all["runs"][0];
  EXPECT_EQ(run["files"].size(), 2u);
  EXPECT_EQ(run["config"]["lr"], 5e-4);
  EXPECT_DOUBLE_EQ(run["duration_s"].get<double>(), 62.0);
  EXPECT_EQ(run["summary"]["train.loss.mean"]["count"], 4);
  EXPECT_EQ(run["summary"]["train.loss.mean"]["last"], 0.5);
  EXPECT_EQ(run["summary"]["train.loss.mean"]["min"], 0.4);
}

// The config is found through the chunk index in a chunk that is neither the first nor the last,
// and only the chunks that can matter are read.
TEST_F(RunsTest, FindsTheConfigInTheChunksThatHoldIt) {
  const auto path = dir_.path() / "long.mcap";
  {
    RecordingWriter writer(path.string(), RecordingWriter::Options{.chunkBytes = 512});
    const auto from = source("long", 7);
    for (uint64_t i = 0; i < 200; ++i) {
      auto window = received(from, i, std::string(kStatEventName), std::chrono::seconds(i), {{"x.mean", 1.0 * i}});
      window.event.step = static_cast<int64_t>(i);
      transport::recordEvent(writer, window);
      if (i == 100) {
        transport::recordEvent(writer, received(from, 0, std::string(kRunConfigEventName), std::chrono::seconds(i),
                                                {{"seed", int64_t{7}}}));
      }
    }
  }
  const std::size_t chunks = transport::RecordingReader(path.string()).summary().chunks.size();
  ASSERT_GT(chunks, 20u);
  const RecordingRuns found = readRecordingRuns(path.string(), {});
  EXPECT_LT(found.chunksRead, chunks / 2) << "the first, the last and those around the config";
  ASSERT_TRUE(found.readable);
  ASSERT_EQ(found.runs.size(), 1u);
  EXPECT_EQ(found.runs[0].config, (RunConfig{{"seed", int64_t{7}}}));
  EXPECT_EQ(found.runs[0].lastStep, 199) << "from the last chunk";
  EXPECT_EQ(found.runs[0].startNs, static_cast<uint64_t>(transport::toWireTime(transport::test::kT0 + 3ms)));
}

// A file that is not a recording and one cut off mid-way are reported (which file, where); the
// others are listed, the cut one as incomplete; nothing readable at all is a failure.
TEST_F(RunsTest, DamagedFilesAreReportedAndTheOthersListed) {
  writeRun(dir_.path() / "good.mcap", "good", {{"lr", 1e-3}}, {0.5});
  std::ofstream(dir_.path() / "garbage.mcap") << "this is no MCAP file at all, just text";
  // A run cut off by a crash: the first chunks only, no summary.
  const auto whole = dir_.path() / "whole.tmp";
  std::vector<double> losses(400, 0.5);
  writeRun(whole, "cut", {{"lr", 3e-3}}, losses, 0s, RecordingWriter::Options{.chunkBytes = 1024});
  std::filesystem::resize_file(whole, std::filesystem::file_size(whole) / 2);
  std::filesystem::rename(whole, dir_.path() / "cut.mcap");

  const Json all = json({"train.loss.mean"});
  ASSERT_EQ(all["runs"].size(), 2u) << out_.str();
  std::map<std::string, Json> byName;
  for (const Json& run : all["runs"]) byName[run["name"]] = run;
  EXPECT_EQ(byName["good"]["state"], "finished");
  EXPECT_EQ(byName["cut"]["state"], "incomplete");
  EXPECT_EQ(byName["cut"]["config"]["lr"], 3e-3);
  EXPECT_NE(err_.str().find("livemonctl runs: " + (dir_.path() / "garbage.mcap").string()), std::string::npos)
      << err_.str();
  EXPECT_NE(err_.str().find((dir_.path() / "cut.mcap").string() + ": byte "), std::string::npos) << err_.str();

  std::filesystem::remove(dir_.path() / "good.mcap");
  std::filesystem::remove(dir_.path() / "cut.mcap");
  EXPECT_EQ(runs({.paths = {dir_.path().string()}}), kFailedExitCode);
  EXPECT_NE(err_.str().find("no recording could be read"), std::string::npos) << err_.str();
  std::filesystem::remove(dir_.path() / "garbage.mcap");
  EXPECT_EQ(runs({.paths = {dir_.path().string()}}), kFailedExitCode);
  EXPECT_NE(err_.str().find("no recordings (*.mcap) found"), std::string::npos) << err_.str();
}

// `export --format csv` over several recordings: one table, a run column first, each file's rows in
// turn; a single recording's table is as it was unless the run column is asked for.
TEST_F(RunsTest, ExportWritesSeveralRecordingsIntoOneTableWithARunColumn) {
  const std::string a = (dir_.path() / "a.mcap").string();
  const std::string b = (dir_.path() / "b.mcap").string();
  writeRun(a, "run-a", {{"lr", 1e-3}}, {0.5});
  writeRun(b, "run-b", {{"batch", int64_t{64}}}, {0.25});
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runExport({.path = a, .format = ExportFormat::Csv, .morePaths = {b}}, stop_, out, err), 0) << err.str();
  std::vector<std::string> lines;
  std::istringstream text(out.str());
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 1u + 2 * 4) << out.str();  // per run: lr or batch, a loss, an accuracy and a step
  EXPECT_EQ(lines[0], "run,time_ns,time,source,name,seq,key,type,value,step");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].rfind(i <= 4 ? "run-a," : "run-b,", 0), 0u) << "the rows of each file in turn: " << lines[i];
  }
  EXPECT_NE(err.str().find("exported 6 events from 2 recordings"), std::string::npos) << err.str();

  std::ostringstream wide;
  ASSERT_EQ(runExport({.path = a, .format = ExportFormat::Csv, .wide = true, .morePaths = {b}}, stop_, wide, err), 0);
  EXPECT_EQ(wide.str().substr(0, wide.str().find('\n')),
            "run,time_ns,time,source,name,step,accuracy,batch,lr,train.loss.mean") << "the keys of both files";

  std::ostringstream single;
  std::ostringstream withRun;
  ASSERT_EQ(runExport({.path = a, .format = ExportFormat::Csv}, stop_, single, err), 0);
  ASSERT_EQ(runExport({.path = a, .format = ExportFormat::Csv, .runColumn = true}, stop_, withRun, err), 0);
  EXPECT_EQ(single.str().rfind("time_ns,", 0), 0u) << "one recording: the table as it always was";
  EXPECT_EQ(withRun.str().rfind("run,time_ns,", 0), 0u);
  EXPECT_EQ(withRun.str().size(), single.str().size() + std::string("run,").size() + 4 * std::string("run-a,").size());

  // A later recording that cannot be read is reported; the others are exported.
  const std::string garbage = (dir_.path() / "garbage.mcap").string();
  std::ofstream(garbage) << "no recording";
  std::ostringstream partial;
  err.str("");
  EXPECT_EQ(runExport({.path = a, .format = ExportFormat::Csv, .morePaths = {garbage, b}}, stop_, partial, err),
            kFailedExitCode);
  EXPECT_NE(err.str().find(garbage), std::string::npos) << err.str();
  EXPECT_NE(partial.str().find("\nrun-b,"), std::string::npos) << partial.str();
}

TEST(RunIndex, AFileArgumentIsTakenWhateverItsNameAndDirectoriesAreSearchedForRecordings) {
  transport::test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "a" / "b");
  std::ofstream(dir.path() / "a" / "b" / "x.mcap") << "";
  std::ofstream(dir.path() / "a" / "y.txt") << "";
  std::ofstream(dir.path() / "z.bin") << "";
  const FoundRecordings found = findRecordings(
      {dir.path().string(), (dir.path() / "z.bin").string(), (dir.path() / "missing").string()});
  EXPECT_EQ(found.files, (std::vector<std::string>{(dir.path() / "a" / "b" / "x.mcap").string(),
                                                   (dir.path() / "z.bin").string()}));
  ASSERT_EQ(found.problems.size(), 1u);
  EXPECT_NE(found.problems[0].find("missing"), std::string::npos);
  EXPECT_EQ(findRecordings({dir.path().string(), dir.path().string()}, 5).files.size(), 1u) << "each file once";
  const FoundRecordings capped = findRecordings({(dir.path() / "a" / "b" / "x.mcap").string(),
                                                 (dir.path() / "z.bin").string()}, 1);
  EXPECT_EQ(capped.files.size(), 1u);
  EXPECT_EQ(capped.problems.size(), 1u) << "what is left out is said";
}

// Issue 31's acceptance for the terminal: `demo --config` into a recording, read back by `runs --json`.
TEST(RunsProcess, AConfigSetThroughTheDemoReachesTheRecordingAndRunsJson) {
  transport::test::TempDir dir;
  for (const char* lr : {"3e-4", "3e-3"}) {
    ChildProcess demo({livemonctlPath(), "demo", "--endpoint", "tcp://127.0.0.1:*", "--run", std::string("lr-") + lr,
                       "--config", std::string("lr=") + lr + ",batch=64,optimizer=adam,amp=true", "--steps", "200",
                       "--steps-per-second", "2000", "--window", "0.02", "--steps-per-epoch", "50", "--record",
                       (dir.path() / (std::string("lr-") + lr + ".mcap")).string()});
    ASSERT_EQ(demo.exitCode(), 0) << demo.err();
  }
  ChildProcess runs({livemonctlPath(), "runs", dir.path().string(), "--key", "eval.accuracy", "--best", "max",
                     "--json"});
  ASSERT_EQ(runs.exitCode(), 0) << runs.err();
  const Json all = transport::test::parseJson(runs.out());
  ASSERT_EQ(all["runs"].size(), 2u) << runs.out();
  for (const Json& run : all["runs"]) {
    const std::string lr = run["name"].get<std::string>().substr(3);
    EXPECT_EQ(run["config"], Json({{"lr", std::stod(lr)}, {"batch", 64}, {"optimizer", "adam"}, {"amp", true}}))
        << run.dump();
    EXPECT_EQ(run["state"], "finished");
    EXPECT_EQ(run["last_step"], 200);
    EXPECT_EQ(run["summary"]["eval.accuracy"]["count"], 4) << "an eval every 50 steps";
  }
  EXPECT_EQ(all["runs"][0]["name"], "lr-3e-3") << "the higher rate learns faster: the most accurate first";

  ChildProcess csv({livemonctlPath(), "export", (dir.path() / "lr-3e-4.mcap").string(),
                    (dir.path() / "lr-3e-3.mcap").string(), "--format", "csv", "--wide"});
  ASSERT_EQ(csv.exitCode(), 0) << csv.err();
  EXPECT_EQ(csv.out().rfind("run,time_ns,time,source,name,step,", 0), 0u) << csv.out().substr(0, 200);
  EXPECT_NE(csv.out().find("\nlr-3e-3,"), std::string::npos);

  ChildProcess bad({livemonctlPath(), "runs", dir.path().string(), "--best", "highest"});
  EXPECT_EQ(bad.exitCode(), kUsageExitCode);
  EXPECT_NE(bad.err().find("Usage:"), std::string::npos) << bad.err();
  ChildProcess missing({livemonctlPath(), "runs", (dir.path() / "missing").string()});
  EXPECT_EQ(missing.exitCode(), kUsageExitCode);
}

}  // namespace
}  // namespace livemon::livemonctl
