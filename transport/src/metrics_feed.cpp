#include "metrics_feed.h"

#include <stdexcept>
#include <thread>
#include <utility>

#include <livemon/value_key.h>

namespace livemon::transport::detail {

namespace {

// Tries at the flag before offer() gives up on an event. The holder copies one event or swaps two
// vectors, so it is gone within a few tries unless it was descheduled.
constexpr int kOfferTries = 64;

}  // namespace

MetricsFeed::MetricsFeed(std::shared_ptr<PublisherMetrics> sink, std::size_t capacity)
    : sink_(std::move(sink)), capacity_(capacity) {
  if (!sink_) throw std::invalid_argument("MetricsFeed: no sink");
  if (capacity_ < 1) throw std::invalid_argument("MetricsFeed: capacity must be at least 1");
}

bool MetricsFeed::tryLock() noexcept {
  for (int attempt = 0; attempt < kOfferTries; ++attempt) {
    if (!busy_.test_and_set(std::memory_order_acquire)) return true;
    std::this_thread::yield();
  }
  return false;
}

bool MetricsFeed::offer(const Event& event) noexcept {
  if (!isStatEventName(event.name)) return false;
  if (!tryLock()) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const std::size_t index = waiting_.load(std::memory_order_relaxed);
  bool kept = false;
  if (index < capacity_) {
    try {
      // Assigning into a used slot reuses its strings' and map's memory.
      if (index < filling_.size()) {
        filling_[index] = event;
      } else {
        filling_.push_back(event);
      }
      waiting_.store(index + 1, std::memory_order_release);
      kept = true;
    } catch (...) {  // out of memory: this event is lost for the sink
    }
  }
  unlock();
  if (!kept) dropped_.fetch_add(1, std::memory_order_relaxed);
  return kept;
}

std::size_t MetricsFeed::deliver(const SourceInfo& source) noexcept {
  if (waiting() == 0) return 0;
  while (busy_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  // The filled slots come here; the ones handed over last time go back for reuse.
  std::swap(filling_, delivering_);
  const std::size_t count = waiting_.exchange(0, std::memory_order_acq_rel);
  unlock();
  for (std::size_t i = 0; i < count; ++i) {
    try {
      sink_->observe(source, delivering_[i]);
    } catch (...) {  // the sink's lack of memory costs it this event
    }
  }
  return count;
}

void MetricsFeed::sourceAlive(const SourceInfo& source) noexcept {
  try {
    sink_->sourceAlive(source);
  } catch (...) {
  }
}

}  // namespace livemon::transport::detail
