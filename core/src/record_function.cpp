// Ranges: the name table, the per-thread buffers they are written to, and range stats.
#include <livemon/record_function.h>

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <livemon/clock.h>
#include <livemon/detail/fork_hooks.h>

#include "range_clock.h"
#include "range_registry.h"
#include "stat_state.h"
#include "tick_calibration.h"

namespace livemon {
namespace detail {

std::atomic<uint32_t> g_rangeMode{0};

namespace {

// Thread-safety: a plain value type. One closed range, as its thread wrote it (times in ticks).
struct RangeRecord {
  int64_t startNs;
  int64_t endNs;
  uint32_t nameId;
  int32_t depth;
};

// Thread-safe for one writer (its thread) and one reader (the collector): the writer publishes
// each record by a release store of `count`, and a successor chunk by a release store of `next`,
// after which it never touches this chunk again; the reader frees it then. A block of records.
struct Chunk {
  static constexpr uint32_t kCapacity = 4096;
  std::atomic<uint32_t> count{0};
  std::atomic<Chunk*> next{nullptr};
  RangeRecord records[kCapacity];
};

// The most chunks a thread holds between two collections: 256 of 4096 ranges (24 MiB). A thread
// that records more in one profiling cycle drops its newest ranges and counts them, rather than
// growing without bound when a schedule's active steps are long or nothing collects.
constexpr uint32_t kMaxChunksPerThread = 256;

// Thread-safety: fields marked "writer" belong to the thread; "reader" fields to the collector,
// which holds the registry mutex.
//
// The ranges of one thread. A buffer outlives its thread until the collector has read it.
struct ThreadBuffer {
  explicit ThreadBuffer(Chunk* first) : writeChunk(first), readChunk(first) {}

  uint64_t threadId = 0;
  std::string name;                 // guarded by the registry mutex
  Chunk* writeChunk;                // writer
  uint32_t writeCount = 0;          // writer: records in writeChunk
  Chunk* readChunk;                 // reader
  uint32_t readCount = 0;           // reader: records of readChunk already read
  std::atomic<uint64_t> dropped{0};
  std::atomic<uint32_t> chunks{1};  // held; the writer adds, the reader subtracts what it frees
  std::atomic<bool> exited{false};  // set by the thread's exit, after its last write
};

// Thread-safe: `name` is complete before the entry's id is handed out and never changes; `stat`
// is atomic. A name and, once a range of that name was timed with stats on, its Stat's state
// (owned by the registry: its window can change, which a Stat's cannot).
struct NameEntry {
  std::string name;
  std::atomic<StatState*> stat{nullptr};
};

constexpr uint32_t kSegmentBits = 10;
constexpr uint32_t kSegmentSize = 1u << kSegmentBits;
constexpr uint32_t kSegments = 256;
constexpr uint32_t kMaxNames = kSegmentSize * kSegments;
constexpr uint32_t kFirstNameId = kOverflowNameId + 1;

// Segments of the name table, read without a lock: an id is handed out only after its entry
// is complete, and the segment pointer is published with a release store.
std::atomic<NameEntry*> g_nameSegments[kSegments] = {};

NameEntry& entryOf(uint32_t id) noexcept {
  return g_nameSegments[id >> kSegmentBits].load(std::memory_order_acquire)[id & (kSegmentSize - 1)];
}

thread_local ThreadBuffer* t_buffer = nullptr;
thread_local int32_t t_depth = 0;

// Thread-safety: stateless. Lets the name index be searched with a string_view.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// Thread-safe: every member may be called from any thread; the collector's work, the names and
// the buffers' list are serialised by `mutex_`, which the hot path takes only to register a new
// thread or name.
//
// Names, thread buffers and the mode flags. Never destroyed: threads that exit during static
// destruction, and fork hooks, still find it.
class RangeRegistry {
 public:
  static RangeRegistry& instance() {
    static RangeRegistry* registry = new RangeRegistry;
    return *registry;
  }

