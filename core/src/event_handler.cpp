#include <livemon/event_handler.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <livemon/detail/dispatch_step.h>
#include <livemon/detail/fork_hooks.h>
#include <livemon/detail/spin_lock.h>

#include "step_word.h"

namespace livemon {
namespace {

// Thread-safe: its fields are immutable, atomic, or the idle mutex and condition; `handler` is
// called only while the entry is not removed and released only once no call is in flight.
//
// One registration. `active` counts the calls in flight; unregistering waits for it to reach
// zero. The pair active/removed is used Dekker-style (both sequentially consistent): a caller
// either sees `removed` and skips the handler, or the unregistering thread sees it active.
// Threads keep the handler list they dispatched to last (ListCache), so an entry outlives its
// registration until each of them has logged again; the unregistering thread releases the
// handler itself (and what it holds) as soon as it has waited for the calls in flight.
struct HandlerEntry {
  HandlerEntry(uint64_t entryId, EventHandler fn) : id(entryId), handler(std::move(fn)) {}

  const uint64_t id;
  EventHandler handler;
  std::atomic<int64_t> active{0};
  std::atomic<bool> removed{false};
  std::atomic<bool> errorReported{false};
  std::mutex idleMutex;
  std::condition_variable idle;
};

using HandlerList = std::vector<std::shared_ptr<HandlerEntry>>;

// Thread-safe. Writers copy the handler list under `mutex_` and publish the copy; logEvent
// takes a reference to the published list under a spin lock held for one reference-count
// increment, so handlers never run under a lock and may call back into the registry.
class HandlerRegistry {
 public:
  // Never destroyed: Stats with static storage duration log from their destructors during exit.
  static HandlerRegistry& instance() {
    static HandlerRegistry* registry = new HandlerRegistry;
    return *registry;
  }


  std::shared_ptr<const HandlerList> current() {
    std::lock_guard lock(publishLock_);
    return handlers_;
  }
  // The list and, in `generation`, the number of the publication that made it current.
  std::shared_ptr<const HandlerList> current(uint64_t& generation) {
    std::lock_guard lock(publishLock_);
    generation = generation_.load(std::memory_order_relaxed);
    return handlers_;
  }
  void publish(std::shared_ptr<const HandlerList> handlers) {
    std::lock_guard lock(publishLock_);
    handlers_.swap(handlers);
    generation_.store(generation_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    // The old list is released here, after the lock, by `handlers` going out of scope.
  }

  std::mutex mutex_;  // serialises changes to the list
  std::atomic<std::size_t> size_{0};
  detail::SpinLock publishLock_;
  std::shared_ptr<const HandlerList> handlers_ = std::make_shared<const HandlerList>();  // guarded by publishLock_
  std::atomic<uint64_t> generation_{1};  // written under publishLock_, with handlers_
  uint64_t nextId_ = 1;  // guarded by mutex_

  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> droppedReentrant_{0};
  std::mutex errorMutex_;
  std::string lastError_;  // guarded by errorMutex_

  void recordError(HandlerEntry& entry, const char* what) noexcept;

 private:
  HandlerRegistry() {
    // A forked child (a PyTorch DataLoader worker) must not inherit a locked registry.
    detail::registerForkHooks(detail::ForkStage::EventHandlers, {lockForFork, unlockAfterFork, unlockAfterFork});
  }

  static void lockForFork() noexcept {
    instance().mutex_.lock();
    instance().publishLock_.lock();
  }
  static void unlockAfterFork() noexcept {
    instance().publishLock_.unlock();
    instance().mutex_.unlock();
  }
};

// Thread-safety: one per thread (thread_local), used only by its thread.
struct ThreadState {
  int depth = 0;  // nesting of handler calls on this thread
  // The event whose handlers run now and the step logEvent gave it (dispatchStep), or null.
  const Event* stamped = nullptr;
  int64_t stampedStep = detail::kNoStep;
  bool listCacheGone = false;  // set when the thread's ListCache is destroyed (the thread exits)
};
thread_local ThreadState tls;

// Not thread-safe: one per thread (thread_local), used only by its thread, at handler depth 0.
//
// The handler list this thread dispatched to last and its generation. While the list is
// unchanged, logEvent reads it here instead of copying the registry's shared_ptr: that copy is
// an atomic increment and decrement (and a spin lock) on a cache line every logging thread
// writes, a third of what dispatching to one handler cost.
struct ListCache {
  ListCache() = default;
  ListCache(const ListCache&) = delete;
  ListCache& operator=(const ListCache&) = delete;
  // Stats destroyed after this thread's thread_locals (at exit) still log: they take the
  // registry's list as before.
  ~ListCache() { tls.listCacheGone = true; }

