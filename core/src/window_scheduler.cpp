#include "window_scheduler.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>

#include <livemon/clock.h>
#include <livemon/detail/fork_hooks.h>

#include "stat_state.h"

namespace livemon::detail {
namespace {

// The background scheduler of the system clock, for the fork and exit hooks. It is never
// destroyed, so the hooks may always use it. Atomic because the thread that first uses the system
// clock sets it, and any other thread may fork or exit later.
std::atomic<WindowScheduler*> backgroundScheduler{nullptr};

}  // namespace

WindowScheduler::WindowScheduler(const Clock& clock, bool backgroundThread)
    : clock_(clock), background_(backgroundThread) {
  if (background_) {
    backgroundScheduler.store(this, std::memory_order_release);
    // The first stage: the window thread finishes its close (which logs through the handler
    // registry) before the registry's locks are taken.
    registerForkHooks(ForkStage::WindowThread,
                      {[]() noexcept { backgroundScheduler.load(std::memory_order_acquire)->beforeFork(); },
                       []() noexcept { backgroundScheduler.load(std::memory_order_acquire)->afterForkInParent(); },
                       []() noexcept { backgroundScheduler.load(std::memory_order_acquire)->afterForkInChild(); }});
    std::atexit([] { backgroundScheduler.load(std::memory_order_acquire)->shutdown(); });
  }
}

WindowScheduler::~WindowScheduler() = default;

void WindowScheduler::schedule(std::weak_ptr<StatState> stat, TimePoint deadline) noexcept {
  std::lock_guard lock(mutex_);
  queue_.push(Entry{deadline, nextOrder_++, std::move(stat)});
  if (!background_ || stopping_) return;
  if (!threadRunning_) {
    startThreadLocked();
  } else if (deadline < sleepingUntil_) {
    wake_.notify_one();
  }
}

void WindowScheduler::startThreadLocked() noexcept {
  try {
    std::thread(&WindowScheduler::threadLoop, this).detach();
    threadRunning_ = true;
  } catch (const std::exception& error) {
    // Windows then close only on flush, maxSamples or destruction; say so once.
    static bool reported = false;
    if (!reported) {
      reported = true;
      std::fprintf(stderr, "livemon: cannot start the Stat window thread (%s); windows will not close on time\n",
                   error.what());
    }
  }
}

void WindowScheduler::threadLoop() {
  std::unique_lock lock(mutex_);
  threadId_ = std::this_thread::get_id();
  while (!stopping_) {
    if (forkPending_) {
      wake_.wait(lock);
      continue;
    }
    if (queue_.empty()) {
      sleepingUntil_ = TimePoint::max();
      wake_.wait(lock);
      continue;
    }
    const TimePoint deadline = queue_.top().deadline;
    if (clock_.now() < deadline) {
      sleepingUntil_ = deadline;
      wake_.wait_until(lock, deadline);
      continue;
    }
    sleepingUntil_ = TimePoint::min();
    Entry entry = queue_.top();
    queue_.pop();
    closing_ = true;
    lock.unlock();
    if (auto stat = entry.stat.lock()) stat->closeScheduledWindow(entry.deadline);
    lock.lock();
    closing_ = false;
    idle_.notify_all();
  }
}

void WindowScheduler::runDue(TimePoint now) {
  for (;;) {
    std::weak_ptr<StatState> due;
    TimePoint deadline;
    {
      std::lock_guard lock(mutex_);
      if (queue_.empty() || queue_.top().deadline > now) return;
      due = queue_.top().stat;
      deadline = queue_.top().deadline;
      queue_.pop();
    }
    if (auto stat = due.lock()) stat->closeScheduledWindow(deadline);
  }
}

void WindowScheduler::shutdown() noexcept {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  wake_.notify_all();
  // A handler running on the window thread may touch objects that exit is about to destroy;
  // give it a moment to finish, but never hang the exit on it.
  if (closing_ && threadId_ != std::this_thread::get_id()) {
    idle_.wait_for(lock, std::chrono::milliseconds(200), [this] { return !closing_; });
  }
}

void WindowScheduler::beforeFork() noexcept {
  // A close in progress holds a Stat's lock; a child forked at that moment would find it held
  // forever. Hold the window thread between closes while the fork happens (but not for long:
  // a handler may be waiting for the forking thread).
  mutex_.lock();
  forkPending_ = true;
  if (closing_ && threadId_ != std::this_thread::get_id()) {
    std::unique_lock lock(mutex_, std::adopt_lock);
    idle_.wait_for(lock, std::chrono::milliseconds(100), [this] { return !closing_; });
    lock.release();
  }
}

void WindowScheduler::afterForkInParent() noexcept {
  forkPending_ = false;
  wake_.notify_all();
  mutex_.unlock();
}

void WindowScheduler::afterForkInChild() noexcept {
  // The child has no window thread (only the forking thread survives fork). The parent's was
  // waiting on wake_, and the child's copy still counts that waiter: a notify could then wait
  // forever for it to leave. Fresh condition variables (the old ones are not destroyed: that
  // could wait for the phantom waiter too).
  new (&wake_) std::condition_variable();
  new (&idle_) std::condition_variable();
  forkPending_ = false;
  threadRunning_ = false;
  closing_ = false;
  sleepingUntil_ = TimePoint::max();
  const bool pending = !queue_.empty() && !stopping_;
  if (pending) startThreadLocked();
  mutex_.unlock();
}

}  // namespace livemon::detail
