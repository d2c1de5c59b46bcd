#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace livemon::ui {

// How a recording joins the dashboard.
enum class ReplayMode {
  // On a timeline: the charts and the log show the recording's events up to the playhead.
  Replay,
  // Beside the live runs, as sources labelled "baseline: RUN", to compare a live run against
  // (with the x axis in time since run start both begin at 0). Not on the timeline: its owner
  // moves its playhead (moveTo). Read like a replay, only the window before the playhead.
  Baseline,
  // A run of a folder of recordings (RunFolder): shown whole beside the others, not on a playhead.
  Folder,
};

// Thread-safety: a plain value type.
// One thing a ReplaySession's reader thread is asked to do.
struct ReplayRequest {
  enum class Kind { Open, Read } kind = Kind::Read;
  uint64_t generation = 0;
  int64_t fromNs = 0;
  int64_t toNs = 0;
  std::string path;  // Open
  ReplayMode mode = ReplayMode::Replay;
  std::size_t backfill = 0;  // Read: log rows wanted from before fromNs
};

// Thread-safe: post(), busy() and stop() from the owner's thread, take() and finished() from the
// reader thread.
// The requests a ReplaySession's reader thread works through, in the order posted. A read posted
// for a generation drops the reads of other generations still queued: after a seek they would
// read what is no longer asked for. busy() counts what is queued or being handled, so a caller
// can wait for the reader to catch up.
class ReplayRequests {
 public:
  void post(ReplayRequest request);
  // Waits for the next request; std::nullopt once stopped.
  std::optional<ReplayRequest> take();
  // The request take() returned last has been handled.
  void finished();
  bool busy() const;
  // Drops what is queued; take() returns std::nullopt from now on, a waiting one at once.
  void stop();

 private:
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<ReplayRequest> queue_;  // guarded by mutex_
  int inFlight_ = 0;                 // guarded by mutex_: queued or being handled
  bool stopping_ = false;            // guarded by mutex_
};

}  // namespace livemon::ui
