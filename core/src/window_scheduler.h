#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace livemon {
class Clock;
}

namespace livemon::detail {

class StatState;

// Thread-safe: every member, from any thread.
//
// Closes Stat windows when they end. Each Stat with an open, non-empty window has one entry
// here, keyed by the window's end on the clock's monotonic axis.
//
// With a background thread (the system clock) one shared thread waits for the earliest
// deadline. It starts on the first schedule(), is detached so it never keeps the process from
// exiting, stops taking work at exit, and is restarted in a forked child. Without one (a
// ManualClock), runDue() closes due windows on the caller's thread.
class WindowScheduler {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  WindowScheduler(const Clock& clock, bool backgroundThread);
  ~WindowScheduler();
  WindowScheduler(const WindowScheduler&) = delete;
  WindowScheduler& operator=(const WindowScheduler&) = delete;

  // Asks for `stat`'s window to be closed at `deadline`.
  void schedule(std::weak_ptr<StatState> stat, TimePoint deadline) noexcept;

  // Closes every window whose deadline is not after `now`, on the calling thread.
  void runDue(TimePoint now);

  // At exit: no more closes; waits briefly for one in progress on the background thread.
  void shutdown() noexcept;

 private:
  struct Entry {
    TimePoint deadline;
    uint64_t order;  // FIFO among equal deadlines
    std::weak_ptr<StatState> stat;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const noexcept {
      return a.deadline != b.deadline ? a.deadline > b.deadline : a.order > b.order;
    }
  };

  void startThreadLocked() noexcept;
  void threadLoop();
  void beforeFork() noexcept;
  void afterForkInParent() noexcept;
  void afterForkInChild() noexcept;

  const Clock& clock_;
  const bool background_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::priority_queue<Entry, std::vector<Entry>, Later> queue_;  // guarded by mutex_
  uint64_t nextOrder_ = 0;                                       // guarded by mutex_
  bool threadRunning_ = false;                                   // guarded by mutex_
  bool stopping_ = false;                                        // guarded by mutex_
  bool closing_ = false;                                         // guarded by mutex_
  bool forkPending_ = false;                                     // guarded by mutex_
  TimePoint sleepingUntil_ = TimePoint::max();                   // guarded by mutex_
  std::thread::id threadId_;                                     // guarded by mutex_
};

}  // namespace livemon::detail
