#include "source_table.h"

#include <algorithm>
#include <array>
#include <utility>

#include "payload_hash.h"

namespace livemon::transport::detail {

SourceTable::SourceTable(SourceTableLimits limits, Clock& clock, SubscriberStats& stats)
    : limits_(limits), clock_(clock), stats_(stats) {}

SourceTable::Source& SourceTable::sourceFor(const SourceInfo& info, const std::shared_ptr<const std::string>& endpoint,
                                            std::chrono::steady_clock::time_point now,
                                            std::vector<Delivery>& deliveries) {
  auto found = sources_.find(info);
  if (found != sources_.end()) {
    sourceOrder_.splice(sourceOrder_.end(), sourceOrder_, found->second.inOrder);
    return found->second;
  }
  countWorld(info, +1);
  while (!sourceOrder_.empty() && sources_.size() >= sourceLimit()) forgetSource(*sourceOrder_.front());
  auto [inserted, unused] = sources_.try_emplace(info);
  Source& source = inserted->second;
  source.key = &inserted->first;
  source.inOrder = sourceOrder_.insert(sourceOrder_.end(), &source);
  source.status.source = std::make_shared<const SourceInfo>(info);
  source.status.firstSeen = now;
  ++stats_.sourcesJoined;
  deliveries.emplace_back(SourceChange{source.status.source, SourceState::Alive, true, endpoint});
  return source;
}

// The topic's state, made the most recently heard; a new topic may push out the one heard from
// longest ago, of this source or of all.
SourceTable::Topic& SourceTable::topicFor(Source& source, const std::string& name) {
  auto found = source.topics.find(name);
  if (found != source.topics.end()) {
    Topic& topic = found->second;
    source.topicOrder.splice(source.topicOrder.end(), source.topicOrder, topic.inSource);
    topicOrder_.splice(topicOrder_.end(), topicOrder_, topic.inAll);
    return topic;
  }
  if (source.topics.size() >= limits_.maxTopicsPerSource) {
    forgetTopic(source, source.topics.find(*source.topicOrder.front()));
  }
  while (!topicOrder_.empty() && topicOrder_.size() >= topicLimit()) {
    const TopicRef oldest = topicOrder_.front();
    forgetTopic(*oldest.source, oldest.source->topics.find(*oldest.name));
  }
  auto [inserted, unused] = source.topics.try_emplace(name);
  Topic& topic = inserted->second;
  topic.inSource = source.topicOrder.insert(source.topicOrder.end(), &inserted->first);
  topic.inAll = topicOrder_.insert(topicOrder_.end(), TopicRef{&source, &inserted->first});
  return topic;
}

void SourceTable::forgetTopic(Source& source, std::unordered_map<std::string, Topic>::iterator topic) {
  source.topicOrder.erase(topic->second.inSource);
  topicOrder_.erase(topic->second.inAll);
  source.topics.erase(topic);
  ++stats_.topicsEvicted;
}

void SourceTable::forgetSource(Source& source) {
  for (auto& [name, topic] : source.topics) topicOrder_.erase(topic.inAll);
  sourceOrder_.erase(source.inOrder);
  countWorld(*source.key, -1);
  sources_.erase(*source.key);
  ++stats_.sourcesEvicted;
}

std::size_t SourceTable::sourceLimit() const noexcept {
  const std::size_t cap = std::max(limits_.maxSources, limits_.maxRankedSources);
  return std::min(cap, limits_.maxSources + worldRanks_);
}

std::size_t SourceTable::topicLimit() const noexcept {
  // Both factors are bounded by the limits (sourceLimit() <= maxRankedSources).
  return std::max<std::size_t>(1, limits_.maxTopics * sourceLimit() / std::max<std::size_t>(1, limits_.maxSources));
}

void SourceTable::countWorld(const SourceInfo& info, int change) {
  if (!info.worldSize || *info.worldSize < 1) return;
  // Anything past the cap raises nothing further; clamping keeps the sum from overflowing.
  const auto world = static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(*info.worldSize), limits_.maxRankedSources));
  auto run = worlds_.find(info.run);
  if (run == worlds_.end()) {
    if (change < 0) return;
    run = worlds_.try_emplace(info.run).first;
  }
  std::map<int64_t, std::size_t>& sizes = run->second;
  const auto largest = [&sizes] { return sizes.empty() ? std::size_t{0} : static_cast<std::size_t>(sizes.rbegin()->first); };
  worldRanks_ -= largest();
  if (change > 0) {
    ++sizes[world];
  } else if (const auto found = sizes.find(world); found != sizes.end() && --found->second == 0) {
    sizes.erase(found);
  }
  worldRanks_ += largest();
  if (sizes.empty()) worlds_.erase(run);
}

