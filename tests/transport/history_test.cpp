// History for late subscribers: a subscriber that joins a running publisher receives the run
// from its first event, then live, with no gap and no duplicate at the seam; the history stays
// within its byte bound; a subscriber goes on live when there is no history or it stops; a
// hostile request costs nothing.
#include <gtest/gtest.h>

#include <zmq.h>

#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/recording_history.h>
#include <livemon/transport/relay.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::makeEvent;
using test::pollUntil;
using test::waitUntil;

// What a subscriber received of the topic "step": sequence numbers in delivery order.
struct Collected {
  std::vector<uint64_t> sequences;
  std::vector<bool> fromHistory;
  std::vector<HistoryStatus> histories;
  uint64_t gaps = 0;
  std::string lastGap;

  SubscriberCallbacks callbacks(const std::string& name = "step") {
    SubscriberCallbacks callbacks;
    callbacks.onEvent = [this, name](ReceivedEvent& event) {
      if (event.event.name != name) return;
      sequences.push_back(event.sequence);
      fromHistory.push_back(event.fromHistory);
    };
    callbacks.onGap = [this](const GapInfo& gap) {
      ++gaps;
      lastGap = gap.topic + " " + std::to_string(gap.expected) + ".." + std::to_string(gap.received);
    };
    callbacks.onHistory = [this](const HistoryStatus& status) { histories.push_back(status); };
    return callbacks;
  }
};

SubscriberOptions withHistory(const std::string& endpoint) {
  SubscriberOptions options = test::connectTo({endpoint});
  options.history = true;
  return options;
}

void logSteps(int first, int count) {
  for (int i = first; i < first + count; ++i) logEvent(makeEvent("step", {{"i", int64_t{i}}}));
}

TEST(History, ALateSubscriberSeesTheRunFromItsFirstEventThenLiveWithoutGapOrDuplicate) {
  Publisher publisher(test::testPublisherOptions());
  ASSERT_FALSE(publisher.historyEndpoint().empty()) << "a publisher that binds keeps history by default";
  logSteps(0, 500);
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == 500; }));

  // Events keep coming while the subscriber joins, so some arrive both in the history and live.
  std::atomic<bool> stop{false};
  std::atomic<int> logged{500};
  std::thread training([&] {
    while (!stop.load()) {
      logSteps(logged.load(), 1);
      logged.fetch_add(1);
      std::this_thread::sleep_for(200us);  // a training loop's pace, not synchronisation
    }
  });
  Subscriber subscriber(withHistory(publisher.endpoints().front()));
  Collected collected;
  const auto callbacks = collected.callbacks();
  const bool answered = pollUntil(subscriber, callbacks, [&] { return !collected.histories.empty(); });
  const bool pastSeam = pollUntil(subscriber, callbacks, [&] { return collected.sequences.size() > 700; });
  stop = true;
  training.join();
  ASSERT_TRUE(answered);
  ASSERT_TRUE(pastSeam);
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == static_cast<uint64_t>(logged.load()); }));
  ASSERT_TRUE(pollUntil(subscriber, callbacks,
                        [&] { return collected.sequences.size() >= static_cast<std::size_t>(logged.load()); }));

  const HistoryStatus& history = collected.histories.front();
  EXPECT_EQ(history.outcome, HistoryOutcome::Received) << history.error;
  EXPECT_FALSE(history.truncated);
  EXPECT_GE(history.events, 500u);
  ASSERT_TRUE(history.oldest.has_value());
  EXPECT_EQ(*history.oldest, makeEvent("step", {}).timestamp) << "the oldest event held is the run's first";
  // Every number once, in order: the history, then live, with the seam exact.
  ASSERT_EQ(collected.sequences.size(), static_cast<std::size_t>(logged.load()));
  for (std::size_t i = 0; i < collected.sequences.size(); ++i) ASSERT_EQ(collected.sequences[i], i);
  EXPECT_TRUE(collected.fromHistory.front());
  EXPECT_FALSE(collected.fromHistory.back());
  EXPECT_EQ(collected.gaps, 0u);
  EXPECT_EQ(subscriber.stats().duplicates, 0u);
  EXPECT_EQ(subscriber.stats().historyEvents, history.events);
  EXPECT_EQ(publisher.stats().historyRequests, 1u);
}

