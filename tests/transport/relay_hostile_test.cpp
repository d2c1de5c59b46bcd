// A relay under peers that do what they should not: a watcher at `serve` that sends messages as if
// it were a publisher, a subscriber that stops reading while a publisher sends large frames, and
// more publisher connections than the relay takes. Raw ZeroMQ sockets play the hostile peers.
#include <livemon/transport/relay.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <zmq.h>

#include <livemon/event_handler.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

#include "raw_subscriber.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::connectTo;
using test::connectedPublisherOptions;
using test::loopbackRelayOptions;
using test::makeEvent;

// Not thread-safe: one test thread uses it.
// A bare ZeroMQ socket of `type` connected to `endpoint`, closed without lingering.
class RawSocket {
 public:
  RawSocket(int type, const std::string& endpoint, const std::vector<std::pair<int, int>>& options = {})
      : context_(zmq_ctx_new()), socket_(zmq_socket(context_, type)) {
    const int zero = 0;
    zmq_setsockopt(socket_, ZMQ_LINGER, &zero, sizeof(zero));
    for (const auto& [option, value] : options) zmq_setsockopt(socket_, option, &value, sizeof(value));
    EXPECT_EQ(zmq_connect(socket_, endpoint.c_str()), 0);
  }
  ~RawSocket() {
    zmq_close(socket_);
    zmq_ctx_term(context_);
  }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  void* get() const { return socket_; }
  bool send(const std::vector<std::string>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const int flags = (i + 1 < frames.size() ? ZMQ_SNDMORE : 0) | ZMQ_DONTWAIT;
      if (zmq_send(socket_, frames[i].data(), frames[i].size(), flags) < 0) return false;
    }
    return true;
  }

 private:
  void* context_;
  void* socket_;
};

SourceInfo inventedSource() {
  SourceInfo source;
  source.run = "forged";
  source.host = "nowhere";
  source.pid = 4242;
  source.instanceId = 0xf0f0f0f0;
  source.startTime = fromWireTime(1'700'000'000'000'000'000);
  return source;
}

// Thread-safe: the relay's worker thread adds, the test thread reads, under the mutex.
// The sources of what the relay handed its callbacks.
struct Heard {
  std::mutex lock;
  std::set<uint64_t> instances;
  uint64_t steps = 0;

  void install(RelayOptions& options) {
    options.onRawMessage = [this](std::string_view, std::string_view, const WireMessage& message) {
      std::lock_guard guard(lock);
      instances.insert(message.source.instanceId);
      for (const auto& event : message.events) steps += event.name == "step" ? 1 : 0;
    };
  }
  bool has(uint64_t instance) {
    std::lock_guard guard(lock);
    return instances.contains(instance);
  }
  uint64_t stepCount() {
    std::lock_guard guard(lock);
    return steps;
  }
};

// Only publishers write into what a relay records and keeps: a peer at `serve` (where watchers
// connect) that sends a publisher's two frames reaches neither the callbacks nor the history,
// and it is counted.
TEST(RelayHostile, AWatcherCannotWriteIntoTheRecordingOrTheHistory) {
  RelayOptions options = loopbackRelayOptions();
  Heard heard;
  heard.install(options);
  Relay relay(options);
  RawSocket forger(ZMQ_XSUB, relay.serveEndpoint());
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint()));
  ASSERT_TRUE(test::waitUntil([&] { return heard.has(publisher.identity().instanceId); }));

  // The forger sends while the real publisher does; once the real events have all passed, the
  // forged ones, sent before and between them, had every chance to.
  const SourceInfo forged = inventedSource();
  for (uint64_t i = 0; i < 200; ++i) {
    ASSERT_TRUE(forger.send({"step", encodeEventsPayload(forged, i, "step", {makeEvent("step", {{"x", 1.0}})})}));
    if (i % 4 == 0) logEvent(makeEvent("step", {{"i", static_cast<int64_t>(i)}}));
  }
  ASSERT_TRUE(test::waitUntil([&] { return heard.stepCount() >= 50; }));
  ASSERT_TRUE(test::waitUntil([&] { return relay.stats().upRefused >= 200; }))
      << "refused from subscribers: " << relay.stats().upRefused;
  relay.stop();
  EXPECT_FALSE(heard.has(forged.instanceId)) << "a watcher's message reached the recorder";
  EXPECT_EQ(heard.stepCount(), 50u);
  // The history keeps the publisher's events and heartbeats and the relay's reports, no more.
  const RelayStats stats = relay.stats();
  EXPECT_LE(stats.historyMessages, stats.captured);
  EXPECT_EQ(stats.captureSkipped, 0u);
}

