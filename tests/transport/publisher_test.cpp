// Publisher: round trips over every transport, options and errors, never blocking the logging
// thread, flushing on destruction, and reporting its own counters.
#include <livemon/transport/publisher.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <thread>

#include <livemon/event_handler.h>
#include <livemon/step.h>
#include <livemon/transport/error.h>
#include <livemon/transport/subscriber.h>

#include "raw_subscriber.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::makeEvent;
using test::uniqueInproc;
using test::pollUntil;
using test::RawSubscriber;
using test::testPublisherOptions;
using test::waitForSource;
using test::waitUntil;

// Collects what a subscriber delivers.
struct Received {
  std::vector<ReceivedEvent> events;
  SubscriberCallbacks callbacks() {
    SubscriberCallbacks callbacks;
    callbacks.onEvent = [this](ReceivedEvent& event) { events.push_back(std::move(event)); };
    return callbacks;
  }
  std::size_t count(std::string_view name) const {
    std::size_t n = 0;
    for (const auto& e : events) n += e.event.name == name;
    return n;
  }
};

// Not thread-safe: one test thread drives it.
// Logs events named `name` until `subscriber` has received one logged after the call began: the
// publisher has then done whatever it was doing before (such as taking in subscriptions).
bool receivesFreshEvents(Subscriber& subscriber, const std::string& name) {
  static std::atomic<int64_t> marker{0};
  const int64_t first = ++marker;
  bool fresh = false;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& r) {
    auto found = r.event.data.find("marker");
    if (r.event.name == name && found != r.event.data.end() && std::get<int64_t>(found->second) >= first) fresh = true;
  };
  return pollUntil(subscriber, callbacks, [&] {
    logEvent(makeEvent(name, {{"marker", int64_t{++marker}}}));
    return fresh;
  });
}

// What a flood may add to the publisher's peak memory (the test process's): its own buffers and
// a bounded subscription store. Unbounded, the floods below cost gigabytes.
constexpr int64_t kFloodMemoryLimitKb = 32 * 1024;

// A subscription frame far beyond any topic (libzmq would store 32 MiB of subscription, some 2 GB
// of memory) is refused at its header.
TEST(Publisher, RefusesAHugeSubscriptionFrame) {
  Publisher publisher(testPublisherOptions());
  Subscriber before(test::connectTo({publisher.endpoints()[0]}));
  ASSERT_TRUE(waitForSource(before, publisher.identity()));
  test::PeakMemory memory;

  RawSubscriber hostile(publisher.endpoints()[0]);
  ASSERT_TRUE(hostile.open());
  EXPECT_FALSE(hostile.subscribeHuge(32 * 1024 * 1024)) << "the publisher took the whole frame";
  ASSERT_TRUE(receivesFreshEvents(before, "after.huge"));
  EXPECT_LT(memory.growthKb(), kFloodMemoryLimitKb);

  Subscriber after(test::connectTo({publisher.endpoints()[0]}));
  ASSERT_TRUE(waitForSource(after, publisher.identity()));
  ASSERT_TRUE(receivesFreshEvents(after, "after.huge"));
}

// A peer that keeps subscribing to new prefixes (libzmq keeps each one, about 64 bytes of memory
// per byte received) is disconnected once it has sent more than its budget; it comes back at
// once, again and again, as fast as it can. Subscribers that behave keep receiving throughout.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizers slow the publisher's intake of subscriptions far more than the flood, so there
// the flood waits for the publisher now and then; unpaced it would run for minutes.
constexpr bool kPacedFlood = true;
#else
constexpr bool kPacedFlood = false;
#endif

class PublisherUnderAttack : public ::testing::TestWithParam<SlowSubscriberPolicy> {};

