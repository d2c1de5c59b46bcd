#include <livemon/ui/ingest/staging_buffer.h>

#include <algorithm>
#include <utility>

namespace livemon::ui {

StagingBuffer::StagingBuffer() : StagingBuffer(Limits{}) {}

StagingBuffer::StagingBuffer(Limits limits) : limits_(limits) {}

void StagingBuffer::push(IngestBatch&& batch) {
  std::vector<IngestBatch> spent;  // freed here, after the lock is released
  std::lock_guard lock(mutex_);
  spent.swap(spent_);
  const std::size_t logRoom = limits_.maxLogEntries - std::min(limits_.maxLogEntries, liveLog_);
  if (batch.log.size() > logRoom) {
    droppedLog_.fetch_add(batch.log.size() - logRoom, std::memory_order_relaxed);
    batch.log.resize(logRoom);
  }
  const std::size_t sampleRoom = limits_.maxSamples - std::min(limits_.maxSamples, liveSamples_);
  if (batch.samples.size() > sampleRoom) {
    droppedSamples_.fetch_add(batch.samples.size() - sampleRoom, std::memory_order_relaxed);
    batch.samples.resize(sampleRoom);
  }
  const std::size_t alertRoom = limits_.maxAlerts - std::min(limits_.maxAlerts, pending_.alerts.size());
  if (batch.alerts.size() > alertRoom) {
    droppedAlerts_.fetch_add(batch.alerts.size() - alertRoom, std::memory_order_relaxed);
    batch.alerts.resize(alertRoom);
  }
  liveLog_ += batch.log.size();
  liveSamples_ += batch.samples.size();
  pending_.append(std::move(batch));
}

void StagingBuffer::pushReplayed(IngestBatch&& batch) {
  std::lock_guard lock(mutex_);
  pending_.append(std::move(batch));
}

void StagingBuffer::recycle(IngestBatch&& spent) {
  IngestBatch overflow;
  std::lock_guard lock(mutex_);
  if (spent_.size() < kSpentKept) spent_.push_back(std::move(spent));
  else overflow = std::move(spent);
}

IngestBatch StagingBuffer::take() {
  IngestBatch taken;
  std::lock_guard lock(mutex_);
  std::swap(taken, pending_);
  liveLog_ = 0;
  liveSamples_ = 0;
  return taken;
}

}  // namespace livemon::ui