// Sends `name` from `publisher` until `subscriber` receives it.
bool sendUntilReceived(PayloadPublisher& publisher, Subscriber& subscriber, const std::string& name, uint64_t& sequence) {
  return test::sendUntilReceived(publisher, subscriber, inventedSource(), name, sequence);
}

// This process's resident memory now, in KiB.
int64_t residentKb() { return test::PeakMemory::statusKb("VmRSS:"); }

// A subscriber that stops reading while a publisher sends large frames holds at most
// maxQueuedBytes of them in the relay, and one that keeps reading still gets what follows.
TEST(RelayHostile, AStalledSubscriberHoldsAtMostMaxQueuedBytes) {
  // Large blocks straight from the kernel and back: the resident size follows what is held.
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  constexpr std::size_t kBudget = 4 * 1024 * 1024;
  constexpr std::size_t kFrame = 512 * 1024;
  constexpr int kFrames = 120;  // 60 MiB
  RelayOptions options = loopbackRelayOptions();
  options.historyBytes = 0;
  options.highWaterMark = 1000;
  options.maxQueuedBytes = kBudget;
  Relay relay(options);
  // The stalled one: it subscribes to everything and never reads, with as little kernel buffer
  // as there can be.
  RawSocket stalled(ZMQ_SUB, relay.serveEndpoint(), {{ZMQ_RCVHWM, 1}, {ZMQ_RCVBUF, 4096}});
  ASSERT_EQ(zmq_setsockopt(stalled.get(), ZMQ_SUBSCRIBE, "", 0), 0);
  ASSERT_TRUE(test::waitUntil([&] { return relay.stats().upMessages >= 1; }));
  PayloadPublisherOptions publisherOptions;
  publisherOptions.connect = {relay.listenEndpoint()};
  publisherOptions.sendHighWaterMark = 0;  // the publisher keeps everything: the relay decides
  PayloadPublisher publisher(publisherOptions);
  Subscriber reader(connectTo({relay.serveEndpoint()}));
  uint64_t sequence = 0;
  ASSERT_TRUE(sendUntilReceived(publisher, reader, "sync", sequence));

  [[maybe_unused]] const int64_t before = residentKb();
  // What the frames hold does not matter to the relay, which does not decode them here.
  const std::string blob(kFrame, 'b');
  for (int i = 0; i < kFrames; ++i) publisher.send("large", blob);
  // The reader keeps getting what follows.
  ASSERT_TRUE(sendUntilReceived(publisher, reader, "after", sequence));
  const RelayStats stats = relay.stats();
  EXPECT_GT(stats.queueDropped, 0u);
  EXPECT_LE(stats.queuedBytes, kBudget + kFrame + 64 * 1024) << "what the stalled subscriber holds";
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  const int64_t grownKb = residentKb() - before;
  EXPECT_LT(grownKb, 4 * static_cast<int64_t>(kBudget / 1024)) << "resident memory grew by " << grownKb << " KiB";
#endif
}

