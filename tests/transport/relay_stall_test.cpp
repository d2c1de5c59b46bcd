// A relay whose subscribers stop reading. Each such subscriber's queue holds the messages it was
// sent last, so several that stop at different times hold different ones, and together they could
// fill what all queues may hold, after which the relay dropped every message for everybody. The
// relay cuts a connection that takes nothing for RelayOptions::maxStall, which lets go of what
// its queue held. Subscribers speaking ZMTP over plain TCP play the stalled ones: they subscribe
// and never read again.
#include <livemon/transport/relay.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/subscriber.h>

#include "peer_guard.h"
#include "raw_subscriber.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::connectTo;
using test::loopbackRelayOptions;
using test::makeEvent;

// The least maxQueuedBytes a relay takes: all queues together hold at most 4 MiB.
constexpr std::size_t kBudget = 1024 * 1024;
constexpr int kHighWaterMark = 100;
// Messages of some 4.9 KB, within the budget's small half (kBudget / 2 / kHighWaterMark bytes
// each), so they are never refused for their size. A stalled queue at the relay holds 65 to 100
// of them (libzmq counts what its reader took in steps of half the queue): some 320 KB, so
// sixteen hold more than all queues may. Incompressible, as real data mostly is.
constexpr std::size_t kPadBytes = 4800;
constexpr int kStalled = 16;
// What a stalled subscriber takes before its queue at the relay fills: what its kernel and the
// relay's buffer (up to 4 MiB on loopback), then the queue, in messages.
constexpr uint64_t kFillMessages = 1200;
constexpr auto kMaxStall = 500ms;
// Messages sent before the reader is polled for them.
constexpr int kBurst = 20;

SourceInfo loadSource() {
  SourceInfo source;
  source.run = "stall";
  source.host = "here";
  source.pid = 7;
  source.instanceId = 0x5a11;
  source.startTime = fromWireTime(1'700'000'000'000'000'000);
  return source;
}

RelayOptions stallOptions() {
  RelayOptions options = loopbackRelayOptions();
  options.historyBytes = 0;
  options.highWaterMark = kHighWaterMark;
  options.maxQueuedBytes = kBudget;
  options.maxStall = kMaxStall;
  return options;
}

// `size` printable bytes that do not compress.
std::string noise(std::size_t size) {
  std::mt19937 random(29);
  std::string text(size, ' ');
  for (char& c : text) c = static_cast<char>('!' + random() % 90);
  return text;
}

PayloadPublisherOptions publisherTo(const Relay& relay) {
  PayloadPublisherOptions options;
  options.connect = {relay.listenEndpoint()};
  options.sendHighWaterMark = 0;  // the publisher keeps everything: the relay decides
  return options;
}

// Not thread-safe: the test thread drives it.
// "load" messages of some 5 KB from one source, numbered, and a reader that counts those it gets.
class LoadStream {
 public:
  LoadStream(PayloadPublisher& publisher, Subscriber& reader) : publisher_(publisher), reader_(reader) {
    callbacks_.onEvent = [this](ReceivedEvent& event) {
      if (event.event.name == "load") ++received_;
    };
  }

  // Until the reader gets one: then its subscription has reached the publisher.
  bool sync() {
    uint64_t sequence = 0;
    return test::sendUntilReceived(publisher_, reader_, loadSource(), "sync", sequence);
  }
  std::string next() {
    return encodeEventsPayload(loadSource(), sent_, "load",
                               {makeEvent("load", {{"pad", pad_}, {"i", static_cast<int64_t>(sent_)}})});
  }
  void sendOne() {
    publisher_.send("load", next());
    ++sent_;
  }
  // Sends `count` messages, a burst at a time, polling the reader until it has each burst before
  // the next; false as soon as it misses one.
  bool send(int count) {
    for (int done = 0; done < count; done += kBurst) {
      for (int i = 0; i < kBurst; ++i) sendOne();
      if (!test::pollUntil(reader_, callbacks_, [&] { return received_ >= sent_; }, 5s)) return false;
    }
    return true;
  }
  // Takes whatever waits at the reader.
  void poll() { reader_.poll(1ms, callbacks_); }
  uint64_t sent() const { return sent_; }
  uint64_t received() const { return received_; }

