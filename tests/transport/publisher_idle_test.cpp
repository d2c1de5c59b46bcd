// The publisher's I/O thread while nothing is logged: it sleeps between heartbeats instead of
// checking its queue on a timer, and whatever comes while it sleeps (an event, a history request)
// wakes it, without waiting for the next heartbeat. Time is counted in the publisher's own
// heartbeats, so no test depends on how fast the machine is.
#include <livemon/transport/publisher.h>

#include <gtest/gtest.h>
#include <zmq.h>

#include <atomic>
#include <string>
#include <vector>

#include <livemon/event_handler.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::makeEvent;
using test::uniqueInproc;
using test::pollUntil;
using test::waitForSource;
using test::waitUntil;

TEST(PublisherIdle, WakesAboutOnceAHeartbeatWhenNothingIsLogged) {
  for (const SlowSubscriberPolicy policy : {SlowSubscriberPolicy::DropForThatSubscriber, SlowSubscriberPolicy::WaitForSlowest}) {
    const std::string endpoint = uniqueInproc();
    PublisherOptions options = test::testPublisherOptions(endpoint);
    options.heartbeatInterval = 50ms;
    options.slowSubscriber = policy;
    Publisher publisher(options);  // binds: it keeps history, so its history socket is watched too
    Subscriber subscriber(test::connectTo({endpoint}));
    ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));
    const PublisherStats before = publisher.stats();
    ASSERT_TRUE(waitUntil([&] { return publisher.stats().heartbeats >= before.heartbeats + 20; }));
    const PublisherStats after = publisher.stats();
    const uint64_t heartbeats = after.heartbeats - before.heartbeats;
    const uint64_t wakeups = after.ioWakeups - before.ioWakeups;
    // A loop that checked its queue every 2 ms woke 25 times a heartbeat here. Allowed: one wake
    // per heartbeat and one spare each, and the few short waits after the last work.
    EXPECT_LE(wakeups, 2 * heartbeats + 6) << "woke " << wakeups << " times in " << heartbeats << " heartbeats";
    EXPECT_GE(wakeups, heartbeats / 2) << "the counter counts";
  }
}

// The heartbeat interval is the longest allowed, so an event that waited for the heartbeat to be
// sent would arrive after it.
TEST(PublisherIdle, AnEventLoggedWhileItSleepsGoesOutBeforeTheNextHeartbeat) {
  const std::string endpoint = uniqueInproc();
  PublisherOptions options = test::testPublisherOptions(endpoint);
  options.heartbeatInterval = 1000ms;
  Publisher publisher(options);
  Subscriber subscriber(test::connectTo({endpoint}));
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity()));
  for (int round = 0; round < 3; ++round) {
    // Right after a heartbeat the thread has nothing to do until the next one: it sleeps.
    const uint64_t beat = publisher.stats().heartbeats;
    ASSERT_TRUE(waitUntil([&] { return publisher.stats().heartbeats > beat; }));
    const uint64_t heartbeatsBefore = publisher.stats().heartbeats;
    logEvent(makeEvent("woken", {{"round", int64_t{round}}}));
    std::vector<int64_t> rounds;
    SubscriberCallbacks callbacks;
    callbacks.onEvent = [&](ReceivedEvent& r) {
      if (r.event.name == "woken") rounds.push_back(std::get<int64_t>(r.event.data.at("round")));
    };
    ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return !rounds.empty(); }));
    EXPECT_EQ(rounds, std::vector<int64_t>{round});
    EXPECT_EQ(publisher.stats().heartbeats, heartbeatsBefore) << "the event waited for a heartbeat";
  }
}

// The I/O thread sends a due heartbeat before it serves history, so an answer that waited for
// the heartbeat's wake would come after one more heartbeat had been counted.
TEST(PublisherIdle, AHistoryRequestWakesItBeforeTheNextHeartbeat) {
  PublisherOptions options = test::testPublisherOptions();
  options.heartbeatInterval = 1000ms;
  Publisher publisher(options);
  ASSERT_FALSE(publisher.historyEndpoint().empty());
  for (int i = 0; i < 3; ++i) logEvent(makeEvent("kept", {{"i", int64_t{i}}}));
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == 3; }));
  // Usually one batch; a descheduled I/O thread may have sent them in two or three.
  const std::size_t batches = publisher.stats().historyMessages;
  ASSERT_GE(batches, 1u);

  void* context = zmq_ctx_new();
  void* dealer = zmq_socket(context, ZMQ_DEALER);
  int zero = 0;
  zmq_setsockopt(dealer, ZMQ_LINGER, &zero, sizeof zero);
  int receiveTimeout = 30000;
  zmq_setsockopt(dealer, ZMQ_RCVTIMEO, &receiveTimeout, sizeof receiveTimeout);
  ASSERT_EQ(zmq_connect(dealer, publisher.historyEndpoint().c_str()), 0);
  const std::string request = encodeHistoryRequest({});
  for (int round = 0; round < 3; ++round) {
    // Right after a heartbeat the thread has nothing to do until the next one: it sleeps.
    const uint64_t beat = publisher.stats().heartbeats;
    ASSERT_TRUE(waitUntil([&] { return publisher.stats().heartbeats > beat; }));
    const uint64_t heartbeatsBefore = publisher.stats().heartbeats;
    zmq_send(dealer, kHistoryTopic.data(), kHistoryTopic.size(), ZMQ_SNDMORE);
    zmq_send(dealer, request.data(), request.size(), 0);
    int kept = 0;
    while (true) {
      char topic[64];
      const int topicSize = zmq_recv(dealer, topic, sizeof topic, 0);
      ASSERT_GE(topicSize, 0) << "no answer";
      std::vector<char> payload(1 << 16);
      ASSERT_GE(zmq_recv(dealer, payload.data(), payload.size(), 0), 0);
      if (std::string_view(topic, static_cast<std::size_t>(topicSize)) == kHistoryTopic) break;
      ++kept;
    }
    EXPECT_EQ(static_cast<std::size_t>(kept), batches) << "every batch of the three events";
    EXPECT_EQ(publisher.stats().heartbeats, heartbeatsBefore) << "the answer waited for a heartbeat";
  }
  EXPECT_EQ(publisher.stats().historyRequests, 3u);
  zmq_close(dealer);
  zmq_ctx_term(context);
}

}  // namespace
}  // namespace livemon::transport
