#pragma once

// Internal to livemon: shared by core and transport through livemon::core's
// build-tree include path. Never installed; not part of the API.

#include <atomic>
#include <thread>

namespace livemon::detail {

// Thread-safe: lock() and unlock() may be called from any thread (usable with std::lock_guard).
//
// A test-and-test-and-set lock for critical sections that only copy memory. Uncontended it costs
// one atomic exchange, where std::mutex costs two atomic operations plus a call. A waiter spins
// while the holder runs and, after `SpinsBeforeYield` checks, yields the core at each check: a
// wait that long means the holder was descheduled inside its section.
template <int SpinsBeforeYield>
class BasicSpinLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      int spins = 0;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < SpinsBeforeYield) {
          pause();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  // Also frees the lock in a forked child whose holder was another thread of the parent (no
  // owner is recorded): only for fork handlers that know the state it guards is then unused.
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  std::atomic<bool> locked_{false};
};

// For sections of a few nanoseconds: a Stat's accumulators, a shared pointer's copy.
using SpinLock = BasicSpinLock<100>;

}  // namespace livemon::detail
