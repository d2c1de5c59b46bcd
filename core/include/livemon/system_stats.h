#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <livemon/clock.h>

// What the machine under a training job is doing, as Stats: the process's CPU and memory, the
// host's memory, and each GPU's utilization, memory, temperature and power (through NVML, loaded
// at run time when present; livemon never links CUDA). A program switches them on with
// enableSystemStats() (below); a Publisher does it for PublisherOptions::systemStats or
// LIVEMON_SYSTEM_STATS=1.
namespace livemon {

// Thread-safety: a plain value type.
//
// The Stats, each "<prefix>.<name>" (prefix "system" by default), one sample per period:
//   cpu_percent                 value mean max   the process's CPU time over wall time; 100 = one core
//   rss_bytes                   value max        the process's resident memory
//   host_memory_used_bytes      value max        MemTotal - MemAvailable of /proc/meminfo
//   gpu<i>.util                 value mean max   NVML's GPU utilization, percent
//   gpu<i>.memory_used_bytes    value max
//   gpu<i>.temperature_c        value max
//   gpu<i>.power_w              value mean max
// <i> is NVML's device index (all the host's GPUs, whatever CUDA_VISIBLE_DEVICES says). A
// quantity that cannot be read (a missing or malformed file, an NVML call that fails) gets no
// sample, so its Stat logs no window; nothing is reported as an error.
struct SystemStatsOptions {
  std::string prefix = "system";
  // The Stats' window. Value, mean and max of a window describe its samples.
  std::chrono::milliseconds window{5000};
  // How often the sampler thread reads; also the span of the first CPU percentage.
  std::chrono::milliseconds period{1000};
  // Where /proc is: the sampler reads <procRoot>/self/stat, <procRoot>/self/statm and
  // <procRoot>/meminfo (tests point it at synthetic files).
  std::string procRoot = "/proc";
  // The NVML library dlopen() loads; empty: no GPU Stats.
  std::string nvmlLibrary = "libnvidia-ml.so.1";
  // Stamps the Stats' windows and measures the wall time between samples; nullptr means
  // livemon::systemClock(). Must outlive the sampler.
  Clock* clock = nullptr;
  // False: no thread; the owner calls SystemStatsSampler::sampleNow() (tests, on a ManualClock).
  bool backgroundThread = true;
};

// Thread-safe: every member may be called from any thread; samples are taken one at a time.
//
// Reads the process's and the machine's figures once per period on a thread of its own (which
// sleeps between samples; the training thread never runs any of it) and adds them to Stats,
// which log their windows through the process's event handlers like any other Stat. A read
// costs a few small file reads and, with GPUs, four NVML calls per GPU.
//
// Fork: a sampler inherited by a forked child has no thread there; its destructor releases
// nothing it inherited.
class SystemStatsSampler {
 public:
  // Throws std::invalid_argument naming the option for an empty prefix, a window or period below
  // 1 ms. NVML's absence or failure is not an error: see gpuStatus().
  explicit SystemStatsSampler(SystemStatsOptions options = {});
  // Stops the thread and logs the Stats' open windows.
  ~SystemStatsSampler();
  SystemStatsSampler(const SystemStatsSampler&) = delete;
  SystemStatsSampler& operator=(const SystemStatsSampler&) = delete;

  // Reads once now and adds what it read to the Stats. The CPU percentage needs a previous read:
  // the first read only sets its start.
  void sampleNow();

  // Reads so far.
  uint64_t samples() const noexcept;
  // The GPUs sampled (0 without NVML).
  std::size_t gpuCount() const noexcept;
  // Why there are GPU Stats or none, for a debug line: "NVML: 2 GPUs", "NVML not loaded: ...".
  const std::string& gpuStatus() const noexcept;
  const SystemStatsOptions& options() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Thread-safe. The process's one sampler with the default options and `window`, shared by all
// who hold it: the first call starts it, and it stops when the last holder lets go. A caller
// asking for another window while it runs gets the running one (one sampler per process, not
// one per Publisher). A sampler inherited through fork() is not handed out in the child.
std::shared_ptr<SystemStatsSampler> sharedSystemStatsSampler(std::chrono::milliseconds window);

// The environment variable that asks for the system Stats for the whole process:
// LIVEMON_SYSTEM_STATS=1 (0 or empty: as unset). Every Publisher that handles logged events reads
// it; any program may, with systemStatsRequested().
inline constexpr std::string_view kSystemStatsEnvironmentVariable = "LIVEMON_SYSTEM_STATS";

// True when LIVEMON_SYSTEM_STATS is 1, false when it is unset, empty or 0. Throws
// std::invalid_argument naming the variable and its value for anything else.
bool systemStatsRequested();

// Thread-safety: a plain value type.
//
// A share of the process's system Stats: while any handle (or other holder of
// sharedSystemStatsSampler()) lives, the process's one sampler runs; when the last lets go it
// stops and logs its Stats' open windows. Default-constructed: holds nothing. Copies share.
class SystemStatsHandle {
 public:
  SystemStatsHandle() = default;

  // True while it holds the sampler on.
  explicit operator bool() const noexcept { return sampler_ != nullptr; }
  // The running sampler (its gpuStatus(), samples()), or null for an empty handle.
  const SystemStatsSampler* sampler() const noexcept { return sampler_.get(); }
  // Lets go now: the handle is empty afterwards.
  void reset() noexcept { sampler_.reset(); }

 private:
  friend SystemStatsHandle enableSystemStats(std::chrono::milliseconds window);
  explicit SystemStatsHandle(std::shared_ptr<SystemStatsSampler> sampler) : sampler_(std::move(sampler)) {}
  std::shared_ptr<SystemStatsSampler> sampler_;
};

// Switches the process's system Stats on (see the list above) until the handle, and every other
// holder, lets go: the process's one sampler reads every second and logs the Stats through the
// event handlers, so they leave through every Publisher that handles logged events, like any
// other Stat. `window` is the Stats' window when this call starts the sampler; one already
// running keeps its own. Thread-safe. Throws std::invalid_argument for a window below 1 ms.
[[nodiscard]] SystemStatsHandle enableSystemStats(std::chrono::milliseconds window = std::chrono::milliseconds(5000));

}  // namespace livemon