// Floods `publisher` at `endpoint` with `subscriptions` distinct subscriptions of 2 KiB,
// reconnecting whenever it is cut off, and expects it to stay within kFloodMemoryLimitKb, cut the
// flood off and keep serving.
void expectAFloodIsCutOff(Publisher& publisher, const std::string& endpoint, int subscriptions) {
  Subscriber before(test::connectTo({endpoint}));
  ASSERT_TRUE(waitForSource(before, publisher.identity()));
  test::PeakMemory memory;

  test::SubscriptionFlood hostile(endpoint);
  for (int i = 0; i < subscriptions; ++i) {
    ASSERT_TRUE(hostile.send(i, subscriptions)) << "the publisher no longer accepts connections";
    // Stop early when unbounded, rather than take the machine's memory.
    if (i % 500 == 499) {
      if (kPacedFlood) {
        ASSERT_TRUE(receivesFreshEvents(before, "during.flood"));
      }
      ASSERT_LT(memory.growthKb(), kFloodMemoryLimitKb) << "after " << i + 1 << " subscriptions";
    }
  }
  ASSERT_TRUE(receivesFreshEvents(before, "after.flood"));
  EXPECT_LT(memory.growthKb(), kFloodMemoryLimitKb);
  EXPECT_GT(hostile.reconnects(), 10);
  EXPECT_GT(publisher.stats().subscribersDisconnected, 0u);

  Subscriber after(test::connectTo({endpoint}));
  ASSERT_TRUE(waitForSource(after, publisher.identity()));
  ASSERT_TRUE(receivesFreshEvents(after, "after.flood"));
}

TEST_P(PublisherUnderAttack, DisconnectsAPeerThatFloodsSubscriptions) {
  PublisherOptions options = testPublisherOptions();
  options.slowSubscriber = GetParam();
  Publisher publisher(options);
  expectAFloodIsCutOff(publisher, publisher.endpoints()[0], kPacedFlood ? 20000 : 40000);  // 40 or 80 MB sent
}

// Any process that may write the socket file reaches an ipc:// endpoint (with a umask of 002 its
// whole group, in a shared directory perhaps everyone), and a careless one of the job's own user
// as well: it is held to the same limits as over TCP. Unguarded, it passes 60 MB within 1 000
// subscriptions. A Unix socket buffers far less than a TCP one, so a peer is cut off after some 50
// subscriptions rather than some 500: 4 000 make as many connections as the TCP flood above.
TEST_P(PublisherUnderAttack, DisconnectsAnIpcPeerThatFloodsSubscriptions) {
  test::TempDir dir;
  PublisherOptions options = testPublisherOptions("ipc://" + (dir.path() / "publisher").string());
  options.slowSubscriber = GetParam();
  Publisher publisher(options);
  expectAFloodIsCutOff(publisher, publisher.endpoints()[0], kPacedFlood ? 1000 : 4000);  // 2 or 8 MB sent
}

INSTANTIATE_TEST_SUITE_P(Policies, PublisherUnderAttack,
                         ::testing::Values(SlowSubscriberPolicy::DropForThatSubscriber,
                                           SlowSubscriberPolicy::WaitForSlowest),
                         [](const auto& param) {
                           return std::string(param.param == SlowSubscriberPolicy::WaitForSlowest ? "WaitForSlowest"
                                                                                                  : "Drop");
                         });

// Connections beyond maxSubscriberConnections are closed, newest first.
TEST(Publisher, ClosesConnectionsBeyondTheLimit) {
  PublisherOptions options = testPublisherOptions();
  options.maxSubscriberConnections = 2;
  Publisher publisher(options);
  std::vector<std::unique_ptr<RawSubscriber>> peers;
  for (int i = 0; i < 5; ++i) {
    peers.push_back(std::make_unique<RawSubscriber>(publisher.endpoints()[0]));
    // To everything, so the publisher writes to the connections it resets (and must not raise
    // SIGPIPE doing so). A connection may be reset before it has subscribed.
    peers.back()->subscribe("");
  }
  ASSERT_TRUE(waitUntil([&] { return publisher.stats().subscribersDisconnected == 3; }));
  for (int i = 2; i < 5; ++i) EXPECT_TRUE(peers[i]->waitUntilClosed()) << i;
  EXPECT_FALSE(peers[0]->waitUntilClosed(100ms));
  EXPECT_FALSE(peers[1]->waitUntilClosed(100ms));
}

