// Subscriber: bad input from a raw ZeroMQ socket, gaps and duplicates, filters, staleness on an
// injected clock, publisher restarts, and endpoint changes while another thread polls.
#include <livemon/transport/subscriber.h>

#include <linux/sockios.h>
#include <sys/ioctl.h>

#include <gtest/gtest.h>
#include <zmq.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <thread>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/transport/error.h>
#include <livemon/transport/publisher.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::makeEvent;
using test::pollUntil;
using test::testPublisherOptions;
using test::waitForSource;

SourceInfo rawSource(uint64_t id = 77) {
  SourceInfo source;
  source.run = "raw";
  source.host = "localhost";
  source.pid = 1234;
  source.instanceId = id;
  source.startTime = fromWireTime(1'700'000'000'000'000'000);
  return source;
}

// Untouched, so it costs no memory: reading it maps the kernel's zero page.
char g_zeros[64 * 1024 * 1024];

// A bare ZeroMQ PUB socket that sends whatever frames a test wants.
class RawPublisher {
 public:
  RawPublisher() : context_(zmq_ctx_new()), socket_(zmq_socket(context_, ZMQ_PUB)) {
    int zero = 0;
    zmq_setsockopt(socket_, ZMQ_LINGER, &zero, sizeof(zero));
    // Connections it accepts, so a test can tell when what it sent has left.
    zmq_socket_monitor(socket_, "inproc://raw-publisher", ZMQ_EVENT_ACCEPTED);
    monitor_ = zmq_socket(context_, ZMQ_PAIR);
    zmq_setsockopt(monitor_, ZMQ_LINGER, &zero, sizeof(zero));
    zmq_connect(monitor_, "inproc://raw-publisher");
    if (zmq_bind(socket_, "tcp://127.0.0.1:*") != 0) throw std::runtime_error("raw bind failed");
    char buffer[256];
    std::size_t size = sizeof(buffer);
    zmq_getsockopt(socket_, ZMQ_LAST_ENDPOINT, buffer, &size);
    endpoint_ = std::string(buffer, size - 1);
  }
  ~RawPublisher() {
    zmq_socket_monitor(socket_, nullptr, 0);
    zmq_close(monitor_);
    zmq_close(socket_);
    zmq_ctx_term(context_);
  }
  RawPublisher(const RawPublisher&) = delete;
  RawPublisher& operator=(const RawPublisher&) = delete;

  const std::string& endpoint() const { return endpoint_; }

  void send(const std::vector<std::string>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      zmq_send(socket_, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
    }
  }
  void heartbeat(const SourceInfo& source = rawSource(), MessageKind kind = MessageKind::Heartbeat) {
    PublisherCounters counters;
    counters.interval = 1000ms;
    send({std::string(kHeartbeatTopic), encodeHeartbeatPayload(kind, source, heartbeats_++, counters)});
  }
  void events(const std::string& name, uint64_t sequence, std::size_t count, const SourceInfo& source = rawSource()) {
    std::vector<Event> batch;
    for (std::size_t i = 0; i < count; ++i) batch.push_back(makeEvent(name, {{"n", static_cast<int64_t>(sequence + i)}}));
    send({name, encodeEventsPayload(source, sequence, name, batch)});
  }
  // A message whose payload frame is `size` zero bytes, sent without copying them.
  void sendZeros(const std::string& topic, std::size_t size) {
    zmq_send(socket_, topic.data(), topic.size(), ZMQ_SNDMORE);
    zmq_msg_t payload;
    zmq_msg_init_data(&payload, g_zeros, std::min(size, sizeof(g_zeros)), nullptr, nullptr);
    zmq_msg_send(&payload, socket_, 0);
  }
  // Waits until the peer's kernel has taken everything sent to the last connection accepted.
  bool waitUntilSent() {
    return test::waitUntil([&] {
      while (true) {
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        if (zmq_msg_recv(&frame, monitor_, ZMQ_DONTWAIT) < 0) {
          zmq_msg_close(&frame);
          break;
        }
        uint32_t fd = 0;
        if (zmq_msg_size(&frame) >= 6) std::memcpy(&fd, static_cast<const char*>(zmq_msg_data(&frame)) + 2, sizeof(fd));
        zmq_msg_recv(&frame, monitor_, 0);
        zmq_msg_close(&frame);
        fd_ = static_cast<int>(fd);
      }
      int unsent = -1;
      return fd_ >= 0 && ioctl(fd_, SIOCOUTQ, &unsent) == 0 && unsent == 0;
    });
  }

 private:
  void* context_;
  void* socket_;
  void* monitor_;
  int fd_ = -1;
  std::string endpoint_;
  uint64_t heartbeats_ = 0;
};

// Sends heartbeats until the subscriber has heard one: the connection is then up.
void connect(RawPublisher& raw, Subscriber& subscriber, const SubscriberCallbacks& callbacks = {}) {
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] {
    if (subscriber.stats().heartbeats > 0) return true;
    raw.heartbeat();
    return false;
  }));
}

