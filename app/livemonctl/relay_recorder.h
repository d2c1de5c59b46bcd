#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/wire_format.h>

// What `livemonctl relay --record DIR` writes: the relayed stream in MCAP files, rotated.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct RelayRecorderOptions {
  std::filesystem::path dir;
  uint64_t rotateBytes = 256ull * 1024 * 1024;  // a file is closed once it holds this much
  std::chrono::milliseconds rotateAfter{std::chrono::minutes(60)};  // ... or has been open this long
  // After a file could not be opened or written (descriptors or disk used up), a new file is
  // tried this long later; the events in between are counted in unrecordedCount().
  std::chrono::milliseconds retryAfter{1000};
  Clock* clock = nullptr;  // nullptr: livemon::systemClock(); names, rotation and retries follow it
};

// Not thread-safe: one owner at a time; one thread writes (the relay's worker), and the owner reads
// or closes it only after that thread stopped.
//
// Writes the event messages it is given into MCAP files in `dir` named relay-<UTC time>.mcap
// (relay-<UTC time>-<n>.mcap when that name is taken), each as it arrived (its payload bytes, a
// batch of events: docs/recording-format.md) as `livemonctl record` does, and starts a new file
// when the current one reaches rotateBytes or rotateAfter. Heartbeats are not recorded. A file that
// cannot be opened or written (no descriptor left, disk full) is kept in failure(): the file is
// readable up to its last chunk, and a new file is tried retryAfter later, so the rest of the run
// is recorded once the cause has passed.
class RelayRecorder {
 public:
  // Creates `dir` if needed and opens the first file. Throws std::invalid_argument for bad
  // options and transport::RecordingError when the file cannot be created.
  explicit RelayRecorder(RelayRecorderOptions options);
  ~RelayRecorder();

  RelayRecorder(const RelayRecorder&) = delete;
  RelayRecorder& operator=(const RelayRecorder&) = delete;

  // `payload` is the message's payload frame as it arrived, `message` the same decoded.
  void write(std::string_view topic, std::string_view payload, const transport::WireMessage& message);
  // Closes the current file; later writes do nothing.
  void close();

  const std::vector<std::filesystem::path>& files() const noexcept { return files_; }
  uint64_t eventCount() const noexcept { return events_; }
  uint64_t droppedCount() const noexcept { return dropped_; }  // events whose names were beyond a file's channels
  uint64_t unrecordedCount() const noexcept { return unrecorded_; }  // events that came while no file could be written
  // The latest failure to open or write a file; empty if there was none.
  const std::string& failure() const noexcept { return failure_; }

 private:
  void open();
  void finishFile();

  RelayRecorderOptions options_;
  Clock& clock_;
  std::unique_ptr<transport::RecordingWriter> writer_;
  std::chrono::steady_clock::time_point openedAt_{};
  std::vector<std::filesystem::path> files_;
  uint64_t events_ = 0;
  uint64_t dropped_ = 0;
  uint64_t unrecorded_ = 0;
  std::string failure_;
  std::optional<std::chrono::steady_clock::time_point> retryAt_;  // set while no file is open after a failure
  bool closed_ = false;
};

}  // namespace livemon::livemonctl
