#pragma once

#include <atomic>
#include <thread>

namespace livemon::detail {

// A test-and-test-and-set lock for critical sections of a few nanoseconds (a Stat's
// accumulators). Uncontended it costs one atomic exchange, where std::mutex costs two atomic
// operations plus a call. Under contention it spins briefly, then yields the core.
// Thread-safe.
class SpinLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      int spins = 0;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < kSpinsBeforeYield) {
          pause();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 100;

  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  std::atomic<bool> locked_{false};
};

}  // namespace livemon::detail
