#pragma once

// Internal to livemon: shared by core, transport and the Python module through livemon::core's
// build-tree include path. Never installed; not part of the API.

#include <cstdint>
#include <optional>

#include <livemon/event.h>

namespace livemon::detail {

// Thread-safety: reads this thread's state only.
//
// The step logEvent gave `event` without stamping it: while handlers run on this thread for an
// event that has no `step` of its own, the step current when it was logged; otherwise none.
// logEvent hands handlers the event it was given (no copy, no data lookup) and keeps this step
// beside it, so a handler that passes the step on must read it here or through statedStep(), and
// only while it runs. The address alone is compared: an int data field "step", which states the
// event's step (statedStep), takes precedence; callers that honour it check for it themselves.
std::optional<int64_t> dispatchStep(const Event& event) noexcept;

// dispatchStep() for the hot path: true and the step in `step`, or false. A std::optional<int64_t>
// returned through memory, as g++ builds it, is written a byte and read eight at a time, which
// costs a stalled load per step (a tenth of what a Publisher costs the logging thread).
bool findDispatchStep(const Event& event, int64_t& step) noexcept;

// True when `event` states its step in an int64 data field named kStepKey. A walk over the
// keys, cheaper than a lookup for the few fields an event has.
bool hasStepField(const Event& event) noexcept;

// What `event.step` would read had logEvent stamped a copy: its own step, else the dispatch step
// unless a "step" field states the step itself. For handlers that keep or send the event on.
// findLoggedStep() is the same, without std::optional (see findDispatchStep).
inline bool findLoggedStep(const Event& event, int64_t& step) noexcept {
  if (event.step.has_value()) {
    step = *event.step;
    return true;
  }
  return findDispatchStep(event, step) && !hasStepField(event);
}
inline std::optional<int64_t> loggedStep(const Event& event) noexcept {
  int64_t step = 0;
  if (!findLoggedStep(event, step)) return std::nullopt;
  return step;
}

}  // namespace livemon::detail
