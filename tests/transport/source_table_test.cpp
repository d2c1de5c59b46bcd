// SourceTable: the subscriber's per-source bookkeeping without ZeroMQ, on a ManualClock: joins,
// staleness (a polling thread descheduled for long included), gaps, duplicates, late and
// out-of-order numbers, forged numbers far ahead, the seam after a history answer, and the bounds.
#include "source_table.h"

#include <string>

#include <gtest/gtest.h>

#include <livemon/clock.h>

#include "payload_hash.h"

namespace livemon::transport::detail {
namespace {

using namespace std::chrono_literals;

SourceInfo sourceInfo(std::string run = "job", uint64_t instance = 1) {
  SourceInfo source;
  source.run = std::move(run);
  source.host = "host";
  source.pid = 42;
  source.instanceId = instance;
  return source;
}

WireMessage events(const SourceInfo& source, std::string name, uint64_t first, std::size_t count) {
  WireMessage message;
  message.kind = MessageKind::Events;
  message.source = source;
  message.sequence = first;
  message.name = std::move(name);
  for (std::size_t i = 0; i < count; ++i) {
    Event event;
    event.name = message.name;
    event.data["i"] = static_cast<int64_t>(first + i);
    message.events.push_back(std::move(event));
  }
  return message;
}

// A batch under `source`'s identity whose events are not the source's: other bytes.
WireMessage forged(const SourceInfo& source, std::string name, uint64_t first, std::size_t count) {
  WireMessage message = events(source, std::move(name), first, count);
  for (Event& event : message.events) event.data["forged"] = true;
  return message;
}

WireMessage control(const SourceInfo& source, MessageKind kind, uint64_t dropped = 0) {
  WireMessage message;
  message.kind = kind;
  message.source = source;
  message.counters.interval = 1000ms;
  message.counters.dropped = dropped;
  return message;
}

// A table on a manual clock, with the deliveries of the latest call.
class Table {
 public:
  explicit Table(SourceTableLimits limits = {}) : table_(limits, clock_, stats_) {}

  // Takes `message` with the payload it would be decoded from (the same message, the same bytes).
  std::size_t accept(WireMessage message, Origin origin = Origin::Live) { return acceptVia(std::move(message), endpoint_, origin); }
  std::size_t acceptVia(WireMessage message, const std::shared_ptr<const std::string>& endpoint,
                        Origin origin = Origin::Live) {
    deliveries_.clear();
    const std::string payload = message.kind == MessageKind::Events
                                    ? encodeEventsPayload(message.source, message.sequence, message.name, message.events)
                                    : std::string();
    return table_.accept(message, payload, endpoint, origin, deliveries_);
  }
  std::vector<SourceChange> checkStaleness() {
    deliveries_.clear();
    table_.checkStaleness(deliveries_);
    return changes();
  }
  std::vector<uint64_t> delivered() const {
    std::vector<uint64_t> sequences;
    for (const Delivery& d : deliveries_) {
      if (const auto* event = std::get_if<ReceivedEvent>(&d)) sequences.push_back(event->sequence);
    }
    return sequences;
  }
  std::vector<SourceChange> changes() const {
    std::vector<SourceChange> found;
    for (const Delivery& d : deliveries_) {
      if (const auto* change = std::get_if<SourceChange>(&d)) found.push_back(*change);
    }
    return found;
  }
  std::vector<GapInfo> gaps() const {
    std::vector<GapInfo> found;
    for (const Delivery& d : deliveries_) {
      if (const auto* gap = std::get_if<GapInfo>(&d)) found.push_back(*gap);
    }
    return found;
  }
  SourceStatus status(const SourceInfo& info) const {
    for (const SourceStatus& s : table_.statuses()) {
      if (*s.source == info) return s;
    }
    ADD_FAILURE() << "no such source";
    return {};
  }

