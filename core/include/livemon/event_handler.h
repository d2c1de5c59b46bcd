#pragma once

#include <cstdint>
#include <functional>

#include <livemon/event.h>
#include <livemon/step.h>

namespace livemon {

// Receives every logged event, synchronously, on the thread that logged it.
//
// Stat windows that close on time arrive on livemon's window thread, the one background thread
// that closes the windows of every Stat on systemClock(). A window closed by
// Stat::flush(), by reaching maxSamples or by the Stat's destruction arrives on the thread that
// did it; on a ManualClock, on the thread that advanced it.
//
// A handler must not block (on I/O, a network peer, a lock held across slow work): the thread
// that logged waits for it, and while it runs on the window thread no other Stat's window closes
// on time. Hand slow work to a thread of your own through a bounded queue, as
// transport::Publisher does.
// Read the event's step with statedStep(event), not `event.step` (see logEvent).
using EventHandler = std::function<void(const Event&)>;

// Thread-safety: a plain value type.
//
// Identifies one registration. Copyable; a default-constructed handle is empty and matches
// no registration.
class EventHandlerHandle {
 public:
  EventHandlerHandle() = default;

  bool empty() const noexcept { return id_ == 0; }
  explicit operator bool() const noexcept { return !empty(); }
  friend bool operator==(const EventHandlerHandle&, const EventHandlerHandle&) = default;

 private:
  friend EventHandlerHandle registerEventHandler(EventHandler handler);
  friend bool unregisterEventHandler(const EventHandlerHandle& handle);
  explicit EventHandlerHandle(uint64_t id) : id_(id) {}

  uint64_t id_ = 0;
};

// All functions below are thread-safe and may be called from inside a handler.
//
// Handlers run in registration order on the thread that calls logEvent. A handler that throws
// is isolated: the exception is caught and counted (handlerErrorCount), the remaining handlers
// still run and logEvent's caller never sees it.

// Throws std::invalid_argument if `handler` is empty.
EventHandlerHandle registerEventHandler(EventHandler handler);

// Removes the registration. Returns false for an empty, unknown or already removed handle.
// Called outside a handler, it returns only once the handler is not running on any thread, and
// the handler is never called again; the handler (and what it captured) is destroyed before it
// returns. Called from inside a handler it does not wait (waiting there could deadlock); the
// removed handler still gets no new calls, and is destroyed once each thread that logged an event
// to it has logged another or exited.
bool unregisterEventHandler(const EventHandlerHandle& handle);

// Hands `event` to every registered handler. Never throws. Events logged from inside handlers
// more than kMaxHandlerDepth levels deep are dropped and counted (droppedReentrantEventCount),
// so a handler that logs into itself cannot overflow the stack.
//
// Handlers get the caller's own event, never a copy, with `step` as the caller left it. An event
// that states no step gets the step current at this call beside it: a handler reads an event's
// step with statedStep(event), which sees it while the handler runs. A handler that keeps the
// event copies it and sets `copy.step = statedStep(event)`.
void logEvent(const Event& event) noexcept;
void logEvent(Event&& event) noexcept;

inline constexpr int kMaxHandlerDepth = 16;

// Exceptions thrown by handlers since the process started.
uint64_t handlerErrorCount() noexcept;

// The message of the most recent exception thrown by a handler; empty if none.
std::string lastHandlerError();

// Events dropped because handlers nested deeper than kMaxHandlerDepth.
uint64_t droppedReentrantEventCount() noexcept;

// Handlers currently registered.
std::size_t registeredEventHandlerCount() noexcept;

}  // namespace livemon
