// `livemonctl ranks` against `livemonctl demo --ranks ... --straggler R`, all separate processes:
// through a relay with --json (the acceptance test of issue 15), straight from every rank's own
// endpoint as a table, and the usage errors of both commands.
#include <gtest/gtest.h>

#include <signal.h>

#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "json_lines.h"
#include "relay_process.h"
#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::livemonctl {
namespace {

using transport::test::Json;
using transport::test::ChildProcess;

// The `ranks --json` windows printed so far (whole lines), parsed.
std::vector<Json> windowsIn(const std::string& out) {
  return transport::test::parseJsonLines(out.substr(0, out.rfind('\n') + 1));
}

TEST(LivemonctlRanks, ThroughARelayTheStragglerOfThirtyTwoRanksIsFlaggedAndNoOtherRank) {
  std::unique_ptr<ChildProcess> relay;
  const auto endpoints = transport::test::startRelay(livemonctlPath(), relay);
  ASSERT_TRUE(endpoints);
  ChildProcess ranks({livemonctlPath(), "ranks", endpoints->serve, "--json", "--window", "0.5"});
  ChildProcess demo({livemonctlPath(), "demo", "--ranks", "32", "--straggler", "7", "--connect", endpoints->listen,
                     "--window", "0.5", "--steps-per-second", "20", "--run", "sync"});

  std::set<int64_t> everFlagged;
  std::size_t windows = 0;
  const bool flagged = ranks.readStdoutUntil([&](const std::string& out) {
    const std::vector<Json> lines = windowsIn(out);
    everFlagged.clear();
    windows = lines.size();
    bool alone = false;
    for (const Json& window : lines) {
      const auto flaggedRanks = window["flagged"].get<std::vector<int64_t>>();
      everFlagged.insert(flaggedRanks.begin(), flaggedRanks.end());
      alone = window["ranks"].size() == 32 && flaggedRanks == std::vector<int64_t>{7};
    }
    return alone;
  });
  EXPECT_TRUE(flagged) << ranks.out() << ranks.err() << demo.out() << demo.err();
  EXPECT_EQ(everFlagged, std::set<int64_t>{7}) << ranks.out();
  for (const Json& window : windowsIn(ranks.out())) {
    EXPECT_EQ(window["run"], "sync") << window;
    EXPECT_EQ(window["stat"], "train.compute_time_ms.mean") << window;
  }

  ranks.signal(SIGTERM);
  EXPECT_EQ(ranks.exitCode(), 0) << ranks.err();
  EXPECT_NE(ranks.err().find(std::to_string(windows) + " run window(s) printed"), std::string::npos) << ranks.err();
  demo.signal(SIGTERM);
  EXPECT_EQ(demo.exitCode(), 0) << demo.err();
  relay->signal(SIGTERM);
  EXPECT_EQ(relay->exitCode(), 0) << relay->err();
}

// Without a relay every rank binds an endpoint of its own; `ranks` takes them all and prints a
// table, worst first.
TEST(LivemonctlRanks, ReadsEveryRanksOwnEndpointAndPrintsATableWorstFirst) {
  ChildProcess demo({livemonctlPath(), "demo", "--ranks", "4", "--straggler", "2", "--straggler-factor", "3",
                     "--endpoint", "tcp://127.0.0.1:*", "--window", "0.3", "--steps-per-second", "30"});
  // "... publishing on EP0 (rank 0) and on EP1 EP2 EP3\n"
  std::vector<std::string> endpoints;
  ASSERT_TRUE(demo.readStdoutUntil([&](const std::string& out) {
    const std::size_t on = out.find("publishing on ");
    const std::size_t end = out.find('\n', on);
    if (on == std::string::npos || end == std::string::npos) return false;
    std::istringstream words(out.substr(on + 14, end - on - 14));
    std::string word;
    endpoints.clear();
    while (words >> word) {
      if (word.rfind("tcp://", 0) == 0) endpoints.push_back(word);
    }
    return true;
  })) << demo.out() << demo.err();
  ASSERT_EQ(endpoints.size(), 4u) << demo.out();

  std::vector<std::string> argv{livemonctlPath(), "ranks", "--window", "0.3", "--rows", "2"};
  argv.insert(argv.end(), endpoints.begin(), endpoints.end());
  ChildProcess ranks(argv);
  // The header names the flagged rank, and the first row of the table is its own.
  const std::string header = "4 rank(s), 4 scored; train.compute_time_ms.mean median ";
  const std::string firstRow = "FLAG          PID  HOST\n       2 ";
  EXPECT_TRUE(ranks.readStdoutUntil([&](const std::string& out) {
    const std::size_t flagged = out.find("for 3 windows): 2\n");
    return flagged != std::string::npos && out.find(firstRow, flagged) != std::string::npos;
  })) << ranks.out() << ranks.err();
  EXPECT_NE(ranks.out().find(header), std::string::npos) << ranks.out();
  EXPECT_NE(ranks.out().find("... 2 more\n"), std::string::npos) << ranks.out();
  EXPECT_EQ(ranks.out().find("): 0"), std::string::npos) << ranks.out();
  EXPECT_EQ(ranks.out().find("): 1"), std::string::npos) << ranks.out();
  EXPECT_EQ(ranks.out().find("): 3"), std::string::npos) << ranks.out();

  ranks.signal(SIGINT);
  EXPECT_EQ(ranks.exitCode(), 0) << ranks.err();
  demo.signal(SIGINT);
  EXPECT_EQ(demo.exitCode(), 0) << demo.err();
}

// A Stat's name without its aggregation matches no key: ranks says so once instead of waiting in
// silence.
TEST(LivemonctlRanks, AKeyNoRankSendsIsNoticed) {
  std::unique_ptr<ChildProcess> relay;
  const auto endpoints = transport::test::startRelay(livemonctlPath(), relay);
  ASSERT_TRUE(endpoints);
  ChildProcess demo({livemonctlPath(), "demo", "--ranks", "2", "--connect", endpoints->listen, "--window", "0.2"});
  ChildProcess ranks({livemonctlPath(), "ranks", endpoints->serve, "--stat", "train.step_time_ms", "--window", "0.2"});
  EXPECT_TRUE(ranks.readStderrUntil([](const std::string& err) {
    return err.find("livemonctl ranks: notice: ranked sources are sending, but none sent \"train.step_time_ms\"") !=
           std::string::npos;
  })) << ranks.err();
  ranks.signal(SIGTERM);
  EXPECT_EQ(ranks.exitCode(), 0) << ranks.err();
  EXPECT_EQ(ranks.out(), "");
  demo.signal(SIGTERM);
  EXPECT_EQ(demo.exitCode(), 0) << demo.err();
  relay->signal(SIGTERM);
  EXPECT_EQ(relay->exitCode(), 0) << relay->err();
}

TEST(LivemonctlRanks, BadArgumentsExitTwoWithUsage) {
  const std::vector<std::vector<std::string>> cases = {
      {"ranks", "--windows", "0"},
      {"ranks", "--threshold", "0"},
      {"ranks", "--threshold", "nan"},
      {"ranks", "--window", "0"},
      {"ranks", "--stat", ""},
      {"ranks", "--rows", "some"},
      {"demo", "--ranks", "4", "--straggler", "4"},
      {"demo", "--straggler", "1"},
      {"demo", "--ranks", "4", "--straggler", "-1"},
      {"demo", "--ranks", "4", "--straggler-factor", "3"},
      {"demo", "--ranks", "4", "--straggler", "1", "--straggler-factor", "0"},
      {"demo", "--ranks", "4", "--straggler", "1", "--straggler-factor", "inf"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv{livemonctlPath()};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess child(argv);
    EXPECT_EQ(child.exitCode(), 2) << testing::PrintToString(args);
    EXPECT_NE(child.err().find("Usage:"), std::string::npos) << testing::PrintToString(args) << child.err();
  }
  ChildProcess help({livemonctlPath(), "ranks", "--help"});
  EXPECT_EQ(help.exitCode(), 0);
  EXPECT_NE(help.out().find("--stat KEY"), std::string::npos) << help.out();
}

}  // namespace
}  // namespace livemon::livemonctl