// What a subscriber delivers, handed (onEvent) or lent (onEventView: kept as owning copies).
struct Recorder {
  explicit Recorder(bool lent = false) : lend(lent) {}
  bool lend;
  std::vector<ReceivedEvent> events;
  std::vector<bool> wholeMessages;  // lent: ReceivedEventView::wholeMessage per event
  std::vector<SourceChange> changes;
  std::vector<GapInfo> gaps;
  SubscriberCallbacks callbacks() {
    SubscriberCallbacks c;
    if (lend) {
      c.onEvent = [](ReceivedEvent&) { ADD_FAILURE() << "onEvent called beside onEventView"; };
      c.onEventView = [this](const ReceivedEventView& e) {
        events.push_back(e.toReceivedEvent());
        wholeMessages.push_back(e.wholeMessage);
      };
    } else {
      c.onEvent = [this](ReceivedEvent& e) { events.push_back(std::move(e)); };
    }
    c.onSourceChange = [this](const SourceChange& change) { changes.push_back(change); };
    c.onGap = [this](const GapInfo& gap) { gaps.push_back(gap); };
    return c;
  }
};

// The tests with a Recorder run twice: events handed to onEvent, and lent to onEventView.
class SubscriberDeliveries : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(, SubscriberDeliveries, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param) { return param.param ? "Lent" : "Handed"; });

TEST_P(SubscriberDeliveries, SkipsAndCountsBadMessagesAndKeepsWorking) {
  RawPublisher raw;
  Subscriber subscriber(test::connectTo({raw.endpoint()}));
  Recorder recorder{GetParam()};
  connect(raw, subscriber, recorder.callbacks());

  const std::string good = encodeEventsPayload(rawSource(), 0, "ok", {makeEvent("ok", {{"x", 1.0}})});
  raw.send({"garbage"});                                       // one frame
  raw.send({"ok", good, "extra"});                             // three frames
  raw.send({"ok", "\xff\xfe not msgpack"});                    // garbage payload
  raw.send({"ok", good.substr(0, good.size() / 2)});           // truncated
  raw.send({"ok", good + "trailing"});                         // bytes after the map
  raw.send({"wrong", good});                                   // topic is not the name
  raw.send({"ok", std::string()});                             // empty payload
  raw.send({"big", std::string(5 * 1024 * 1024, '\x80')});     // beyond the 4 MiB limit
  raw.send({"ok", std::string("\x81\xa1v\x02", 4)});           // version 2
  raw.send({"ok", good});                                      // and a good one after all that

  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] { return !recorder.events.empty(); }));
  const SubscriberStats stats = subscriber.stats();
  EXPECT_EQ(stats.malformed, 7u);
  EXPECT_EQ(stats.oversized, 1u);
  EXPECT_EQ(stats.unsupported, 1u);
  EXPECT_EQ(stats.events, 1u);
  EXPECT_FALSE(stats.lastError.empty());
  ASSERT_EQ(recorder.events.size(), 1u);
  EXPECT_EQ(recorder.events[0].event, makeEvent("ok", {{"x", 1.0}}));
  EXPECT_EQ(*recorder.events[0].source, rawSource());

  // The connection survived the oversized message (ZMQ_MAXMSGSIZE would have closed it).
  raw.events("ok", 1, 1);
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] { return recorder.events.size() == 2; }));
}

TEST_P(SubscriberDeliveries, CountsGapsPerTopicAndSkipsDuplicates) {
  RawPublisher raw;
  Subscriber subscriber(test::connectTo({raw.endpoint()}));
  Recorder recorder{GetParam()};
  connect(raw, subscriber, recorder.callbacks());

  raw.events("loss", 0, 2);    // 0, 1
  raw.events("loss", 2, 1);    // 2
  raw.events("acc", 100, 1);   // another topic starts where it starts: no gap
  raw.events("loss", 6, 2);    // 3, 4, 5 missing
  raw.events("loss", 6, 2);    // the same message again (a second path): skipped
  raw.events("loss", 8, 2);
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] {
    return !recorder.events.empty() && recorder.events.back().sequence == 9;
  }));
  ASSERT_EQ(recorder.gaps.size(), 1u);
  EXPECT_EQ(recorder.gaps[0].topic, "loss");
  EXPECT_EQ(recorder.gaps[0].expected, 3u);
  EXPECT_EQ(recorder.gaps[0].received, 6u);
  EXPECT_EQ(recorder.gaps[0].missed(), 3u);
  std::vector<uint64_t> loss;
  for (const auto& e : recorder.events) {
    if (e.event.name == "loss") loss.push_back(e.sequence);
  }
  EXPECT_EQ(loss, (std::vector<uint64_t>{0, 1, 2, 6, 7, 8, 9}));
  const SubscriberStats stats = subscriber.stats();
  EXPECT_EQ(stats.gaps, 1u);
  EXPECT_EQ(stats.missedEvents, 3u);
  EXPECT_EQ(stats.duplicates, 2u);
  EXPECT_EQ(stats.conflicts, 0u);
  const auto sources = subscriber.sources();
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].gaps, 1u);
  EXPECT_EQ(sources[0].missedEvents, 3u);
  EXPECT_EQ(sources[0].lastSequence.at("loss"), 9u);
  EXPECT_EQ(sources[0].lastSequence.at("acc"), 100u);
}