// Messages above the small half's size keep flowing to a reader that keeps up, however many:
// the byte bound is about what queues hold, not about how much has ever been forwarded.
TEST(RelayHostile, LargeMessagesKeepFlowingToAReaderThatKeepsUp) {
  constexpr std::size_t kBudget = 1024 * 1024;  // the large half: 512 KiB
  constexpr std::size_t kFrame = 16 * 1024;     // above the small half's 5 KiB a message
  constexpr uint64_t kFrames = 200;             // 3.2 MB, six times the large half
  RelayOptions options = loopbackRelayOptions();
  options.historyBytes = 0;
  options.highWaterMark = 100;
  options.maxQueuedBytes = kBudget;
  Relay relay(options);
  PayloadPublisherOptions publisherOptions;
  publisherOptions.connect = {relay.listenEndpoint()};
  PayloadPublisher publisher(publisherOptions);
  Subscriber reader(connectTo({relay.serveEndpoint()}));
  uint64_t sequence = 0;
  ASSERT_TRUE(sendUntilReceived(publisher, reader, "sync", sequence));

  const uint64_t before = reader.stats().messages;
  const std::string blob(kFrame, 'b');
  SubscriberCallbacks ignore;
  for (uint64_t i = 1; i <= kFrames; ++i) {
    publisher.send("large", blob);
    ASSERT_TRUE(test::waitUntil([&] {
      reader.poll(std::chrono::milliseconds(5), ignore);
      return reader.stats().messages >= before + i;
    })) << "the reader got " << reader.stats().messages - before << " of the first " << i
        << " large messages; the relay dropped " << relay.stats().queueDropped;
  }
  EXPECT_EQ(relay.stats().queueDropped, 0u);
}

// A plain TCP connection to `endpoint` ("tcp://127.0.0.1:PORT") that never speaks: -1 if refused.
int idleConnection(const std::string& endpoint) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1))));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// True once the relay has closed or reset `fd` (what it sends before, its greeting, is read and
// ignored); false if it is still open after `deadline`.
bool closedByPeer(int fd, std::chrono::milliseconds deadline) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  char buffer[256];
  while (std::chrono::steady_clock::now() < end) {
    pollfd item{fd, POLLIN, 0};
    if (poll(&item, 1, 20) <= 0) continue;
    if (recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT) <= 0) return true;
  }
  return false;
}

// Connections to `listen` beyond maxPublisherConnections are reset, newest first, and counted;
// once some go, a publisher gets in again. (libzmq itself would close a silent connection only
// after its 30 s handshake timeout, so idle ones could use up the relay's descriptors.)
TEST(RelayHostile, ConnectionsBeyondMaxPublisherConnectionsAreReset) {
  RelayOptions options = loopbackRelayOptions();
  options.maxPublisherConnections = 3;
  Relay relay(options);
  std::vector<int> idle;
  for (int i = 0; i < 5; ++i) {
    idle.push_back(idleConnection(relay.listenEndpoint()));
    ASSERT_GE(idle.back(), 0);
    // One at a time, so "newest" is the order they were made in.
    ASSERT_TRUE(test::waitUntil([&] { return relay.stats().publishersRefused >= static_cast<uint64_t>(std::max(0, i - 2)); }));
  }
  EXPECT_TRUE(closedByPeer(idle[3], 5s));
  EXPECT_TRUE(closedByPeer(idle[4], 5s));
  EXPECT_FALSE(closedByPeer(idle[0], 200ms)) << "the first three stay";
  EXPECT_EQ(relay.stats().publishersRefused, 2u);

  for (int fd : idle) close(fd);
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint()));
  Subscriber subscriber(connectTo({relay.serveEndpoint()}));
  EXPECT_TRUE(test::waitForSource(subscriber, publisher.identity()));
}

// Five watchers at `endpoint` each send 50 subscriptions of 1000 distinct bytes: some 250 KiB,
// within what a relay's serve socket takes (64 KiB each, 256 KiB together). False if the relay
// reset one of them.
bool subscribeALot(const std::string& endpoint, std::vector<std::unique_ptr<test::RawSubscriber>>& watchers) {
  for (int w = 0; w < 5; ++w) {
    watchers.push_back(std::make_unique<test::RawSubscriber>(endpoint));
    for (int i = 0; i < 50; ++i) {
      std::string prefix(1000, 'p');
      char tag[32];
      const int length = std::snprintf(tag, sizeof(tag), "w%d-%d-", w, i);
      std::copy_n(tag, length, prefix.begin());
      if (!watchers.back()->subscribe(prefix)) return false;
    }
  }
  return true;
}