// When all connections together have sent too much, the one that sent the most is closed.
TEST(Publisher, ClosesTheGreediestConnectionBeyondTheTotal) {
  PublisherOptions options = testPublisherOptions();
  options.maxSubscriberBytes = 8 * 1024;
  options.maxTotalSubscriberBytes = 12 * 1024;
  Publisher publisher(options);
  auto subscribeMany = [](RawSubscriber& peer, int count) {
    for (int i = 0; i < count; ++i) peer.subscribe(std::to_string(i) + std::string(1000, 's'));
  };
  RawSubscriber first(publisher.endpoints()[0]);
  RawSubscriber modest(publisher.endpoints()[0]);
  RawSubscriber last(publisher.endpoints()[0]);
  subscribeMany(first, 7);
  subscribeMany(modest, 1);
  subscribeMany(last, 7);
  ASSERT_TRUE(waitUntil([&] { return publisher.stats().subscribersDisconnected == 1; }));
  const bool firstClosed = first.waitUntilClosed(100ms);
  const bool lastClosed = last.waitUntilClosed(100ms);
  EXPECT_NE(firstClosed, lastClosed);
  EXPECT_FALSE(modest.waitUntilClosed(100ms));
  EXPECT_EQ(publisher.stats().subscribersDisconnected, 1u);
}

enum class Transport { Inproc, Ipc, Tcp };

class PublisherRoundTrip : public ::testing::TestWithParam<Transport> {};

TEST_P(PublisherRoundTrip, EventsArriveIntactWithSourceAndSequence) {
  test::TempDir dir;
  std::string endpoint;
  switch (GetParam()) {
    case Transport::Inproc: endpoint = uniqueInproc(); break;
    case Transport::Ipc: endpoint = "ipc://" + (dir.path() / "pub.sock").string(); break;
    case Transport::Tcp: endpoint = "tcp://127.0.0.1:*"; break;
  }
  Publisher publisher(testPublisherOptions(endpoint));
  ASSERT_EQ(publisher.endpoints().size(), 1u);
  const std::string used = publisher.endpoints()[0];
  if (GetParam() == Transport::Tcp) {
    EXPECT_EQ(used.rfind("tcp://127.0.0.1:", 0), 0u) << used;
  }
  EXPECT_EQ(used.find('*'), std::string::npos) << used;

  SubscriberOptions subscriberOptions;
  subscriberOptions.connect = {used};
  Subscriber subscriber(subscriberOptions);
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));

  std::vector<Event> logged;
  for (int i = 0; i < 50; ++i) {
    logged.push_back(makeEvent(i % 2 ? "train.step" : "unicode.名前",
                               {{"i", int64_t{i}},
                                {"one", 1.0},
                                {"loss", i == 7 ? std::numeric_limits<double>::quiet_NaN() : 0.5 / (i + 1)},
                                {"inf", -std::numeric_limits<double>::infinity()},
                                {"text", std::string(i % 3 ? "ünïcödé ✓" : "")},
                                {"flag", i % 2 == 0}},
                               std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'700'000'000'000'000'000 + i))));
    logEvent(logged.back());
  }
  Received received;
  ASSERT_TRUE(pollUntil(subscriber, received.callbacks(), [&] { return received.events.size() >= logged.size(); }));
  ASSERT_EQ(received.events.size(), logged.size());

  std::map<std::string, uint64_t> nextSequence;
  std::map<std::string, std::vector<const Event*>> byName;
  for (const Event& e : logged) byName[e.name].push_back(&e);
  std::map<std::string, std::size_t> index;
  for (const ReceivedEvent& r : received.events) {
    ASSERT_TRUE(r.source);
    EXPECT_EQ(*r.source, publisher.identity());
    EXPECT_EQ(*r.endpoint, used);
    EXPECT_EQ(r.sequence, nextSequence[r.event.name]++) << r.event.name;
    const Event& expected = *byName[r.event.name][index[r.event.name]++];
    EXPECT_EQ(r.event.timestamp, expected.timestamp);
    ASSERT_EQ(r.event.data.size(), expected.data.size());
    for (const auto& [key, value] : expected.data) {
      ASSERT_EQ(r.event.data.at(key).index(), value.index()) << key;
      if (key == "loss" && std::isnan(std::get<double>(value))) {
        EXPECT_TRUE(std::isnan(std::get<double>(r.event.data.at(key))));
      } else {
        EXPECT_EQ(r.event.data.at(key), value) << key;
      }
    }
  }
  // The I/O thread counts a batch once zmq_msg_send returns, which may be after it arrived.
  EXPECT_TRUE(waitUntil([&] { return publisher.publishedCount() == logged.size(); })) << publisher.publishedCount();
  EXPECT_EQ(publisher.droppedCount(), 0u);
  EXPECT_EQ(subscriber.stats().gaps, 0u);
  EXPECT_EQ(subscriber.stats().malformed, 0u);
}

