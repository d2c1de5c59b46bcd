#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// Internal to core: the readers behind SystemStatsSampler. The /proc parsers take the file's
// text, so tests feed them anything; every one returns nullopt for text it does not understand.
namespace livemon::detail {

// The whole file when it holds at most `maxBytes`; nullopt when it cannot be read or is longer.
std::optional<std::string> readSmallFile(const std::string& path, std::size_t maxBytes);

// /proc/<pid>/stat: utime + stime (fields 14 and 15), in clock ticks.
std::optional<uint64_t> parseProcessCpuTicks(std::string_view text);
// /proc/<pid>/statm: resident pages (the second field).
std::optional<uint64_t> parseResidentPages(std::string_view text);
// /proc/meminfo: (MemTotal - MemAvailable) in bytes; nullopt when either line is missing or
// MemAvailable exceeds MemTotal.
std::optional<uint64_t> parseHostMemoryUsedBytes(std::string_view text);

// Thread-safety: a plain value type.
//
// One GPU's reading; a field NVML would not give is unset.
struct GpuReading {
  std::optional<double> utilPercent;
  std::optional<double> memoryUsedBytes;
  std::optional<double> temperatureC;
  std::optional<double> powerWatts;
};

// Not thread-safe: one owner at a time; one sampler uses it, one read at a time.
//
// NVML loaded with dlopen(): the functions livemon calls, declared here from NVML's C API so
// that nothing of CUDA is needed to build. A library that is missing, lacks a function or fails
// nvmlInit leaves no GPUs and says why in status().
class NvmlGpus {
 public:
  explicit NvmlGpus(const std::string& library);
  ~NvmlGpus();
  NvmlGpus(const NvmlGpus&) = delete;
  NvmlGpus& operator=(const NvmlGpus&) = delete;

  std::size_t count() const noexcept { return devices_.size(); }
  const std::string& status() const noexcept { return status_; }
  GpuReading read(std::size_t index) const;

  // More than this many devices are not sampled (NVML reports what the host has: 8 or 16).
  static constexpr unsigned kMaxDevices = 64;

 private:
  struct Api;
  void* library_ = nullptr;
  std::unique_ptr<Api> api_;
  bool initialized_ = false;
  std::vector<void*> devices_;  // nvmlDevice_t
  std::string status_;
};

}  // namespace livemon::detail
