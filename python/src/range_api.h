#pragma once
// The part of livemon's core that livemon._torch_ops drives, handed over as function pointers in
// the PyCapsule livemon._livemon._range_api. livemon's core is a static library: an extension that
// linked it again would get a second name table, a second set of range Stats and a second current
// step, invisible to the Publisher. Through the capsule there is one of each.
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace livemon::python {

inline constexpr const char* kRangeApiCapsuleName = "livemon._livemon._range_api";
// Bumped whenever the struct changes, so a stale _torch_ops refuses to load instead of crashing.
inline constexpr uint32_t kRangeApiVersion = 1;

struct RangeApi {
  uint32_t version;
  const std::atomic<uint32_t>* rangeMode;  // detail::g_rangeMode: zero means "record nothing"
  uint32_t (*internRangeName)(const char* data, std::size_t size) noexcept;
  int64_t (*beginRange)() noexcept;
  void (*endRange)(uint32_t nameId, uint32_t mode, int64_t start) noexcept;
  // The step after the current one (0 when none was set) becomes current; returns it.
  int64_t (*advanceStep)() noexcept;
};

}  // namespace livemon::python
