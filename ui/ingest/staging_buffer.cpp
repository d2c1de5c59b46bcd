#include <livemon/ui/ingest/staging_buffer.h>

#include <algorithm>
#include <utility>

namespace livemon::ui {

StagingBuffer::StagingBuffer() : StagingBuffer(Limits{}) {}

StagingBuffer::StagingBuffer(Limits limits) : limits_(limits) {}

void StagingBuffer::push(IngestBatch&& batch) {
  std::lock_guard lock(mutex_);
  const std::size_t logRoom = limits_.maxLogEntries - std::min(limits_.maxLogEntries, pending_.log.size());
  if (batch.log.size() > logRoom) {
    droppedLog_.fetch_add(batch.log.size() - logRoom, std::memory_order_relaxed);
    batch.log.resize(logRoom);
  }
  const std::size_t sampleRoom = limits_.maxSamples - std::min(limits_.maxSamples, pending_.samples.size());
  if (batch.samples.size() > sampleRoom) {
    droppedSamples_.fetch_add(batch.samples.size() - sampleRoom, std::memory_order_relaxed);
    batch.samples.resize(sampleRoom);
  }
  pending_.append(std::move(batch));
}

IngestBatch StagingBuffer::take() {
  IngestBatch taken;
  std::lock_guard lock(mutex_);
  std::swap(taken, pending_);
  return taken;
}

}  // namespace livemon::ui