bool SourceTable::acceptSource(Source& source, MessageKind kind, const PublisherCounters& counters,
                               const std::shared_ptr<const std::string>& endpoint,
                               std::chrono::steady_clock::time_point now, std::vector<Delivery>& deliveries) {
  SourceStatus& s = source.status;
  s.lastSeen = now;
  s.endpoint = endpoint;
  if (kind == MessageKind::Goodbye) {
    ++stats_.heartbeats;
    s.lastCounters = counters;
    s.state = SourceState::Gone;
    deliveries.emplace_back(SourceChange{s.source, SourceState::Gone, false, endpoint});
    return true;
  }
  if (s.state != SourceState::Alive) {
    s.state = SourceState::Alive;
    deliveries.emplace_back(SourceChange{s.source, SourceState::Alive, false, endpoint});
  }
  if (kind == MessageKind::Heartbeat) {
    ++stats_.heartbeats;
    s.lastHeartbeat = now;
    s.lastCounters = counters;
    return true;
  }
  return false;
}

std::size_t SourceTable::accept(WireMessage& message, std::string_view payload,
                                const std::shared_ptr<const std::string>& endpoint, Origin origin,
                                std::vector<Delivery>& deliveries) {
  const auto now = clock_.now();
  Source& source = sourceFor(message.source, endpoint, now, deliveries);
  if (acceptSource(source, message.kind, message.counters, endpoint, now, deliveries)) return 0;
  return deliverEvents(source, message.name, message.sequence, message.events.size(), payloadHash(payload), origin,
                       deliveries, [&](uint64_t i, const SourceStatus& s, uint64_t sequence, auto wallNow) {
                         auto& received =
                             std::get<ReceivedEvent>(deliveries.emplace_back(std::in_place_type<ReceivedEvent>));
                         received.event = std::move(message.events[i]);
                         received.source = s.source;
                         received.sequence = sequence;
                         received.endpoint = endpoint;
                         received.receivedAt = wallNow;
                         received.fromHistory = origin == Origin::History;
                       });
}

std::size_t SourceTable::accept(const EventBatchView& message, uint32_t batch,
                                const std::shared_ptr<const std::string>& endpoint, Origin origin,
                                std::vector<Delivery>& deliveries) {
  const auto now = clock_.now();
  Source& source = sourceFor(message.source(), endpoint, now, deliveries);
  if (acceptSource(source, message.kind(), message.counters(), endpoint, now, deliveries)) return 0;
  name_.assign(message.name());
  return deliverEvents(source, name_, message.sequence(), message.size(), payloadHash(message.payload()), origin,
                       deliveries, [&](uint64_t i, const SourceStatus& s, uint64_t sequence, auto wallNow) {
                         // The event after the last one lent extends its run.
                         if (!deliveries.empty()) {
                           if (auto* run = std::get_if<LentRun>(&deliveries.back());
                               run != nullptr && run->batch == batch && run->index + run->count == i &&
                               run->sequence + run->count == sequence) {
                             ++run->count;
                             return;
                           }
                         }
                         auto& lent = std::get<LentRun>(deliveries.emplace_back(std::in_place_type<LentRun>));
                         lent.source = s.source;
                         lent.endpoint = endpoint;
                         lent.receivedAt = wallNow;
                         lent.sequence = sequence;
                         lent.batch = batch;
                         lent.index = static_cast<uint32_t>(i);
                         lent.count = 1;
                         lent.fromHistory = origin == Origin::History;
                       });
}