INSTANTIATE_TEST_SUITE_P(Transports, PublisherRoundTrip,
                         ::testing::Values(Transport::Inproc, Transport::Ipc, Transport::Tcp),
                         [](const auto& param) {
                           switch (param.param) {
                             case Transport::Inproc: return std::string("inproc");
                             case Transport::Ipc: return std::string("ipc");
                             default: return std::string("tcp");
                           }
                         });

// Steps travel with their events: the one set with setStep (for an rvalue and for an event
// passed by reference), an event's own, and none, mixed within one batch.
TEST(Publisher, EventsArriveWithTheStepTheyWereLoggedAt) {
  Publisher publisher(testPublisherOptions(uniqueInproc()));
  SubscriberOptions subscriberOptions;
  subscriberOptions.connect = publisher.endpoints();
  Subscriber subscriber(subscriberOptions);
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));

  clearStep();
  logEvent(makeEvent("train", {{"i", int64_t{0}}}));
  setStep(41);
  logEvent(makeEvent("train", {{"i", int64_t{1}}}));
  Event own = makeEvent("train", {{"i", int64_t{2}}});
  own.step = 7;
  logEvent(own);
  logEvent(makeEvent("train", {{"i", int64_t{3}}, {"step", int64_t{-3}}}));
  setStep(42);
  const Event byReference = makeEvent("train", {{"i", int64_t{4}}});
  logEvent(byReference);  // handed over as it is, the step beside it
  clearStep();
  logEvent(makeEvent("train", {{"i", int64_t{5}}}));

  Received received;
  ASSERT_TRUE(pollUntil(subscriber, received.callbacks(), [&] { return received.events.size() >= 6; }));
  ASSERT_EQ(received.events.size(), 6u);
  const std::vector<std::optional<int64_t>> expected = {std::nullopt, 41, 7, -3, 42, std::nullopt};
  EXPECT_FALSE(received.events[3].event.step.has_value()) << "the data field \"step\" stays a data field";
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(received.events[i].event.data.at("i"), DataValue(static_cast<int64_t>(i)));
    EXPECT_EQ(statedStep(received.events[i].event), expected[i]) << i;
  }
  EXPECT_EQ(subscriber.stats().malformed, 0u);
}

TEST(Publisher, ConnectsToASubscriberThatBinds) {
  SubscriberOptions subscriberOptions;
  subscriberOptions.bind = {"tcp://127.0.0.1:*"};
  Subscriber subscriber(subscriberOptions);
  const std::string endpoint = *subscriber.endpoints().at(0).endpoint;

  PublisherOptions options = testPublisherOptions();
  options.bind.clear();
  options.connect = {endpoint};
  Publisher publisher(options);
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));
  logEvent(makeEvent("connected", {{"x", 1.0}}));
  Received received;
  ASSERT_TRUE(pollUntil(subscriber, received.callbacks(), [&] { return received.count("connected") == 1; }));
}

