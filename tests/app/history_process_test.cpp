// The whole run for a late joiner, with real processes: `livemonctl tail --history` started 20 s
// after `livemonctl demo` prints the run from its first Stat window, then live, each event once,
// both from the demo itself and through `livemonctl relay`.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include "json_lines.h"
#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::livemonctl {
namespace {

using namespace std::chrono_literals;
using transport::test::Json;
using transport::test::ChildProcess;

// The endpoint after `marker` up to the end of its line in `text`, once it is there.
std::optional<std::string> endpointAfter(const std::string& text, const std::string& marker, const std::string& until) {
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) return std::nullopt;
  const std::size_t start = at + marker.size();
  const std::size_t end = text.find_first_of(until, start);
  if (end == std::string::npos) return std::nullopt;
  return text.substr(start, end - start);
}

struct Tail {
  std::unique_ptr<ChildProcess> process;
  std::map<std::string, std::vector<uint64_t>> sequences;  // of the demo's events, per name
  std::vector<int64_t> statTimes;                           // of its Stat windows, in order
  std::size_t fromHistory = 0;
  std::size_t live = 0;
};

// Reads `tail`'s JSON lines of the run "demo" until `liveEvents` have come live after the history.
bool readUntilLive(Tail& tail, std::size_t liveEvents) {
  std::size_t parsed = 0;
  return tail.process->readStdoutUntil([&](const std::string& out) {
    std::size_t lineStart = parsed;
    for (std::size_t end; (end = out.find('\n', lineStart)) != std::string::npos; lineStart = end + 1) {
      const Json line = transport::test::parseJson(out.substr(lineStart, end - lineStart));
      // Events carry a sequence number; notices (joined, gap) do not.
      if (!line.contains("seq") || !line.contains("source") || line["source"]["run"] != "demo") continue;
      const std::string name = line["name"];
      tail.sequences[name].push_back(line["seq"].get<uint64_t>());
      if (name == "livemon.Stat") tail.statTimes.push_back(line["ts"].get<int64_t>());
      (line.value("history", false) ? tail.fromHistory : tail.live) += 1;
    }
    parsed = lineStart;
    return tail.live >= liveEvents;
  });
}

void expectEveryEventOnce(const Tail& tail, const std::string& how) {
  for (const auto& [name, sequences] : tail.sequences) {
    ASSERT_FALSE(sequences.empty());
    EXPECT_EQ(sequences.front(), 0u) << how << ": " << name << " from the run's first event";
    for (std::size_t i = 1; i < sequences.size(); ++i) {
      ASSERT_EQ(sequences[i], sequences[i - 1] + 1) << how << ": " << name << " has a gap or a duplicate at #" << i;
    }
  }
}

TEST(HistoryProcess, ATailStartedTwentySecondsLateSeesTheRunFromItsFirstWindow) {
  const int64_t started = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  // One demo publishes itself, another through a relay.
  ChildProcess relay({livemonctlPath(), "relay", "--listen", "tcp://127.0.0.1:*", "--serve", "tcp://127.0.0.1:*"});
  std::optional<std::string> listen;
  std::optional<std::string> serve;
  ASSERT_TRUE(relay.readStdoutUntil([&](const std::string& out) {
    listen = endpointAfter(out, "publishers connect to ", ",");
    serve = endpointAfter(out, ", subscribers to ", "\n");
    return listen && serve;
  })) << relay.out() << relay.err();
  const std::vector<std::string> demoArguments{"--window", "1", "--steps-per-second", "50", "--steps-per-epoch", "100",
                                               "--seed", "7", "--run", "demo"};
  std::vector<std::string> directArgv{livemonctlPath(), "demo", "--endpoint", "tcp://127.0.0.1:*"};
  directArgv.insert(directArgv.end(), demoArguments.begin(), demoArguments.end());
  ChildProcess direct(directArgv);
  std::vector<std::string> relayedArgv{livemonctlPath(), "demo", "--connect", *listen};
  relayedArgv.insert(relayedArgv.end(), demoArguments.begin(), demoArguments.end());
  ChildProcess relayed(relayedArgv);
  std::optional<std::string> directEndpoint;
  ASSERT_TRUE(direct.readStdoutUntil([&](const std::string& out) {
    return (directEndpoint = endpointAfter(out, "publishing on ", "\n")).has_value();
  })) << direct.out() << direct.err();

  // The scenario, not synchronisation: the user opens the tail 20 s into the run.
  std::this_thread::sleep_for(20s);

  Tail fromDemo;
  fromDemo.process = std::make_unique<ChildProcess>(
      std::vector<std::string>{livemonctlPath(), "tail", "--history", "--json", *directEndpoint});
  Tail fromRelay;
  fromRelay.process =
      std::make_unique<ChildProcess>(std::vector<std::string>{livemonctlPath(), "tail", "--history", "--json", *serve});
  ASSERT_TRUE(readUntilLive(fromDemo, 30)) << fromDemo.process->err();
  ASSERT_TRUE(readUntilLive(fromRelay, 30)) << fromRelay.process->err();
  for (Tail* tail : {&fromDemo, &fromRelay}) {
    tail->process->signal(SIGINT);
    EXPECT_EQ(tail->process->exitCode(), 0);
    EXPECT_NE(tail->process->err().find("event(s) from"), std::string::npos) << tail->process->err();
  }

  for (const auto& [tail, how] : {std::pair{&fromDemo, "from the demo"}, std::pair{&fromRelay, "through the relay"}}) {
    SCOPED_TRACE(how);
    expectEveryEventOnce(*tail, how);
    EXPECT_GE(tail->fromHistory, 19u * 3) << "about 20 windows of several Stats came from the history";
    ASSERT_FALSE(tail->statTimes.empty());
    EXPECT_LT(tail->statTimes.front() - started, int64_t{5'000'000'000}) << "the first window is the run's first";
    EXPECT_TRUE(tail->sequences.count("eval")) << "eval events from before the tail joined";
  }
  relay.signal(SIGTERM);
  EXPECT_EQ(relay.exitCode(), 0);
}

}  // namespace
}  // namespace livemon::livemonctl