  uint32_t intern(std::string_view name) noexcept {
    std::lock_guard lock(mutex_);
    try {
      if (auto found = ids_.find(name); found != ids_.end()) return found->second;
      if (nextId_ >= kMaxNames) return kOverflowNameId;
      const uint32_t id = nextId_;
      addEntryLocked(id, std::string(name));
      ids_.emplace(std::string(name), id);
      ++nextId_;
      return id;
    } catch (const std::bad_alloc&) {
      return kOverflowNameId;
    }
  }

  StatState* createStat(uint32_t id) noexcept {
    std::lock_guard lock(mutex_);
    NameEntry& entry = entryOf(id);
    if (StatState* existing = entry.stat.load(std::memory_order_acquire)) return existing;
    try {
      // Owned by the registry for the life of the process, like the names.
      statOwners_.reserve(statOwners_.size() + 1);
      auto stat = std::make_shared<StatState>(std::string(kRangeStatPrefix) + entry.name,
                                              std::vector{Aggregation::Count, Aggregation::Mean, Aggregation::P50,
                                                          Aggregation::P99, Aggregation::Max},
                                              statWindow_, std::numeric_limits<int64_t>::max(), systemClock());
      statOwners_.push_back(stat);
      entry.stat.store(stat.get(), std::memory_order_release);
      if (!exitFlushRegistered_) {
        // Registered after whatever handler (a static Publisher) existed before the first range
        // Stat, so it runs before that handler's destruction; from C++ as from Python, whose
        // handlers are gone by then (the module's own exit hook flushed while they were there).
        exitFlushRegistered_ = std::atexit([] {
                                 try {
                                   flushRangeStats();
                                 } catch (const std::exception&) {  // no memory for the list: lost
                                 }
                               }) == 0;
      }
      return stat.get();
    } catch (const std::exception&) {
      return nullptr;  // out of memory: this range goes untimed
    }
  }

  std::vector<StatState*> stats() {
    std::vector<StatState*> all;
    std::lock_guard lock(mutex_);
    all.reserve(statOwners_.size());
    for (const auto& stat : statOwners_) all.push_back(stat.get());
    return all;
  }

  ThreadBuffer* registerThread() noexcept;
  void threadExited(ThreadBuffer* buffer) noexcept { buffer->exited.store(true, std::memory_order_release); }

  void setThreadName(std::string name) {
    ThreadBuffer* buffer = t_buffer != nullptr ? t_buffer : registerThread();
    if (buffer == nullptr) return;
    std::lock_guard lock(mutex_);
    buffer->name = std::move(name);
  }

  // Returns the Stats whose window is to become `window` (outside the lock: a resize logs).
  std::vector<StatState*> setExplicitStats(bool on, std::chrono::milliseconds window) {
    std::lock_guard lock(mutex_);
    explicitStats_ = on;
    publishModeLocked();
    std::vector<StatState*> resized;
    if (on && window != statWindow_) {
      statWindow_ = window;
      resized.reserve(statOwners_.size());
      for (const auto& stat : statOwners_) resized.push_back(stat.get());
    }
    return resized;
  }
  bool statsOn() noexcept {
    std::lock_guard lock(mutex_);
    return explicitStats_ || profilerStats_;
  }
  void setProfilerStats(bool on) noexcept {
    std::lock_guard lock(mutex_);
    profilerStats_ = on;
    publishModeLocked();
  }
  void setTrace(bool on) noexcept {
    std::lock_guard lock(mutex_);
    trace_ = on;
    publishModeLocked();
  }

  bool claim(const void* profiler) {
    std::lock_guard lock(mutex_);
    if (profiler_ != nullptr && profiler_ != profiler) return false;
    profiler_ = profiler;
    return true;
  }
  void release(const void* profiler) noexcept {
    std::lock_guard lock(mutex_);
    if (profiler_ == profiler) profiler_ = nullptr;
  }

