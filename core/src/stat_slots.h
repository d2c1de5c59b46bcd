#pragma once

// Per-thread accumulation for Stats: each thread adds into a slot of its own with plain stores,
// and the thread closing a window merges every slot. What keeps the two apart without an atomic
// read-modify-write on the adding side:
//
//  - Each slot has two buffers; an add writes the one of the Stat's current window epoch
//    (epoch & 1). A close bumps the epoch first, so later adds go to the other buffer.
//  - An add marks itself in progress (the slot's sequence number odd) before it reads the epoch,
//    and done (even) after its last write. The close, after bumping the epoch, issues a
//    process-wide barrier (membarrier(2)) that orders every thread's mark before its read of the
//    epoch, then waits for each slot whose add is in progress. After that no add can still write
//    the old epoch's buffer, which the close reads and clears. Without membarrier (and under
//    ThreadSanitizer, which does not know it) the add pays a full fence instead.
//  - A thread that exits leaves its slot to the Stat: the next close merges what is left and frees
//    it. A forked child's copies of the parent's other threads' slots are merged the same way.

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include <livemon/quantile_sketch.h>

namespace livemon::detail {

class StatState;

#if defined(__SANITIZE_THREAD__)
#define LIVEMON_STAT_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LIVEMON_STAT_TSAN 1
#endif
#endif

// Not thread-safe: one owner at a time (a Stat's open window under its lock, a close's result).
//
// A window's accumulators. Min and max start at +/-infinity so NaN never enters them; variance
// sums are taken around the window's first value, which keeps them accurate for data far from
// zero.
struct StatAccumulator {
  int64_t count = 0;
  double sum = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double shift = 0;
  double shiftedSum = 0;
  double shiftedSquares = 0;

  // Adds another window's samples, re-centring its variance sums on this one's shift.
  void merge(const StatAccumulator& other) noexcept;
};

// Not thread-safe: one owner at a time: its thread, inside an add (sequence number odd), then a
// close, once every add has moved to the other epoch (see the file comment).
//
// One epoch's accumulators in a slot. An add carries no count from one add to the next (each
// such chain through memory costs a store-to-load forwarding): the count follows from the
// sequence numbers of the buffer's first and last adds, which are consecutive on the slot. The
// sequence numbers are atomic
// (relaxed: plain moves) so that Stat::count() may read them at any time.
struct StatSlotBuffer {
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  std::atomic<uint64_t> firstSeq{kEmpty};
  std::atomic<uint64_t> lastSeq{0};
  StatAccumulator values;  // values.count unused
  std::unique_ptr<QuantileSketch> sketch;  // null without quantiles

