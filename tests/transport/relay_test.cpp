// Relay: publishers connect to it, subscribers connect to it, and what flows between them goes
// through libzmq's proxy: every source arrives without gaps, relays chain, subscriptions reach the
// publishers, and peers may come and go.
#include <livemon/transport/relay.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include <livemon/event_handler.h>
#include <livemon/transport/error.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::connectTo;
using test::makeEvent;
using test::pollUntil;
using test::waitForSource;
using test::loopbackRelayOptions;
using test::connectedPublisherOptions;

// What a subscriber received, per source.
struct Received {
  std::map<SourceInfo, uint64_t> events;  // of the name "step"
  std::set<SourceInfo> sources;
  uint64_t gaps = 0;

  SubscriberCallbacks callbacks() {
    SubscriberCallbacks callbacks;
    callbacks.onEvent = [this](ReceivedEvent& event) {
      if (event.event.name == "step") ++events[*event.source];
    };
    callbacks.onSourceChange = [this](const SourceChange& change) {
      if (change.joined) sources.insert(*change.source);
    };
    callbacks.onGap = [this](const GapInfo&) { ++gaps; };
    return callbacks;
  }
};

// Logs `count` "step" events; every Publisher of the process sends each.
void logSteps(int count) {
  for (int i = 0; i < count; ++i) logEvent(makeEvent("step", {{"i", int64_t{i}}}));
}

TEST(Relay, EveryPublisherReachesTheSubscriberWithoutGaps) {
  Relay relay(loopbackRelayOptions());
  EXPECT_EQ(relay.listenEndpoint().find(":*"), std::string::npos) << "the bound port is reported";
  std::vector<std::unique_ptr<Publisher>> publishers;
  for (int64_t rank = 0; rank < 3; ++rank) {
    publishers.push_back(std::make_unique<Publisher>(connectedPublisherOptions(relay.listenEndpoint(), rank)));
  }
  Subscriber subscriber(connectTo({relay.serveEndpoint()}));
  for (const auto& publisher : publishers) ASSERT_TRUE(waitForSource(subscriber, publisher->identity()));

  logSteps(500);
  Received received;
  const auto callbacks = received.callbacks();
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] {
    for (const auto& publisher : publishers) {
      if (received.events[publisher->identity()] < 500) return false;
    }
    return true;
  }));
  for (const auto& publisher : publishers) EXPECT_EQ(received.events[publisher->identity()], 500u);
  EXPECT_EQ(received.gaps, 0u);
  EXPECT_EQ(subscriber.stats().missedEvents, 0u);

  // The relay is a source too: its heartbeats, and Stats of what it forwarded.
  std::map<std::string, double> relayStats;
  SubscriberCallbacks relayCallbacks;
  relayCallbacks.onEvent = [&](ReceivedEvent& event) {
    if (*event.source != relay.identity() || event.event.name != kStatEventName) return;
    for (const auto& [key, value] : event.event.data) relayStats[key] = std::get<double>(value);
  };
  // A report sent after the events passed counts them (earlier ones may still be on their way).
  const double forwarded = static_cast<double>(relay.stats().downMessages);
  EXPECT_GE(forwarded, 6.0) << "at least each publisher's heartbeat and its batch of events";
  ASSERT_TRUE(pollUntil(subscriber, relayCallbacks,
                        [&] { return relayStats["livemon.relay.down_messages.value"] >= forwarded; }));
  EXPECT_GT(relayStats["livemon.relay.down_bytes.value"], 500 * 3.0) << "the events' bytes";
  EXPECT_EQ(relay.identity().run, "relay");
  EXPECT_GT(relayStats["livemon.relay.up_messages.value"], 0.0) << "the subscription went up";
  // What it refused and dropped to hold its bounds is reported beside the traffic: nothing here.
  for (const char* key : {"livemon.relay.refused_messages.value", "livemon.relay.queue_dropped.value",
                          "livemon.relay.publishers_refused.value", "livemon.relay.queued_bytes.value",
                          "livemon.relay.subscribers_cut.value"}) {
    ASSERT_TRUE(relayStats.contains(key)) << key;
  }
  EXPECT_EQ(relayStats["livemon.relay.refused_messages.value"], 0.0);
  EXPECT_EQ(relayStats["livemon.relay.queue_dropped.value"], 0.0);
  EXPECT_EQ(relayStats["livemon.relay.publishers_refused.value"], 0.0);
  EXPECT_EQ(relayStats["livemon.relay.subscribers_cut.value"], 0.0);
}