TEST_P(SubscriberDeliveries, FiltersByTopicPrefixButAlwaysHearsHeartbeats) {
  RawPublisher raw;
  Subscriber subscriber(test::connectTo({raw.endpoint()}, 1000, {"train."}));
  Recorder recorder{GetParam()};
  connect(raw, subscriber, recorder.callbacks());
  raw.events("eval", 0, 1);
  raw.events("train.loss", 0, 1);
  raw.events("eval", 1, 1);
  raw.events("train.lr", 0, 1);
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] { return recorder.events.size() == 2; }));
  EXPECT_EQ(recorder.events[0].event.name, "train.loss");
  EXPECT_EQ(recorder.events[1].event.name, "train.lr");
  EXPECT_EQ(subscriber.stats().messages, subscriber.stats().heartbeats + 2);
}

TEST_P(SubscriberDeliveries, SourcesGoStaleOnTheInjectedClockAndComeBack) {
  RawPublisher raw;
  ManualClock clock;
  SubscriberOptions options = test::connectTo({raw.endpoint()});
  options.clock = &clock;
  options.staleAfter = 3s;
  Subscriber subscriber(options);
  Recorder recorder{GetParam()};
  connect(raw, subscriber, recorder.callbacks());
  ASSERT_FALSE(recorder.changes.empty());
  EXPECT_TRUE(recorder.changes[0].joined);
  EXPECT_EQ(*recorder.changes[0].endpoint, raw.endpoint());
  const std::size_t joined = recorder.changes.size();
  ASSERT_EQ(joined, 1u);

  clock.advance(2999ms);
  subscriber.poll(0ms, recorder.callbacks());
  EXPECT_EQ(subscriber.sources().at(0).state, SourceState::Alive);
  EXPECT_EQ(recorder.changes.size(), 1u);

  clock.advance(2ms);
  subscriber.poll(0ms, recorder.callbacks());
  EXPECT_EQ(subscriber.sources().at(0).state, SourceState::Stale);
  ASSERT_EQ(recorder.changes.size(), 2u);
  EXPECT_EQ(recorder.changes[1].state, SourceState::Stale);

  raw.heartbeat();
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] { return recorder.changes.size() == 3; }));
  EXPECT_EQ(recorder.changes[2].state, SourceState::Alive);
  EXPECT_FALSE(recorder.changes[2].joined);
  EXPECT_EQ(subscriber.sources().at(0).lastHeartbeat, clock.now());

  raw.heartbeat(rawSource(), MessageKind::Goodbye);
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] { return recorder.changes.size() == 4; }));
  EXPECT_EQ(recorder.changes[3].state, SourceState::Gone);
  clock.advance(1h);
  subscriber.poll(0ms, recorder.callbacks());
  EXPECT_EQ(subscriber.sources().at(0).state, SourceState::Gone) << "gone stays gone";
  EXPECT_EQ(recorder.changes.size(), 4u);
}

TEST_P(SubscriberDeliveries, ARestartedPublisherIsANewSourceNotAGap) {
  std::string endpoint;
  SourceInfo firstIdentity;
  auto first = std::make_unique<Publisher>(testPublisherOptions());
  endpoint = first->endpoints()[0];
  firstIdentity = first->identity();
  Subscriber subscriber(test::connectTo({endpoint}));
  Recorder recorder{GetParam()};
  ASSERT_TRUE(waitForSource(subscriber, firstIdentity));
  for (int i = 0; i < 10; ++i) logEvent(makeEvent("restart", {{"i", int64_t{i}}}));
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] { return recorder.events.size() == 10; }));
  first.reset();

  // Same endpoint, same process: only the instance id and start time tell them apart. libzmq
  // closes the first one's listener in its I/O thread after zmq_close returns, so the port may
  // take a moment to come free.
  std::unique_ptr<Publisher> restarted;
  ASSERT_TRUE(test::waitUntil([&] {
    try {
      restarted = std::make_unique<Publisher>(testPublisherOptions(endpoint));
      return true;
    } catch (const TransportError&) {
      return false;
    }
  }));
  Publisher& second = *restarted;
  EXPECT_NE(second.identity(), firstIdentity);
  EXPECT_EQ(second.identity().pid, firstIdentity.pid);
  ASSERT_TRUE(waitForSource(subscriber, second.identity()));
  for (int i = 0; i < 10; ++i) logEvent(makeEvent("restart", {{"i", int64_t{i}}}));
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] { return recorder.events.size() == 20; }));

  EXPECT_EQ(subscriber.stats().gaps, 0u);
  EXPECT_EQ(subscriber.stats().sourcesJoined, 2u);
  EXPECT_EQ(subscriber.sources().size(), 2u);
  for (int i = 10; i < 20; ++i) {
    EXPECT_EQ(*recorder.events[i].source, second.identity());
    EXPECT_EQ(recorder.events[i].sequence, static_cast<uint64_t>(i - 10));
  }
}

