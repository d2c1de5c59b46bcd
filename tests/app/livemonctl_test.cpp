// The livemonctl program: usage errors exit 2 with the usage of the command they were given to,
// help exits 0 on every command, and demo + tail (and watch) work together as separate processes.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>

#include "json_lines.h"
#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::livemonctl {
namespace {

using namespace transport;

using test::ChildProcess;
using test::Json;

// Every command, in the order `livemonctl --help` lists them.
const std::vector<std::string> kCommands{"demo",   "ranks",  "tail",   "watch", "record",
                                         "info",   "export", "replay", "relay", "keygen"};

TEST(Livemonctl, BadArgumentsExitTwoWithUsage) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"bogus"},
      {"demo", "--steps-per-second", "-1"},
      {"demo", "--window", "0"},
      {"demo", "--duration", "soon"},
      {"demo", "--no-such-option"},
      {"tail", "--count", "many"},
      {"tail", "--stale-after", "-3"},
      {"watch", "--rule", "train.loss.mean >> 10"},
      {"watch", "--rule", ""},
      {"watch", "--rule", "silent 5 parsecs"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv{livemonctlPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess child(argv);
    EXPECT_EQ(child.exitCode(), 2) << testing::PrintToString(args);
    EXPECT_NE(child.err().find("Usage:"), std::string::npos) << testing::PrintToString(args) << child.err();
  }
}

// Before: `--from 1e30` was undefined behaviour that exported everything, and a far-future --to
// wrapped around to the distant past and exported nothing, both with exit status 0.
TEST(Livemonctl, ExportRejectsTimeBoundsOutOfRangeWithUsage) {
  test::TempDir dir;
  const std::string path = (dir.path() / "run.mcap").string();
  {
    RecordingWriter writer(path);
    SourceInfo info;
    info.run = "run";
    info.host = "host";
    info.pid = 1;
    const auto source = std::make_shared<const SourceInfo>(info);
    const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'763'830'800));
    for (int i = 0; i < 3; ++i) {
      ReceivedEvent event;
      event.event = Event{"step", t0 + std::chrono::seconds(i), {{"i", int64_t{i}}}};
      event.source = source;
      event.sequence = static_cast<uint64_t>(i);
      event.receivedAt = event.event.timestamp;
      recordEvent(writer, event);
    }
  }
  const std::vector<std::vector<std::string>> bad = {
      {"--from", "1e30"},
      {"--to", "1e30"},
      {"--to", "2600-01-01T00:00:00Z"},
      {"--from", "2554-07-21T23:34:33.709551616Z"},
      {"--from", "2025-02-30T00:00:00Z"},
      {"--from", "yesterday"},
  };
  for (const auto& args : bad) {
    std::vector<std::string> argv{livemonctlPath(), "export", path};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess child(argv);
    EXPECT_EQ(child.exitCode(), 2) << testing::PrintToString(args) << child.err();
    EXPECT_NE(child.err().find(args[1]), std::string::npos) << child.err();
    EXPECT_NE(child.err().find("Usage:"), std::string::npos) << child.err();
    EXPECT_EQ(child.out(), "") << testing::PrintToString(args);
  }

  // Seconds that fit on their own but not after this recording's start: only the recording tells.
  ChildProcess late({livemonctlPath(), "export", path, "--from", "18446744073"});
  EXPECT_EQ(late.exitCode(), 2) << late.err();
  EXPECT_NE(late.err().find("--from 18446744073"), std::string::npos) << late.err();
  EXPECT_NE(late.err().find("after 2554-07-21T23:34:33.709551615Z"), std::string::npos) << late.err();
  EXPECT_EQ(late.out(), "");

  // The latest time there is still bounds nothing away.
  ChildProcess all({livemonctlPath(), "export", path, "--to", "2554-07-21T23:34:33.709551615Z"});
  EXPECT_EQ(all.exitCode(), 0) << all.err();
  EXPECT_EQ(std::count(all.out().begin(), all.out().end(), '\n'), 3) << all.out();
}

TEST(Livemonctl, HelpOnEveryCommand) {
  ChildProcess program({livemonctlPath(), "--help"});
  EXPECT_EQ(program.exitCode(), 0);
  EXPECT_NE(program.out().find("Usage: " + std::string(livemonctlPath()) + " [OPTIONS] SUBCOMMAND"), std::string::npos)
      << program.out();
  std::size_t listed = 0;
  for (const std::string& command : kCommands) {
    // Listed under "Subcommands:", in order.
    const std::size_t at = program.out().find("\n  " + command + " ", listed);
    EXPECT_NE(at, std::string::npos) << command << " in " << program.out();
    listed = at == std::string::npos ? listed : at;

    for (const char* help : {"--help", "-h"}) {
      ChildProcess child({livemonctlPath(), command, help});
      EXPECT_EQ(child.exitCode(), 0) << command;
      EXPECT_NE(child.out().find("Usage: " + std::string(livemonctlPath()) + " " + command + " [OPTIONS]"),
                std::string::npos)
          << command << ": " << child.out();
      EXPECT_NE(child.out().find("\nOptions:\n"), std::string::npos) << command << ": " << child.out();
      EXPECT_EQ(child.err(), "") << command;
    }
  }
}

