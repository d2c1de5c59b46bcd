#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <livemon/ui/data/ingest_batch.h>

namespace livemon::ui {

// Thread-safe: every member may be called from any thread.
// Where the ingest thread leaves converted events for the GUI. The ingest thread push()es a batch
// per poll under a short lock (a vector swap or move-append); the GUI take()s everything on its
// refresh timer, so a burst of events costs the GUI one batch, never a signal per event.
//
// Overflow policy (GUI stalled or gone): descriptors are always kept; live log entries,
// samples and alerts beyond the limits are discarded new-first and counted, so memory stays bounded.
// Replayed batches (pushReplayed) are kept whole and do not use up the live limits: a recording's
// reader thread converts only what a seek or the playhead asks for, so they are bounded by the
// window read, and dropping them would leave holes in a recording the user is looking at.
//
// Live and replayed batches share this one buffer, in the order they were converted, so every
// descriptor precedes the samples that use it and the GUI's refresh is take-then-apply.
class StagingBuffer {
 public:
  // Thread-safety: a plain value type.
  struct Limits {
    std::size_t maxLogEntries = 1'000'000;
    std::size_t maxSamples = 4'000'000;
    // Alerts beyond it are dropped, new first (the Alerts list keeps fewer anyway).
    std::size_t maxAlerts = 10'000;
  };

  StagingBuffer();
  explicit StagingBuffer(Limits limits);

  void push(IngestBatch&& batch);
  void pushReplayed(IngestBatch&& batch);
  IngestBatch take();
  // Hands a taken batch back once applied, to be freed by the next push()'s thread instead of the
  // caller's: its buffers came from the ingest thread's allocator, and freeing 20 000 samples and
  // their log rows there cost the GUI thread up to 8 ms a tick (glibc consolidating the ingest
  // thread's arena under its lock). What waits is at most what the GUI took since the ingest
  // thread last pushed (one take, cut into pieces by the refresh: a dozen a second at 1 024 ranks)
  // and the log rows that evicted; kSpentKept only bounds the count, beyond it the caller frees.
  void recycle(IngestBatch&& spent);
  // The same for the data of evicted log rows (EventLogModel::takeEvicted).
  void recycle(std::vector<std::string>&& spent);

  uint64_t droppedLogEntries() const noexcept { return droppedLog_.load(std::memory_order_relaxed); }
  uint64_t droppedSamples() const noexcept { return droppedSamples_.load(std::memory_order_relaxed); }
  uint64_t droppedAlerts() const noexcept { return droppedAlerts_.load(std::memory_order_relaxed); }

 private:
  Limits limits_;
  mutable std::mutex mutex_;
  IngestBatch pending_;
  static constexpr std::size_t kSpentKept = 1024;
  std::vector<IngestBatch> spent_;  // guarded by mutex_
  std::vector<std::vector<std::string>> spentData_;  // guarded by mutex_
  std::size_t liveLog_ = 0;      // guarded by mutex_: pending_'s live log entries
  std::size_t liveSamples_ = 0;  // guarded by mutex_: pending_'s live samples
  std::atomic<uint64_t> droppedLog_{0};
  std::atomic<uint64_t> droppedSamples_{0};
  std::atomic<uint64_t> droppedAlerts_{0};
};

}  // namespace livemon::ui
