#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include <livemon/transport/error.h>

// Only transport/src includes this header.
namespace livemon::transport::detail {

// Thread-safe: notify() and signal() may be called from any thread; prepareToSleep(),
// cancelSleep() and woke() only by the one consumer thread.
//
// Wakes a consumer that sleeps in poll() on fd() (with zmq_poll beside its sockets), so it sleeps
// while there is no work instead of checking a queue on a timer. A producer pays a system call
// only when the consumer is asleep, never while it is awake:
//
//   consumer:  prepareToSleep(); if (work is visible) cancelSleep(); else { poll(fd()); woke(); }
//   producer:  publish the work with a seq_cst store; notify();
//
// The consumer's check of the work and the producer's store must be sequentially consistent
// (ByteRing::push() and ByteRing::emptyForSleeper() are): then either the consumer sees the work,
// or the producer sees the consumer asleep and writes to the eventfd. A wake is never lost.
class WakeSignal {
 public:
  WakeSignal() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (fd_ < 0) {
      const int error = errno;
      throw TransportError("", std::strerror(error), std::string("livemon publisher: eventfd failed: ") + std::strerror(error));
    }
  }
  ~WakeSignal() { close(fd_); }
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;

  int fd() const noexcept { return fd_; }

  // Producer, after publishing work: wakes the consumer if it is asleep. One write per sleep.
  void notify() noexcept {
    if (sleeping_.load(std::memory_order_seq_cst) && sleeping_.exchange(false, std::memory_order_acq_rel)) signal();
  }

  // Wakes the consumer whether it sleeps or not (to stop it).
  void signal() noexcept {
    const uint64_t one = 1;
    // Fails only when the counter is near 2^64, which is readable already.
    [[maybe_unused]] const ssize_t written = write(fd_, &one, sizeof one);
  }

  void prepareToSleep() noexcept { sleeping_.store(true, std::memory_order_seq_cst); }
  void cancelSleep() noexcept { sleeping_.store(false, std::memory_order_relaxed); }

  // After poll() returned: the consumer is awake; a pending signal is consumed.
  void woke() noexcept {
    sleeping_.store(false, std::memory_order_relaxed);
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t read = ::read(fd_, &count, sizeof count);
  }

 private:
  const int fd_;
  std::atomic<bool> sleeping_{false};
};

}  // namespace livemon::transport::detail