  std::shared_ptr<const HandlerList> list;
  uint64_t generation = 0;  // the registry's generations start at 1
};
thread_local ListCache listCache;

void HandlerRegistry::recordError(HandlerEntry& entry, const char* what) noexcept {
  errors_.fetch_add(1, std::memory_order_relaxed);
  try {
    std::lock_guard lock(errorMutex_);
    lastError_ = what;
  } catch (...) {
    // Out of memory while recording the message: the count above still tells.
  }
  if (!entry.errorReported.exchange(true)) {
    std::fprintf(stderr, "livemon: event handler %llu threw: %s (further errors from it are only counted)\n",
                 static_cast<unsigned long long>(entry.id), what);
  }
}

void finishCall(HandlerEntry& entry) noexcept {
  if (entry.active.fetch_sub(1) == 1 && entry.removed.load()) {
    std::lock_guard lock(entry.idleMutex);
    entry.idle.notify_all();
  }
}

}  // namespace

EventHandlerHandle registerEventHandler(EventHandler handler) {
  if (!handler) throw std::invalid_argument("registerEventHandler: handler is empty");
  HandlerRegistry& registry = HandlerRegistry::instance();
  std::lock_guard lock(registry.mutex_);
  auto next = std::make_shared<HandlerList>(*registry.current());
  const uint64_t id = registry.nextId_++;
  next->push_back(std::make_shared<HandlerEntry>(id, std::move(handler)));
  registry.publish(std::move(next));
  registry.size_.fetch_add(1);
  return EventHandlerHandle(id);
}

bool unregisterEventHandler(const EventHandlerHandle& handle) {
  if (handle.empty()) return false;
  HandlerRegistry& registry = HandlerRegistry::instance();
  std::shared_ptr<HandlerEntry> entry;
  {
    std::lock_guard lock(registry.mutex_);
    auto current = registry.current();
    auto next = std::make_shared<HandlerList>();
    next->reserve(current->size());
    for (const auto& candidate : *current) {
      if (candidate->id == handle.id_) {
        entry = candidate;
      } else {
        next->push_back(candidate);
      }
    }
    if (!entry) return false;
    registry.publish(std::move(next));
    registry.size_.fetch_sub(1);
  }
  entry->removed.store(true);
  // Inside a handler, waiting for another thread's call could wait on a thread that waits for
  // us; the entry is already unreachable for new calls.
  if (tls.depth > 0) return true;
  std::unique_lock lock(entry->idleMutex);
  entry->idle.wait(lock, [&] { return entry->active.load() == 0; });
  lock.unlock();
  // No call is in flight and none will start (callers check `removed` first): the handler, and
  // what it holds, go now rather than when the last thread's ListCache lets go of the entry.
  EventHandler().swap(entry->handler);
  return true;
}

namespace {

void callHandlers(HandlerRegistry& registry, const HandlerList& handlers, const Event& event) noexcept;

void dispatch(HandlerRegistry& registry, const Event& event) noexcept {
  if (tls.depth >= kMaxHandlerDepth) {
    registry.droppedReentrant_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ++tls.depth;
  if (tls.depth == 1 && !tls.listCacheGone) {
    ListCache& cache = listCache;
    if (cache.generation != registry.generation_.load(std::memory_order_acquire)) {
      // Replaced before the old list is let go: destroying an entry may log.
      cache.list = registry.current(cache.generation);
    }
    callHandlers(registry, *cache.list, event);
  } else {
    // Inside a handler the outer call walks the cached list, which must not change under it.
    const std::shared_ptr<const HandlerList> handlers = registry.current();
    callHandlers(registry, *handlers, event);
  }
  --tls.depth;
}

void callHandlers(HandlerRegistry& registry, const HandlerList& handlers, const Event& event) noexcept {
  for (const auto& entry : handlers) {
    entry->active.fetch_add(1);
    if (entry->removed.load()) {
      finishCall(*entry);
      continue;
    }
    try {
      entry->handler(event);
    } catch (const std::exception& error) {
      registry.recordError(*entry, error.what());
    } catch (...) {
      registry.recordError(*entry, "an exception not derived from std::exception");
    }
    finishCall(*entry);
  }
}

}  // namespace

void logEvent(const Event& event) noexcept {
  HandlerRegistry& registry = HandlerRegistry::instance();
  if (registry.size_.load(std::memory_order_acquire) == 0) return;
  const int64_t current = detail::stepWord.load(std::memory_order_relaxed);
  if (event.step || current == detail::kNoStep) {
    dispatch(registry, event);
    return;
  }
  // The step goes beside the event, not into a copy of it: copying an event's data costs ten
  // times what handing it to a handler does. Saved and restored, as handlers may log too.
  const Event* const outerEvent = tls.stamped;
  const int64_t outerStep = tls.stampedStep;
  tls.stamped = &event;
  tls.stampedStep = current;
  dispatch(registry, event);
  tls.stamped = outerEvent;
  tls.stampedStep = outerStep;
}

void logEvent(Event&& event) noexcept { logEvent(static_cast<const Event&>(event)); }

namespace detail {

bool findDispatchStep(const Event& event, int64_t& step) noexcept {
  if (event.step.has_value() || tls.stamped != &event) return false;
  step = tls.stampedStep;
  return true;
}

std::optional<int64_t> dispatchStep(const Event& event) noexcept {
  int64_t step = 0;
  if (!findDispatchStep(event, step)) return std::nullopt;
  return step;
}

}  // namespace detail

uint64_t handlerErrorCount() noexcept {
  return HandlerRegistry::instance().errors_.load(std::memory_order_relaxed);
}

std::string lastHandlerError() {
  HandlerRegistry& registry = HandlerRegistry::instance();
  std::lock_guard lock(registry.errorMutex_);
  return registry.lastError_;
}

uint64_t droppedReentrantEventCount() noexcept {
  return HandlerRegistry::instance().droppedReentrant_.load(std::memory_order_relaxed);
}

std::size_t registeredEventHandlerCount() noexcept {
  return HandlerRegistry::instance().size_.load(std::memory_order_relaxed);
}

}  // namespace livemon