TEST(Publisher, ServesSeveralEndpointsAndSkipsDuplicates) {
  PublisherOptions options = testPublisherOptions(uniqueInproc());
  options.bind.push_back("tcp://127.0.0.1:*");
  Publisher publisher(options);
  ASSERT_EQ(publisher.endpoints().size(), 2u);

  // One subscriber on each endpoint, and one on both.
  Subscriber first(test::connectTo({publisher.endpoints()[0]}));
  Subscriber second(test::connectTo({publisher.endpoints()[1]}));
  Subscriber both(test::connectTo(publisher.endpoints()));
  for (Subscriber* s : {&first, &second, &both}) ASSERT_TRUE(waitForSource(*s, publisher.identity()));
  // `both` knows the source once one of its connections works; wait for a heartbeat on each.
  ASSERT_TRUE(pollUntil(both, {}, [&] {
    for (const auto& endpoint : both.endpoints()) {
      if (endpoint.messages == 0) return false;
    }
    return true;
  }));

  for (int i = 0; i < 20; ++i) logEvent(makeEvent("multi", {{"i", int64_t{i}}}));
  for (Subscriber* s : {&first, &second}) {
    Received received;
    ASSERT_TRUE(pollUntil(*s, received.callbacks(), [&] { return received.count("multi") == 20; }));
  }
  Received received;
  ASSERT_TRUE(pollUntil(both, received.callbacks(), [&] { return both.stats().duplicates == 20; }));
  EXPECT_EQ(received.count("multi"), 20u);
  for (std::size_t i = 0; i < received.events.size(); ++i) EXPECT_EQ(received.events[i].sequence, i);
}

TEST(Publisher, BindFailureNamesTheEndpointAndTheReason) {
  Publisher first(testPublisherOptions());
  const std::string taken = first.endpoints()[0];
  try {
    Publisher second(testPublisherOptions(taken));
    FAIL() << "binding a used port did not throw";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find(taken), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("Address already in use"), std::string::npos) << error.what();
    EXPECT_EQ(error.endpoint(), taken);
  }
  for (const std::string bad : {"nonsense", "tcp://", "udp://127.0.0.1:1", "tcp://127.0.0.1:notaport"}) {
    try {
      Publisher publisher(testPublisherOptions(bad));
      FAIL() << "binding " << bad << " did not throw";
    } catch (const TransportError& error) {
      EXPECT_NE(std::string(error.what()).find(bad), std::string::npos) << error.what();
      EXPECT_FALSE(error.reason().empty());
    }
  }
  // A failed publisher leaves nothing registered.
  const std::size_t handlers = registeredEventHandlerCount();
  EXPECT_THROW(Publisher(testPublisherOptions(taken)), TransportError);
  EXPECT_EQ(registeredEventHandlerCount(), handlers);
}