// 32 ranks publish into a node relay, which forwards into a head relay, which the subscriber
// reads: every rank arrives, none with a gap.
TEST(Relay, ThirtyTwoRanksThroughTwoChainedRelays) {
  Relay head(loopbackRelayOptions());
  RelayOptions nodeOptions = loopbackRelayOptions();
  nodeOptions.upstream = {head.listenEndpoint()};
  nodeOptions.runName = "node-relay";
  Relay node(nodeOptions);

  std::vector<std::unique_ptr<Publisher>> ranks;
  for (int64_t rank = 0; rank < 32; ++rank) {
    ranks.push_back(std::make_unique<Publisher>(connectedPublisherOptions(node.listenEndpoint(), rank)));
  }
  Subscriber subscriber(connectTo({head.serveEndpoint()}));
  for (const auto& rank : ranks) ASSERT_TRUE(waitForSource(subscriber, rank->identity()));
  ASSERT_TRUE(waitForSource(subscriber, node.identity())) << "the node relay reports through the head relay";

  logSteps(100);
  Received received;
  const auto callbacks = received.callbacks();
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] {
    for (const auto& rank : ranks) {
      if (received.events[rank->identity()] < 100) return false;
    }
    return true;
  })) << [&] {
    std::string counts;
    for (const auto& rank : ranks) {
      counts += std::to_string(received.events[rank->identity()]) + "/" + std::to_string(rank->publishedCount()) + " ";
    }
    return counts + "gaps " + std::to_string(received.gaps);
  }();
  std::set<int64_t> seenRanks;
  for (const auto& [source, count] : received.events) {
    EXPECT_EQ(count, 100u) << describe(source);
    if (source.rank) seenRanks.insert(*source.rank);
  }
  EXPECT_EQ(seenRanks.size(), 32u);
  EXPECT_EQ(received.gaps, 0u);
  EXPECT_EQ(subscriber.stats().missedEvents, 0u);
}

SourceInfo rawSource() {
  SourceInfo source;
  source.run = "raw";
  source.host = "here";
  source.pid = 1;
  source.instanceId = 77;
  source.startTime = fromWireTime(1'700'000'000'000'000'000);
  return source;
}

// Sends `name` until the subscriber receives it: then the subscription has reached the publisher.
bool sendUntilReceived(PayloadPublisher& publisher, Subscriber& subscriber, const std::string& name, uint64_t& sequence) {
  return test::sendUntilReceived(publisher, subscriber, rawSource(), name, sequence);
}

// How many bytes the relay took from publishers while 32 large "unwanted" messages, then a
// "wanted" one, were published to a subscriber with `filters`.
// Through a relay that keeps no history (one that keeps it takes everything, for late joiners).
uint64_t bytesRelayedFor(const std::vector<std::string>& filters) {
  RelayOptions options = loopbackRelayOptions();
  options.historyBytes = 0;
  Relay relay(options);
  PayloadPublisherOptions publisherOptions;
  publisherOptions.connect = {relay.listenEndpoint()};
  PayloadPublisher publisher(publisherOptions);
  Subscriber subscriber(connectTo({relay.serveEndpoint()}, 1000, filters));
  uint64_t sequence = 0;
  EXPECT_TRUE(sendUntilReceived(publisher, subscriber, "wanted", sequence));

  const uint64_t before = relay.stats().downBytes;
  const std::string big(60 * 1024, 'x');
  uint64_t unwantedSequence = 0;
  for (int i = 0; i < 32; ++i) {
    publisher.send("unwanted", encodeEventsPayload(rawSource(), unwantedSequence++, "unwanted",
                                                   {makeEvent("unwanted", {{"blob", big}})}));
  }
  // One connection keeps its order: once "wanted" arrived, the relay had taken what came before.
  EXPECT_TRUE(sendUntilReceived(publisher, subscriber, "wanted", sequence));
  return relay.stats().downBytes - before;
}

TEST(Relay, SubscriptionsReachThePublishersSoFilteringHappensThere) {
  constexpr uint64_t kUnwantedBytes = 32 * 60 * 1024;
  EXPECT_LT(bytesRelayedFor({"wanted"}), kUnwantedBytes / 32) << "the publisher sent what nobody subscribed to";
  EXPECT_GE(bytesRelayedFor({}), kUnwantedBytes) << "a subscriber of everything gets the large messages";
}

TEST(Relay, SurvivesPublishersAndSubscribersComingAndGoing) {
  Relay relay(loopbackRelayOptions());
  for (int round = 0; round < 3; ++round) {
    Publisher publisher(connectedPublisherOptions(relay.listenEndpoint(), round));
    Subscriber subscriber(connectTo({relay.serveEndpoint()}));
    ASSERT_TRUE(waitForSource(subscriber, publisher.identity())) << "round " << round;
    logSteps(50);
    Received received;
    const auto callbacks = received.callbacks();
    ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return received.events[publisher.identity()] >= 50; }))
        << "round " << round;
    EXPECT_EQ(received.gaps, 0u);
  }
  // A subscriber that outlives its publisher, and a publisher that outlives its subscriber.
  Subscriber staying(connectTo({relay.serveEndpoint()}));
  {
    Publisher leaving(connectedPublisherOptions(relay.listenEndpoint()));
    ASSERT_TRUE(waitForSource(staying, leaving.identity()));
  }
  Publisher staying2(connectedPublisherOptions(relay.listenEndpoint()));
  ASSERT_TRUE(waitForSource(staying, staying2.identity()));
}

