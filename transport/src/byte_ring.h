#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <livemon/detail/spin_lock.h>

namespace livemon::transport::detail {

// Serializes producers for the length of one memcpy, which may be long (an event of up to a
// payload's 4 MiB): waiters spin longer than on a Stat's lock before yielding the CPU, which
// then happens only when the holder was descheduled mid-copy.
using CopyLock = livemon::detail::BasicSpinLock<4096>;

// Thread-safe: push() may be called from any thread; drain() from one consumer thread at a time.
//
// A bounded queue of variable-size byte records: many producers, one consumer. Producers take a
// spin lock that only covers a memcpy; the consumer takes no lock, so a producer never waits for
// the consumer's I/O. Policy when full: push() returns false and the record is not stored (the
// caller counts the drop).
class ByteRing {
 public:
  explicit ByteRing(std::size_t capacity)
      : capacity_(capacity), buffer_(std::make_unique<char[]>(capacity)) {}

  std::size_t capacity() const noexcept { return capacity_; }

  // Bytes stored and not yet drained (records plus their 4-byte length prefixes).
  std::size_t size() const noexcept {
    return static_cast<std::size_t>(head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire));
  }

  // Stores `record` (at most 4 GiB); false when it does not fit in the free space.
  bool push(std::string_view record) noexcept {
    const uint32_t length = static_cast<uint32_t>(record.size());
    const std::size_t needed = sizeof(length) + record.size();
    std::lock_guard lock(producerLock_);
    const uint64_t head = head_.load(std::memory_order_relaxed);
    // The consumer's position as last read: space it frees only grows, so the line it writes is
    // read again only when the space known so far is short.
    if (capacity_ - static_cast<std::size_t>(head - knownTail_) < needed) {
      knownTail_ = tail_.load(std::memory_order_acquire);
      if (capacity_ - static_cast<std::size_t>(head - knownTail_) < needed) return false;
    }
    // The offset kept beside the position: a 64-bit division costs as much as copying the record.
    const std::size_t offset = headOffset_;
    if (offset + needed <= capacity_) {
      std::memcpy(buffer_.get() + offset, &length, sizeof(length));
      std::memcpy(buffer_.get() + offset + sizeof(length), record.data(), record.size());
    } else {
      copyIn(head, &length, sizeof(length));
      copyIn(head + sizeof(length), record.data(), record.size());
    }
    headOffset_ = offset + needed >= capacity_ ? offset + needed - capacity_ : offset + needed;
    // Sequentially consistent, for WakeSignal: the consumer that checks emptyForSleeper() before
    // it sleeps either sees this record or is seen asleep. On x86 an xchg instead of a mov.
    head_.store(head + needed, std::memory_order_seq_cst);
    return true;
  }

  // For the consumer, after WakeSignal::prepareToSleep(): true when nothing is stored.
  bool emptyForSleeper() const noexcept {
    return head_.load(std::memory_order_seq_cst) == tail_.load(std::memory_order_relaxed);
  }

  // Hands the stored records, oldest first, to `onRecord(std::string_view)` until about
  // `budgetBytes` have been read, then frees their space. A view is valid only during its call.
  // Returns the number of records read.
  template <typename OnRecord>
  std::size_t drain(std::size_t budgetBytes, std::string& scratch, OnRecord&& onRecord) {
    const uint64_t head = head_.load(std::memory_order_acquire);
    const uint64_t start = tail_.load(std::memory_order_relaxed);
    uint64_t tail = start;
    std::size_t records = 0;
    while (tail != head && tail - start < budgetBytes) {
      uint32_t length = 0;
      copyOut(tail, &length, sizeof(length));
      const uint64_t begin = tail + sizeof(length);
      const std::size_t offset = static_cast<std::size_t>(begin % capacity_);
      if (offset + length <= capacity_) {
        onRecord(std::string_view(buffer_.get() + offset, length));
      } else {
        scratch.resize(length);
        copyOut(begin, scratch.data(), length);
        onRecord(std::string_view(scratch));
      }
      tail = begin + length;
      ++records;
    }
    tail_.store(tail, std::memory_order_release);
    return records;
  }

 private:
  void copyIn(uint64_t position, const void* data, std::size_t size) noexcept {
    const std::size_t offset = static_cast<std::size_t>(position % capacity_);
    const std::size_t first = std::min(size, capacity_ - offset);
    std::memcpy(buffer_.get() + offset, data, first);
    std::memcpy(buffer_.get(), static_cast<const char*>(data) + first, size - first);
  }
  void copyOut(uint64_t position, void* data, std::size_t size) const noexcept {
    const std::size_t offset = static_cast<std::size_t>(position % capacity_);
    const std::size_t first = std::min(size, capacity_ - offset);
    std::memcpy(data, buffer_.get() + offset, first);
    std::memcpy(static_cast<char*>(data) + first, buffer_.get(), size - first);
  }

  const std::size_t capacity_;
  std::unique_ptr<char[]> buffer_;
  alignas(64) CopyLock producerLock_;
  uint64_t knownTail_ = 0;  // under producerLock_: tail_ as a producer last read it, never ahead of it
  std::size_t headOffset_ = 0;  // under producerLock_: head_ % capacity_
  // Positions grow forever; a position's byte is buffer_[position % capacity_].
  alignas(64) std::atomic<uint64_t> head_{0};  // written by producers, under producerLock_
  alignas(64) std::atomic<uint64_t> tail_{0};  // written by the consumer
};

}  // namespace livemon::transport::detail