TEST(History, ASubscriberWithoutHistoryStillSeesOnlyWhatComesAfterItJoins) {
  Publisher publisher(test::testPublisherOptions());
  logSteps(0, 100);
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == 100; }));
  Subscriber subscriber(test::connectTo({publisher.endpoints().front()}));
  ASSERT_TRUE(test::waitForSource(subscriber, publisher.identity()));
  logSteps(100, 10);
  Collected collected;
  ASSERT_TRUE(pollUntil(subscriber, collected.callbacks(), [&] { return collected.sequences.size() == 10; }));
  EXPECT_EQ(collected.sequences.front(), 100u);
  EXPECT_TRUE(collected.histories.empty());
}

TEST(History, StaysWithinItsByteBoundAndSaysWhatItNoLongerHolds) {
  PublisherOptions options = test::testPublisherOptions();
  options.historyBytes = 64 * 1024;
  options.maxBatchEvents = 10;  // many messages, so the bound is crossed message by message
  Publisher publisher(options);
  for (int round = 0; round < 50; ++round) {
    logSteps(round * 100, 100);
    ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == static_cast<uint64_t>((round + 1) * 100); }));
    ASSERT_LE(publisher.stats().historyBytes, 64u * 1024);
  }
  const PublisherStats stats = publisher.stats();
  EXPECT_GT(stats.historyDropped, 0u);
  EXPECT_GT(stats.historyMessages, 0u);

  Subscriber subscriber(withHistory(publisher.endpoints().front()));
  Collected collected;
  ASSERT_TRUE(pollUntil(subscriber, collected.callbacks(), [&] { return !collected.histories.empty(); }));
  const HistoryStatus& history = collected.histories.front();
  EXPECT_EQ(history.outcome, HistoryOutcome::Received);
  EXPECT_TRUE(history.truncated) << "the run began before what is held";
  ASSERT_FALSE(collected.sequences.empty());
  EXPECT_GT(collected.sequences.front(), 0u);
  EXPECT_EQ(collected.sequences.back(), 4999u) << "the newest events are the ones held";
  for (std::size_t i = 1; i < collected.sequences.size(); ++i) {
    ASSERT_EQ(collected.sequences[i], collected.sequences[i - 1] + 1);
  }
}

// A long run on an injected clock: 100 Stats, windows of 10 s, for six simulated hours. The
// history never holds more than its bound, and keeps the newest windows.
TEST(History, ALongRunOfStatWindowsStaysWithinTheBound) {
  constexpr std::size_t kBound = 512 * 1024;
  PublisherOptions options = test::testPublisherOptions();
  options.historyBytes = kBound;
  Publisher publisher(options);
  ManualClock clock;
  std::vector<std::unique_ptr<Stat>> stats;
  for (int i = 0; i < 100; ++i) {
    stats.push_back(std::make_unique<Stat>("stat" + std::to_string(i), std::vector{Aggregation::Mean, Aggregation::Max},
                                           10s, std::numeric_limits<int64_t>::max(), clock));
  }
  uint64_t windows = 0;
  for (int second = 0; second < 6 * 3600; ++second) {
    for (auto& stat : stats) stat->add(static_cast<double>(second));
    clock.advance(1s);
    if (second % 10 == 9) {
      windows += stats.size();
      if (second % 600 == 599) {
        ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == windows; }));
        ASSERT_LE(publisher.stats().historyBytes, kBound);
      }
    }
  }
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == windows; }));
  const PublisherStats after = publisher.stats();
  EXPECT_LE(after.historyBytes, kBound);
  EXPECT_GT(after.historyBytes, kBound / 2) << "the bound is used, not wasted";
  EXPECT_GT(after.historyDropped, 0u);
  EXPECT_EQ(after.droppedQueueFull, 0u);
}