// A remembered message the same as this one makes it a duplicate; one of its topic overlapping it
// with other numbers or bytes makes it a conflict (and is remembered afresh, so that it stays
// while the real source is inside its numbers); none at all leaves the numbers to the older rule.
SourceTable::Overlap SourceTable::judgeOverlap(Source& source, const Remembered& message) {
  bool conflict = false;
  std::array<std::size_t, 8> touched{};
  std::size_t touchedCount = 0;
  const std::size_t size = source.recent.size();
  for (std::size_t i = 0; i < size; ++i) {
    const Remembered& r = source.recent[i];
    if (r.topic != message.topic || r.end <= message.first || message.end <= r.first) continue;
    if (r.first == message.first && r.end == message.end && r.hash == message.hash) return Overlap::SameMessage;
    conflict = true;
    // Its age: how many messages were remembered after it.
    const std::size_t age = (source.recentNext + size - i - 1) % size;
    if (age >= kRememberedMessages / 2 && touchedCount < touched.size()) touched[touchedCount++] = i;
  }
  for (std::size_t i = 0; i < touchedCount; ++i) remember(source, Remembered(source.recent[touched[i]]));
  return conflict ? Overlap::Conflict : Overlap::Duplicate;
}

void SourceTable::remember(Source& source, const Remembered& message) {
  if (source.recent.size() < kRememberedMessages) {
    source.recent.push_back(message);
    source.recentNext = source.recent.size() % kRememberedMessages;
    return;
  }
  source.recent[source.recentNext] = message;
  source.recentNext = (source.recentNext + 1) % kRememberedMessages;
}

template <typename Deliver>
std::size_t SourceTable::deliverEvents(Source& source, const std::string& name, uint64_t first, uint64_t count,
                                       uint64_t hash, Origin origin, std::vector<Delivery>& deliveries,
                                       Deliver&& deliver) {
  SourceStatus& s = source.status;
  Topic& tracked = topicFor(source, name);
  if (count == 0) return 0;
  const uint64_t end = first + count;
  const SequenceRanges::Verdict verdict = tracked.delivered.classify(first, end);
  if (verdict.kind == SequenceRanges::Kind::Gap) {
    const uint64_t missed = first - verdict.missingFrom;
    ++s.gaps;
    ++stats_.gaps;
    s.missedEvents += missed;
    stats_.missedEvents += missed;
    deliveries.emplace_back(GapInfo{s.source, name, verdict.missingFrom, first});
  } else if (verdict.kind == SequenceRanges::Kind::Restart) {
    ++s.sequenceResets;
    ++stats_.sequenceResets;
  }
  // Only numbers already delivered are duplicates, and only in the same message again (one
  // publisher reached over two endpoints, a history answer overlapping the live stream).
  const Remembered remembered{payloadHash(name), first, end, hash};
  const bool someSeen = tracked.delivered.overlaps(first, end);
  const Overlap overlap = someSeen ? judgeOverlap(source, remembered) : Overlap::Duplicate;
  if (overlap != Overlap::SameMessage) remember(source, remembered);
  const auto wallNow = clock_.wallNow();
  uint64_t delivered = 0;
  uint64_t seam = 0;
  uint64_t conflicts = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (someSeen && tracked.delivered.contains(first + i)) {
      if (overlap == Overlap::Conflict) {
        ++conflicts;
      } else {
        // Live events that came in a history answer too overlap its end: the seam, not duplicates.
        if (first + i < tracked.historyEnd) ++seam;
        continue;
      }
    }
    deliver(i, s, first + i, wallNow);
    tracked.lastSequence = first + i;
    ++delivered;
  }
  tracked.delivered.add(first, end);
  stats_.historyOverlap += seam;
  stats_.conflicts += conflicts;
  s.duplicates += count - delivered - seam;
  stats_.duplicates += count - delivered - seam;
  if (origin == Origin::History) {
    stats_.historyEvents += delivered;
    tracked.historyEnd = std::max(tracked.historyEnd, end);
  }
  s.events += delivered;
  stats_.events += delivered;
  return delivered;
}

void SourceTable::checkStaleness(std::vector<Delivery>& deliveries) {
  const auto now = clock_.now();
  for (auto& [info, source] : sources_) {
    SourceStatus& s = source.status;
    if (s.state == SourceState::Alive && now - s.lastSeen > limits_.staleAfter) {
      s.state = SourceState::Stale;
      deliveries.emplace_back(SourceChange{s.source, SourceState::Stale, false, s.endpoint});
    }
  }
}

std::vector<SourceStatus> SourceTable::statuses() const {
  std::vector<SourceStatus> result;
  result.reserve(sources_.size());
  for (const auto& [info, source] : sources_) {
    SourceStatus& status = result.emplace_back(source.status);
    for (const auto& [name, topic] : source.topics) {
      if (topic.lastSequence) status.lastSequence.emplace(name, *topic.lastSequence);
    }
  }
  return result;
}

}  // namespace livemon::transport::detail