  ManualClock clock_;
  SubscriberStats stats_;
  SourceTable table_;
  std::shared_ptr<const std::string> endpoint_ = std::make_shared<const std::string>("tcp://127.0.0.1:1");
  std::shared_ptr<const std::string> relay_ = std::make_shared<const std::string>("tcp://127.0.0.1:2");  // a second path
  std::vector<Delivery> deliveries_;
};

std::vector<uint64_t> range(uint64_t first, uint64_t end) {
  std::vector<uint64_t> numbers;
  for (uint64_t i = first; i < end; ++i) numbers.push_back(i);
  return numbers;
}

// The same bytes hash the same; any byte changed, or one more (even a zero), hashes otherwise.
TEST(PayloadHash, TellsBytesApartAtEveryPosition) {
  for (std::size_t size = 0; size <= 40; ++size) {
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(i * 37 + size);
    const uint64_t hash = payloadHash(bytes);
    EXPECT_EQ(payloadHash(std::string(bytes)), hash);
    EXPECT_NE(payloadHash(bytes + '\0'), hash) << size;
    for (std::size_t i = 0; i < size; ++i) {
      std::string changed = bytes;
      changed[i] = static_cast<char>(changed[i] ^ 1);
      EXPECT_NE(payloadHash(changed), hash) << size << " " << i;
    }
  }
}

TEST(SourceTable, AFirstMessageJoinsTheSourceAndDeliversItsEvents) {
  Table t;
  const SourceInfo job = sourceInfo();
  EXPECT_EQ(t.accept(events(job, "loss", 0, 3)), 3u);
  ASSERT_EQ(t.changes().size(), 1u);
  EXPECT_TRUE(t.changes()[0].joined);
  EXPECT_EQ(t.changes()[0].state, SourceState::Alive);
  EXPECT_EQ(*t.changes()[0].endpoint, "tcp://127.0.0.1:1");
  EXPECT_EQ(t.delivered(), range(0, 3));
  const auto& first = std::get<ReceivedEvent>(t.deliveries_.at(1));
  EXPECT_EQ(first.receivedAt, t.clock_.wallNow());
  EXPECT_FALSE(first.fromHistory);
  EXPECT_EQ(std::get<int64_t>(first.event.data.at("i")), 0);

  const SourceStatus status = t.status(job);
  EXPECT_EQ(status.events, 3u);
  EXPECT_EQ(status.lastSequence.at("loss"), 2u);
  EXPECT_EQ(status.firstSeen, t.clock_.now());
  EXPECT_EQ(t.stats_.sourcesJoined, 1u);
  EXPECT_EQ(t.stats_.events, 3u);
}

TEST(SourceTable, CountsAGapPerTopicOnce) {
  Table t;
  const SourceInfo job = sourceInfo();
  t.accept(events(job, "loss", 0, 5));
  t.accept(events(job, "lr", 0, 2));
  EXPECT_EQ(t.accept(events(job, "loss", 8, 2)), 2u);
  ASSERT_EQ(t.gaps().size(), 1u);
  EXPECT_EQ(t.gaps()[0].topic, "loss");
  EXPECT_EQ(t.gaps()[0].expected, 5u);
  EXPECT_EQ(t.gaps()[0].missed(), 3u);
  t.accept(events(job, "lr", 2, 1));  // the other topic follows on: no gap
  EXPECT_TRUE(t.gaps().empty());
  EXPECT_EQ(t.stats_.gaps, 1u);
  EXPECT_EQ(t.stats_.missedEvents, 3u);
  EXPECT_EQ(t.status(job).gaps, 1u);
}

TEST(SourceTable, SkipsTheSameMessageAgainAndCountsItsNumbersAsDuplicates) {
  Table t;
  const SourceInfo job = sourceInfo();
  t.accept(events(job, "loss", 0, 4));
  // The same batch over a second endpoint: duplicates.
  EXPECT_EQ(t.accept(events(job, "loss", 0, 4)), 0u);
  EXPECT_TRUE(t.gaps().empty());
  EXPECT_EQ(t.stats_.duplicates, 4u);
  EXPECT_EQ(t.status(job).duplicates, 4u);
  EXPECT_EQ(t.stats_.conflicts, 0u);
  // Another message claiming two of those numbers is no repeat of one delivered: its events are
  // delivered, the two numbers counted as conflicts.
  EXPECT_EQ(t.accept(events(job, "loss", 2, 4)), 4u);
  EXPECT_EQ(t.delivered(), range(2, 6));
  EXPECT_EQ(t.stats_.duplicates, 4u);
  EXPECT_EQ(t.stats_.conflicts, 2u);
  EXPECT_EQ(t.stats_.events, 8u);
}

// One publisher reached directly and through a relay: every message comes twice, the second path
// lagging; each repeat is dropped, even one so late that the table no longer remembers the message.
TEST(SourceTable, TheSameMessagesOverTwoEndpointsAreDeliveredOnce) {
  Table t;
  const SourceInfo job = sourceInfo();
  const uint64_t messages = 3 * SourceTable::kRememberedMessages;
  constexpr uint64_t kLag = 7;
  // The m-th message: three events, on two topics in turn.
  auto nth = [&](uint64_t m) { return events(job, m % 2 ? "loss" : "lr", 3 * (m / 2), 3); };
  uint64_t delivered = 0;
  for (uint64_t m = 0; m < messages + kLag; ++m) {
    if (m < messages) delivered += t.accept(nth(m));
    if (m >= kLag) {
      EXPECT_EQ(t.acceptVia(nth(m - kLag), t.relay_), 0u) << m;
    }
  }
  EXPECT_EQ(delivered, 3 * messages);
  // Long after: the table no longer remembers these messages, their numbers stay delivered.
  EXPECT_EQ(t.acceptVia(events(job, "lr", 0, 3), t.relay_), 0u);
  EXPECT_EQ(t.stats_.duplicates, 3 * messages + 3);
  EXPECT_EQ(t.stats_.conflicts, 0u);
  EXPECT_EQ(t.stats_.gaps, 0u);
}

// A peer posing as the source sends a batch claiming its next 20 000 numbers, delivered before the
// real events with them, and sends it again. The real source goes on one event a message, with
// messages on other topics in between (far more than the table remembers), and reaches a second
// endpoint too: every real event is delivered once, those the forger claimed counted as
// conflicts, the forger's repeats and the real repeats as duplicates.
TEST(SourceTable, AForgedBatchAheadWithOtherBytesDoesNotSilenceTheRealSource) {
  Table t;
  const SourceInfo job = sourceInfo();
  t.accept(events(job, "loss", 0, 10));
  EXPECT_EQ(t.accept(forged(job, "loss", 10, 20000)), 20000u);
  EXPECT_EQ(t.accept(forged(job, "loss", 10, 20000)), 0u);
  EXPECT_EQ(t.stats_.duplicates, 20000u);
  uint64_t real = 0;
  for (uint64_t n = 10; n < 20010; ++n) {
    const std::size_t got = t.accept(events(job, "loss", n, 1));
    EXPECT_EQ(got, 1u) << n;
    EXPECT_EQ(t.delivered(), std::vector<uint64_t>{n});
    real += got;
    if (n % 100 == 0) {
      EXPECT_EQ(t.acceptVia(events(job, "loss", n, 1), t.relay_), 0u) << n;
    }
    for (const char* other : {"lr", "acc", "grad"}) t.accept(events(job, other, n, 1));
  }
  EXPECT_EQ(real, 20000u);
  EXPECT_EQ(t.stats_.conflicts, 20000u);
  EXPECT_EQ(t.stats_.duplicates, 20000u + 200u);
  EXPECT_EQ(t.stats_.gaps, 0u);
  EXPECT_EQ(t.status(job).lastSequence.at("loss"), 20009u);
  // A second forged batch ahead, after all that: the same again.
  EXPECT_EQ(t.accept(forged(job, "loss", 20010, 5000)), 5000u);
  for (uint64_t n = 20010; n < 20020; ++n) EXPECT_EQ(t.accept(events(job, "loss", n, 1)), 1u) << n;
  EXPECT_EQ(t.stats_.conflicts, 20010u);
}

TEST(SourceTable, DeliversLateNumbersOutOfOrderOnceAndCountsTheGapOnce) {
  Table t;
  const SourceInfo job = sourceInfo();
  t.accept(events(job, "loss", 0, 10));
  t.accept(events(job, "loss", 20, 10));  // 10..19 have not come yet
  ASSERT_EQ(t.gaps().size(), 1u);
  EXPECT_EQ(t.accept(events(job, "loss", 10, 10)), 10u);  // they come late
  EXPECT_EQ(t.delivered(), range(10, 20));
  EXPECT_TRUE(t.gaps().empty());
  EXPECT_EQ(t.accept(events(job, "loss", 10, 10)), 0u);  // and again: duplicates now
  EXPECT_EQ(t.accept(events(job, "loss", 30, 1)), 1u);   // the stream goes on without a gap
  EXPECT_TRUE(t.gaps().empty());
  EXPECT_EQ(t.stats_.gaps, 1u);
  EXPECT_EQ(t.stats_.duplicates, 10u);
  EXPECT_EQ(t.status(job).lastSequence.at("loss"), 30u);
}

TEST(SourceTable, AForgedNumberFarAheadDoesNotSilenceTheRealSource) {
  Table t;
  const SourceInfo job = sourceInfo();
  t.accept(events(job, "loss", 0, 10));
  // A peer posing as the source, with a number far beyond any believable loss.
  EXPECT_EQ(t.accept(events(job, "loss", uint64_t{1} << 40, 1)), 1u);
  EXPECT_TRUE(t.gaps().empty());
  EXPECT_EQ(t.stats_.sequenceResets, 1u);
  // The real source goes on: delivered, neither duplicates nor a gap.
  for (uint64_t first = 10; first < 50; first += 10) {
    EXPECT_EQ(t.accept(events(job, "loss", first, 10)), 10u) << first;
    EXPECT_TRUE(t.gaps().empty());
  }
  EXPECT_EQ(t.stats_.duplicates, 0u);
  EXPECT_EQ(t.stats_.gaps, 0u);
  EXPECT_EQ(t.status(job).sequenceResets, 1u);
  EXPECT_EQ(t.stats_.events, 51u);
}

TEST(SourceTable, SourcesGoStaleOnceOnTheClockAndComeBackWithAMessage) {
  Table t({.staleAfter = 3000ms});
  const SourceInfo job = sourceInfo();
  t.accept(events(job, "loss", 0, 1));
  t.clock_.advance(3000ms);
  EXPECT_TRUE(t.checkStaleness().empty());  // not longer than staleAfter yet
  t.clock_.advance(1ms);
  auto changes = t.checkStaleness();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].state, SourceState::Stale);
  EXPECT_FALSE(changes[0].joined);
  EXPECT_TRUE(t.checkStaleness().empty());  // said once
  EXPECT_EQ(t.status(job).state, SourceState::Stale);

