#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <livemon/aggregation.h>
#include <livemon/clock.h>
#include <livemon/event.h>
#include <livemon/detail/spin_lock.h>
#include <livemon/quantile_sketch.h>

#include "stat_slots.h"

namespace livemon::detail {

// Thread-safe: every member, from any thread. Lock order: closeMutex_, then lock_ or the slots'
// mutex; resultMutex_ on its own. No lock is held while handlers run.
//
// The shared state behind a Stat. The window scheduler holds it weakly, so a window closing on
// the scheduler's thread keeps it alive while the Stat object itself is destroyed.
//
// A Stat without maxSamples accumulates per thread (stat_slots.h): an add writes its thread's
// slot with plain stores and takes no lock. A Stat with maxSamples needs one count across
// threads, so its adds take lock_ and write open_ (as do adds from a thread whose slot could not
// be made). A close merges both.
class StatState : public std::enable_shared_from_this<StatState> {
 public:
  StatState(std::string name, std::vector<Aggregation> aggregations, std::chrono::milliseconds windowSize,
            int64_t maxSamples, Clock& clock);

  // The hot path: inlined into Stat::add, with every rare case (the thread's first add, the
  // window's first sample, the aggregations beyond the basic five) in a call at its end, so it
  // saves no register. A Stat with maxSamples never has slots, so mine() sends it to addSlow().
  void add(double value) noexcept {
    StatSlot* slot = slots_.mine();
    if (slot == nullptr) [[unlikely]] return addSlow(value);
    // Only this thread writes the slot's sequence number: one load serves both of its stores.
    const uint64_t seq = slot->seq.load(std::memory_order_relaxed);
    const uint64_t epoch = beginSlotAdd(*slot, seq, slots_.epoch());
    StatSlotBuffer& buffer = slot->buffers[epoch & 1];
    StatAccumulator& w = buffer.values;
    const bool first = buffer.firstSeq.load(std::memory_order_relaxed) == StatSlotBuffer::kEmpty;
    if (first) [[unlikely]] buffer.firstSeq.store(seq, std::memory_order_relaxed);
    buffer.lastSeq.store(seq, std::memory_order_relaxed);
    // One sum, in the order the values came: a window's sum and mean are bit for bit those of
    // torch.monitor's Stat for the same samples (test_parity.py); two alternating lanes would
    // save a nanosecond and round differently.
    w.sum += value;
    w.min = value < w.min ? value : w.min;
    w.max = value > w.max ? value : w.max;
    if (extras_ || first) [[unlikely]] return addRest(*slot, seq, epoch, first, value);
    endSlotAdd(*slot, seq);
  }
  int64_t count() const noexcept;
  uint64_t serial() const noexcept { return slots_.serial(); }
  std::map<Aggregation, double> get() const;
  int64_t droppedCount() const noexcept { return dropped_.load(std::memory_order_relaxed); }

  enum class CloseReason {
    Scheduled,  // the window's time is up: a new window starts, the cap is lifted
    Flush,      // flush(): a new window starts now
    Cap,        // maxSamples reached: later adds in this window are dropped until it ends
    Destroy,    // the Stat is going away
  };
  void close(CloseReason reason) noexcept { close(reason, {}); }
  // The scheduler's close of the window that ends at `deadline`; ignored when the window was
  // rescheduled since (setWindowSize).
  void closeScheduledWindow(std::chrono::steady_clock::time_point deadline) noexcept {
    close(CloseReason::Scheduled, deadline);
  }

  // Closes the open window now (logging it if it holds samples) and makes the windows after it
  // `size` long, aligned to multiples of `size`. `size` is at least 1 ms (the caller checks).
  void setWindowSize(std::chrono::milliseconds size) noexcept;
  std::chrono::milliseconds windowSize() const noexcept {
    return std::chrono::milliseconds(windowMs_.load(std::memory_order_relaxed));
  }

  const std::string name_;
  const std::vector<Aggregation> aggregations_;
  const int64_t maxSamples_;

 private:
  // The rest of an add on the calling thread's slot: the variance sums, the quantile sketch, the
  // last value; then, on the thread's first sample of the window, the window's close.
  void addRest(StatSlot& slot, uint64_t seq, uint64_t epoch, bool first, double value) noexcept;
  void addSlow(double value) noexcept;
  void close(CloseReason reason, std::chrono::steady_clock::time_point deadline) noexcept;
  // Schedules the close of the window of `epoch`, unless one is scheduled or it has ended.
  void arm(uint64_t epoch) noexcept;
  std::map<Aggregation, double> compute(const StatAccumulator& window, double last,
                                        const QuantileSketch* sketch) const;

  Clock& clock_;
  std::vector<std::string> keys_;  // "<name>.<aggregation>", parallel to aggregations_
  bool wantVariance_ = false;
  bool wantQuantiles_ = false;
  bool wantLast_ = false;
  bool extras_ = false;   // any of the three above
  const bool perThread_;  // no maxSamples

  StatSlotSet slots_;
  mutable SpinLock lock_;
  StatAccumulator open_;                    // guarded by lock_
  bool capped_ = false;                     // guarded by lock_
  std::atomic<bool> armed_{false};          // written under lock_: a close is scheduled
  std::chrono::steady_clock::time_point armedDeadline_;  // guarded by lock_: for that close
  std::atomic<int64_t> windowMs_;
  std::unique_ptr<QuantileSketch> sketch_;  // guarded by lock_; null without quantiles
  std::atomic<int64_t> dropped_{0};

  std::mutex closeMutex_;                  // serialises closes
  std::unique_ptr<QuantileSketch> spare_;  // guarded by closeMutex_: the sketch being read out

  mutable std::mutex resultMutex_;
  std::map<Aggregation, double> last_;  // guarded by resultMutex_
};

}  // namespace livemon::detail