TEST(Subscriber, EndpointsChangeWhileAnotherThreadPolls) {
  Publisher publisher(testPublisherOptions());
  Subscriber subscriber;  // no endpoint yet
  std::atomic<bool> stop{false};
  std::atomic<int> received{0};
  std::thread poller([&] {
    while (!stop.load()) {
      subscriber.poll(1000ms, [&](ReceivedEvent&) { received.fetch_add(1); });
    }
  });
  // addEndpoint wakes the poll that waits for a second and takes effect at once.
  const std::string endpoint = publisher.endpoints()[0];
  EXPECT_EQ(subscriber.addEndpoint(endpoint), endpoint);
  ASSERT_TRUE(test::waitUntil([&] { return !subscriber.sources().empty(); }));
  ASSERT_TRUE(test::waitUntil([&] {
    logEvent(makeEvent("threaded", {}));
    return received.load() > 0;
  }));
  EXPECT_EQ(subscriber.endpoints().size(), 1u);
  EXPECT_TRUE(subscriber.removeEndpoint(endpoint));
  EXPECT_FALSE(subscriber.removeEndpoint(endpoint));
  EXPECT_TRUE(subscriber.endpoints().empty());
  try {
    subscriber.addEndpoint("bogus://nowhere");
    ADD_FAILURE() << "a bad endpoint was accepted";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find("bogus://nowhere"), std::string::npos) << error.what();
  }
  stop = true;
  poller.join();
}

TEST(Subscriber, ReportsConnectionsPerEndpoint) {
  auto publisher = std::make_unique<Publisher>(testPublisherOptions());
  Subscriber subscriber(test::connectTo({publisher->endpoints()[0]}));
  auto connections = [&] { return subscriber.endpoints().at(0).connections; };
  ASSERT_TRUE(pollUntil(subscriber, {}, [&] { return connections() == 1; }));
  publisher.reset();
  ASSERT_TRUE(pollUntil(subscriber, {}, [&] { return connections() == 0; }));

  // A bound endpoint counts the publishers that connect to it.
  Subscriber listener;
  const std::string endpoint = listener.addEndpoint("tcp://127.0.0.1:*", EndpointMode::Bind);
  PublisherOptions options = testPublisherOptions();
  options.bind.clear();
  options.connect = {endpoint};
  Publisher first(options);
  Publisher second(options);
  ASSERT_TRUE(pollUntil(listener, {}, [&] { return listener.endpoints().at(0).connections == 2; }));
}

TEST(Subscriber, BindsAndReportsTheChosenPort) {
  Subscriber subscriber;
  const std::string endpoint = subscriber.addEndpoint("tcp://127.0.0.1:*", EndpointMode::Bind);
  EXPECT_EQ(endpoint.rfind("tcp://127.0.0.1:", 0), 0u);
  EXPECT_EQ(endpoint.find('*'), std::string::npos);
  ASSERT_EQ(subscriber.endpoints().size(), 1u);
  EXPECT_EQ(subscriber.endpoints()[0].mode, EndpointMode::Bind);
}

TEST(Subscriber, ForgetsTheLongestSilentSourceBeyondMaxSources) {
  RawPublisher raw;
  ManualClock clock;
  SubscriberOptions options = test::connectTo({raw.endpoint()});
  options.clock = &clock;
  options.maxSources = 2;
  Subscriber subscriber(options);
  connect(raw, subscriber);
  for (uint64_t id = 100; id < 103; ++id) {
    clock.advance(1ms);
    raw.events("many", 0, 1, rawSource(id));
    ASSERT_TRUE(pollUntil(subscriber, {}, [&] { return subscriber.stats().sourcesJoined == id - 98; }));
  }
  const auto sources = subscriber.sources();
  ASSERT_EQ(sources.size(), 2u);
  for (const auto& s : sources) EXPECT_GE(s.source->instanceId, 101u);
  EXPECT_EQ(subscriber.stats().sourcesEvicted, 2u);  // 77, heard first, and 100
}

