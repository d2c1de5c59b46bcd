// PayloadPublisher: messages encoded elsewhere (a recording, another publisher) go out under the
// identities they carry, without waiting for anyone.
#include <livemon/transport/payload_publisher.h>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <thread>
#include <vector>

#include <livemon/transport/error.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "raw_subscriber.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::connectTo;
using test::makeEvent;
using test::RawSubscriber;
using test::waitUntil;

SourceInfo identity(std::string run, int64_t pid) {
  SourceInfo source;
  source.run = std::move(run);
  source.host = "recorded-host";
  source.pid = pid;
  source.instanceId = static_cast<uint64_t>(pid) * 31;
  source.startTime = fromWireTime(1'700'000'000'000'000'000);
  return source;
}

PayloadPublisherOptions bindLoopback() {
  PayloadPublisherOptions options;
  options.bind = {"tcp://127.0.0.1:*"};
  options.linger = 500ms;
  return options;
}

std::string eventPayload(const SourceInfo& source, uint64_t sequence, const std::string& name, double x) {
  return encodeEventsPayload(source, sequence, name, std::vector<Event>{makeEvent(name, {{"x", x}})});
}

TEST(PayloadPublisher, SendsEachPayloadUnderTheSourceItCarries) {
  PayloadPublisher publisher(bindLoopback());
  ASSERT_EQ(publisher.endpoints().size(), 1u);
  EXPECT_EQ(publisher.endpoints()[0].find(":*"), std::string::npos) << "the bound port is reported";
  Subscriber subscriber(connectTo(publisher.endpoints()));
  const std::atomic<bool> stop{false};
  ASSERT_TRUE(publisher.waitForSubscriber(test::kDeadline, stop));

  const SourceInfo trainer = identity("train", 100);
  const SourceInfo evaluator = identity("eval", 200);
  EXPECT_TRUE(publisher.send("loss", eventPayload(trainer, 7, "loss", 1.5)));
  EXPECT_TRUE(publisher.send("accuracy", eventPayload(evaluator, 41, "accuracy", 0.5)));
  EXPECT_TRUE(publisher.send("loss", eventPayload(trainer, 8, "loss", 1.25)));

  std::map<std::string, std::vector<uint64_t>> sequences;  // by run
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) {
    EXPECT_EQ(event.source->host, "recorded-host");
    EXPECT_EQ(*event.source, event.source->run == "train" ? trainer : evaluator);
    sequences[event.source->run].push_back(event.sequence);
  };
  ASSERT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return sequences["train"].size() + sequences["eval"].size() == 3; }));
  EXPECT_EQ(sequences["train"], (std::vector<uint64_t>{7, 8})) << "the sequence numbers are the payloads' own";
  EXPECT_EQ(sequences["eval"], (std::vector<uint64_t>{41}));
  EXPECT_EQ(publisher.sentCount(), 3u);
  EXPECT_EQ(publisher.unsentCount(), 0u);
  EXPECT_EQ(publisher.stats().sent, 3u);
}

TEST(PayloadPublisher, HeartbeatsItForwardsMakeSourcesJoinAndLeave) {
  PayloadPublisher publisher(bindLoopback());
  Subscriber subscriber(connectTo(publisher.endpoints()));
  const std::atomic<bool> stop{false};
  ASSERT_TRUE(publisher.waitForSubscriber(test::kDeadline, stop));
  const SourceInfo replayed = identity("replayed", 300);
  PublisherCounters counters;
  counters.timestamp = std::chrono::system_clock::now();
  counters.interval = 1s;
  publisher.send(kHeartbeatTopic, encodeHeartbeatPayload(MessageKind::Heartbeat, replayed, 0, counters));
  publisher.send(kHeartbeatTopic, encodeHeartbeatPayload(MessageKind::Goodbye, replayed, 1, counters));
  std::vector<SourceChange> changes;
  SubscriberCallbacks callbacks;
  callbacks.onSourceChange = [&](const SourceChange& change) {
    EXPECT_EQ(*change.source, replayed);
    changes.push_back(change);
  };
  ASSERT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return changes.size() == 2; }));
  EXPECT_TRUE(changes[0].joined);
  EXPECT_EQ(changes[1].state, SourceState::Gone);
}

TEST(PayloadPublisher, ConnectsToASubscriberThatBinds) {
  SubscriberOptions subscriberOptions;
  subscriberOptions.bind = {"tcp://127.0.0.1:*"};
  Subscriber subscriber(subscriberOptions);
  PayloadPublisherOptions options;
  options.connect = {*subscriber.endpoints().at(0).endpoint};
  PayloadPublisher publisher(options);
  EXPECT_EQ(publisher.endpoints(), options.connect);
  // A bound subscriber sends its subscriptions to a peer that connects while it polls.
  const std::atomic<bool> stop{false};
  std::atomic<bool> subscribed{false};
  std::thread waiter([&] { subscribed = publisher.waitForSubscriber(test::kDeadline, stop); });
  SubscriberCallbacks callbacks;
  bool received = false;
  callbacks.onEvent = [&](ReceivedEvent& event) { received = received || event.event.name == "connected"; };
  test::pollUntil(subscriber, callbacks, [&] { return subscribed.load(); });
  waiter.join();
  ASSERT_TRUE(subscribed);
  publisher.send("connected", eventPayload(identity("train", 100), 0, "connected", 1.0));
  EXPECT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return received; }));
}

