#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/wire_format.h>

// What `livemonctl relay --record DIR` writes: the relayed stream in MCAP files, one per run, rotated.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct RelayRecorderOptions {
  std::filesystem::path dir;
  uint64_t rotateBytes = 256ull * 1024 * 1024;  // a file is closed once it holds this much
  std::chrono::milliseconds rotateAfter{std::chrono::minutes(60)};  // ... or has been open this long
  // After a file could not be opened or written (descriptors or disk used up), a new file is
  // tried this long later; the events in between are counted in unrecordedCount().
  std::chrono::milliseconds retryAfter{1000};
  // Run files open at once. A run that comes while this many are open is recorded into the shared
  // file (+shared-<UTC time>.mcap) until one is closed; so names a peer makes up cost at most this
  // many descriptors and files at a time.
  std::size_t maxOpenFiles = 32;
  // A run file nothing was written to for this long is closed (the run ended, or paused: its next
  // events open a new file), making room for another run.
  std::chrono::milliseconds closeIdleAfter{std::chrono::minutes(5)};
  Clock* clock = nullptr;  // nullptr: livemon::systemClock(); names, rotation and retries follow it
};

// The longest run name a file name keeps (runFileStem).
inline constexpr std::size_t kMaxRunFileStemBytes = 64;

// A run's name made safe as the start of a file name in the recording directory: letters, digits,
// '-', '_' and single dots not at the start are kept, every other byte becomes '_', and it is cut
// to kMaxRunFileStemBytes; "run" when nothing is left. No '/', no "..", no hidden file.
std::string runFileStem(std::string_view run);

// Not thread-safe: one owner at a time; one thread writes (the relay's worker), and the owner reads
// or closes it only after that thread stopped.
//
// Writes the event messages it is given into MCAP files in `dir`, one file per run (the source's
// `run`): <runFileStem(run)>-<UTC time>.mcap, "-<n>" added when that name is taken, so a cluster's
// recordings are a folder of runs (`livemonctl runs DIR`). Each message is written as it arrived
// (its payload bytes, a batch of events: docs/recording-format.md) as `livemonctl record` does. A
// run's file is closed and a new one started when it reaches rotateBytes or rotateAfter, and closed
// when idle for closeIdleAfter. At most maxOpenFiles run files are open; beyond, runs share
// +shared-<UTC time>.mcap (rotated and closed the same way; so at most maxOpenFiles + 1 files are
// open) and their events are counted in sharedCount(). Heartbeats are not
// recorded. A file that cannot be opened or written (no descriptor left, disk full) is kept in
// failure(): the file is readable up to its last chunk, and no new file is tried until retryAfter
// later, so the rest of the run is recorded once the cause has passed.
class RelayRecorder {
 public:
  // Creates `dir` if needed. Throws std::invalid_argument for bad options and
  // transport::RecordingError when the directory cannot be created or written into.
  explicit RelayRecorder(RelayRecorderOptions options);
  ~RelayRecorder();

  RelayRecorder(const RelayRecorder&) = delete;
  RelayRecorder& operator=(const RelayRecorder&) = delete;

  // The message borrowed (`batch.payload()` is its payload frame as it arrived, stored as it is).
  void write(const transport::EventBatchView& batch);
  // Closes every file; later writes do nothing.
  void close();

  // Every file opened, in the order opened.
  const std::vector<std::filesystem::path>& files() const noexcept { return files_; }
  std::size_t openFileCount() const noexcept { return open_.size() + (sharedFile_.writer ? 1 : 0); }
  uint64_t eventCount() const noexcept { return events_; }
  uint64_t droppedCount() const noexcept { return dropped_; }  // events whose names were beyond a file's channels
  uint64_t unrecordedCount() const noexcept { return unrecorded_; }  // events that came while no file could be written
  uint64_t sharedCount() const noexcept { return shared_; }  // events recorded into the shared file
  // The latest failure to open or write a file; empty if there was none.
  const std::string& failure() const noexcept { return failure_; }

 private:
  // Not thread-safe: one owner at a time (the recorder's). A file being written.
  struct OpenFile {
    std::unique_ptr<transport::RecordingWriter> writer;
    std::chrono::steady_clock::time_point openedAt{};
    std::chrono::steady_clock::time_point writtenAt{};
  };

  // The file `run`'s events go to now (opened, rotated as needed); null while none can be opened.
  OpenFile* fileFor(const std::string& run);
  OpenFile open(std::string_view stem);
  void closeIdle();
  void finish(OpenFile& file);

  RelayRecorderOptions options_;
  Clock& clock_;
  std::map<std::string, OpenFile> open_;  // by run, at most maxOpenFiles
  OpenFile sharedFile_;                   // for runs beyond them; no writer while none is open
  std::vector<std::filesystem::path> files_;
  uint64_t events_ = 0;
  uint64_t dropped_ = 0;
  uint64_t unrecorded_ = 0;
  uint64_t shared_ = 0;
  std::string failure_;
  std::optional<std::chrono::steady_clock::time_point> retryAt_;  // no file is opened before, after a failure
  std::chrono::steady_clock::time_point idleCheckAt_{};
  bool closed_ = false;
};

}  // namespace livemon::livemonctl