// A frame far beyond the limits (a publisher could claim gigabytes) is refused at its header, so
// it costs no memory; ZeroMQ then drops the connection for good, and the subscriber makes it again.
TEST_P(SubscriberDeliveries, AFrameFarBeyondTheLimitsCostsOneReconnect) {
  RawPublisher raw;
  ManualClock clock;
  SubscriberOptions options = test::connectTo({raw.endpoint()});
  options.clock = &clock;
  Subscriber subscriber(options);
  Recorder recorder{GetParam()};
  connect(raw, subscriber, recorder.callbacks());
  ASSERT_TRUE(pollUntil(subscriber, {}, [&] { return subscriber.endpoints().at(0).connections == 1; }));
  test::PeakMemory memory;

  raw.sendZeros("big", 64 * 1024 * 1024);
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] {
    return subscriber.stats().oversized > 0 || subscriber.endpoints().at(0).connections == 0;
  }));
  EXPECT_LT(memory.growthKb(), 32 * 1024);

  // ZeroMQ would not reconnect by itself; once the reconnect interval has passed, livemon does.
  clock.advance(1min);
  uint64_t sequence = 0;
  ASSERT_TRUE(pollUntil(subscriber, recorder.callbacks(), [&] {
    raw.events("after", sequence++, 1);
    return !recorder.events.empty();
  }));
  EXPECT_EQ(recorder.events[0].event.name, "after");
  EXPECT_EQ(subscriber.stats().protocolErrors, 1u);
  EXPECT_EQ(subscriber.endpoints().at(0).protocolErrors, 1u);
  EXPECT_EQ(subscriber.endpoints().at(0).connections, 1u);
}

// Without protocol errors, a publisher going away and coming back is ZeroMQ's own reconnect:
// livemon neither counts nor redoes it.
TEST(Subscriber, AnOrdinaryDisconnectIsNoProtocolError) {
  auto publisher = std::make_unique<Publisher>(testPublisherOptions());
  const std::string endpoint = publisher->endpoints()[0];
  ManualClock clock;
  SubscriberOptions options = test::connectTo({endpoint});
  options.clock = &clock;
  Subscriber subscriber(options);
  ASSERT_TRUE(waitForSource(subscriber, publisher->identity()));
  publisher.reset();
  ASSERT_TRUE(pollUntil(subscriber, {}, [&] { return subscriber.endpoints().at(0).connections == 0; }));
  clock.advance(1min);
  Publisher second(testPublisherOptions(endpoint));
  ASSERT_TRUE(waitForSource(subscriber, second.identity()));
  EXPECT_EQ(subscriber.stats().protocolErrors, 0u);
}

// A peer posing as a source (the identity is clear text) sends a sequence number far ahead: the
// source's real events must still come through, and no absurd loss be counted.
TEST_P(SubscriberDeliveries, ImplausibleSequenceNumbersCannotSilenceASource) {
  RawPublisher raw;
  Subscriber subscriber(test::connectTo({raw.endpoint()}));
  Recorder recorder{GetParam()};
  connect(raw, subscriber, recorder.callbacks());
  auto received = [&] {
    std::vector<uint64_t> numbers;
    for (const auto& e : recorder.events) numbers.push_back(e.sequence);
    return numbers;
  };
  auto pollFor = [&](std::size_t events) {
    return pollUntil(subscriber, recorder.callbacks(), [&] { return recorder.events.size() >= events; });
  };

  raw.events("t", 0, 2);
  raw.events("t", std::numeric_limits<uint64_t>::max() - 1, 1);  // the impostor
  raw.events("t", 2, 2);
  ASSERT_TRUE(pollFor(5));
  const uint64_t impostor = std::numeric_limits<uint64_t>::max() - 1;
  EXPECT_EQ(received(), (std::vector<uint64_t>{0, 1, impostor, 2, 3}));
  SubscriberStats stats = subscriber.stats();
  EXPECT_EQ(stats.missedEvents, 0u);
  EXPECT_EQ(stats.gaps, 0u);
  EXPECT_EQ(stats.duplicates, 0u);
  EXPECT_EQ(stats.sequenceResets, 1u);

  // A jump small enough to be a loss is one, but it does not make what follows duplicates.
  raw.events("t", 1004, 1);  // the impostor again
  raw.events("t", 4, 2);
  raw.events("t", 6, 1);
  ASSERT_TRUE(pollFor(9));
  EXPECT_EQ(received(), (std::vector<uint64_t>{0, 1, impostor, 2, 3, 1004, 4, 5, 6}));
  stats = subscriber.stats();
  EXPECT_EQ(stats.gaps, 1u);
  EXPECT_EQ(stats.missedEvents, 1000u);
  EXPECT_EQ(stats.duplicates, 0u);

  // The same messages again are duplicates: one publisher reached over two endpoints.
  raw.events("t", 4, 2);  // 4 and 5 again
  raw.events("t", 1004, 1);
  raw.events("t", 7, 2);
  ASSERT_TRUE(pollFor(11));
  EXPECT_EQ(received(), (std::vector<uint64_t>{0, 1, impostor, 2, 3, 1004, 4, 5, 6, 7, 8}));
  stats = subscriber.stats();
  EXPECT_EQ(stats.duplicates, 3u);
  EXPECT_EQ(stats.conflicts, 0u);
  EXPECT_EQ(stats.sequenceResets, 1u);
  EXPECT_EQ(subscriber.sources().at(0).sequenceResets, 1u);
  EXPECT_EQ(subscriber.sources().at(0).lastSequence.at("t"), 8u);
}

