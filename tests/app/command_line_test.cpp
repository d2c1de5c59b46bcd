// livemonctl's command line in process: each command registers its own subcommand and options, a
// bad argument gets the usage of the command it was given to, and the parsed command runs with
// what its options said.
#include <livemonctl/command_line.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <livemonctl/command.h>
#include <livemonctl/demo.h>
#include <livemonctl/export.h>
#include <livemonctl/info.h>
#include <livemonctl/keygen.h>
#include <livemonctl/ranks.h>
#include <livemonctl/record.h>
#include <livemonctl/relay.h>
#include <livemonctl/replay.h>
#include <livemonctl/runs.h>
#include <livemonctl/tail.h>
#include <livemonctl/watch.h>

#include "json_lines.h"
#include "recorded_sample.h"
#include "test_support.h"

namespace livemon::livemonctl {
namespace {

using transport::test::Json;

// livemonctl's commands added to `app` in main()'s order.
std::vector<Command> addCommands(CLI::App& app) {
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("livemonctl 9.9.9"), "Print the version and exit");
  std::vector<Command> commands;
  for (Command (*add)(CLI::App&) : {addDemoCommand, addRanksCommand, addTailCommand, addWatchCommand, addRecordCommand,
                                    addInfoCommand, addRunsCommand, addExportCommand, addReplayCommand, addRelayCommand,
                                    addKeygenCommand}) {
    commands.push_back(add(app));
  }
  return commands;
}

// Runs livemonctl in process, each time as a fresh program.
class CommandLineTest : public ::testing::Test {
 protected:
  // Parses `args` (after the program's name) and runs the command they name; returns the exit code.
  int run(std::vector<std::string> args) {
    CLI::App app{"livemonctl under test"};
    const std::vector<Command> commands = addCommands(app);
    args.insert(args.begin(), "livemonctl");
    std::vector<const char*> argv;
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    const ParsedCommandLine parsed =
        parseCommandLine(app, commands, static_cast<int>(argv.size()), argv.data(), out_, err_);
    if (parsed.command == nullptr) return parsed.exitCode;
    return dispatch(*parsed.command, CommandContext{stop_, out_, err_});
  }

  std::atomic<bool> stop_{false};
  std::ostringstream out_;
  std::ostringstream err_;
  transport::test::TempDir dir_;
};

TEST(CommandLine, EveryCommandAddsItsOwnSubcommand) {
  CLI::App app;
  const std::vector<Command> commands = addCommands(app);
  std::vector<std::string> names;
  for (const Command& command : commands) {
    ASSERT_NE(command.cli, nullptr);
    EXPECT_TRUE(command.run) << command.cli->get_name();
    names.push_back(command.cli->get_name());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"demo", "ranks", "tail", "watch", "record", "info", "runs", "export", "replay",
                                             "relay", "keygen"}));
  EXPECT_EQ(app.get_subcommands([](const CLI::App*) { return true; }).size(), commands.size());
}