  int64_t count() const noexcept {
    const uint64_t first = firstSeq.load(std::memory_order_relaxed);
    const uint64_t last = lastSeq.load(std::memory_order_relaxed);
    // Read while the owner adds, the two may come from different moments: never negative.
    return first == kEmpty || last < first ? 0 : static_cast<int64_t>((last - first) / 2 + 1);
  }
  void clear() noexcept {
    values = StatAccumulator{};
    lastSeq.store(0, std::memory_order_relaxed);
    firstSeq.store(kEmpty, std::memory_order_relaxed);
  }
};

// Thread-safe: `seq` and `generation` are atomics; the buffers follow StatSlotBuffer's contract.
//
// One thread's accumulators for one Stat.
struct StatSlot {
  std::atomic<uint64_t> seq{0};         // odd while an add is in progress
  std::atomic<uint64_t> generation{0};  // forkGeneration() of the owner thread's process
  std::atomic<bool> ownerExited{false};
  StatSlotBuffer buffers[2];
};

// Thread-safety: a plain value type, in one thread's table.
struct ThreadSlotEntry {
  uint64_t serial = 0;  // the Stat's serial; 0 never matches
  StatSlot* slot = nullptr;
};

// The calling thread's slot table, indexed by a Stat's id (null or short before its first slot).
// Plain thread_locals, so the hot path reads them with no initialisation check.
extern thread_local constinit ThreadSlotEntry* t_slotEntries;
extern thread_local constinit uint32_t t_slotEntryCount;

// Whether closes issue membarrier(2) and adds only a compiler barrier. Set before the first Stat
// exists, never changed after.
extern bool g_asymmetricFence;

// The calling thread's slot of the Stat with `id` and `serial`, or null before its first add.
inline StatSlot* findThreadSlot(uint32_t id, uint64_t serial) noexcept {
  if (id >= t_slotEntryCount) return nullptr;
  const ThreadSlotEntry& entry = t_slotEntries[id];
  return entry.serial == serial ? entry.slot : nullptr;
}

// Enters an add on `slot` whose sequence number is `seq` (even) and returns the Stat's epoch it
// must write.
inline uint64_t beginSlotAdd(StatSlot& slot, uint64_t seq, const std::atomic<uint64_t>& epoch) noexcept {
#if defined(LIVEMON_STAT_TSAN)
  // ThreadSanitizer knows neither membarrier nor fences: sequentially consistent accesses.
  slot.seq.store(seq + 1, std::memory_order_seq_cst);
  return epoch.load(std::memory_order_seq_cst);
#else
  slot.seq.store(seq + 1, std::memory_order_relaxed);
  if (g_asymmetricFence) {
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the close's membarrier does the rest
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  return epoch.load(std::memory_order_acquire);
#endif
}

inline void endSlotAdd(StatSlot& slot, uint64_t seq) noexcept {
  slot.seq.store(seq + 2, std::memory_order_release);
}

// A close's side, after it has stored the new epoch: makes every add that read the old epoch
// visible as in progress (or finished).
void heavyFence() noexcept;

// Waits until the add in progress on `slot`, if any, has finished.
void waitForSlotAdd(const StatSlot& slot) noexcept;

// Thread-safe: every member, from any thread; adds follow the protocol of the file comment.
//
// A Stat's slots, one per thread that added to it, with the Stat's window epoch. Closes are
// serialised by the Stat (collect() never runs twice at once).
class StatSlotSet {
 public:
  explicit StatSlotSet(bool quantiles) noexcept;
  ~StatSlotSet();
  StatSlotSet(const StatSlotSet&) = delete;
  StatSlotSet& operator=(const StatSlotSet&) = delete;

  uint64_t serial() const noexcept { return serial_; }
  const std::atomic<uint64_t>& epoch() const noexcept { return epoch_; }

  // The calling thread's slot, or null before its first add.
  StatSlot* mine() const noexcept { return findThreadSlot(id_, serial_); }
  // Makes the calling thread's slot; null when memory runs out or the thread is exiting.
  StatSlot* makeMine(std::weak_ptr<StatState> owner) noexcept;

  // The value of the epoch's last add (Aggregation::Value): a plain store, so between threads
  // adding at once the last in the cache line's order wins.
  void storeLast(uint64_t epoch, double value) noexcept {
    last_[epoch & 1].store(value, std::memory_order_relaxed);
  }
  double last(uint64_t epoch) const noexcept { return last_[epoch & 1].load(std::memory_order_relaxed); }

  // Starts the next epoch and returns the one that ends. The caller holds the Stat's lock.
  uint64_t advanceEpoch() noexcept {
    const uint64_t ended = epoch_.load(std::memory_order_relaxed);
    epoch_.store(ended + 1, std::memory_order_seq_cst);
    return ended;
  }
  // After advanceEpoch(): waits out the adds still writing `ended`, adds every slot's samples of
  // it to `into` and `sketch` (when not null), clears them, and frees the slots of exited threads
  // once they are empty.
  void collect(uint64_t ended, StatAccumulator& into, QuantileSketch* sketch) noexcept;
  // Samples every slot holds for `epoch`.
  int64_t count(uint64_t epoch) const noexcept;

 private:
  const bool quantiles_;
  const uint32_t id_;
  const uint64_t serial_;
  std::atomic<uint64_t> epoch_{0};
  std::atomic<double> last_[2] = {};
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<StatSlot>> slots_;  // guarded by mutex_
};

// Process-wide Stat ids (small, reused, index the thread tables) and serials (never reused).
uint32_t acquireStatId() noexcept;
void releaseStatId(uint32_t id) noexcept;
uint64_t nextStatSerial() noexcept;

// Sets g_asymmetricFence once (registers with membarrier(2) when available).
void initSlotFences() noexcept;

// Enters `slot` of `state` (id, serial) in the calling thread's table, which keeps `state` weakly
// so the thread's exit can hand the slot back. False when memory runs out or the thread is
// exiting; the add then takes the Stat's lock instead.
bool registerThreadSlot(std::weak_ptr<StatState> state, uint32_t id, uint64_t serial,
                        StatSlot* slot) noexcept;

}  // namespace livemon::detail
