#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <livemon/event.h>
#include <livemon/source_info.h>
#include <livemon/transport/recording.h>

// `livemonctl demo --record FILE`: the demo's own events in a recording, written as it publishes
// them, so one process makes a run's recording.
namespace livemon::livemonctl {

// Thread-safe: record() and flushIfDue() may be called from any thread (the demo's loop, the Stat
// timer, the system sampler) at once; close() once no more calls come.
//
// Writes each event as `livemonctl record` would have received it from the publisher: a message of
// its own with its source and a sequence number per source and name (transport::recordEvent), its
// step as the publisher states it. A write that fails (disk full) ends the recording: the file is
// readable up to its last chunk, later events are counted in unrecordedCount(), and failure()
// says why.
class DemoRecording {
 public:
  // Creates `path` (replacing a file there). Throws transport::RecordingError naming it.
  explicit DemoRecording(const std::string& path);
  ~DemoRecording();
  DemoRecording(const DemoRecording&) = delete;
  DemoRecording& operator=(const DemoRecording&) = delete;

  // Records `event`, published by `source`, with the step statedStep() finds (so, inside an event
  // handler, the step current when it was logged).
  void record(const Event& event, const SourceInfo& source);
  // Writes the open chunk once it is due, so a demo killed later leaves it readable.
  void flushIfDue();
  // Writes the summary and closes the file. False when the recording failed (failure()).
  bool close();

  const std::string& path() const noexcept { return path_; }
  uint64_t eventCount() const;
  uint64_t unrecordedCount() const;
  std::string failure() const;

 private:
  // Called with mutex_ held: gives up the file after a failure.
  void fail(const std::string& why);

  const std::string path_;
  mutable std::mutex mutex_;
  std::unique_ptr<transport::RecordingWriter> writer_;  // null once closed or failed
  std::map<SourceInfo, std::shared_ptr<const SourceInfo>> sources_;
  std::map<std::pair<std::shared_ptr<const SourceInfo>, std::string>, uint64_t> sequences_;
  uint64_t events_ = 0;
  uint64_t unrecorded_ = 0;
  std::string failure_;
};

}  // namespace livemon::livemonctl