  int64_t discard() noexcept {
    std::lock_guard lock(mutex_);
    drainLocked([](const ThreadBuffer&, const RangeRecord&) {});
    rangeClock_.refine();
    return ticksNow();
  }

  // `since` in ticks.
  Trace collect(int64_t since) {
    Trace trace;
    trace.pid = static_cast<int64_t>(getpid());
    std::lock_guard lock(mutex_);
    const TickMapping map = rangeClock_.refinedMapping();
    trace.startNs = map.toSteadyNs(since);
    std::vector<uint64_t> threadsSeen;
    drainLocked([&](const ThreadBuffer& buffer, const RangeRecord& record) {
      // A range open when recording started (its start was known: it was timed, or buffered
      // while warming up) is kept, so the ranges recorded inside it have their parent.
      if (record.endNs < since) return;
      trace.ranges.push_back(TraceRange{entryOf(record.nameId).name, buffer.threadId,
                                        map.toSteadyNs(record.startNs), map.toSteadyNs(record.endNs),
                                        record.depth});
      if (threadsSeen.empty() || threadsSeen.back() != buffer.threadId) {
        threadsSeen.push_back(buffer.threadId);
        trace.threads.push_back(TraceThread{buffer.threadId, buffer.name});
      }
    }, &trace.droppedRanges);
    // On the ranges' own clock, so every range collected ends before the trace does.
    trace.endNs = map.toSteadyNs(ticksNow());
    std::stable_sort(trace.ranges.begin(), trace.ranges.end(), [](const TraceRange& a, const TraceRange& b) {
      if (a.threadId != b.threadId) return a.threadId < b.threadId;
      if (a.startNs != b.startNs) return a.startNs < b.startNs;
      if (a.endNs != b.endNs) return a.endNs > b.endNs;
      return a.depth < b.depth;
    });
    // A thread id the system reused for a later thread shows once, with the later name.
    std::sort(trace.threads.begin(), trace.threads.end(),
              [](const TraceThread& a, const TraceThread& b) { return a.id < b.id; });
    trace.threads.erase(std::unique(trace.threads.begin(), trace.threads.end(),
                                    [](const TraceThread& a, const TraceThread& b) { return a.id == b.id; }),
                        trace.threads.end());
    return trace;
  }

  void refineClockIfIdle() noexcept { rangeClock_.refineIfIdle(); }
  RangeClockState clockState() noexcept { return rangeClock_.state(); }

  void beforeFork() noexcept {
    mutex_.lock();
    rangeClock_.beforeFork();
  }
  void afterForkInParent() noexcept {
    rangeClock_.afterFork();
    mutex_.unlock();
  }
  void afterForkInChild() noexcept {
    rangeClock_.afterFork();
    // Only the forking thread lives on in the child; the other buffers are read and freed by the
    // next collection. The parent's Profiler is not the child's: the child records nothing
    // until it starts a Profiler of its own.
    for (ThreadBuffer* buffer : buffers_) {
      if (buffer != t_buffer) buffer->exited.store(true, std::memory_order_relaxed);
    }
    trace_ = false;
    profilerStats_ = false;
    profiler_ = nullptr;
    publishModeLocked();
    mutex_.unlock();
  }

 private:
  RangeRegistry() {
    addEntryLocked(kOverflowNameId, "livemon.too_many_range_names");
    registerForkHooks(ForkStage::Ranges, {[]() noexcept { instance().beforeFork(); },
                                          []() noexcept { instance().afterForkInParent(); },
                                          []() noexcept { instance().afterForkInChild(); }});
  }

  void addEntryLocked(uint32_t id, std::string name) {
    const uint32_t segment = id >> kSegmentBits;
    NameEntry* entries = g_nameSegments[segment].load(std::memory_order_relaxed);
    if (entries == nullptr) {
      entries = new NameEntry[kSegmentSize];
      g_nameSegments[segment].store(entries, std::memory_order_release);
    }
    entries[id & (kSegmentSize - 1)].name = std::move(name);
  }

