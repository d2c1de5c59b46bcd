#include <livemonctl/demo_recording.h>

#include <livemon/transport/recorded_event.h>

namespace livemon::livemonctl {

DemoRecording::DemoRecording(const std::string& path)
    : path_(path), writer_(std::make_unique<transport::RecordingWriter>(path)) {}

DemoRecording::~DemoRecording() = default;

void DemoRecording::record(const Event& event, const SourceInfo& source) {
  transport::ReceivedEvent received;
  received.event = event;
  received.event.step = statedStep(event);
  const std::lock_guard lock(mutex_);
  if (!writer_) {
    ++unrecorded_;
    return;
  }
  auto& shared = sources_[source];
  if (!shared) shared = std::make_shared<const SourceInfo>(source);
  received.source = shared;
  received.sequence = sequences_[{shared, event.name}]++;
  received.receivedAt = std::chrono::system_clock::now();  // under the lock: log times only grow
  try {
    ++(transport::recordEvent(*writer_, received) ? events_ : unrecorded_);
    writer_->flushIfDue();
  } catch (const transport::RecordingError& error) {
    ++unrecorded_;
    fail(error.what());
  }
}

void DemoRecording::flushIfDue() {
  const std::lock_guard lock(mutex_);
  if (!writer_) return;
  try {
    writer_->flushIfDue();
  } catch (const transport::RecordingError& error) {
    fail(error.what());
  }
}

bool DemoRecording::close() {
  const std::lock_guard lock(mutex_);
  if (writer_) {
    try {
      writer_->close();
      writer_.reset();
    } catch (const transport::RecordingError& error) {
      fail(error.what());
    }
  }
  return failure_.empty();
}

void DemoRecording::fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
  // What reached the file up to its last chunk stays readable; the writer reports nothing more.
  writer_.reset();
}

uint64_t DemoRecording::eventCount() const {
  const std::lock_guard lock(mutex_);
  return events_;
}

uint64_t DemoRecording::unrecordedCount() const {
  const std::lock_guard lock(mutex_);
  return unrecorded_;
}

std::string DemoRecording::failure() const {
  const std::lock_guard lock(mutex_);
  return failure_;
}

}  // namespace livemon::livemonctl
