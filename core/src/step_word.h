#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

// The current step as one atomic word, for logEvent's hot path (no std::optional in between:
// returning one through memory costs a store-forwarding stall on every logged event).
namespace livemon::detail {

// "No step" is kept in-band, so that a step is one atomic word and setStep one store. The value
// is reserved: setStep(INT64_MIN) is read back as no step at all.
inline constexpr int64_t kNoStep = std::numeric_limits<int64_t>::min();

// Thread-safe: an atomic, accessed with relaxed ordering (a step orders nothing else).
inline std::atomic<int64_t> stepWord{kNoStep};

}  // namespace livemon::detail