TEST(History, WithoutAnAdvertisementTheSubscriberGoesOnLiveAndReleasesWhatItHeld) {
  PublisherOptions options = test::testPublisherOptions();
  options.historyBytes = 0;
  Publisher publisher(options);
  EXPECT_TRUE(publisher.historyEndpoint().empty());
  SubscriberOptions subscriberOptions = withHistory(publisher.endpoints().front());
  subscriberOptions.historyWait = 300ms;
  Subscriber subscriber(subscriberOptions);
  Collected collected;
  const auto callbacks = collected.callbacks();
  ASSERT_TRUE(test::waitForSource(subscriber, publisher.identity()));
  logSteps(0, 20);
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return collected.sequences.size() == 20; }));
  ASSERT_EQ(collected.histories.size(), 1u);
  EXPECT_EQ(collected.histories.front().outcome, HistoryOutcome::Unavailable);
  EXPECT_FALSE(collected.histories.front().error.empty());
  for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(collected.sequences[i], i);
}

TEST(History, AnEnvironmentVariableSizesOrDisablesIt) {
  setenv("LIVEMON_HISTORY_MB", "0", 1);
  EXPECT_TRUE(Publisher(test::testPublisherOptions()).historyEndpoint().empty());
  setenv("LIVEMON_HISTORY_MB", "lots", 1);
  try {
    Publisher publisher(test::testPublisherOptions());
    ADD_FAILURE() << "a bad LIVEMON_HISTORY_MB is refused";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("LIVEMON_HISTORY_MB"), std::string::npos) << error.what();
  }
  unsetenv("LIVEMON_HISTORY_MB");
  PublisherOptions connected = test::testPublisherOptions();
  connected.bind.clear();
  connected.connect = {"tcp://127.0.0.1:1"};
  EXPECT_TRUE(Publisher(connected).historyEndpoint().empty()) << "a publisher that connects leaves history to the relay";
}

TEST(History, FiltersApplyToTheHistoryToo) {
  Publisher publisher(test::testPublisherOptions());
  logSteps(0, 50);
  for (int i = 0; i < 5; ++i) logEvent(makeEvent("eval", {{"loss", 1.0}}));
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == 55; }));
  SubscriberOptions options = withHistory(publisher.endpoints().front());
  options.filters = {"eval"};
  Subscriber subscriber(options);
  Collected evals;
  uint64_t others = 0;
  SubscriberCallbacks callbacks = evals.callbacks("eval");
  callbacks.onEvent = [&, inner = callbacks.onEvent](ReceivedEvent& event) {
    if (event.event.name != "eval") ++others;
    inner(event);
  };
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return !evals.histories.empty(); }));
  EXPECT_EQ(evals.sequences.size(), 5u);
  EXPECT_EQ(others, 0u);
}