  t.accept(control(job, MessageKind::Heartbeat));
  ASSERT_EQ(t.changes().size(), 1u);
  EXPECT_EQ(t.changes()[0].state, SourceState::Alive);
  EXPECT_EQ(t.status(job).lastHeartbeat, t.clock_.now());
  EXPECT_EQ(t.stats_.sourcesJoined, 1u);
}

// The polling thread was descheduled for far longer than staleAfter while messages queued: they
// are taken before staleness is checked, so the source never looks stale, and the numbers
// following on count no gap.
TEST(SourceTable, ADescheduledPollerDoesNotMakeAnActiveSourceStale) {
  Table t({.staleAfter = 3000ms});
  const SourceInfo job = sourceInfo();
  t.accept(events(job, "loss", 0, 10));
  t.clock_.advance(std::chrono::minutes(10));
  EXPECT_EQ(t.accept(events(job, "loss", 10, 10)), 10u);
  EXPECT_TRUE(t.changes().empty());
  EXPECT_TRUE(t.gaps().empty());
  EXPECT_TRUE(t.checkStaleness().empty());
  EXPECT_EQ(t.status(job).state, SourceState::Alive);
  EXPECT_EQ(t.status(job).lastSeen, t.clock_.now());

  // A source that really fell silent during the jump is stale at once, the other not.
  const SourceInfo quiet = sourceInfo("quiet");
  t.accept(events(quiet, "loss", 0, 1));
  t.clock_.advance(std::chrono::minutes(10));
  t.accept(control(job, MessageKind::Heartbeat));
  const auto changes = t.checkStaleness();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(*changes[0].source, quiet);
}