TEST_P(SubscriberDeliveries, ForgetsTheTopicHeardFromLongestAgoBeyondItsLimits) {
  RawPublisher raw;
  SubscriberOptions options = test::connectTo({raw.endpoint()});
  options.maxTopicsPerSource = 2;
  options.maxTopics = 3;
  Subscriber subscriber(options);
  Recorder recorder{GetParam()};
  connect(raw, subscriber, recorder.callbacks());
  auto pollFor = [&](std::size_t events) {
    return pollUntil(subscriber, recorder.callbacks(), [&] { return recorder.events.size() >= events; });
  };
  auto topicsOf = [&](uint64_t id) {
    std::vector<std::string> topics;
    for (const auto& s : subscriber.sources()) {
      if (s.source->instanceId != id) continue;
      for (const auto& [topic, last] : s.lastSequence) topics.push_back(topic);
    }
    return topics;
  };
  raw.events("a", 0, 1);
  raw.events("b", 0, 1);
  raw.events("a", 1, 1);  // a is now the most recent
  raw.events("c", 0, 1);  // one too many for this source: b goes
  ASSERT_TRUE(pollFor(4));
  EXPECT_EQ(topicsOf(77), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(subscriber.stats().topicsEvicted, 1u);

  raw.events("x", 0, 1, rawSource(78));
  raw.events("y", 0, 1, rawSource(78));  // four in all: the oldest, a, goes
  ASSERT_TRUE(pollFor(6));
  EXPECT_EQ(topicsOf(77), (std::vector<std::string>{"c"}));
  EXPECT_EQ(topicsOf(78), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(subscriber.stats().topicsEvicted, 2u);

  // A forgotten topic starts afresh: no gap.
  raw.events("b", 50, 1);
  ASSERT_TRUE(pollFor(7));
  EXPECT_EQ(subscriber.stats().gaps, 0u);
  EXPECT_EQ(recorder.events.back().sequence, 50u);
}

// With the default limits, a publisher sending ever new topics leaves a bounded trace.
TEST(Subscriber, KeepsABoundedNumberOfTopics) {
  RawPublisher raw;
  Subscriber subscriber(test::connectTo({raw.endpoint()}));
  connect(raw, subscriber);
  constexpr int kTopics = 3000;
  // In steps the sending socket's queue takes without dropping.
  for (int i = 0; i < kTopics; i += 100) {
    for (int j = i; j < i + 100; ++j) raw.events(std::to_string(j) + std::string(900, 't'), 0, 1);
    ASSERT_TRUE(pollUntil(subscriber, {}, [&] { return subscriber.stats().events == static_cast<uint64_t>(i + 100); }));
  }
  const SubscriberOptions defaults;
  EXPECT_EQ(subscriber.sources().at(0).lastSequence.size(), defaults.maxTopicsPerSource);
  EXPECT_EQ(subscriber.stats().topicsEvicted, kTopics - defaults.maxTopicsPerSource);
}

// Decoding multiplies a payload's size many times over, so one poll decodes a bounded amount and
// leaves the rest for the next.
TEST_P(SubscriberDeliveries, OnePollDecodesABoundedAmount) {
  RawPublisher raw;
  Subscriber subscriber(test::connectTo({raw.endpoint()}));
  connect(raw, subscriber);
  constexpr std::size_t kMessages = 8;
  constexpr std::size_t kEventsPerMessage = 16;
  Event heavy = makeEvent("heavy", {});
  for (int i = 0; i < 1000; ++i) heavy.data["field" + std::to_string(i)] = std::string(200, 'v');  // 200 KB
  const std::vector<Event> batch(kEventsPerMessage, heavy);
  for (std::size_t i = 0; i < kMessages; ++i) {
    raw.send({"heavy", encodeEventsPayload(rawSource(), i * kEventsPerMessage, "heavy", batch)});
  }
  ASSERT_TRUE(raw.waitUntilSent());
  std::size_t received = 0;
  std::size_t mostInOnePoll = 0;
  const auto end = std::chrono::steady_clock::now() + test::kDeadline;
  while (received < kMessages * kEventsPerMessage && std::chrono::steady_clock::now() < end) {
    SubscriberCallbacks callbacks;
    if (GetParam()) {
      callbacks.onEventView = [](const ReceivedEventView&) {};
    } else {
      callbacks.onEvent = [](ReceivedEvent&) {};
    }
    const std::size_t got = subscriber.poll(20ms, callbacks);
    received += got;
    mostInOnePoll = std::max(mostInOnePoll, got);
  }
  EXPECT_EQ(received, kMessages * kEventsPerMessage);
  EXPECT_LE(mostInOnePoll, kEventsPerMessage) << "a poll decoded more than one 3 MB message";
}

// A publisher sending large messages to a consumer that does not read: what the subscriber holds
// for it is bounded in bytes (receiveBufferBytes), not in messages (a thousand messages of up to
// 5 MiB are 5 GB). The publisher here never drops (ZMQ_XPUB_NODROP): it stops sending once the
// subscriber holds what it may, and every byte the subscriber then delivers was held by it, in
// the kernel's small Unix socket buffers or in the publisher's one-message queue.
TEST(Subscriber, WhatItHoldsForAConsumerThatDoesNotReadIsBoundedInBytes) {
  test::TempDir dir;
  const std::string endpoint = "ipc://" + (dir.path() / "large").string();
  void* context = zmq_ctx_new();
  void* publisher = zmq_socket(context, ZMQ_XPUB);
  int one = 1;
  int zero = 0;
  zmq_setsockopt(publisher, ZMQ_LINGER, &zero, sizeof(zero));
  zmq_setsockopt(publisher, ZMQ_SNDHWM, &one, sizeof(one));
  zmq_setsockopt(publisher, ZMQ_XPUB_NODROP, &one, sizeof(one));
  ASSERT_EQ(zmq_bind(publisher, endpoint.c_str()), 0);

  constexpr std::size_t kFrameBytes = 1024 * 1024;
  constexpr std::size_t kBudget = 8 * 1024 * 1024;
  constexpr std::size_t kFrames = 48;
  SubscriberOptions options = test::connectTo({endpoint});
  options.limits.maxPayloadBytes = kFrameBytes;
  options.receiveBufferBytes = kBudget;
  Subscriber subscriber(options);
  // Its subscription arrives once it is connected.
  int timeout = 10000;
  zmq_setsockopt(publisher, ZMQ_RCVTIMEO, &timeout, sizeof(timeout));
  char subscription[16];
  ASSERT_GE(zmq_recv(publisher, subscription, sizeof(subscription), 0), 0);

  // Sends until there has been no room for half a second while nothing reads: the subscriber
  // then holds all it will. (An XPUB always reports room to zmq_poll; a send says.)
  std::size_t sent = 0;
  auto lastSent = std::chrono::steady_clock::now();
  while (sent < kFrames && std::chrono::steady_clock::now() - lastSent < 500ms) {
    if (zmq_send(publisher, "big", 3, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
      ASSERT_EQ(zmq_errno(), EAGAIN);
      std::this_thread::sleep_for(1ms);
      continue;
    }
    zmq_msg_t payload;
    zmq_msg_init_data(&payload, g_zeros, kFrameBytes - 64, nullptr, nullptr);
    ASSERT_GE(zmq_msg_send(&payload, publisher, 0), 0);
    ++sent;
    lastSent = std::chrono::steady_clock::now();
  }
  // Now the consumer reads: everything that was sent arrives, and that is what was held.
  ASSERT_TRUE(test::waitUntil([&] {
    subscriber.poll(10ms, [](ReceivedEvent&) {});
    return subscriber.stats().messages >= sent;
  }));
  const uint64_t received = subscriber.stats().messages;
  EXPECT_LE(received * kFrameBytes, kBudget + 4 * kFrameBytes)
      << received << " messages of 1 MiB were held for a consumer that did not read";
  EXPECT_GE(received, 2u) << "it holds as much as the budget allows";
  zmq_close(publisher);
  zmq_ctx_term(context);
}

// A lent event reads the message's own bytes: what came, as it came, with the message's frames.
TEST(Subscriber, ALentEventBorrowsTheMessageAsItArrived) {
  RawPublisher raw;
  Subscriber subscriber(test::connectTo({raw.endpoint()}));
  connect(raw, subscriber);
  Event rich = makeEvent("rich", {{"text", std::string(40, 't')}, {"ratio", 1.5}, {"count", int64_t{-3}}, {"ok", true}});
  rich.step = 42;
  const std::string payload = encodeEventsPayload(rawSource(), 10, "rich", {rich, makeEvent("rich", {{"x", 2.0}})});
  raw.send({"rich", payload});
  std::vector<ReceivedEvent> kept;
  SubscriberCallbacks callbacks;
  callbacks.onEventView = [&](const ReceivedEventView& lent) {
    EXPECT_EQ(lent.message.topic(), "rich");
    EXPECT_EQ(lent.message.payload(), payload);
    EXPECT_EQ(lent.message.sequence(), 10u);
    EXPECT_EQ(lent.message.size(), 2u);
    EXPECT_TRUE(lent.wholeMessage);
    EXPECT_FALSE(lent.fromHistory);
    ASSERT_TRUE(lent.source);
    EXPECT_EQ(*lent.source, rawSource());
    EXPECT_EQ(*lent.endpoint, raw.endpoint());
    // Names and strings lie in the payload, not in copies.
    const auto inPayload = [&](std::string_view text) {
      return text.data() >= lent.message.payload().data() &&
             text.data() + text.size() <= lent.message.payload().data() + lent.message.payload().size();
    };
    EXPECT_TRUE(inPayload(lent.event.name()));
    for (const FieldView& field : lent.event.fields()) EXPECT_TRUE(inPayload(field.key)) << field.key;
    kept.push_back(lent.toReceivedEvent());
  };
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return kept.size() == 2; }));
  EXPECT_EQ(kept[0].sequence, 10u);
  EXPECT_EQ(kept[1].sequence, 11u);
  EXPECT_EQ(kept[0].event.name, "rich");
  EXPECT_EQ(kept[0].event.step, std::optional<int64_t>(42));
  EXPECT_EQ(kept[0].event.timestamp, rich.timestamp);
  EXPECT_EQ(kept[0].event.data, rich.data);
  EXPECT_EQ(kept[1].event.data.at("x"), DataValue(2.0));
  EXPECT_EQ(subscriber.stats().events, 2u);
}