// Raw ZeroMQ against the history socket: junk is counted and skipped, and a good request after
// it is still answered.
TEST(History, AMalformedRequestIsSkippedAndTheNextOneAnswered) {
  Publisher publisher(test::testPublisherOptions());
  logSteps(0, 3);
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == 3; }));
  void* context = zmq_ctx_new();
  void* dealer = zmq_socket(context, ZMQ_DEALER);
  int zero = 0;
  zmq_setsockopt(dealer, ZMQ_LINGER, &zero, sizeof zero);
  ASSERT_EQ(zmq_connect(dealer, publisher.historyEndpoint().c_str()), 0);
  zmq_send(dealer, "junk", 4, 0);
  zmq_send(dealer, "livemon.history", 15, ZMQ_SNDMORE);
  zmq_send(dealer, "\x81\xa1v\x02", 4, 0);  // {"v": 2}
  const std::string request = encodeHistoryRequest({});
  zmq_send(dealer, "livemon.history", 15, ZMQ_SNDMORE);
  zmq_send(dealer, request.data(), request.size(), 0);
  int receiveTimeout = 10000;
  zmq_setsockopt(dealer, ZMQ_RCVTIMEO, &receiveTimeout, sizeof receiveTimeout);
  int messages = 0;
  HistoryEnd end;
  while (true) {
    char topic[64];
    const int topicSize = zmq_recv(dealer, topic, sizeof topic, 0);
    ASSERT_GE(topicSize, 0) << "no answer";
    std::vector<char> payload(1 << 20);
    const int payloadSize = zmq_recv(dealer, payload.data(), payload.size(), 0);
    ASSERT_GE(payloadSize, 0);
    if (std::string_view(topic, static_cast<std::size_t>(topicSize)) == kHistoryTopic) {
      ASSERT_EQ(decodeHistoryEnd(std::string_view(payload.data(), static_cast<std::size_t>(payloadSize)), end),
                DecodeStatus::Ok);
      break;
    }
    ++messages;
  }
  EXPECT_EQ(end.messages, static_cast<uint64_t>(messages));
  EXPECT_GE(messages, 1);
  EXPECT_TRUE(end.error.empty());
  EXPECT_EQ(publisher.stats().historyRequests, 1u);
  zmq_close(dealer);
  zmq_ctx_term(context);
}

using test::loopbackRelayOptions;
using test::connectedPublisherOptions;

// Ranks publish into a node relay that forwards to the head relay; a subscriber that joins the
// head late gets each rank's run from its first event, from the head's history alone.
TEST(History, ALateSubscriberOfAChainOfRelaysSeesEveryRankFromItsStart) {
  Relay head(loopbackRelayOptions());
  RelayOptions nodeOptions = loopbackRelayOptions();
  nodeOptions.upstream = {head.listenEndpoint()};
  Relay node(nodeOptions);
  ASSERT_FALSE(head.historyEndpoint().empty());
  EXPECT_TRUE(node.historyEndpoint().empty()) << "a relay that forwards upstream leaves history to the top";

  std::vector<std::unique_ptr<Publisher>> ranks;
  for (int64_t rank = 0; rank < 4; ++rank) ranks.push_back(std::make_unique<Publisher>(connectedPublisherOptions(node.listenEndpoint(), rank)));
  // Until the head holds every rank's messages: the publishers' first ones may precede their
  // connections (ZeroMQ's slow joiner), which is why each logs until the head has something.
  int logged = 0;
  ASSERT_TRUE(waitUntil([&] {
    logSteps(logged++, 1);
    return head.stats().historyMessages >= 4 * 20;
  }));
  for (int i = 0; i < 100; ++i) logSteps(logged++, 1);
  ASSERT_TRUE(waitUntil([&] {
    for (const auto& rank : ranks) {
      if (rank->publishedCount() != static_cast<uint64_t>(logged)) return false;
    }
    return true;
  }));

  Subscriber subscriber(withHistory(head.serveEndpoint()));
  std::map<int64_t, std::vector<uint64_t>> perRank;
  std::vector<HistoryStatus> histories;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) {
    if (event.event.name == "step" && event.source->rank) perRank[*event.source->rank].push_back(event.sequence);
  };
  callbacks.onHistory = [&](const HistoryStatus& status) { histories.push_back(status); };
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return !histories.empty(); }));
  for (int i = 0; i < 10; ++i) logSteps(logged++, 1);
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] {
    for (int64_t rank = 0; rank < 4; ++rank) {
      if (perRank[rank].empty() || perRank[rank].back() + 1 < ranks[static_cast<std::size_t>(rank)]->publishedCount()) return false;
    }
    return true;
  }));
  EXPECT_EQ(histories.front().outcome, HistoryOutcome::Received) << histories.front().error;
  EXPECT_EQ(histories.front().server.substr(histories.front().server.rfind(':')),
            head.historyEndpoint().substr(head.historyEndpoint().rfind(':')));
  for (const auto& [rank, sequences] : perRank) {
    // Each rank from the first event the head received of it, each number once, in order.
    ASSERT_FALSE(sequences.empty());
    for (std::size_t i = 1; i < sequences.size(); ++i) ASSERT_EQ(sequences[i], sequences[i - 1] + 1) << "rank " << rank;
    EXPECT_GT(sequences.size(), 100u) << "rank " << rank << " from before the subscriber joined";
  }
  EXPECT_EQ(subscriber.stats().duplicates, 0u);
  EXPECT_EQ(subscriber.stats().gaps, 0u);
}