// A bad option names itself and is followed by the usage of the command it was given to, not
// the program's.
TEST(Livemonctl, ABadOptionShowsThatCommandsUsageAndExitsTwo) {
  // What each command requires besides, so that the bad option is the only mistake.
  const std::map<std::string, std::vector<std::string>> required{
      {"record", {"-o", "x.mcap"}}, {"info", {"/dev/null"}}, {"export", {"/dev/null"}},
      {"replay", {"/dev/null"}},    {"keygen", {"name"}}};
  for (const std::string& command : kCommands) {
    std::vector<std::string> argv{livemonctlPath(), command};
    if (const auto it = required.find(command); it != required.end()) argv.insert(argv.end(), it->second.begin(), it->second.end());
    argv.push_back("--no-such-option");
    ChildProcess child(argv);
    EXPECT_EQ(child.exitCode(), 2) << command;
    EXPECT_EQ(child.err().rfind("livemonctl: The following argument was not expected: --no-such-option\n\n", 0), 0u)
        << command << ": " << child.err();
    EXPECT_NE(child.err().find("\nUsage: " + command + " [OPTIONS]"), std::string::npos) << command << ": " << child.err();
    EXPECT_EQ(child.err().find("SUBCOMMAND"), std::string::npos) << command << ": " << child.err();
    EXPECT_EQ(child.out(), "") << command;
  }
  ChildProcess unknown({livemonctlPath(), "bogus"});
  EXPECT_EQ(unknown.exitCode(), 2);
  EXPECT_EQ(unknown.err().rfind("livemonctl: unknown command \"bogus\"\n\n", 0), 0u) << unknown.err();
  EXPECT_NE(unknown.err().find("[OPTIONS] SUBCOMMAND"), std::string::npos) << unknown.err();
}

// One that only another option makes bad is told the same way.
TEST(Livemonctl, AStragglerBeyondTheRanksShowsTheDemosUsage) {
  ChildProcess child({livemonctlPath(), "demo", "--ranks", "2", "--straggler", "3"});
  EXPECT_EQ(child.exitCode(), 2);
  EXPECT_EQ(child.err().rfind("livemonctl: --straggler: 3 is not a rank of --ranks 2 (0..1)\n\n", 0), 0u) << child.err();
  EXPECT_NE(child.err().find("\nUsage: demo [OPTIONS]"), std::string::npos) << child.err();
  EXPECT_EQ(child.out(), "");
}

TEST(Livemonctl, VersionPrintsTheVersion) {
  ChildProcess child({livemonctlPath(), "--version"});
  EXPECT_EQ(child.exitCode(), 0);
  EXPECT_EQ(child.out().rfind("livemonctl ", 0), 0u) << child.out();
  EXPECT_NE(child.out().find_first_of("0123456789"), std::string::npos) << child.out();
}

TEST(Livemonctl, DemoAndTailTalkAndStopOnSignals) {
  ChildProcess demo({livemonctlPath(), "demo", "--endpoint", "tcp://127.0.0.1:*", "--steps-per-second", "200",
                     "--window", "0.05", "--steps-per-epoch", "20"});
  std::string endpoint;
  ASSERT_TRUE(demo.readStdoutUntil([&](const std::string& out) {
    const auto at = out.find("publishing on ");
    const auto end = out.find('\n', at);
    if (at == std::string::npos || end == std::string::npos) return false;
    endpoint = out.substr(at + 14, end - at - 14);
    return true;
  })) << demo.out();

  ChildProcess tail({livemonctlPath(), "tail", endpoint, "--json", "--filter", "eval", "--count", "2"});
  EXPECT_EQ(tail.exitCode(), 0) << tail.err();
  int evals = 0;
  for (const Json& line : test::parseJsonLines(tail.out())) {
    if (line.value("name", "") == "eval") {
      ++evals;
      EXPECT_TRUE(line["data"]["accuracy"].is_number_float()) << line;
      EXPECT_TRUE(line["data"]["epoch"].is_number_integer()) << line;
    }
  }
  EXPECT_EQ(evals, 2) << tail.out();

  // SIGINT stops the demo cleanly.
  demo.signal(SIGINT);
  EXPECT_EQ(demo.exitCode(), 0);
  EXPECT_NE(demo.out().find("stopped after"), std::string::npos) << demo.out();

  // And SIGTERM a tail with nothing to read.
  ChildProcess idle({livemonctlPath(), "tail", endpoint});
  ASSERT_TRUE(idle.readStderrUntil([](const std::string& err) { return err.find("listening") != std::string::npos; }));
  idle.signal(SIGTERM);
  EXPECT_EQ(idle.exitCode(), 0);
  EXPECT_NE(idle.err().find("livemonctl tail: 0 events"), std::string::npos) << idle.err();
}