// Logs "step" until `subscriber` receives one from `source` after the call.
bool stepsStillArrive(Subscriber& subscriber, const SourceInfo& source) {
  bool seen = false;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) { seen = seen || (*event.source == source && event.event.name == "step"); };
  const auto end = std::chrono::steady_clock::now() + test::kDeadline;
  while (!seen && std::chrono::steady_clock::now() < end) {
    logEvent(makeEvent("step", {{"x", 1.0}}));
    subscriber.poll(20ms, callbacks);
  }
  return seen;
}

// The subscriptions of many watchers reach the publishers through the relay; a publisher does not
// take them for a flood from the relay and cut itself off.
TEST(RelayHostile, ManySubscriptionsDoNotCutAPublisherOffTheRelay) {
  Relay relay(loopbackRelayOptions());
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint()));
  Subscriber subscriber(connectTo({relay.serveEndpoint()}));
  ASSERT_TRUE(test::waitForSource(subscriber, publisher.identity()));
  std::vector<std::unique_ptr<test::RawSubscriber>> watchers;
  ASSERT_TRUE(subscribeALot(relay.serveEndpoint(), watchers));
  const uint64_t subscriptions = 5 * 50;
  ASSERT_TRUE(test::waitUntil([&] { return relay.stats().upMessages >= subscriptions; }))
      << relay.stats().upMessages << " subscription messages went up";
  EXPECT_TRUE(stepsStillArrive(subscriber, publisher.identity()));
  EXPECT_EQ(publisher.stats().subscribersDisconnected, 0u) << "the publisher reset its connection to the relay";
}

// The same through a chain: the head relay passes its watchers' subscriptions down to the node
// relay's serve socket, over the connection the node relay made (--upstream); the node relay's
// guard does not reset it, so the node's publishers stay heard at the head.
TEST(RelayHostile, ManySubscriptionsAtTheHeadDoNotCutANodeRelayOff) {
  Relay head(loopbackRelayOptions());
  RelayOptions nodeOptions = loopbackRelayOptions();
  nodeOptions.upstream = {head.listenEndpoint()};
  Relay node(nodeOptions);
  Publisher publisher(connectedPublisherOptions(node.listenEndpoint()));
  Subscriber subscriber(connectTo({head.serveEndpoint()}));
  ASSERT_TRUE(test::waitForSource(subscriber, publisher.identity()));
  std::vector<std::unique_ptr<test::RawSubscriber>> watchers;
  ASSERT_TRUE(subscribeALot(head.serveEndpoint(), watchers));
  ASSERT_TRUE(test::waitUntil([&] { return node.stats().upMessages >= 5 * 50; }))
      << node.stats().upMessages << " subscription messages reached the node relay";
  EXPECT_TRUE(stepsStillArrive(subscriber, publisher.identity()));
  EXPECT_EQ(publisher.stats().subscribersDisconnected, 0u);
}

// A watcher at an ipc:// serve endpoint that keeps subscribing to new prefixes of 2 KiB, coming
// back at once whenever it is cut off, is held to the limits of a TCP one (64 KiB per connection):
// the relay's memory stays bounded and its publisher's events keep reaching the other watchers.
TEST(RelayHostile, AnIpcWatcherThatFloodsSubscriptionsIsCutOff) {
  test::TempDir dir;
  RelayOptions options = loopbackRelayOptions();
  options.serve = "ipc://" + (dir.path() / "serve").string();
  Relay relay(options);
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint()));
  Subscriber subscriber(connectTo({relay.serveEndpoint()}));
  ASSERT_TRUE(test::waitForSource(subscriber, publisher.identity()));
  test::PeakMemory memory;
  // What the flood may add to the test process: the bound of a publisher's flood test for each of
  // the relay and its publisher, which both keep the subscriptions that went up (the relay until
  // it has drained a connection it cut, which a loaded machine delays: 35 MB seen beside a full
  // test run). Unbounded, it passes 90 MB within the first 500 subscriptions.
  constexpr int64_t kMemoryLimitKb = 2 * 32 * 1024;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr int kSubscriptions = 5000;  // of 2 KiB each: 10 MB sent