TEST(SourceTable, AGoodbyeMarksTheSourceGoneAndItNeverGoesStale) {
  Table t({.staleAfter = 100ms});
  const SourceInfo job = sourceInfo();
  t.accept(events(job, "loss", 0, 1));
  t.accept(control(job, MessageKind::Goodbye, 7));
  ASSERT_EQ(t.changes().size(), 1u);
  EXPECT_EQ(t.changes()[0].state, SourceState::Gone);
  EXPECT_EQ(t.status(job).lastCounters->dropped, 7u);
  EXPECT_EQ(t.stats_.heartbeats, 1u);
  t.clock_.advance(1s);
  EXPECT_TRUE(t.checkStaleness().empty());
}

TEST(SourceTable, ARestartedPublisherIsANewSourceNotAGap) {
  Table t;
  t.accept(events(sourceInfo("job", 1), "loss", 0, 100));
  t.accept(events(sourceInfo("job", 2), "loss", 0, 5));
  ASSERT_EQ(t.changes().size(), 1u);
  EXPECT_TRUE(t.changes()[0].joined);
  EXPECT_EQ(t.delivered(), range(0, 5));
  EXPECT_EQ(t.stats_.gaps, 0u);
  EXPECT_EQ(t.stats_.duplicates, 0u);
  EXPECT_EQ(t.table_.size(), 2u);
}