// The endpoint a `livemonctl demo` child publishes on, from its first lines.
std::string demoEndpoint(ChildProcess& demo) {
  std::string endpoint;
  demo.readStdoutUntil([&](const std::string& out) {
    const auto at = out.find("publishing on ");
    const auto end = out.find('\n', at);
    if (at == std::string::npos || end == std::string::npos) return false;
    endpoint = out.substr(at + 14, end - at - 14);
    return true;
  });
  return endpoint;
}

TEST(Livemonctl, WatchNamesABadRuleWhereItBreaks) {
  ChildProcess child({livemonctlPath(), "watch", "tcp://127.0.0.1:1", "--rule", "nan", "--rule",
                      "train.loss.mean >> 10"});
  EXPECT_EQ(child.exitCode(), 2);
  EXPECT_NE(child.err().find("rule \"train.loss.mean >> 10\": at column 17: unknown comparison"), std::string::npos)
      << child.err();
  EXPECT_EQ(child.out(), "");
}

// What a script does to stop a diverging job: watch exits with status 3 at the first NaN.
TEST(Livemonctl, WatchExitsWithStatus3OnANaN) {
  Publisher publisher(test::testPublisherOptions());
  ChildProcess watch({livemonctlPath(), "watch", publisher.endpoints()[0], "--rule", "nan", "--exit-on-alert",
                      "--json"});
  std::optional<int> status;
  // Until watch is connected, what is logged may be lost: log until it exits.
  const auto end = std::chrono::steady_clock::now() + test::kDeadline;
  while (!status && std::chrono::steady_clock::now() < end) {
    logEvent(test::makeEvent(std::string(kStatEventName), {{"train.loss.mean", std::nan("")}}));
    status = watch.wait(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(status && WIFEXITED(*status)) << watch.err();
  EXPECT_EQ(WEXITSTATUS(*status), 3) << watch.err();
  const std::vector<Json> alerts = test::parseJsonLines(watch.out());
  ASSERT_EQ(alerts.size(), 1u) << watch.out();
  EXPECT_EQ(alerts[0]["alert"], "nan");
  EXPECT_EQ(alerts[0]["rule"], "nan");
  EXPECT_EQ(alerts[0]["key"], "train.loss.mean");
  EXPECT_EQ(alerts[0]["value"], "NaN");
}

// A training job killed without warning says no goodbye: watch tells its silence.
TEST(Livemonctl, WatchTellsWhenAJobDiesWithoutGoodbye) {
  ChildProcess demo({livemonctlPath(), "demo", "--endpoint", "tcp://127.0.0.1:*", "--steps-per-second", "200",
                     "--window", "0.05", "--run", "doomed"});
  const std::string endpoint = demoEndpoint(demo);
  ASSERT_FALSE(endpoint.empty()) << demo.out();
  // The threshold holds for every loss value: its one alert says watch receives the demo.
  ChildProcess watch({livemonctlPath(), "watch", endpoint, "--rule", "silent 2s", "--rule",
                      "train.loss.mean > -1e300"});
  ASSERT_TRUE(watch.readStdoutUntil([](const std::string& out) { return out.find("train.loss.mean = ") != std::string::npos; }))
      << watch.out() << watch.err();
  demo.signal(SIGKILL);
  demo.wait();
  ASSERT_TRUE(watch.readStdoutUntil([](const std::string& out) { return out.find("silent for") != std::string::npos; }))
      << watch.out() << watch.err();
  EXPECT_NE(watch.out().find(": doomed@"), std::string::npos) << watch.out();
  EXPECT_NE(watch.out().find("without a goodbye (rule \"silent 2s\")"), std::string::npos) << watch.out();
  watch.signal(SIGINT);
  EXPECT_EQ(watch.exitCode(), 0) << watch.err();
  EXPECT_NE(watch.err().find(" alert(s); "), std::string::npos) << watch.err();
}

TEST(Livemonctl, ABusyPortIsAnErrorNamingIt) {
  ChildProcess first({livemonctlPath(), "demo", "--endpoint", "tcp://127.0.0.1:*"});
  std::string endpoint;
  ASSERT_TRUE(first.readStdoutUntil([&](const std::string& out) {
    const auto at = out.find("publishing on ");
    const auto end = out.find('\n', at);
    if (at == std::string::npos || end == std::string::npos) return false;
    endpoint = out.substr(at + 14, end - at - 14);
    return true;
  }));
  ChildProcess second({livemonctlPath(), "demo", "--endpoint", endpoint});
  EXPECT_EQ(second.exitCode(), 1);
  EXPECT_NE(second.err().find(endpoint), std::string::npos) << second.err();
  EXPECT_NE(second.err().find("Address already in use"), std::string::npos) << second.err();
  first.signal(SIGTERM);
  EXPECT_EQ(first.exitCode(), 0);
}

}  // namespace
}  // namespace livemon::livemonctl