TEST(History, ARelayKeepsItsHistoryWithinItsBound) {
  RelayOptions options = loopbackRelayOptions();
  options.historyBytes = 32 * 1024;
  Relay relay(options);
  Publisher publisher(connectedPublisherOptions(relay.listenEndpoint(), 0));
  int logged = 0;
  ASSERT_TRUE(waitUntil([&] {
    logSteps(logged++, 1);
    return relay.stats().historyDropped > 100;
  }));
  EXPECT_LE(relay.stats().historyBytes, 32u * 1024);
  Subscriber subscriber(withHistory(relay.serveEndpoint()));
  Collected collected;
  ASSERT_TRUE(pollUntil(subscriber, collected.callbacks(), [&] { return !collected.histories.empty(); }));
  EXPECT_EQ(collected.histories.front().outcome, HistoryOutcome::Received);
  EXPECT_TRUE(collected.histories.front().truncated);
  EXPECT_TRUE(collected.histories.front().oldest.has_value());
  // What `livemonctl relay` prints at its end: the requests it took, still counted after stop().
  const uint64_t requests = relay.stats().historyRequests;
  EXPECT_GE(requests, 1u);
  relay.stop();
  EXPECT_EQ(relay.stats().historyRequests, requests);
  EXPECT_EQ(relay.stats().historyBusy, 0u);
}