TEST(SourceTable, LiveEventsThatCameInTheHistoryAreTheSeamNotDuplicates) {
  Table t;
  const SourceInfo job = sourceInfo();
  // The history answer: the messages as the source sent them.
  EXPECT_EQ(t.accept(events(job, "loss", 0, 8), Origin::History), 8u);
  EXPECT_TRUE(std::get<ReceivedEvent>(t.deliveries_.at(1)).fromHistory);
  EXPECT_EQ(t.accept(events(job, "loss", 8, 4), Origin::History), 4u);
  // Held back while the answer came: the answer's last message again, then the live stream.
  EXPECT_EQ(t.accept(events(job, "loss", 8, 4), Origin::Released), 0u);
  EXPECT_EQ(t.accept(events(job, "loss", 12, 2), Origin::Released), 2u);
  EXPECT_EQ(t.delivered(), range(12, 14));
  EXPECT_FALSE(std::get<ReceivedEvent>(t.deliveries_.at(0)).fromHistory);
  EXPECT_EQ(t.stats_.historyEvents, 12u);
  EXPECT_EQ(t.stats_.historyOverlap, 4u);
  EXPECT_EQ(t.stats_.duplicates, 0u);
  EXPECT_EQ(t.stats_.conflicts, 0u);
  // Past the history's end a repeat is a duplicate again.
  EXPECT_EQ(t.accept(events(job, "loss", 12, 2)), 0u);
  EXPECT_EQ(t.stats_.duplicates, 2u);
}

TEST(SourceTable, ForgetsTheLongestSilentSourceBeyondMaxSources) {
  Table t({.maxSources = 2});
  t.accept(events(sourceInfo("a"), "loss", 0, 1));
  t.accept(events(sourceInfo("b"), "loss", 0, 1));
  t.accept(events(sourceInfo("a"), "loss", 1, 1));  // b is now the one silent longest
  t.accept(events(sourceInfo("c"), "loss", 0, 1));
  EXPECT_EQ(t.table_.size(), 2u);
  EXPECT_EQ(t.stats_.sourcesEvicted, 1u);
  for (const SourceStatus& s : t.table_.statuses()) EXPECT_NE(s.source->run, "b");
  // b comes back as a new source.
  t.accept(events(sourceInfo("b"), "loss", 1, 1));
  ASSERT_EQ(t.changes().size(), 1u);
  EXPECT_TRUE(t.changes()[0].joined);
}

TEST(SourceTable, ForgetsTheTopicHeardFromLongestAgoBeyondItsLimits) {
  Table t({.maxTopicsPerSource = 2, .maxTopics = 3});
  const SourceInfo a = sourceInfo("a");
  const SourceInfo b = sourceInfo("b");
  t.accept(events(a, "one", 0, 1));
  t.accept(events(a, "two", 0, 1));
  t.accept(events(a, "one", 1, 1));
  t.accept(events(a, "three", 0, 1));  // "two" of a goes
  EXPECT_EQ(t.stats_.topicsEvicted, 1u);
  EXPECT_FALSE(t.status(a).lastSequence.contains("two"));
  // Starts afresh: a jump is no gap.
  t.accept(events(a, "two", 50, 1));
  EXPECT_TRUE(t.gaps().empty());
  EXPECT_EQ(t.stats_.topicsEvicted, 2u);  // "one" of a went for it
  t.accept(events(b, "x", 0, 1));
  t.accept(events(b, "y", 0, 1));  // a fourth in all: the oldest over all sources ("three" of a) goes
  EXPECT_EQ(t.stats_.topicsEvicted, 3u);
  EXPECT_FALSE(t.status(a).lastSequence.contains("three"));
  std::size_t topics = 0;
  for (const SourceStatus& s : t.table_.statuses()) topics += s.lastSequence.size();
  EXPECT_EQ(topics, 3u);
}