TEST(Publisher, BadOptionsNameTheOption) {
  auto message = [](PublisherOptions options) -> std::string {
    try {
      Publisher publisher(options);
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "no exception";
  };
  PublisherOptions options = testPublisherOptions();
  options.bind.clear();
  EXPECT_NE(message(options).find("no endpoint"), std::string::npos);
  options = testPublisherOptions();
  options.queueCapacityBytes = 10;
  EXPECT_NE(message(options).find("queueCapacityBytes"), std::string::npos);
  options = testPublisherOptions();
  options.heartbeatInterval = 5s;
  EXPECT_NE(message(options).find("heartbeatInterval"), std::string::npos);
  options = testPublisherOptions();
  options.linger = -1ms;
  EXPECT_NE(message(options).find("linger"), std::string::npos);
  options = testPublisherOptions();
  options.maxBatchEvents = 0;
  EXPECT_NE(message(options).find("maxBatchEvents"), std::string::npos);
  options = testPublisherOptions();
  options.sendHighWaterMark = -1;
  EXPECT_NE(message(options).find("sendHighWaterMark"), std::string::npos);
  options = testPublisherOptions();
  options.maxSubscriberBytes = 100;
  EXPECT_NE(message(options).find("maxSubscriberBytes"), std::string::npos);
  options = testPublisherOptions();
  options.maxTotalSubscriberBytes = options.maxSubscriberBytes - 1;
  EXPECT_NE(message(options).find("maxTotalSubscriberBytes"), std::string::npos);
  options = testPublisherOptions();
  options.maxSubscriberConnections = 0;
  EXPECT_NE(message(options).find("maxSubscriberConnections"), std::string::npos);
}

TEST(Publisher, IsRegisteredWhileItLives) {
  const std::size_t before = registeredEventHandlerCount();
  {
    Publisher publisher(testPublisherOptions());
    EXPECT_EQ(registeredEventHandlerCount(), before + 1);
  }
  EXPECT_EQ(registeredEventHandlerCount(), before);
}

TEST(Publisher, DestructionIsBoundedWithoutAnySubscriber) {
  for (bool connect : {false, true}) {
    PublisherOptions options = testPublisherOptions();
    if (connect) {
      options.bind.clear();
      options.connect = {"tcp://127.0.0.1:1"};  // nothing listens there
    }
    options.linger = 200ms;
    auto publisher = std::make_unique<Publisher>(options);
    for (int i = 0; i < 10000; ++i) logEvent(makeEvent("nobody", {{"i", int64_t{i}}}));
    const auto start = std::chrono::steady_clock::now();
    publisher.reset();
    // linger is 200 ms; the bound here only catches a hang.
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << (connect ? "connect" : "bind");
  }
}

TEST(Publisher, DestructionFlushesWhatIsQueued) {
  const std::string endpoint = uniqueInproc();
  auto publisher = std::make_unique<Publisher>(testPublisherOptions(endpoint));
  Subscriber subscriber(test::connectTo({endpoint}, 0));
  ASSERT_TRUE(waitForSource(subscriber, publisher->identity()));
  constexpr int kEvents = 20000;
  for (int i = 0; i < kEvents; ++i) logEvent(makeEvent("flush", {{"i", int64_t{i}}}));
  const uint64_t dropped = publisher->droppedCount();
  publisher.reset();
  Received received;
  ASSERT_TRUE(pollUntil(subscriber, received.callbacks(), [&] { return received.count("flush") + dropped == kEvents; }));
  EXPECT_EQ(subscriber.stats().gaps, 0u);
  // The goodbye came last.
  ASSERT_TRUE(pollUntil(subscriber, {}, [&] {
    const auto sources = subscriber.sources();
    return sources.size() == 1 && sources[0].state == SourceState::Gone;
  }));
}

// A subscriber that stops reading: logEvent still returns at once; with the default policy the
// subscriber's own messages are dropped and it sees the loss as gaps.
TEST(Publisher, SlowSubscriberLosesOnlyItsOwnMessages) {
  const std::string endpoint = uniqueInproc();
  PublisherOptions options = testPublisherOptions(endpoint);
  options.sendHighWaterMark = 1;
  Publisher publisher(options);
  Subscriber subscriber(test::connectTo({endpoint}, 1));
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));

  constexpr uint64_t kEvents = 100000;
  for (uint64_t i = 0; i < kEvents; ++i) logEvent(makeEvent("flood", {{"i", static_cast<int64_t>(i)}, {"x", 0.5}}));
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() + publisher.droppedCount() == kEvents; }));

  // Read again, and log until an event logged after the flood arrives: it shows where the stream
  // went on. (Heartbeats share the full pipe, so any single event may itself be dropped.)
  const uint64_t afterFlood = publisher.publishedCount();
  Received received;
  int64_t extra = 0;
  ASSERT_TRUE(pollUntil(subscriber, received.callbacks(), [&] {
    logEvent(makeEvent("flood", {{"extra", extra++}}));
    return !received.events.empty() && received.events.back().sequence >= afterFlood;
  }));
  const SubscriberStats stats = subscriber.stats();
  EXPECT_GE(stats.gaps, 1u);
  EXPECT_GT(stats.missedEvents, 0u);
  EXPECT_EQ(stats.duplicates, 0u);
  // Every sequence number between the first and the last received is either received or missed.
  const uint64_t span = received.events.back().sequence - received.events.front().sequence + 1;
  EXPECT_EQ(received.events.size() + stats.missedEvents, span);
}

