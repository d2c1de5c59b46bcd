#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <livemon/event.h>
#include <livemon/transport/publisher_metrics.h>
#include <livemon/transport/wire_format.h>

// Only transport/src (and tests) include this header.
namespace livemon::transport::detail {

// Thread-safe: offer() may be called from any thread; deliver() and sourceAlive() from one
// thread at a time (the publisher's I/O thread); the rest from any thread.
//
// A Publisher's Stat events on their way to its metrics sink (PublisherMetrics: the Prometheus
// exporter), as events, before anything encodes them: the logging threads copy each Stat event
// into a slot of a bounded set, reused from event to event so a steady run allocates nothing new;
// the I/O thread takes the filled slots in one swap and hands each event to the sink. So the
// sink's lock and map work run on the I/O thread only, and nothing decodes what the publisher
// sends. The slots are guarded by a flag that offer() tries a few times and never waits on.
// Overflow: when `capacity` events wait, or the flag stays taken (another thread is copying, or
// the I/O thread swapping), the event is dropped for the sink and counted in droppedCount(); the
// publisher still sends it.
class MetricsFeed {
 public:
  static constexpr std::size_t kDefaultCapacity = 4096;

  explicit MetricsFeed(std::shared_ptr<PublisherMetrics> sink, std::size_t capacity = kDefaultCapacity);
  MetricsFeed(const MetricsFeed&) = delete;
  MetricsFeed& operator=(const MetricsFeed&) = delete;

  // Copies a Stat event for the sink (other events are not its business: false, not counted).
  // Never waits and never throws; false when the event was dropped.
  bool offer(const Event& event) noexcept;
  // Hands the waiting events to the sink as `source`'s, oldest first; how many it handed. A sink
  // that throws loses that event, not the publisher.
  std::size_t deliver(const SourceInfo& source) noexcept;
  // The publisher sent a heartbeat: its source is alive.
  void sourceAlive(const SourceInfo& source) noexcept;

  // Events offered and not yet delivered.
  std::size_t waiting() const noexcept { return waiting_.load(std::memory_order_acquire); }
  uint64_t droppedCount() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  uint16_t port() const noexcept { return sink_->port(); }

 private:
  bool tryLock() noexcept;
  void unlock() noexcept { busy_.clear(std::memory_order_release); }

  const std::shared_ptr<PublisherMetrics> sink_;
  const std::size_t capacity_;
  std::atomic_flag busy_;
  std::vector<Event> filling_;  // under busy_; the first waiting_ are the events offered
  std::atomic<std::size_t> waiting_{0};  // written under busy_
  std::vector<Event> delivering_;  // deliver() only
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace livemon::transport::detail
