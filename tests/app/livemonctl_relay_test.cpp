// `livemonctl relay` as a process: it forwards and records, stops on SIGTERM with exit status 0,
// reports an endpoint it cannot bind (1) and bad arguments (2), and a subscriber that stops
// reading (SIGSTOP) does not hold up another.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <map>
#include <optional>
#include <memory>

#include <livemon/event.h>
#include <livemon/event_handler.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

#include "json_lines.h"
#include "relay_process.h"
#include "test_paths.h"
#include "test_support.h"

using livemon::test_paths::livemonctlPath;

namespace livemon::livemonctl {
namespace {

using namespace std::chrono_literals;
using namespace transport;
using test::ChildProcess;

using test::RelayEndpoints;

std::optional<RelayEndpoints> startRelay(std::unique_ptr<ChildProcess>& relay, std::vector<std::string> extra = {}) {
  return test::startRelay(livemonctlPath(), relay, std::move(extra));
}

PublisherOptions connectTo(const std::string& endpoint) {
  PublisherOptions options = test::testPublisherOptions();
  options.bind.clear();
  options.connect = {endpoint};
  return options;
}

TEST(LivemonctlRelay, ForwardsRecordsAndStopsOnSigterm) {
  test::TempDir dir;
  const std::string recordDir = (dir.path() / "rec").string();
  std::unique_ptr<ChildProcess> relay;
  const auto endpoints = startRelay(relay, {"--record", recordDir});
  ASSERT_TRUE(endpoints) << relay->out() << relay->err();

  Publisher publisher(connectTo(endpoints->listen));
  Subscriber subscriber(test::connectTo({endpoints->serve}));
  ASSERT_TRUE(test::waitForSource(subscriber, publisher.identity()));
  for (int i = 0; i < 100; ++i) logEvent(test::makeEvent("step", {{"i", int64_t{i}}}));
  uint64_t received = 0;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) { received += event.event.name == "step" ? 1 : 0; };
  ASSERT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return received >= 100; }));
  EXPECT_EQ(received, 100u);

  relay->signal(SIGTERM);
  EXPECT_EQ(relay->exitCode(), 0) << relay->err();
  EXPECT_NE(relay->out().find("recorded "), std::string::npos) << relay->out();

  // A file per run: the publisher's, and the relay's own (its counters, run "relay").
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(recordDir)) {
    if (entry.path().filename().string().rfind(publisher.identity().run + "-", 0) == 0) files.push_back(entry.path());
  }
  ASSERT_EQ(files.size(), 1u) << "one file named by the publisher's run";
  ChildProcess info({livemonctlPath(), "info", files[0].string(), "--json"});
  EXPECT_EQ(info.exitCode(), 0) << info.err();
  const test::Json summary = test::parseJson(info.out());
  EXPECT_EQ(summary["indexed"], true) << info.out();
  test::Json step;
  for (const test::Json& channel : summary["channels"]) {
    if (channel["topic"] == "step") step = channel;
  }
  EXPECT_EQ(step["encoding"], "msgpack") << info.out();
  EXPECT_EQ(step["events"], 100) << info.out();
}

TEST(LivemonctlRelay, AnEndpointItCannotBindExitsOneAndBadArgumentsTwo) {
  std::unique_ptr<ChildProcess> first;
  const auto endpoints = startRelay(first);
  ASSERT_TRUE(endpoints);
  ChildProcess clash({livemonctlPath(), "relay", "--listen", endpoints->listen, "--serve", "tcp://127.0.0.1:*"});
  EXPECT_EQ(clash.exitCode(), 1);
  EXPECT_NE(clash.err().find(endpoints->listen), std::string::npos) << clash.err();

  for (const std::vector<std::string>& args : {std::vector<std::string>{"--rotate-mb", "0"},
                                               std::vector<std::string>{"--listen"},
                                               std::vector<std::string>{"--rotate-minutes", "soon"},
                                               std::vector<std::string>{"--max-stall-seconds", "-1"}}) {
    std::vector<std::string> argv{livemonctlPath(), "relay"};
    argv.insert(argv.end(), args.begin(), args.end());
    ChildProcess bad(argv);
    EXPECT_EQ(bad.exitCode(), 2) << testing::PrintToString(args);
    EXPECT_NE(bad.err().find("Usage:"), std::string::npos) << bad.err();
  }
  first->signal(SIGINT);
  EXPECT_EQ(first->exitCode(), 0);
}