TEST_F(CommandLineTest, HelpAndVersionEndTheProgramWithZero) {
  EXPECT_EQ(run({"--version"}), 0);
  EXPECT_EQ(out_.str(), "livemonctl 9.9.9\n");
  out_.str("");
  EXPECT_EQ(run({"watch", "--help"}), 0);
  EXPECT_NE(out_.str().find("Usage: livemonctl watch [OPTIONS] [endpoints...]"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("--rule RULE"), std::string::npos) << out_.str();
  EXPECT_EQ(err_.str(), "");
}

TEST_F(CommandLineTest, ABadOptionGetsTheUsageOfItsCommand) {
  EXPECT_EQ(run({"ranks", "--windows", "0"}), kUsageExitCode);
  EXPECT_EQ(err_.str().rfind("livemonctl: --windows: ", 0), 0u) << err_.str();
  EXPECT_NE(err_.str().find("\nUsage: ranks [OPTIONS] [endpoints...]"), std::string::npos) << err_.str();
  EXPECT_EQ(err_.str().find("SUBCOMMAND"), std::string::npos) << err_.str();
  EXPECT_EQ(out_.str(), "");
}

TEST_F(CommandLineTest, AnUnknownCommandIsNamedWithTheProgramsUsage) {
  EXPECT_EQ(run({"rnaks"}), kUsageExitCode);
  EXPECT_EQ(err_.str().rfind("livemonctl: unknown command \"rnaks\"\n\n", 0), 0u) << err_.str();
  EXPECT_NE(err_.str().find("[OPTIONS] SUBCOMMAND"), std::string::npos) << err_.str();
}

TEST_F(CommandLineTest, NoCommandIsAUsageError) {
  EXPECT_EQ(run({}), kUsageExitCode);
  EXPECT_EQ(err_.str().rfind("livemonctl: A subcommand is required\n\n", 0), 0u) << err_.str();
}

// The demo checks a straggler against the ranks after parsing, and says so as CLI11 would.
TEST_F(CommandLineTest, AStragglerBeyondTheRanksIsAUsageErrorOfTheDemo) {
  EXPECT_EQ(run({"demo", "--ranks", "2", "--straggler", "2"}), kUsageExitCode);
  EXPECT_EQ(err_.str().rfind("livemonctl: --straggler: 2 is not a rank of --ranks 2 (0..1)\n\n", 0), 0u) << err_.str();
  EXPECT_NE(err_.str().find("\nUsage: demo [OPTIONS]"), std::string::npos) << err_.str();
  EXPECT_EQ(out_.str(), "");
}

// `demo --config`: a malformed entry is a usage error of the demo, before anything runs.
TEST_F(CommandLineTest, AMalformedConfigEntryIsAUsageErrorOfTheDemo) {
  for (const char* config : {"lr", "lr=3e-4,=64", "step=3"}) {
    err_.str("");
    EXPECT_EQ(run({"demo", "--config", config, "--steps", "1"}), kUsageExitCode) << config;
    EXPECT_EQ(err_.str().rfind("livemonctl: --config: ", 0), 0u) << err_.str();
    EXPECT_NE(err_.str().find("\nUsage: demo [OPTIONS]"), std::string::npos) << err_.str();
  }
  EXPECT_EQ(out_.str(), "");
}

// What the options say reaches the command: info's file and --json.
TEST_F(CommandLineTest, InfoRunsOnTheFileItWasGiven) {
  const std::string path = (dir_.path() / "run.mcap").string();
  transport::test::writeSampleRecording(path);
  ASSERT_EQ(run({"info", "--json", path}), 0) << err_.str();
  const Json summary = transport::test::parseJson(out_.str());
  EXPECT_EQ(summary["path"], path);
  EXPECT_EQ(summary["events"], 12);
}

// export's --format, --from and -o, converted by its own registration.
TEST_F(CommandLineTest, ExportTakesItsFormatRangeAndOutput) {
  const std::string path = (dir_.path() / "run.mcap").string();
  const std::string csv = (dir_.path() / "out.csv").string();
  transport::test::writeSampleRecording(path);
  ASSERT_EQ(run({"export", path, "--format", "csv", "--wide", "--from", "8.5", "-o", csv}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "");
  std::ifstream written(csv);
  std::string header;
  ASSERT_TRUE(std::getline(written, header));
  EXPECT_EQ(header, "time_ns,time,source,name,step,accuracy,epoch,final,loss.count,loss.mean,note");

  out_.str("");
  ASSERT_EQ(run({"export", path, "--from", "8.5"}), 0) << err_.str();
  const std::vector<Json> events = transport::test::parseJsonLines(out_.str());
  ASSERT_EQ(events.size(), 2u) << out_.str();
  EXPECT_EQ(events[1]["name"], "eval");
}

TEST_F(CommandLineTest, KeygenWritesIntoTheDirectoryItWasGiven) {
  ASSERT_EQ(run({"keygen", "node", "--dir", dir_.path().string()}), 0) << err_.str();
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "node.key"));
  EXPECT_TRUE(std::filesystem::exists(dir_.path() / "node.key_secret"));
  EXPECT_EQ(run({"keygen", "node", "--dir", dir_.path().string()}), kFailedExitCode) << "no --force";
  EXPECT_EQ(run({"keygen", "node", "--dir", dir_.path().string(), "--force"}), 0) << err_.str();
}

TEST(Dispatch, AnExceptionEscapingACommandIsReportedAndExitsOne) {
  CLI::App app;
  Command command{app.add_subcommand("boom", "Throws"),
                  [](const CommandContext&) -> int { throw std::runtime_error("out of luck"); }};
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(dispatch(command, CommandContext{stop, out, err}), kFailedExitCode);
  EXPECT_EQ(err.str(), "livemonctl boom: out of luck\n");
}

TEST(CommandLineOptions, SecondsBecomeWholeMilliseconds) {
  EXPECT_EQ(secondsToMs(1.0), std::chrono::milliseconds(1000));
  EXPECT_EQ(secondsToMs(0.0015), std::chrono::milliseconds(2)) << "rounded";
  EXPECT_EQ(secondsToMs(0.0), std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace livemon::livemonctl
