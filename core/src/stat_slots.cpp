#include "stat_slots.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include <livemon/detail/fork_hooks.h>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "stat_state.h"

namespace livemon::detail {

constinit thread_local ThreadSlotEntry* t_slotEntries = nullptr;
constinit thread_local uint32_t t_slotEntryCount = 0;
bool g_asymmetricFence = false;

namespace {

// Thread-safety: one per thread (thread_local), used only by its thread (and by the fork child
// hook, which runs on the thread that forked).
//
// The calling thread's slots, with the Stats that own them held weakly. At the thread's exit each
// slot still alive is handed back to its Stat, whose next close merges what is left in it.
struct ThreadSlotTable {
  std::vector<ThreadSlotEntry> entries;
  std::vector<std::weak_ptr<StatState>> owners;

  ~ThreadSlotTable();
};

thread_local bool t_tableGone = false;
thread_local ThreadSlotTable t_table;

ThreadSlotTable::~ThreadSlotTable() {
  t_tableGone = true;
  t_slotEntries = nullptr;
  t_slotEntryCount = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].slot == nullptr) continue;
    // Alive, the Stat still owns the slot (it frees a slot only after its owner exited).
    if (auto state = owners[i].lock(); state && state->serial() == entries[i].serial) {
      entries[i].slot->ownerExited.store(true, std::memory_order_release);
    }
  }
}

// Thread-safe: every member under `mutex`.
//
// Stat ids, reused after a Stat is destroyed so thread tables stay as long as the most Stats
// alive at once. Never destroyed: threads may exit during static destruction.
struct StatIds {
  std::mutex mutex;
  std::vector<uint32_t> free;  // guarded by mutex
  uint32_t next = 0;           // guarded by mutex
};
StatIds& statIds() {
  static StatIds* ids = new StatIds;
  return *ids;
}

std::atomic<uint64_t> g_nextSerial{1};

// In a forked child, on the thread that forked: its slots belong to the child's process now, so
// closes there wait for its adds again (other threads' slots stay inherited, merged and freed).
void restampThreadSlotsInChild() noexcept {
  if (t_slotEntries == nullptr) return;
  const uint64_t generation = forkGeneration();
  for (std::size_t i = 0; i < t_table.entries.size(); ++i) {
    if (t_table.entries[i].slot == nullptr) continue;
    if (auto state = t_table.owners[i].lock(); state && state->serial() == t_table.entries[i].serial) {
      t_table.entries[i].slot->generation.store(generation, std::memory_order_relaxed);
    }
  }
}

#if defined(__linux__) && !defined(LIVEMON_STAT_TSAN)
long membarrier(int command) noexcept { return syscall(__NR_membarrier, command, 0u, 0); }
#endif

}  // namespace

void StatAccumulator::merge(const StatAccumulator& other) noexcept {
  if (other.count == 0) return;
  if (count == 0) {
    *this = other;
    return;
  }
  // sum over other's samples of (x - shift) = other.shiftedSum + n * d, and of its square.
  const double d = other.shift - shift;
  const double n = static_cast<double>(other.count);
  shiftedSquares += other.shiftedSquares + 2 * d * other.shiftedSum + n * d * d;
  shiftedSum += other.shiftedSum + n * d;
  count += other.count;
  sum += other.sum;
  min = std::min(min, other.min);
  max = std::max(max, other.max);
}

void heavyFence() noexcept {
#if defined(LIVEMON_STAT_TSAN)
  // The epoch's store and the slots' loads are sequentially consistent there.
#elif defined(__linux__)
  if (!g_asymmetricFence) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return;
  }
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  // Registration is per process and survives fork; should it ever be missing, register again, and
  // as a last resort wait for every CPU (slow, but adds rely on it).
  if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
    return;
  }
  (void)membarrier(MEMBARRIER_CMD_GLOBAL);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

void waitForSlotAdd(const StatSlot& slot) noexcept {
  const uint64_t seq = slot.seq.load(std::memory_order_seq_cst);
  if ((seq & 1) == 0) return;
  // An add is a few nanoseconds of plain stores (longer only if the quantile sketch grows); a
  // long wait means its thread was descheduled inside it.
  for (int spins = 0; slot.seq.load(std::memory_order_seq_cst) == seq; ++spins) {
    if (spins >= 64) std::this_thread::yield();
  }
}

