#pragma once
// The part of livemon's core that livemon._torch_ops drives, handed over as function pointers in
// the PyCapsule livemon._livemon._range_api. livemon's core is a static library: an extension that
// linked it again would get a second name table, a second set of range Stats, a second current
// step and second WaitCounter totals, invisible to the Publisher. Through the capsule there is one
// of each.
//
// This header ships inside the Python package (livemon/_torch_ops_src/) with torch_ops.cpp: the
// operator observer is compiled from them against the torch a user has (livemon/torch_ops.py).
// It includes only the standard library, so that compiling it needs no livemon header.
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace livemon::python {

inline constexpr const char* kRangeApiCapsuleName = "livemon._livemon._range_api";
// Bumped whenever the struct changes, so a stale _torch_ops refuses to load instead of crashing.
inline constexpr uint32_t kRangeApiVersion = 2;

struct RangeApi {
  uint32_t version;
  const std::atomic<uint32_t>* rangeMode;  // detail::g_rangeMode: zero means "record nothing"
  uint32_t (*internRangeName)(const char* data, std::size_t size) noexcept;
  int64_t (*beginRange)() noexcept;
  void (*endRange)(uint32_t nameId, uint32_t mode, int64_t start) noexcept;
  // The step after the current one (0 when none was set) becomes current; returns it.
  int64_t (*advanceStep)() noexcept;

  // Since version 2: livemon WaitCounters, for waits that PyTorch's own wait counters measure.
  // A livemon::WaitCounter for `key`; null when wait counters are disabled
  // (LIVEMON_DISABLE_WAIT_COUNTERS=1) or memory ran out. Freed by closeWaitCounter.
  void* (*openWaitCounter)(const char* key, std::size_t size) noexcept;
  void (*closeWaitCounter)(void* counter) noexcept;
  // Starts one wait on a counter from openWaitCounter; null when memory ran out. stopWait records
  // the wait and frees what startWait returned.
  void* (*startWait)(void* counter) noexcept;
  void (*stopWait)(void* wait) noexcept;
};

}  // namespace livemon::python