// keepMessages hands each event of a message delivered whole the message as it arrived, one copy
// shared by its events: what a recorder taking handed events stores.
TEST(Subscriber, KeepMessagesHandsEachEventTheWholeMessageItCameIn) {
  RawPublisher raw;
  SubscriberOptions options = test::connectTo({raw.endpoint()});
  options.keepMessages = true;
  Subscriber subscriber(options);
  connect(raw, subscriber);
  const std::string payload = encodeEventsPayload(
      rawSource(), 3, "kept", {makeEvent("kept", {{"x", 1.0}}), makeEvent("kept", {{"x", 2.0}})});
  raw.send({"kept", payload});
  raw.send({"kept", payload});  // the same again: skipped, so nothing more is kept
  std::vector<ReceivedEvent> events;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) { events.push_back(std::move(event)); };
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return subscriber.stats().duplicates == 2; }));
  ASSERT_EQ(events.size(), 2u);
  ASSERT_NE(events[0].message, nullptr);
  EXPECT_EQ(events[0].message, events[1].message) << "one copy per message";
  EXPECT_EQ(events[0].message->topic, "kept");
  EXPECT_EQ(events[0].message->payload, payload);
  EXPECT_EQ(events[0].message->sequence, 3u);
  EXPECT_EQ(events[0].message->events, 2u);
}