  void publishModeLocked() noexcept {
    g_rangeMode.store((trace_ ? kModeTrace : 0u) | (explicitStats_ || profilerStats_ ? kModeStats : 0u),
                      std::memory_order_relaxed);
  }

  // Reads every buffer to its end, handing each record to `visit`, and frees the buffers of
  // threads that have exited.
  template <typename Visit>
  void drainLocked(Visit&& visit, uint64_t* dropped = nullptr) {
    for (auto it = buffers_.begin(); it != buffers_.end();) {
      ThreadBuffer* buffer = *it;
      // Read before draining: a thread that had exited by now has published all its records.
      const bool exited = buffer->exited.load(std::memory_order_acquire);
      while (true) {
        Chunk* chunk = buffer->readChunk;
        const uint32_t count = chunk->count.load(std::memory_order_acquire);
        for (uint32_t i = buffer->readCount; i < count; ++i) visit(*buffer, chunk->records[i]);
        buffer->readCount = count;
        if (count < Chunk::kCapacity) break;
        Chunk* next = chunk->next.load(std::memory_order_acquire);
        if (next == nullptr) break;
        delete chunk;
        buffer->chunks.fetch_sub(1, std::memory_order_relaxed);
        buffer->readChunk = next;
        buffer->readCount = 0;
      }
      const uint64_t lost = buffer->dropped.exchange(0, std::memory_order_relaxed);
      if (dropped != nullptr) *dropped += lost;
      if (exited) {
        delete buffer->readChunk;
        delete buffer;
        it = buffers_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::mutex mutex_;
  std::unordered_map<std::string, uint32_t, StringHash, std::equal_to<>> ids_;  // guarded by mutex_
  uint32_t nextId_ = kFirstNameId;                                              // guarded by mutex_
  std::vector<ThreadBuffer*> buffers_;                                          // guarded by mutex_
  std::chrono::milliseconds statWindow_{1000};                                  // guarded by mutex_
  std::vector<std::shared_ptr<StatState>> statOwners_;                          // guarded by mutex_
  bool exitFlushRegistered_ = false;                                            // guarded by mutex_
  bool explicitStats_ = false;                                                  // guarded by mutex_
  bool profilerStats_ = false;                                                  // guarded by mutex_
  bool trace_ = false;                                                          // guarded by mutex_
  const void* profiler_ = nullptr;                                              // guarded by mutex_
  RangeClock rangeClock_;
};

// Thread-safety: one per thread (thread_local). Marks the thread's buffer for the collector
// when the thread exits.
struct ThreadExitNotice {
  ~ThreadExitNotice() {
    if (t_buffer != nullptr) RangeRegistry::instance().threadExited(t_buffer);
    t_buffer = nullptr;
  }
};
thread_local ThreadExitNotice t_exitNotice;

ThreadBuffer* RangeRegistry::registerThread() noexcept {
  auto* first = new (std::nothrow) Chunk;
  if (first == nullptr) return nullptr;
  auto* buffer = new (std::nothrow) ThreadBuffer(first);
  if (buffer == nullptr) {
    delete first;
    return nullptr;
  }
  buffer->threadId = static_cast<uint64_t>(gettid());
  char osName[16] = {};
  if (pthread_getname_np(pthread_self(), osName, sizeof osName) == 0 && osName[0] != '\0') {
    try {
      buffer->name = osName;
    } catch (const std::bad_alloc&) {
    }
  }
  {
    std::lock_guard lock(mutex_);
    try {
      buffers_.push_back(buffer);
    } catch (const std::bad_alloc&) {
      delete first;
      delete buffer;
      return nullptr;
    }
  }
  (void)&t_exitNotice;  // constructs the thread's exit notice
  t_buffer = buffer;
  return buffer;
}

void write(const RangeRecord& record) noexcept {
  ThreadBuffer* buffer = t_buffer;
  if (buffer == nullptr) [[unlikely]] {
    buffer = RangeRegistry::instance().registerThread();
    if (buffer == nullptr) return;
  }
  if (buffer->writeCount == Chunk::kCapacity) [[unlikely]] {
    if (buffer->chunks.load(std::memory_order_relaxed) >= kMaxChunksPerThread) {
      buffer->dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    auto* fresh = new (std::nothrow) Chunk;
    if (fresh == nullptr) {
      buffer->dropped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    buffer->chunks.fetch_add(1, std::memory_order_relaxed);
    buffer->writeChunk->next.store(fresh, std::memory_order_release);
    buffer->writeChunk = fresh;
    buffer->writeCount = 0;
  }
  buffer->writeChunk->records[buffer->writeCount] = record;
  buffer->writeChunk->count.store(++buffer->writeCount, std::memory_order_release);
}

}  // namespace

int64_t steadyNowNs() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint32_t internRangeName(std::string_view name) noexcept { return RangeRegistry::instance().intern(name); }

int64_t beginRange() noexcept {
  ++t_depth;
  return ticksNow();
}

void endRange(uint32_t nameId, uint32_t mode, int64_t startNs) noexcept {
  const int64_t endNs = ticksNow();
  const int32_t depth = --t_depth;
  // Refines ride on range ends, so that range stats alone (no Profiler collecting) keep the
  // rate right: one relaxed load here, a few microseconds of clock reads about once a second.
  if (endNs >= g_nextRefineTicks.load(std::memory_order_relaxed)) [[unlikely]] {
    RangeRegistry::instance().refineClockIfIdle();
  }
  // A range timed for stats before recording started has a known start: it is recorded too, so
  // that a trace started inside it nests completely.
  if ((mode & kModeTrace) != 0 || (g_rangeMode.load(std::memory_order_relaxed) & kModeTrace) != 0) {
    write(RangeRecord{startNs, endNs, nameId, depth});
  }
  if ((mode & kModeStats) != 0) {
    StatState* stat = entryOf(nameId).stat.load(std::memory_order_acquire);
    if (stat == nullptr) [[unlikely]] {
      stat = RangeRegistry::instance().createStat(nameId);
      if (stat == nullptr) return;
    }
    stat->add(static_cast<double>(endNs - startNs) * nsPerTick() * 1e-6);
  }
}

bool claimProfilerSlot(const void* profiler) { return RangeRegistry::instance().claim(profiler); }
void releaseProfilerSlot(const void* profiler) noexcept { RangeRegistry::instance().release(profiler); }
void setTraceBuffering(bool on) noexcept { RangeRegistry::instance().setTrace(on); }
void setProfilerRangeStats(bool on) noexcept { RangeRegistry::instance().setProfilerStats(on); }
int64_t discardBufferedRanges() noexcept { return RangeRegistry::instance().discard(); }
Trace collectBufferedRanges(int64_t sinceNs) { return RangeRegistry::instance().collect(sinceNs); }
RangeClockState rangeClockState() noexcept { return RangeRegistry::instance().clockState(); }

}  // namespace detail

void setRangeStatsEnabled(bool enabled, std::chrono::milliseconds window) {
  if (window < std::chrono::milliseconds(1)) {
    throw std::invalid_argument("setRangeStatsEnabled: window must be at least 1 ms, got " +
                                std::to_string(window.count()) + " ms");
  }
  for (detail::StatState* stat : detail::RangeRegistry::instance().setExplicitStats(enabled, window)) {
    stat->setWindowSize(window);
  }
}

bool rangeStatsEnabled() noexcept { return detail::RangeRegistry::instance().statsOn(); }

void flushRangeStats() {
  // Outside the registry's lock: a handler of the flushed events may record ranges.
  for (detail::StatState* stat : detail::RangeRegistry::instance().stats()) {
    stat->close(detail::StatState::CloseReason::Flush);
  }
}

void setThreadName(std::string name) { detail::RangeRegistry::instance().setThreadName(std::move(name)); }

}  // namespace livemon