TEST(Relay, HandsACopyOfTheStreamToOnMessage) {
  std::mutex lock;
  std::map<std::string, uint64_t> events;
  RelayOptions options = loopbackRelayOptions();
  options.onMessage = [&](std::string_view topic, const WireMessage& message) {
    std::lock_guard guard(lock);
    events[std::string(topic)] += std::max<std::size_t>(message.events.size(), 1);  // a heartbeat counts 1
    if (topic == "boom") throw std::runtime_error("a callback that throws");
  };
  Relay relay(options);
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint()));
  Subscriber subscriber(connectTo({relay.serveEndpoint()}));
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));
  logEvent(makeEvent("boom", {{"x", 1.0}}));
  logSteps(200);
  Received received;
  const auto callbacks = received.callbacks();
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return received.events[publisher.identity()] >= 200; }));
  ASSERT_TRUE(test::waitUntil([&] {
    std::lock_guard guard(lock);
    return events["step"] >= 200;
  }));
  relay.stop();
  std::lock_guard guard(lock);
  EXPECT_EQ(events["step"], 200u);
  EXPECT_EQ(events["boom"], 1u);
  EXPECT_GT(events[std::string(kHeartbeatTopic)], 0u);
  EXPECT_EQ(relay.stats().callbackErrors, 1u) << "the throwing callback was counted and forwarding went on";
  EXPECT_GT(relay.stats().downBytes, 200u) << "the counters outlive the stop: 200 events passed";
  EXPECT_GE(relay.stats().captured, 3u);
}

// The same stream lent borrowed (onBatch), for a recorder or exporter that keeps no events: every
// event seen once with its fields, heartbeats too, and a callback that throws counted.
TEST(Relay, LendsTheStreamBorrowedToOnBatch) {
  std::mutex lock;
  std::map<std::string, uint64_t> events;
  uint64_t fieldsSeen = 0;
  std::set<uint64_t> heard;  // sources whose heartbeats came
  RelayOptions options = loopbackRelayOptions();
  options.onBatch = [&](const EventBatchView& batch) {
    std::lock_guard guard(lock);
    if (batch.kind() == MessageKind::Heartbeat) heard.insert(batch.source().instanceId);
    events[std::string(batch.topic())] += std::max<std::size_t>(batch.size(), 1);  // a heartbeat counts 1
    for (const EventView& event : batch) fieldsSeen += event.find("i") != nullptr ? 1 : 0;
    if (batch.topic() == "boom") throw std::runtime_error("a callback that throws");
  };
  Relay relay(options);
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint()));
  ASSERT_TRUE(test::waitUntil([&] {  // the relay hears the publisher: its events will not be lost
    std::lock_guard guard(lock);
    return heard.count(publisher.identity().instanceId) > 0;
  }));
  logEvent(makeEvent("boom", {{"x", 1.0}}));
  logSteps(200);
  ASSERT_TRUE(test::waitUntil([&] {
    std::lock_guard guard(lock);
    return events["step"] >= 200;
  }));
  relay.stop();
  std::lock_guard guard(lock);
  EXPECT_EQ(events["step"], 200u);
  EXPECT_EQ(fieldsSeen, 200u);
  EXPECT_EQ(events["boom"], 1u);
  EXPECT_EQ(relay.stats().callbackErrors, 1u);
  EXPECT_EQ(relay.stats().captureSkipped, 0u);
}

// A relay that records or exports wants the whole stream, even while no subscriber asks for any
// of it (a recorder on the head node with no dashboard open).
TEST(Relay, OnMessageSeesEverythingWithNoSubscriberConnected) {
  std::mutex lock;
  std::map<std::string, uint64_t> events;
  std::set<SourceInfo> heard;
  RelayOptions options = loopbackRelayOptions();
  options.onMessage = [&](std::string_view topic, const WireMessage& message) {
    std::lock_guard guard(lock);
    events[std::string(topic)] += std::max<std::size_t>(message.events.size(), 1);
    heard.insert(message.source);
  };
  Relay relay(options);
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint()));
  // The publisher's heartbeat passing means it has the relay's subscription: nothing after it is
  // lost. (The relay's own reports pass from the start.)
  ASSERT_TRUE(test::waitUntil([&] {
    std::lock_guard guard(lock);
    return heard.contains(publisher.identity());
  }));
  logSteps(50);
  ASSERT_TRUE(test::waitUntil([&] {
    std::lock_guard guard(lock);
    return events["step"] >= 50;
  }));
  relay.stop();
  std::lock_guard guard(lock);
  EXPECT_EQ(events["step"], 50u);
}

TEST(Relay, AnEndpointInUseOrABadOptionIsAnError) {
  Relay first(loopbackRelayOptions());
  RelayOptions clash = loopbackRelayOptions();
  clash.listen = first.listenEndpoint();
  try {
    Relay second(clash);
    FAIL() << "a second relay bound the same endpoint";
  } catch (const TransportError& error) {
    EXPECT_EQ(error.endpoint(), first.listenEndpoint());
  }
  RelayOptions bad = loopbackRelayOptions();
  bad.highWaterMark = 0;
  EXPECT_THROW(Relay{bad}, std::invalid_argument);
  // Stopping twice is harmless.
  first.stop();
  first.stop();
}

}  // namespace
}  // namespace livemon::transport
