#pragma once

#include <cstdint>

#include <livemon/profiler.h>

// The collector side of ranges, used by Profiler. Everything here is serialised by one mutex
// of the registry; none of it is called from the hot path.
namespace livemon::detail {

// Claims the process's one profiler slot; false if another Profiler holds it.
bool claimProfilerSlot(const void* profiler);
void releaseProfilerSlot(const void* profiler) noexcept;

// Turns the writing of ranges to the thread buffers on or off.
void setTraceBuffering(bool on) noexcept;
// Turns range stats on or off on behalf of the running Profiler.
void setProfilerRangeStats(bool on) noexcept;

// Drops every buffered range and returns the time from which ranges count, in range ticks
// (an opaque unit: pass it to collectBufferedRanges).
int64_t discardBufferedRanges() noexcept;

// Moves every buffered range that ended at or after `since` (so also those open then) into a trace (times in
// steady_clock nanoseconds), with the names of their threads. Ranges the buffers could not hold are counted in droppedRanges.
Trace collectBufferedRanges(int64_t since);

int64_t steadyNowNs() noexcept;

// Thread-safety: a plain value type. The clock ranges are timed with, as it stands; for tests
// and diagnostics.
struct RangeClockState {
  bool counter = false;     // the time-stamp counter (else steady_clock nanoseconds)
  double nsPerTick = 1.0;
  double errorBound = 0.0;  // relative, of nsPerTick
  int64_t refines = 0;      // refines run so far, whatever they concluded
};
RangeClockState rangeClockState() noexcept;

}  // namespace livemon::detail