uint32_t acquireStatId() noexcept {
  StatIds& ids = statIds();
  std::lock_guard lock(ids.mutex);
  if (!ids.free.empty()) {
    const uint32_t id = ids.free.back();
    ids.free.pop_back();
    return id;
  }
  return ids.next++;
}

void releaseStatId(uint32_t id) noexcept {
  StatIds& ids = statIds();
  std::lock_guard lock(ids.mutex);
  try {
    ids.free.push_back(id);
  } catch (const std::bad_alloc&) {
    // The id is not reused; thread tables grow by one entry more than they need.
  }
}

uint64_t nextStatSerial() noexcept { return g_nextSerial.fetch_add(1, std::memory_order_relaxed); }

void initSlotFences() noexcept {
  static const bool initialised = [] {
    (void)countForks();
    registerForkHooks(ForkStage::StatSlots, {.child = restampThreadSlotsInChild});
#if defined(__linux__) && !defined(LIVEMON_STAT_TSAN)
    const long supported = membarrier(MEMBARRIER_CMD_QUERY);
    g_asymmetricFence = supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
                        membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
#endif
    return true;
  }();
  (void)initialised;
}

bool registerThreadSlot(std::weak_ptr<StatState> state, uint32_t id, uint64_t serial,
                        StatSlot* slot) noexcept {
  if (t_tableGone) return false;
  try {
    ThreadSlotTable& table = t_table;
    if (table.entries.size() <= id) {
      const std::size_t size = std::max<std::size_t>(id + 1, table.entries.size() * 2);
      table.entries.resize(size);
      table.owners.resize(size);
    }
    table.entries[id] = ThreadSlotEntry{serial, slot};
    table.owners[id] = std::move(state);
    t_slotEntries = table.entries.data();
    t_slotEntryCount = static_cast<uint32_t>(table.entries.size());
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

StatSlotSet::StatSlotSet(bool quantiles) noexcept
    : quantiles_(quantiles), id_(acquireStatId()), serial_(nextStatSerial()) {
  initSlotFences();
}

StatSlotSet::~StatSlotSet() { releaseStatId(id_); }

StatSlot* StatSlotSet::makeMine(std::weak_ptr<StatState> owner) noexcept {
  StatSlot* slot = nullptr;
  try {
    auto made = std::make_unique<StatSlot>();
    if (quantiles_) {
      for (StatSlotBuffer& buffer : made->buffers) buffer.sketch = std::make_unique<QuantileSketch>();
    }
    made->generation.store(forkGeneration(), std::memory_order_relaxed);
    slot = made.get();
    std::lock_guard lock(mutex_);
    slots_.push_back(std::move(made));
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
  if (!registerThreadSlot(std::move(owner), id_, serial_, slot)) {
    slot->ownerExited.store(true, std::memory_order_release);  // empty: the next close frees it
    return nullptr;
  }
  return slot;
}

void StatSlotSet::collect(uint64_t ended, StatAccumulator& into, QuantileSketch* sketch) noexcept {
  heavyFence();
  const uint64_t generation = forkGeneration();
  std::lock_guard lock(mutex_);
  for (auto it = slots_.begin(); it != slots_.end();) {
    StatSlot& slot = **it;
    // A slot whose thread exited, or that a forked child inherited from another thread of its
    // parent, has no add to wait for (an inherited one may show an add in progress forever).
    const bool orphan = slot.ownerExited.load(std::memory_order_acquire) ||
                        slot.generation.load(std::memory_order_relaxed) != generation;
    if (!orphan) waitForSlotAdd(slot);
    StatSlotBuffer& buffer = slot.buffers[ended & 1];
    if (const int64_t count = buffer.count(); count > 0) {
      StatAccumulator part = buffer.values;
      part.count = count;
      into.merge(part);
      buffer.clear();
    }
    if (buffer.sketch && !buffer.sketch->empty()) {
      try {
        if (sketch != nullptr) sketch->merge(*buffer.sketch);
      } catch (const std::bad_alloc&) {
        // Out of memory: this slot's quantiles are lost for the window, its other values are not.
      }
      buffer.sketch->clear();
    }
    if (orphan && slot.buffers[(ended + 1) & 1].count() == 0) {
      it = slots_.erase(it);
    } else {
      ++it;
    }
  }
}

int64_t StatSlotSet::count(uint64_t epoch) const noexcept {
  std::lock_guard lock(mutex_);
  int64_t total = 0;
  for (const auto& slot : slots_) total += slot->buffers[epoch & 1].count();
  return total;
}

}  // namespace livemon::detail