// A relay that records: what its history dropped is answered from the recording first, so a late
// subscriber still gets each event from the first, once.
TEST(History, WhatTheRelayDroppedComesFromItsRecording) {
  test::TempDir dir;
  RecordingWriterOptions writerOptions;
  // Chunks reach the file right after their messages: the history here holds a fraction of a
  // second, where a relay's default holds hours.
  writerOptions.chunkBytes = 4 * 1024;
  auto writer = std::make_unique<RecordingWriter>((dir.path() / "relay-1.mcap").string(), writerOptions);
  std::atomic<uint64_t> recorded{0};
  std::atomic<int64_t> firstStep{-1};
  std::atomic<int64_t> lastStep{-1};
  RelayOptions options = loopbackRelayOptions();
  options.historyBytes = 64 * 1024;  // some 250 of the 2000 events
  auto archive = std::make_shared<RecordingHistoryArchive>();
  ASSERT_TRUE(archive->add(dir.path() / "relay-1.mcap"));
  options.historyArchive = archive;
  // As `livemonctl relay --record` does: one recorded message per event.
  options.onMessage = [&](std::string_view topic, const WireMessage& message) {
    if (message.kind != MessageKind::Events) return;
    ReceivedEvent received;
    received.source = std::make_shared<const SourceInfo>(message.source);
    received.receivedAt = std::chrono::system_clock::now();
    for (std::size_t i = 0; i < message.events.size(); ++i) {
      received.event = message.events[i];
      received.event.name = std::string(topic);
      received.sequence = message.sequence + i;
      recordEvent(*writer, received);
      if (topic == "step") {
        if (firstStep.load() < 0) firstStep = static_cast<int64_t>(received.sequence);
        lastStep = static_cast<int64_t>(received.sequence);
      }
    }
    recorded.fetch_add(message.events.size());
  };
  Relay relay(options);
  PublisherOptions publisherOptions = connectedPublisherOptions(relay.listenEndpoint(), 0);
  publisherOptions.maxBatchBytes = 4096;  // messages smaller than the history's bound
  Publisher publisher(publisherOptions);
  // Until the relay records this publisher's events (its first ones may precede the connection).
  int logged = 0;
  ASSERT_TRUE(waitUntil([&] {
    logEvent(makeEvent("step", {{"i", int64_t{logged++}}, {"pad", std::string(200, 'x')}}));
    return firstStep.load() >= 0;
  }));
  for (int i = 0; i < 2000; ++i) logEvent(makeEvent("step", {{"i", int64_t{logged++}}, {"pad", std::string(200, 'x')}}));
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == static_cast<uint64_t>(logged); }));
  ASSERT_TRUE(waitUntil([&] { return relay.stats().historyDropped > 0 && lastStep.load() == logged - 1; }))
      << "recorded up to #" << lastStep.load() << " of " << logged << ", history dropped "
      << relay.stats().historyDropped << ", captured " << relay.stats().captured << ", callback errors "
      << relay.stats().callbackErrors;

  Subscriber subscriber(withHistory(relay.serveEndpoint()));
  Collected collected;
  ASSERT_TRUE(pollUntil(subscriber, collected.callbacks(), [&] { return !collected.histories.empty(); }));
  const HistoryStatus& history = collected.histories.front();
  EXPECT_EQ(history.outcome, HistoryOutcome::Received) << history.error;
  EXPECT_FALSE(history.truncated) << "the recording reaches back to the start; " << history.messages << " messages, "
                                  << history.events << " events";
  ASSERT_FALSE(collected.sequences.empty());
  const uint64_t first = collected.sequences.front();
  EXPECT_EQ(first, static_cast<uint64_t>(firstStep.load())) << "the first event the relay received came from the recording";
  for (std::size_t i = 0; i < collected.sequences.size(); ++i) ASSERT_EQ(collected.sequences[i], first + i);
  EXPECT_EQ(collected.sequences.back(), static_cast<uint64_t>(logged - 1));
  EXPECT_EQ(collected.gaps, 0u) << collected.lastGap;
  relay.stop();
}

// Not thread-safe: one test. A source made by hand: an XPUB that publishes heartbeats advertising
// a ROUTER that answers history requests as the test says, or dies.
class FakeSource {
 public:
  FakeSource() {
    const int zero = 0;
    for (void* socket : {xpub_, router_}) zmq_setsockopt(socket, ZMQ_LINGER, &zero, sizeof zero);
    zmq_bind(xpub_, "tcp://127.0.0.1:*");
    zmq_bind(router_, "tcp://127.0.0.1:*");
    source_.run = "fake";
    source_.host = "host";
    source_.pid = 1;
    source_.instanceId = 7;
    source_.startTime = std::chrono::system_clock::now();
  }
  ~FakeSource() {
    zmq_close(xpub_);
    if (router_ != nullptr) zmq_close(router_);
    zmq_ctx_term(context_);
  }

  std::string endpoint() const { return lastEndpoint(xpub_); }

  // Advertises the history until a request for it came (polling `subscriber` meanwhile).
  bool awaitRequest(Subscriber& subscriber, const SubscriberCallbacks& callbacks) {
    const std::string history = lastEndpoint(router_);
    return pollUntil(subscriber, callbacks, [&] {
      PublisherCounters counters;
      counters.timestamp = std::chrono::system_clock::now();
      counters.interval = 20ms;
      send(xpub_, {std::string(kHeartbeatTopic), encodeHeartbeatPayload(MessageKind::Heartbeat, source_, heartbeats_++, counters, history)});
      char id[256];
      const int size = zmq_recv(router_, id, sizeof id, ZMQ_DONTWAIT);
      if (size < 0) return false;
      reader_.assign(id, static_cast<std::size_t>(size));
      int more = 1;
      while (more) {
        char frame[1024];
        zmq_recv(router_, frame, sizeof frame, 0);
        std::size_t length = sizeof more;
        zmq_getsockopt(router_, ZMQ_RCVMORE, &more, &length);
      }
      return true;
    });
  }
  // One "step" event with the next sequence number, in the answer or live.
  void answerStep() { send(router_, {reader_, "step", step()}); }
  void answerEnd(const HistoryEnd& end) { send(router_, {reader_, std::string(kHistoryTopic), encodeHistoryEnd(end)}); }
  void publishStep() { send(xpub_, {"step", step()}); }
  // The history server goes away mid-answer; the source goes on publishing.
  void killHistory() {
    zmq_close(router_);
    router_ = nullptr;
  }