#else
  constexpr int kSubscriptions = 8000;  // 16 MB sent
#endif
  test::SubscriptionFlood hostile(relay.serveEndpoint());
  for (int i = 0; i < kSubscriptions; ++i) {
    ASSERT_TRUE(hostile.send(i, kSubscriptions)) << "the relay no longer accepts connections";
    if (i % 500 == 499) {
      ASSERT_TRUE(stepsStillArrive(subscriber, publisher.identity())) << "after " << i + 1 << " subscriptions";
      ASSERT_LT(memory.growthKb(), kMemoryLimitKb) << "after " << i + 1 << " subscriptions";
    }
  }
  EXPECT_GT(hostile.reconnects(), 10);
  EXPECT_TRUE(stepsStillArrive(subscriber, publisher.identity()));
  EXPECT_LT(memory.growthKb(), kMemoryLimitKb);
  EXPECT_EQ(publisher.stats().subscribersDisconnected, 0u) << "the publisher reset its connection to the relay";
}

// A batch forged under a real source's identity, claiming its next 20 000 sequence numbers,
// does not make a Subscriber take the source's real events that follow for duplicates: a
// duplicate is the same message again (same payload bytes), and the real events carry other
// bytes than the forged ones with their numbers (SourceTable, conflicts).
TEST(RelayHostile, AForgedBatchAheadOfARealSourceDoesNotSilenceIt) {
  Relay relay(loopbackRelayOptions());
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint()));
  Subscriber subscriber(connectTo({relay.serveEndpoint()}));
  ASSERT_TRUE(test::waitForSource(subscriber, publisher.identity()));
  uint64_t next = 0;
  SubscriberCallbacks before;
  before.onEvent = [&](ReceivedEvent& event) {
    if (*event.source == publisher.identity() && event.event.name == "step") next = std::max(next, event.sequence + 1);
  };
  ASSERT_TRUE(test::waitUntil([&] {
    logEvent(makeEvent("step", {{"x", 1.0}}));
    subscriber.poll(20ms, before);
    return next > 0;
  }));

  PayloadPublisherOptions forgerOptions;
  forgerOptions.connect = {relay.listenEndpoint()};
  PayloadPublisher forger(forgerOptions);
  std::vector<Event> claimed(20000, makeEvent("step", {{"forged", 1.0}}));
  const std::string forged = encodeEventsPayload(publisher.identity(), next, "step", claimed);
  uint64_t forgedSeen = 0;
  uint64_t realSeen = 0;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) {
    if (*event.source != publisher.identity()) return;
    if (event.event.data.contains("forged")) ++forgedSeen;
    if (event.event.data.contains("real")) ++realSeen;
  };
  // Until the forged batch has been delivered, so the real events come after it.
  ASSERT_TRUE(test::waitUntil([&] {
    forger.send("step", forged);
    subscriber.poll(20ms, callbacks);
    return forgedSeen > 0;
  }));
  for (int i = 0; i < 100; ++i) logEvent(makeEvent("step", {{"real", 1.0}}));
  EXPECT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return realSeen >= 100; })) << realSeen << " real events arrived";
  EXPECT_EQ(realSeen, 100u);
  EXPECT_EQ(forgedSeen, 20000u) << "the forger's repeats are duplicates";
  EXPECT_GE(subscriber.stats().conflicts, 100u);
}

}  // namespace
}  // namespace livemon::transport