// A run that says it has 1 024 ranks (worldSize), reached through a relay (a source of its own):
// every rank and every topic of theirs stays, at the default limits that a run of 64 ranks is far
// within. The bound grows with the world sizes heard, never past maxRankedSources.
TEST(SourceTable, ARunOf1024RanksThroughARelayForgetsNothing) {
  Table t;
  constexpr int64_t kRanks = 1024;
  constexpr int kTopics = 20;
  SourceInfo relay = sourceInfo("relay");
  t.accept(control(relay, MessageKind::Heartbeat));
  for (int round = 0; round < 2; ++round) {
    for (int64_t r = 0; r < kRanks; ++r) {
      SourceInfo rank = sourceInfo("train", static_cast<uint64_t>(r + 10));
      rank.rank = r;
      rank.worldSize = kRanks;
      for (int topic = 0; topic < kTopics; ++topic) {
        t.accept(events(rank, "topic" + std::to_string(topic), static_cast<uint64_t>(round), 1));
      }
    }
    t.accept(control(relay, MessageKind::Heartbeat));
  }
  EXPECT_EQ(t.table_.size(), static_cast<std::size_t>(kRanks + 1));
  EXPECT_EQ(t.stats_.sourcesEvicted, 0u);
  EXPECT_EQ(t.stats_.topicsEvicted, 0u);
  EXPECT_EQ(t.stats_.gaps, 0u);
}

// A peer saying its run is huge (or inventing runs) raises the bound only up to maxRankedSources.
TEST(SourceTable, WorldSizesRaiseTheSourceBoundOnlyUpToItsCap) {
  Table t({.maxSources = 2, .maxTopicsPerSource = 4, .maxTopics = 4, .maxRankedSources = 5});
  for (uint64_t i = 0; i < 20; ++i) {
    SourceInfo liar = sourceInfo("run" + std::to_string(i), i + 1);
    liar.rank = 0;
    liar.worldSize = int64_t{1} << 40;
    t.accept(events(liar, "a", 0, 1));
    t.accept(events(liar, "b", 0, 1));
    t.accept(events(liar, "c", 0, 1));
    EXPECT_LE(t.table_.size(), 5u);
  }
  EXPECT_EQ(t.table_.size(), 5u);
  EXPECT_EQ(t.stats_.sourcesEvicted, 15u);
  std::size_t topics = 0;
  for (const SourceStatus& s : t.table_.statuses()) topics += s.lastSequence.size();
  EXPECT_EQ(topics, 10u) << "maxTopics scales with the sources allowed: 4 * 5 / 2";
  // Without world sizes the configured bound holds as before.
  Table plain({.maxSources = 2, .maxRankedSources = 5});
  for (uint64_t i = 0; i < 6; ++i) plain.accept(events(sourceInfo("p" + std::to_string(i), i + 1), "a", 0, 1));
  EXPECT_EQ(plain.table_.size(), 2u);
}

TEST(SourceTable, AHeartbeatKeepsTheCountersAndDeliversNothing) {
  Table t;
  const SourceInfo job = sourceInfo();
  EXPECT_EQ(t.accept(control(job, MessageKind::Heartbeat, 3)), 0u);
  EXPECT_EQ(t.delivered().size(), 0u);
  const SourceStatus status = t.status(job);
  EXPECT_EQ(status.lastCounters->dropped, 3u);
  EXPECT_EQ(status.lastCounters->interval, 1000ms);
  EXPECT_EQ(t.stats_.heartbeats, 1u);
  EXPECT_EQ(t.stats_.events, 0u);
}

}  // namespace
}  // namespace livemon::transport::detail
