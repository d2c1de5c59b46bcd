#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "sequence_ranges.h"

// The Subscriber's record of the sources it hears. No ZeroMQ: only transport/src and the
// transport tests include this header.
namespace livemon::transport::detail {

// Thread-safety: a plain value type. Events a poll lends (SubscriberCallbacks::onEventView):
// `count` consecutive events of one of the messages it decoded (EventBatchDecoder::held), from
// its `index`-th on, with what a ReceivedEvent says besides the event. One entry per message
// delivered whole, not one per event.
struct LentRun {
  std::shared_ptr<const SourceInfo> source;
  std::shared_ptr<const std::string> endpoint;
  std::chrono::system_clock::time_point receivedAt;
  uint64_t sequence = 0;  // of its first event
  uint32_t batch = 0;
  uint32_t index = 0;
  uint32_t count = 0;
  bool fromHistory = false;
  bool wholeMessage = false;
};

// What one poll() hands to the callbacks, in order.
using Delivery = std::variant<ReceivedEvent, SourceChange, GapInfo, HistoryStatus, LentRun>;

// Where a message came from, which decides how its overlaps count: events that came both in a
// history answer and live are the seam, not duplicates.
enum class Origin { Live, History, Released };

// Thread-safety: a plain value type. The bounds of a SourceTable (SubscriberOptions' meanings).
struct SourceTableLimits {
  std::chrono::milliseconds staleAfter{3000};
  std::size_t maxSources = 1024;
  std::size_t maxTopicsPerSource = 1024;
  std::size_t maxTopics = 16384;
  std::size_t maxRankedSources = 4096;
};

// Not thread-safe: one owner at a time (the Subscriber uses it under its state lock).
//
// Per source (a publisher's identity): when it was first and last heard, whether it is alive,
// stale or gone, its last heartbeat and counters, and per topic the sequence numbers delivered, so
// that gaps, duplicates (one publisher reached over two endpoints), late numbers and the seam
// between a history answer and the live stream are told apart. A number too far off to be believed
// restarts the topic's numbering (SequenceRanges), so a forged far-ahead number does not silence
// the real source. Pure logic on an injected clock: staleness is measured with clock.now(), and
// events are stamped with clock.wallNow().
//
// A duplicate is the same message again: numbers already delivered are skipped only when the
// message is one remembered (same topic, same numbers, same payload hash), or when no remembered
// message of the topic covers them (delivered longer ago than remembered). A message claiming
// delivered numbers with different bytes, such as a forger's batch ahead of the real source or
// the real source's events after one, is delivered and counted as a conflict. Per source the last
// kRememberedMessages messages are remembered (32 bytes each); one a conflict touched is
// remembered afresh once it is older than half of them.
//
// Memory is bounded: beyond sourceLimit() the source silent longest is forgotten; beyond
// maxTopicsPerSource or topicLimit() the topic heard from longest ago (its next message starts it
// afresh, uncounted as a gap). sourceLimit() is maxSources plus the world size each run remembered
// says it has (SourceInfo::worldSize: a run of 1 024 ranks through a relay is all kept), never
// more than maxRankedSources, so a peer claiming huge worlds or inventing runs gains nothing past
// that cap; topicLimit() grows in the same proportion. The counters it keeps are those of SubscriberStats that concern
// sources (events, heartbeats, gaps, duplicates, resets, joins, evictions, history).
class SourceTable {
 public:
  // `clock` and `stats` must outlive the table; it adds to `stats`.
  SourceTable(SourceTableLimits limits, Clock& clock, SubscriberStats& stats);
  SourceTable(const SourceTable&) = delete;
  SourceTable& operator=(const SourceTable&) = delete;

  static constexpr std::size_t kRememberedMessages = 1024;

  // Takes one decoded message heard on `endpoint` (its events are moved from), `payload` the bytes
  // it was decoded from, and appends what it means to `deliveries`: a source joining or coming
  // back, a gap, the events not delivered before. Returns the events delivered. The events'
  // sequence numbers must not run past 2^64.
  std::size_t accept(WireMessage& message, std::string_view payload, const std::shared_ptr<const std::string>& endpoint,
                     Origin origin, std::vector<Delivery>& deliveries);
  // The same for a message decoded borrowed, the `batch`-th held: its events are appended as
  // LentRuns.
  std::size_t accept(const EventBatchView& message, uint32_t batch, const std::shared_ptr<const std::string>& endpoint,
                     Origin origin, std::vector<Delivery>& deliveries);

