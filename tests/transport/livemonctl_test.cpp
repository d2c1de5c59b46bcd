// The livemonctl program: usage errors exit 2 with usage, help exits 0, and demo + tail work
// together as separate processes.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <sstream>

#include "test_support.h"

namespace livemon::transport {
namespace {

using test::ChildProcess;

int exitCode(ChildProcess& child) {
  const auto status = child.wait();
  if (!status || !WIFEXITED(*status)) return -1;
  return WEXITSTATUS(*status);
}

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
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv{LIVEMONCTL_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess child(argv);
    EXPECT_EQ(exitCode(child), 2) << testing::PrintToString(args);
    EXPECT_NE(child.err().find("Usage:"), std::string::npos) << testing::PrintToString(args) << child.err();
  }
}

TEST(Livemonctl, HelpOnEveryCommand) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"}, {"demo", "--help"}, {"tail", "--help"}}) {
    std::vector<std::string> argv{LIVEMONCTL_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess child(argv);
    EXPECT_EQ(exitCode(child), 0);
    EXPECT_NE(child.out().find("Usage:"), std::string::npos) << child.out();
  }
}

TEST(Livemonctl, DemoAndTailTalkAndStopOnSignals) {
  ChildProcess demo({LIVEMONCTL_PATH, "demo", "--endpoint", "tcp://127.0.0.1:*", "--steps-per-second", "200",
                     "--window", "0.05", "--steps-per-epoch", "20"});
  std::string endpoint;
  ASSERT_TRUE(demo.readStdoutUntil([&](const std::string& out) {
    const auto at = out.find("publishing on ");
    const auto end = out.find('\n', at);
    if (at == std::string::npos || end == std::string::npos) return false;
    endpoint = out.substr(at + 14, end - at - 14);
    return true;
  })) << demo.out();

  ChildProcess tail({LIVEMONCTL_PATH, "tail", endpoint, "--json", "--filter", "eval", "--count", "2"});
  EXPECT_EQ(exitCode(tail), 0) << tail.err();
  int evals = 0;
  std::istringstream lines(tail.out());
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("\"name\":\"eval\"") != std::string::npos) {
      ++evals;
      EXPECT_NE(line.find("\"accuracy\":"), std::string::npos) << line;
      EXPECT_NE(line.find("\"epoch\":"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(evals, 2) << tail.out();

  // SIGINT stops the demo cleanly.
  demo.signal(SIGINT);
  EXPECT_EQ(exitCode(demo), 0);
  EXPECT_NE(demo.out().find("stopped after"), std::string::npos) << demo.out();

  // And SIGTERM a tail with nothing to read.
  ChildProcess idle({LIVEMONCTL_PATH, "tail", endpoint});
  ASSERT_TRUE(idle.readStderrUntil([](const std::string& err) { return err.find("listening") != std::string::npos; }));
  idle.signal(SIGTERM);
  EXPECT_EQ(exitCode(idle), 0);
  EXPECT_NE(idle.err().find("livemonctl tail: 0 events"), std::string::npos) << idle.err();
}

TEST(Livemonctl, ABusyPortIsAnErrorNamingIt) {
  ChildProcess first({LIVEMONCTL_PATH, "demo", "--endpoint", "tcp://127.0.0.1:*"});
  std::string endpoint;
  ASSERT_TRUE(first.readStdoutUntil([&](const std::string& out) {
    const auto at = out.find("publishing on ");
    const auto end = out.find('\n', at);
    if (at == std::string::npos || end == std::string::npos) return false;
    endpoint = out.substr(at + 14, end - at - 14);
    return true;
  }));
  ChildProcess second({LIVEMONCTL_PATH, "demo", "--endpoint", endpoint});
  EXPECT_EQ(exitCode(second), 1);
  EXPECT_NE(second.err().find(endpoint), std::string::npos) << second.err();
  EXPECT_NE(second.err().find("Address already in use"), std::string::npos) << second.err();
  first.signal(SIGTERM);
  EXPECT_EQ(exitCode(first), 0);
}

}  // namespace
}  // namespace livemon::transport
