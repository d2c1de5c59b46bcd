#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <livemon/transport/history_archive.h>
#include <livemon/transport/wire_format.h>

#include "kept_configs.h"

// Only transport/src includes this header.
namespace livemon::transport::detail {

// Not thread-safe: one owner at a time; owned by one thread (a publisher's I/O thread, a relay's
// worker).
//
// The event messages a source sent, as sent (topic and payload bytes), oldest first, within a
// byte bound: appending beyond it drops the oldest. What a late subscriber asks for to see the
// run from its start. Payloads are shared, so a message on its way to a subscriber stays valid
// after it is dropped here. Beside the bound it keeps each source's newest run config message
// (KeptConfigs), which an answer gives when the bound has dropped it.
class HistoryStore {
 public:
  using Entry = HistoryMessage;

  // An Entry::firstEventNs not known when the message was kept (see oldestEventNs()).
  static constexpr int64_t kUnknownTime = INT64_MIN;

  // Bookkeeping counted beside each message's bytes.
  static constexpr std::size_t kEntryOverhead = sizeof(Entry) + 64;

  // `limits` decode the config messages kept (KeptConfigs), at most maxBytes of them too.
  explicit HistoryStore(std::size_t maxBytes, const WireLimits& limits = {})
      : maxBytes_(maxBytes), configs_(std::min(maxBytes, KeptConfigs::kMaxBytes), limits) {}

  static std::size_t costOf(std::string_view topic, std::size_t payloadBytes) noexcept {
    return topic.size() + payloadBytes + kEntryOverhead;
  }

  // Keeps a message, dropping the oldest ones until it fits. A message larger than the whole
  // bound is not kept (and counts as dropped).
  void append(std::string_view topic, std::shared_ptr<const std::string> payload, int64_t firstEventNs, int64_t keptNs) {
    const std::size_t cost = costOf(topic, payload->size());
    if (cost > maxBytes_) {
      ++dropped_;
      keptAfterDrop_ = end();
      return;
    }
    while (bytes_ + cost > maxBytes_) dropOldest();
    entries_.push_back(Entry{std::string(topic), std::move(payload), firstEventNs, keptNs});
    bytes_ += cost;
    configs_.offer(end() - 1, entries_.back());
  }

  // Messages are numbered from 0 in the order appended; [begin(), end()) are still held.
  uint64_t begin() const noexcept { return first_; }
  uint64_t end() const noexcept { return first_ + entries_.size(); }
  const Entry& at(uint64_t index) const { return entries_[static_cast<std::size_t>(index - first_)]; }

  // The newest config message of each source, numbered as the messages are: those below begin()
  // were dropped from the messages held.
  const KeptConfigs& configs() const noexcept { return configs_; }

  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t maxBytes() const noexcept { return maxBytes_; }
  std::size_t messages() const noexcept { return entries_.size(); }
  // Messages dropped so far: to stay within the bound, or too large to keep.
  uint64_t dropped() const noexcept { return dropped_; }
  bool truncated() const noexcept { return dropped_ > 0; }
  std::optional<int64_t> oldestNs() const {
    if (entries_.empty()) return std::nullopt;
    return entries_.front().firstEventNs;
  }
  // When the oldest message held that was kept after every message dropped was kept: what came
  // before it may be missing here (it is in a recording made after keeping, if any), what came
  // after is held. INT64_MAX when nothing has been kept since the last drop.
  int64_t completeSinceNs() const {
    const uint64_t index = std::max(first_, keptAfterDrop_);
    return index < end() ? at(index).keptNs : INT64_MAX;
  }

 private:
  void dropOldest() {
    bytes_ -= costOf(entries_.front().topic, entries_.front().payload->size());
    entries_.pop_front();
    ++first_;
    ++dropped_;
  }

  const std::size_t maxBytes_;
  std::deque<Entry> entries_;
  std::size_t bytes_ = 0;
  uint64_t first_ = 0;
  uint64_t dropped_ = 0;
  uint64_t keptAfterDrop_ = 0;  // the first message kept after the last one too large to keep
  KeptConfigs configs_;
};

// Thread-safe: atomics. What a HistoryStore holds, updated by its owner after each change and read
// by stats() on any thread.
struct HistoryCounters {
  std::atomic<std::size_t> bytes{0};
  std::atomic<std::size_t> messages{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<std::size_t> configs{0};
  std::atomic<std::size_t> configBytes{0};
  std::atomic<uint64_t> configsDropped{0};

  void update(const HistoryStore& store) noexcept {
    bytes.store(store.bytes(), std::memory_order_relaxed);
    messages.store(store.messages(), std::memory_order_relaxed);
    dropped.store(store.dropped(), std::memory_order_relaxed);
    configs.store(store.configs().size(), std::memory_order_relaxed);
    configBytes.store(store.configs().bytes(), std::memory_order_relaxed);
    configsDropped.store(store.configs().dropped(), std::memory_order_relaxed);
  }
  // Into PublisherStats or RelayStats, which name them alike.
  template <typename Stats>
  void copyTo(Stats& stats) const noexcept {
    stats.historyBytes = bytes.load(std::memory_order_relaxed);
    stats.historyMessages = messages.load(std::memory_order_relaxed);
    stats.historyDropped = dropped.load(std::memory_order_relaxed);
    stats.historyConfigs = configs.load(std::memory_order_relaxed);
    stats.historyConfigBytes = configBytes.load(std::memory_order_relaxed);
    stats.historyConfigsDropped = configsDropped.load(std::memory_order_relaxed);
  }
};

}  // namespace livemon::transport::detail
