#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include <livemon/event_handler.h>

namespace livemon::testing {

// Registers a handler that keeps every event, for the lifetime of the recorder. A kept event
// carries its step (statedStep), as a handler that keeps events must do: logEvent hands
// handlers the caller's event and the step beside it.
// Thread-safe: events may arrive on any thread.
class EventRecorder {
 public:
  EventRecorder() : handle_(registerEventHandler([this](const Event& e) { record(e); })) {}
  ~EventRecorder() { unregisterEventHandler(handle_); }
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  std::vector<Event> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return events_.size();
  }
  // Events whose name is `name`.
  std::vector<Event> named(std::string_view name) const {
    std::lock_guard lock(mutex_);
    std::vector<Event> out;
    for (const auto& e : events_) {
      if (e.name == name) out.push_back(e);
    }
    return out;
  }
  // Waits until at least `n` events arrived or `timeout` passed; returns whether they did.
  bool waitFor(std::size_t n, std::chrono::milliseconds timeout) const {
    std::unique_lock lock(mutex_);
    return arrived_.wait_for(lock, timeout, [&] { return events_.size() >= n; });
  }
  const EventHandlerHandle& handle() const { return handle_; }

 private:
  void record(const Event& e) {
    Event kept = e;
    kept.step = statedStep(e);
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(kept));
    arrived_.notify_all();
  }

  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  std::vector<Event> events_;
  EventHandlerHandle handle_;
};

}  // namespace livemon::testing