TEST(PayloadPublisher, WaitForSubscriberEndsAtItsDeadlineOrWhenStopped) {
  PayloadPublisher publisher(bindLoopback());
  std::atomic<bool> stop{false};
  EXPECT_FALSE(publisher.waitForSubscriber(50ms, stop)) << "nobody came";
  stop = true;
  // A test that hangs here fails by ctest's timeout: the flag must end the wait, not the 10 min.
  EXPECT_FALSE(publisher.waitForSubscriber(10min, stop));
}

// A peer that subscribes to everything and never reads: sending goes on, and that peer misses
// what does not fit below the high-water mark.
TEST(PayloadPublisher, NeverWaitsForAStalledSubscriber) {
  PayloadPublisherOptions options = bindLoopback();
  options.sendHighWaterMark = 10;
  options.linger = 0ms;
  PayloadPublisher publisher(options);
  RawSubscriber stalled(publisher.endpoints()[0]);
  ASSERT_TRUE(stalled.subscribe(""));
  const std::atomic<bool> stop{false};
  ASSERT_TRUE(publisher.waitForSubscriber(test::kDeadline, stop));
  const std::string payload = eventPayload(identity("train", 100), 0, "big", 1.0) + std::string(4096, ' ');
  constexpr uint64_t kMessages = 20000;  // ~80 MiB: far beyond the socket buffers
  for (uint64_t i = 0; i < kMessages; ++i) publisher.send("big", payload);
  EXPECT_EQ(publisher.sentCount() + publisher.unsentCount(), kMessages);
}

TEST(PayloadPublisher, ClosesSubscriberConnectionsBeyondTheLimit) {
  PayloadPublisherOptions options = bindLoopback();
  options.maxSubscriberConnections = 2;
  PayloadPublisher publisher(options);
  std::vector<std::unique_ptr<RawSubscriber>> peers;
  for (int i = 0; i < 5; ++i) {
    peers.push_back(std::make_unique<RawSubscriber>(publisher.endpoints()[0]));
    peers.back()->subscribe("");
  }
  ASSERT_TRUE(waitUntil([&] { return publisher.stats().subscribersDisconnected == 3; }));
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(peers[i]->waitUntilClosed()) << i;
  EXPECT_FALSE(peers[0]->waitUntilClosed(100ms));
}

TEST(PayloadPublisher, BindFailureNamesTheEndpointAndTheReason) {
  PayloadPublisher first(bindLoopback());
  const std::string taken = first.endpoints()[0];
  PayloadPublisherOptions options;
  options.bind = {taken};
  try {
    PayloadPublisher second(options);
    FAIL() << "binding a used port did not throw";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find(taken), std::string::npos) << error.what();
    EXPECT_EQ(error.endpoint(), taken);
  }
  options.bind = {"tcp://127.0.0.1:notaport"};
  EXPECT_THROW(PayloadPublisher{options}, TransportError);
}

TEST(PayloadPublisher, BadOptionsNameTheOption) {
  auto message = [](PayloadPublisherOptions options) -> std::string {
    try {
      PayloadPublisher publisher(options);
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "no exception";
  };
  PayloadPublisherOptions options;
  EXPECT_NE(message(options).find("no endpoint"), std::string::npos);
  options = bindLoopback();
  options.bind.push_back("");
  EXPECT_NE(message(options).find("empty"), std::string::npos);
  options = bindLoopback();
  options.sendHighWaterMark = -1;
  EXPECT_NE(message(options).find("sendHighWaterMark"), std::string::npos);
  options = bindLoopback();
  options.linger = -1ms;
  EXPECT_NE(message(options).find("linger"), std::string::npos);
  options = bindLoopback();
  options.maxSubscriberBytes = 100;
  EXPECT_NE(message(options).find("PayloadPublisherOptions: maxSubscriberBytes"), std::string::npos);
  options = bindLoopback();
  options.maxTotalSubscriberBytes = options.maxSubscriberBytes - 1;
  EXPECT_NE(message(options).find("maxTotalSubscriberBytes"), std::string::npos);
  options = bindLoopback();
  options.maxSubscriberConnections = 0;
  EXPECT_NE(message(options).find("maxSubscriberConnections"), std::string::npos);
}

// In a child forked while it exists, the inherited instance neither sends (the parent's
// subscribers would see a second sender with the same identities) nor touches the inherited
// socket when destroyed.
TEST(PayloadPublisher, AnInheritedInstanceSendsNothing) {
  auto publisher = std::make_unique<PayloadPublisher>(bindLoopback());
  const std::string payload = eventPayload(identity("train", 100), 0, "x", 1.0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool refused = !publisher->send("x", payload) && publisher->unsentCount() == 1;
    const std::atomic<bool> stop{false};
    const bool noWait = !publisher->waitForSubscriber(10min, stop);
    publisher.reset();
    _exit(refused && noWait ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(publisher->send("x", payload)) << "the parent's instance is untouched";
}

}  // namespace
}  // namespace livemon::transport