// A `livemonctl record` subscriber is stopped (SIGSTOP) while 120 MiB pass through the relay: far
// more than its connection can hold (100 messages of 60 KiB, and the socket buffers). The other
// subscriber still gets every message, with no gap: the relay drops for the stopped one only. (A
// relay that waited for it would stall here, and the live subscriber would starve.) Then the
// relay cuts the stopped one (--max-stall-seconds) and says so in its report and at the end.
TEST(LivemonctlRelay, AStoppedSubscriberDoesNotHoldUpAnother) {
  test::TempDir dir;
  std::unique_ptr<ChildProcess> relay;
  const auto endpoints = startRelay(relay, {"--high-water-mark", "100", "--max-stall-seconds", "0.5"});
  ASSERT_TRUE(endpoints);

  const std::string recording = (dir.path() / "stopped.mcap").string();
  ChildProcess stopped({livemonctlPath(), "record", endpoints->serve, "-o", recording});
  // The relay's own report reaches it within a second: then it is connected and subscribed.
  ASSERT_TRUE(stopped.readStderrUntil([](const std::string& err) { return err.find("source joined") != std::string::npos; }))
      << stopped.err();
  Subscriber live(test::connectTo({endpoints->serve}));
  PayloadPublisherOptions publisherOptions;
  publisherOptions.connect = {endpoints->listen};
  PayloadPublisher publisher(publisherOptions);

  SourceInfo source;
  source.run = "flood";
  source.host = "here";
  source.pid = 1;
  source.instanceId = 5;
  source.startTime = std::chrono::system_clock::now();
  uint64_t sequence = 0;
  uint64_t received = 0;
  double cut = 0;  // as the relay reports it
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) {
    received += event.event.name == "flood" ? 1 : 0;
    if (event.source->run == "relay" && event.event.data.contains("livemon.relay.subscribers_cut.value")) {
      cut = std::get<double>(event.event.data.at("livemon.relay.subscribers_cut.value"));
    }
  };
  auto send = [&] {
    publisher.send("flood", encodeEventsPayload(source, sequence++, "flood",
                                                {test::makeEvent("flood", {{"blob", std::string(60 * 1024, 'f')}})}));
  };
  // Until the live subscriber's subscription has reached the publisher.
  ASSERT_TRUE(test::pollUntil(live, callbacks, [&] {
    send();
    return received > 0;
  }));
  // The stopped subscriber had the subscription before the live one: it got the first messages too.
  stopped.signal(SIGSTOP);
  const uint64_t start = sequence;
  constexpr uint64_t kMessages = 2048;
  // Fewer than the relay queues per connection: the live subscriber, which waits for each chunk,
  // never has more outstanding than fits.
  constexpr uint64_t kChunk = 32;
  for (uint64_t chunk = 0; chunk < kMessages / kChunk; ++chunk) {
    for (uint64_t i = 0; i < kChunk; ++i) send();
    const uint64_t target = received + kChunk;
    ASSERT_TRUE(test::pollUntil(live, callbacks, [&] { return received >= target; }))
        << "chunk " << chunk << ": " << received << " of " << target << " while a subscriber is stopped";
  }
  EXPECT_EQ(sequence - start, kMessages);
  EXPECT_EQ(live.stats().missedEvents, 0u);
  EXPECT_EQ(live.stats().gaps, 0u);
  EXPECT_TRUE(test::pollUntil(live, callbacks, [&] { return cut >= 1; })) << "the stopped subscriber was not cut";

  // Woken, it still runs and stops cleanly.
  stopped.signal(SIGCONT);
  stopped.signal(SIGTERM);
  EXPECT_EQ(stopped.exitCode(), 0) << stopped.err();

  relay->signal(SIGTERM);
  EXPECT_EQ(relay->exitCode(), 0) << relay->err();
  EXPECT_NE(relay->out().find("cut 1 subscriber connections that took nothing"), std::string::npos) << relay->out();
}

// The acceptance test of issue 14: `demo --ranks 32` publishes into a node relay, chained into a
// head relay, all separate processes; a subscriber of the head relay sees every rank, and both
// relays, with no gap.
TEST(LivemonctlRelay, ThirtyTwoRanksThroughTwoChainedRelayProcesses) {
  std::unique_ptr<ChildProcess> head;
  const auto headEndpoints = startRelay(head);
  ASSERT_TRUE(headEndpoints);
  std::unique_ptr<ChildProcess> node;
  const auto nodeEndpoints = startRelay(node, {"--upstream", headEndpoints->listen});
  ASSERT_TRUE(nodeEndpoints);
  EXPECT_NE(node->out().find("forwarding to the relay at " + headEndpoints->listen), std::string::npos) << node->out();

  Subscriber subscriber(test::connectTo({headEndpoints->serve}));
  ChildProcess demo({livemonctlPath(), "demo", "--ranks", "32", "--connect", nodeEndpoints->listen, "--window", "0.05",
                     "--steps-per-second", "100", "--run", "cluster"});
  std::map<int64_t, uint64_t> windows;  // per rank, Stat windows received
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) {
    if (event.source->run == "cluster" && event.event.name == kStatEventName && event.source->rank) {
      ++windows[*event.source->rank];
    }
  };
  auto relaysSeen = [&] {
    std::size_t relays = 0;
    for (const SourceStatus& source : subscriber.sources()) relays += source.source->run == "relay";
    return relays;
  };
  const bool complete = test::pollUntil(subscriber, callbacks, [&] {
    if (windows.size() < 32 || relaysSeen() < 2) return false;
    for (const auto& [rank, count] : windows) {
      if (count < 20) return false;
    }
    return true;
  });
  EXPECT_TRUE(complete) << windows.size() << " ranks seen";
  EXPECT_EQ(windows.begin()->first, 0);
  EXPECT_EQ(windows.rbegin()->first, 31);
  EXPECT_EQ(relaysSeen(), 2u) << "both relays report themselves";
  EXPECT_EQ(subscriber.stats().gaps, 0u);
  EXPECT_EQ(subscriber.stats().missedEvents, 0u);

  demo.signal(SIGTERM);
  EXPECT_EQ(demo.exitCode(), 0) << demo.err();
  for (ChildProcess* relay : {node.get(), head.get()}) {
    relay->signal(SIGTERM);
    EXPECT_EQ(relay->exitCode(), 0) << relay->err();
  }
}

}  // namespace
}  // namespace livemon::livemonctl