  // Marks every alive source silent for longer than staleAfter stale (a change appended once).
  void checkStaleness(std::vector<Delivery>& deliveries);

  // Every source remembered, with the last sequence number delivered per topic.
  std::vector<SourceStatus> statuses() const;
  std::size_t size() const noexcept { return sources_.size(); }
  std::size_t sourceLimit() const noexcept;
  std::size_t topicLimit() const noexcept;

 private:
  struct Source;
  // A topic in the order topics were last heard, over all sources.
  struct TopicRef {
    Source* source;
    const std::string* name;  // the key in source->topics
  };
  struct Topic {
    SequenceRanges delivered;
    std::optional<uint64_t> lastSequence;  // of the last event delivered
    uint64_t historyEnd = 0;               // past the highest number delivered from a history answer
    std::list<const std::string*>::iterator inSource;
    std::list<TopicRef>::iterator inAll;
  };
  // One event message delivered: its topic (hashed), numbers and payload hash.
  struct Remembered {
    uint64_t topic = 0;
    uint64_t first = 0;
    uint64_t end = 0;
    uint64_t hash = 0;
  };
  struct Source {
    SourceStatus status;              // lastSequence is filled in by statuses()
    const SourceInfo* key = nullptr;  // in sources_
    std::list<Source*>::iterator inOrder;
    std::unordered_map<std::string, Topic> topics;
    std::list<const std::string*> topicOrder;  // heard from longest ago first
    std::vector<Remembered> recent;            // a ring of at most kRememberedMessages
    std::size_t recentNext = 0;                // where the next one goes once the ring is full
  };
  // How a message whose numbers overlap delivered ones is taken.
  enum class Overlap { Duplicate, SameMessage, Conflict };

  Source& sourceFor(const SourceInfo& info, const std::shared_ptr<const std::string>& endpoint,
                    std::chrono::steady_clock::time_point now, std::vector<Delivery>& deliveries);
  Topic& topicFor(Source& source, const std::string& name);
  void forgetTopic(Source& source, std::unordered_map<std::string, Topic>::iterator topic);
  void forgetSource(Source& source);
  // What accept() does for a heartbeat or goodbye (true: nothing more to do) and for the source
  // of any message.
  bool acceptSource(Source& source, MessageKind kind, const PublisherCounters& counters,
                    const std::shared_ptr<const std::string>& endpoint, std::chrono::steady_clock::time_point now,
                    std::vector<Delivery>& deliveries);
  // Delivers events first .. first + count of topic `name` not delivered before, each through
  // deliver(i, source, sequence, wallNow) that appends it.
  template <typename Deliver>
  std::size_t deliverEvents(Source& source, const std::string& name, uint64_t first, uint64_t count, uint64_t hash,
                            Origin origin, std::vector<Delivery>& deliveries, Deliver&& deliver);
  static Overlap judgeOverlap(Source& source, const Remembered& message);
  static void remember(Source& source, const Remembered& message);
  // A remembered source of `info`'s run that says its world size joins (+1) or goes (-1).
  void countWorld(const SourceInfo& info, int change);

  const SourceTableLimits limits_;
  Clock& clock_;
  SubscriberStats& stats_;
  std::map<SourceInfo, Source> sources_;
  std::list<Source*> sourceOrder_;  // heard from longest ago first
  std::list<TopicRef> topicOrder_;  // over all sources, heard from longest ago first
  // Per run, the world sizes its remembered sources say, with how many say each; and the sum of
  // every run's largest (capped: see sourceLimit()).
  std::map<std::string, std::map<int64_t, std::size_t>, std::less<>> worlds_;
  std::size_t worldRanks_ = 0;
  std::string name_;  // a borrowed message's name, as the topics' keys are strings
};

}  // namespace livemon::transport::detail