 private:
  PayloadPublisher& publisher_;
  Subscriber& reader_;
  SubscriberCallbacks callbacks_;
  std::string pad_ = noise(kPadBytes);
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
};

// Sixteen subscribers stop reading one after another, each while others still hold their queues;
// together they would hold more than all queues may (4 MiB here). Each is cut about
// maxStall after it stopped, so a reader that keeps reading gets every message throughout, and
// once they are gone the relay holds next to nothing.
TEST(RelayStall, SubscribersThatStopReadingOneAfterAnotherAreCutAndAReaderGetsEverything) {
  Relay relay(stallOptions());
  PayloadPublisher publisher(publisherTo(relay));
  Subscriber reader(connectTo({relay.serveEndpoint()}));
  LoadStream stream(publisher, reader);
  ASSERT_TRUE(stream.sync());
  ASSERT_LE(4 + stream.next().size(), kBudget / 2 / kHighWaterMark) << "a message beyond the small half";

  std::vector<std::unique_ptr<test::RawSubscriber>> stalled;
  uint64_t mostHeld = 0;
  for (int i = 0; i < kStalled; ++i) {
    stalled.push_back(std::make_unique<test::RawSubscriber>(relay.serveEndpoint()));
    ASSERT_TRUE(stalled.back()->open() && stalled.back()->subscribe(""));
    // Long enough for its queue to fill (its kernel buffers first, then kHighWaterMark messages
    // at the relay), and a fraction of maxStall, so several hold theirs at once.
    const auto next = std::chrono::steady_clock::now() + kMaxStall / 2;
    const uint64_t from = stream.sent();
    while (std::chrono::steady_clock::now() < next || stream.sent() < from + kFillMessages) {
      const bool gotAll = stream.send(kBurst);
      const RelayStats stats = relay.stats();
      mostHeld = std::max(mostHeld, stats.queuedBytes);
      if (gotAll) continue;
      FAIL() << "with " << i + 1 << " subscribers stopped, the reader got " << stream.received() << " of "
             << stream.sent() << " messages; the relay dropped " << stats.queueDropped << " and holds "
             << stats.queuedBytes << " bytes";
    }
  }
  ASSERT_TRUE(test::waitUntil([&] {
    stream.poll();
    return relay.stats().subscribersCut >= kStalled;
  })) << relay.stats().subscribersCut << " of " << kStalled << " stalled subscribers cut";
  for (const auto& subscriber : stalled) EXPECT_TRUE(subscriber->waitUntilClosed(5s));
  ASSERT_TRUE(stream.send(3 * kHighWaterMark));

  const RelayStats stats = relay.stats();
  EXPECT_EQ(stats.subscribersCut, static_cast<uint64_t>(kStalled)) << "the reader was cut too";
  EXPECT_EQ(stats.queueDropped, 0u);
  // About three at a time held theirs (some 1 MB); all queues may hold 4 MiB.
  EXPECT_LT(mostHeld, 2 * kBudget) << "the most the relay held";
  EXPECT_EQ(reader.stats().missedEvents, 0u);
  EXPECT_EQ(stream.received(), stream.sent());
  // Only what is on its way to the reader, which has taken everything sent.
  EXPECT_LT(stats.queuedBytes, kBudget / 8) << "bytes the relay still holds";
}