// A callback may poll again: the inner poll lends its own messages and leaves the outer's as
// they were (ASan sees a use after free if it does not).
TEST(Subscriber, APollInsideALentCallbackLeavesTheOuterEventIntact) {
  RawPublisher raw;
  Subscriber subscriber(test::connectTo({raw.endpoint()}));
  connect(raw, subscriber);
  std::vector<std::string> outer;
  std::vector<uint64_t> inner;
  SubscriberCallbacks innerCallbacks;
  innerCallbacks.onEventView = [&](const ReceivedEventView& lent) { inner.push_back(lent.sequence); };
  SubscriberCallbacks callbacks;
  callbacks.onEventView = [&](const ReceivedEventView& lent) {
    const std::string name(lent.event.name());
    raw.events("second", 0, 50);
    ASSERT_TRUE(raw.waitUntilSent());
    const auto end = std::chrono::steady_clock::now() + test::kDeadline;
    while (inner.size() < 50 && std::chrono::steady_clock::now() < end) subscriber.poll(10ms, innerCallbacks);
    EXPECT_EQ(lent.event.name(), name);
    ASSERT_EQ(lent.event.fields().size(), 1u);
    EXPECT_EQ(lent.event.fields()[0].key, "n");
    EXPECT_EQ(std::get<int64_t>(lent.event.fields()[0].value), static_cast<int64_t>(lent.sequence));
    outer.push_back(name);
  };
  raw.events("first", 7, 1);
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return !outer.empty(); }));
  EXPECT_EQ(outer, std::vector<std::string>{"first"});
  EXPECT_EQ(inner.size(), 50u);
}

TEST(Subscriber, BadOptionsNameTheOption) {
  SubscriberOptions options;
  options.staleAfter = 0ms;
  try {
    Subscriber subscriber(options);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("staleAfter"), std::string::npos);
  }
  options = SubscriberOptions{};
  options.receiveBufferBytes = 0;
  EXPECT_THROW(Subscriber{options}, std::invalid_argument) << "receiveBufferBytes";
  options = SubscriberOptions{};
  options.connect = {"nonsense"};
  EXPECT_THROW(Subscriber{options}, TransportError);
}

}  // namespace
}  // namespace livemon::transport