 private:
  static std::string lastEndpoint(void* socket) {
    char text[256];
    std::size_t size = sizeof text;
    zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, text, &size);
    return text;
  }
  static void send(void* socket, const std::vector<std::string>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      zmq_send(socket, frames[i].data(), frames[i].size(), i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
    }
  }
  std::string step() { return encodeEventsPayload(source_, steps_++, "step", {makeEvent("step", {})}); }

  void* context_ = zmq_ctx_new();
  void* xpub_ = zmq_socket(context_, ZMQ_XPUB);
  void* router_ = zmq_socket(context_, ZMQ_ROUTER);
  SourceInfo source_;
  std::string reader_;
  uint64_t heartbeats_ = 0;
  uint64_t steps_ = 0;
};

// Issue 29, item 11: the history server dies mid-answer. The reader says so once its timeout
// passes (on its clock) and goes on live: what was held back meanwhile, then what comes.
TEST(History, WhenTheHistoryServerDiesMidAnswerTheReaderSaysSoAndGoesOnLive) {
  FakeSource source;
  ManualClock clock;
  SubscriberOptions options = withHistory(source.endpoint());
  options.clock = &clock;
  Subscriber subscriber(options);
  Collected collected;
  const auto callbacks = collected.callbacks();
  ASSERT_TRUE(source.awaitRequest(subscriber, callbacks));
  for (int i = 0; i < 3; ++i) source.answerStep();
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return collected.sequences.size() == 3; }));
  source.killHistory();
  for (int i = 0; i < 3; ++i) source.publishStep();
  // Held back while the history is awaited; nothing is reported before the timeout.
  subscriber.poll(50ms, callbacks);
  EXPECT_TRUE(collected.histories.empty());
  clock.advance(options.historyTimeout + 1s);
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return collected.sequences.size() == 6; }));
  ASSERT_EQ(collected.histories.size(), 1u);
  EXPECT_EQ(collected.histories.front().outcome, HistoryOutcome::Failed);
  EXPECT_NE(collected.histories.front().error.find("stopped"), std::string::npos) << collected.histories.front().error;
  EXPECT_EQ(collected.histories.front().messages, 3u);
  EXPECT_EQ(collected.sequences, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(collected.fromHistory, (std::vector<bool>{true, true, true, false, false, false}));
  source.publishStep();
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return collected.sequences.size() == 7; })) << "live goes on";
}

// Issue 29, item 11: the reader past the server's maximum is told "busy" and goes on live.
TEST(History, AReaderToldBusyReportsItAndGoesOnLive) {
  FakeSource source;
  Subscriber subscriber(withHistory(source.endpoint()));
  Collected collected;
  const auto callbacks = collected.callbacks();
  ASSERT_TRUE(source.awaitRequest(subscriber, callbacks));
  source.publishStep();
  HistoryEnd busy;
  busy.error = "busy";
  source.answerEnd(busy);
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return !collected.histories.empty() && collected.sequences.size() == 1; }));
  EXPECT_EQ(collected.histories.front().outcome, HistoryOutcome::Refused);
  EXPECT_EQ(collected.histories.front().error, "busy");
  source.publishStep();
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return collected.sequences.size() == 2; }));
  EXPECT_EQ(collected.sequences, (std::vector<uint64_t>{0, 1}));
}

}  // namespace
}  // namespace livemon::transport