// A Subscriber whose owner stops polling fills its receive queue, then the relay's queue for it;
// the relay cuts it. When its owner polls again it has connected again, and what it missed
// meanwhile is a gap it counts.
TEST(RelayStall, ACutSubscriberConnectsAgainAndCountsWhatItMissed) {
  Relay relay(stallOptions());
  PayloadPublisher publisher(publisherTo(relay));
  Subscriber careless(connectTo({relay.serveEndpoint()}, /*receiveHighWaterMark=*/10));
  LoadStream stream(publisher, careless);
  ASSERT_TRUE(stream.sync());
  ASSERT_TRUE(stream.send(kBurst));

  // It does not poll while the messages come.
  ASSERT_TRUE(test::waitUntil([&] {
    for (int i = 0; i < kBurst; ++i) stream.sendOne();
    return relay.stats().subscribersCut >= 1;
  }));
  const uint64_t cutAt = stream.sent();
  // What it still held arrives; then what came after it connected again.
  uint64_t last = 0;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) {
    if (event.event.name == "load") last = std::max(last, event.sequence);
  };
  EXPECT_TRUE(test::waitUntil([&] {
    stream.sendOne();
    careless.poll(1ms, callbacks);
    return last >= cutAt;
  })) << "nothing arrived after the cut";
  const SubscriberStats stats = careless.stats();
  EXPECT_GE(stats.gaps, 1u);
  EXPECT_GT(stats.missedEvents, 0u);
  EXPECT_EQ(relay.stats().subscribersCut, 1u);
}

// A reader that keeps up is never cut however long nothing comes, nor one whose owner does not
// poll for a while when its receive queue has room: only bytes waiting at the relay, none taken,
// count as a stall.
TEST(RelayStall, AReaderThatKeepsUpOrIdlesIsNotCut) {
  Relay relay(stallOptions());
  PayloadPublisher publisher(publisherTo(relay));
  Subscriber reader(connectTo({relay.serveEndpoint()}));
  LoadStream stream(publisher, reader);
  ASSERT_TRUE(stream.sync());
  ASSERT_TRUE(stream.send(kHighWaterMark));
  // Nothing but the relay's own reports for a while; the reader does not poll meanwhile (its
  // receive queue takes them).
  EXPECT_FALSE(test::waitUntil([&] { return relay.stats().subscribersCut > 0; }, 3 * kMaxStall));
  ASSERT_TRUE(stream.send(kHighWaterMark));
  EXPECT_EQ(relay.stats().subscribersCut, 0u);
  EXPECT_EQ(reader.stats().missedEvents, 0u);
}

using detail::SendProgress;
using Time = std::chrono::steady_clock::time_point;

// The rule the relay cuts by, on a clock of the test's own: stalled once bytes have waited in the
// connection's send queue for maxStall with none of them acknowledged by the peer.
TEST(RelayStall, AConnectionStallsOnlyWhileBytesWaitAndNoneIsTaken) {
  const Time start{};
  SendProgress progress;
  // Nothing waits: never stalled.
  EXPECT_FALSE(progress.stalled(100, 0, start, kMaxStall));
  EXPECT_FALSE(progress.stalled(100, 0, start + 10 * kMaxStall, kMaxStall));
  // Bytes wait from here on, none acknowledged.
  EXPECT_FALSE(progress.stalled(100, 5000, start + 10 * kMaxStall, kMaxStall));
  EXPECT_FALSE(progress.stalled(100, 5000, start + 11 * kMaxStall - 1ms, kMaxStall));
  EXPECT_TRUE(progress.stalled(100, 5000, start + 11 * kMaxStall, kMaxStall));
  // The peer takes a byte: the time starts again.
  EXPECT_FALSE(progress.stalled(101, 5000, start + 12 * kMaxStall - 1ms, kMaxStall));
  EXPECT_FALSE(progress.stalled(101, 5000, start + 13 * kMaxStall - 2ms, kMaxStall));
  EXPECT_TRUE(progress.stalled(101, 5000, start + 13 * kMaxStall - 1ms, kMaxStall));
  // The queue empties: the time starts again when bytes wait once more.
  EXPECT_FALSE(progress.stalled(101, 0, start + 14 * kMaxStall, kMaxStall));
  EXPECT_FALSE(progress.stalled(101, 10, start + 15 * kMaxStall, kMaxStall));
  EXPECT_FALSE(progress.stalled(101, 10, start + 16 * kMaxStall - 1ms, kMaxStall));
  EXPECT_TRUE(progress.stalled(101, 10, start + 16 * kMaxStall, kMaxStall));
  // 0: never.
  SendProgress off;
  EXPECT_FALSE(off.stalled(0, 10, start, 0ms));
  EXPECT_FALSE(off.stalled(0, 10, start + 1h, 0ms));
}

}  // namespace
}  // namespace livemon::transport