// With WaitForSlowest the I/O thread waits for the subscriber, so the queue fills and the
// logging thread drops and counts; it still never blocks, and destruction stays bounded.
TEST(Publisher, WaitForSlowestDropsAtTheQueueWhenTheSubscriberStalls) {
  const std::string endpoint = uniqueInproc();
  PublisherOptions options = testPublisherOptions(endpoint);
  options.sendHighWaterMark = 1;
  options.queueCapacityBytes = 64 * 1024;
  options.slowSubscriber = SlowSubscriberPolicy::WaitForSlowest;
  options.linger = 100ms;
  auto publisher = std::make_unique<Publisher>(options);
  Subscriber subscriber(test::connectTo({endpoint}, 1));
  ASSERT_TRUE(waitForSource(subscriber, publisher->identity()));

  uint64_t logged = 0;
  ASSERT_TRUE(waitUntil([&] {
    for (int i = 0; i < 1000; ++i, ++logged) logEvent(makeEvent("stall", {{"i", static_cast<int64_t>(logged)}}));
    return publisher->stats().droppedQueueFull > 0;
  }));
  EXPECT_EQ(publisher->droppedCount(), publisher->stats().droppedQueueFull);
  const auto start = std::chrono::steady_clock::now();
  publisher.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(Publisher, DropsEventsBeyondTheWireLimits) {
  Publisher publisher(testPublisherOptions());
  Event huge = makeEvent("huge", {});
  for (int i = 0; i < 1100; ++i) huge.data[std::to_string(i)] = 1.0;
  logEvent(huge);
  logEvent(makeEvent(std::string(2000, 'n'), {{"k", 1.0}}));
  EXPECT_EQ(publisher.stats().droppedTooLarge, 2u);
  EXPECT_EQ(publisher.droppedCount(), 2u);
}

TEST(Publisher, HeartbeatsCarryItsCounters) {
  const std::string endpoint = uniqueInproc();
  Publisher publisher(testPublisherOptions(endpoint));
  Subscriber subscriber(test::connectTo({endpoint}));
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));
  for (int i = 0; i < 5; ++i) logEvent(makeEvent("counted", {{"i", int64_t{i}}}));
  ASSERT_TRUE(pollUntil(subscriber, {}, [&] {
    const auto sources = subscriber.sources();
    return sources.size() == 1 && sources[0].lastCounters && sources[0].lastCounters->published == 5;
  }));
  const SourceStatus status = subscriber.sources()[0];
  EXPECT_EQ(status.lastCounters->interval, 20ms);
  EXPECT_EQ(status.lastCounters->dropped, 0u);
  EXPECT_TRUE(status.lastHeartbeat.has_value());
  EXPECT_GT(publisher.stats().heartbeats, 0u);
}

TEST(Publisher, ReportsItsCountersAsStats) {
  const std::string endpoint = uniqueInproc();
  PublisherOptions options = testPublisherOptions(endpoint);
  options.statName = "selftest.publisher";
  options.statWindow = 50ms;
  Publisher publisher(options);
  Subscriber subscriber(test::connectTo({endpoint}, 1000, {std::string(kStatEventName)}));
  bool published = false;
  bool dropped = false;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& r) {
    published |= r.event.data.contains("selftest.publisher.published.value");
    dropped |= r.event.data.contains("selftest.publisher.dropped.value");
  };
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return published && dropped; }));
}

TEST(Publisher, LoggingThreadsRunConcurrently) {
  const std::string endpoint = uniqueInproc();
  Publisher publisher(testPublisherOptions(endpoint));
  Subscriber subscriber(test::connectTo({endpoint}, 0));
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kPerThread; ++i) {
        logEvent(makeEvent("thread" + std::to_string(t), {{"i", int64_t{i}}}));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  Received received;
  ASSERT_TRUE(pollUntil(subscriber, received.callbacks(), [&] {
    return received.events.size() + publisher.droppedCount() == kThreads * kPerThread;
  }));
  // Each thread's events keep their order.
  std::map<std::string, int64_t> last;
  for (const auto& r : received.events) {
    const int64_t i = std::get<int64_t>(r.event.data.at("i"));
    auto [it, inserted] = last.try_emplace(r.event.name, i);
    if (!inserted) {
      EXPECT_GT(i, it->second) << r.event.name;
      it->second = i;
    }
  }
  EXPECT_EQ(subscriber.stats().gaps, 0u);
}

}  // namespace
}  // namespace livemon::transport
