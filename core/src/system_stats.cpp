#include <livemon/system_stats.h>

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <livemon/stat.h>

#include "system_probe.h"

namespace livemon {

namespace {

// /proc/self/stat, statm and meminfo are a few hundred bytes to a few KiB; anything longer is
// not what the kernel writes.
constexpr std::size_t kMaxProcFileBytes = 64 * 1024;

void validate(const SystemStatsOptions& options) {
  auto bad = [](const std::string& message) { throw std::invalid_argument("SystemStatsOptions: " + message); };
  if (options.prefix.empty()) bad("prefix must not be empty");
  if (options.window.count() < 1) bad("window must be at least 1 ms, got " + std::to_string(options.window.count()) + " ms");
  if (options.period.count() < 1) bad("period must be at least 1 ms, got " + std::to_string(options.period.count()) + " ms");
}

}  // namespace

// Thread-safe: `sampleMutex` serialises reads (the thread's and sampleNow()'s); the thread's
// members meet under `wakeMutex`.
struct SystemStatsSampler::State {
  struct GpuStats {
    std::unique_ptr<Stat> util, memoryUsed, temperature, power;
  };

  explicit State(SystemStatsOptions opts)
      : options(std::move(opts)),
        clock(options.clock != nullptr ? *options.clock : systemClock()),
        pid(::getpid()),
        ticksPerSecond(static_cast<double>(::sysconf(_SC_CLK_TCK))),
        pageSize(static_cast<uint64_t>(::sysconf(_SC_PAGESIZE))),
        gpus(options.nvmlLibrary) {
    auto stat = [&](const std::string& name, std::vector<Aggregation> aggregations) {
      return std::make_unique<Stat>(options.prefix + "." + name, std::move(aggregations), options.window,
                                    std::numeric_limits<int64_t>::max(), clock);
    };
    const std::vector valueMeanMax{Aggregation::Value, Aggregation::Mean, Aggregation::Max};
    const std::vector valueMax{Aggregation::Value, Aggregation::Max};
    cpuPercent = stat("cpu_percent", valueMeanMax);
    rssBytes = stat("rss_bytes", valueMax);
    hostMemoryUsed = stat("host_memory_used_bytes", valueMax);
    for (std::size_t i = 0; i < gpus.count(); ++i) {
      const std::string gpu = "gpu" + std::to_string(i) + ".";
      gpuStats.push_back(GpuStats{stat(gpu + "util", valueMeanMax), stat(gpu + "memory_used_bytes", valueMax),
                                  stat(gpu + "temperature_c", valueMax), stat(gpu + "power_w", valueMeanMax)});
    }
  }

  void sample();
  void run();

  const SystemStatsOptions options;
  Clock& clock;
  const pid_t pid;
  const double ticksPerSecond;
  const uint64_t pageSize;

  std::mutex sampleMutex;
  detail::NvmlGpus gpus;                                                  // guarded by sampleMutex
  std::optional<std::pair<std::chrono::steady_clock::time_point, uint64_t>> lastCpu;  // guarded by sampleMutex
  std::unique_ptr<Stat> cpuPercent, rssBytes, hostMemoryUsed;
  std::vector<GpuStats> gpuStats;
  std::atomic<uint64_t> samples{0};

  std::thread thread;
  std::mutex wakeMutex;
  std::condition_variable wake;
  bool stop = false;  // guarded by wakeMutex
};

void SystemStatsSampler::State::sample() {
  std::lock_guard lock(sampleMutex);
  const auto now = clock.now();
  const std::string& root = options.procRoot;

  const auto statText = detail::readSmallFile(root + "/self/stat", kMaxProcFileBytes);
  const auto ticks = statText ? detail::parseProcessCpuTicks(*statText) : std::nullopt;
  if (ticks && lastCpu && *ticks >= lastCpu->second && now > lastCpu->first && ticksPerSecond > 0) {
    const double cpuSeconds = static_cast<double>(*ticks - lastCpu->second) / ticksPerSecond;
    const double wallSeconds = std::chrono::duration<double>(now - lastCpu->first).count();
    cpuPercent->add(100.0 * cpuSeconds / wallSeconds);
  }
  // A reading that could not be taken, or went backwards, starts the next span afresh.
  if (ticks) {
    lastCpu.emplace(now, *ticks);
  } else {
    lastCpu.reset();
  }

  const auto statmText = detail::readSmallFile(root + "/self/statm", kMaxProcFileBytes);
  if (const auto pages = statmText ? detail::parseResidentPages(*statmText) : std::nullopt) {
    rssBytes->add(static_cast<double>(*pages) * static_cast<double>(pageSize));
  }
  const auto meminfoText = detail::readSmallFile(root + "/meminfo", kMaxProcFileBytes);
  if (const auto used = meminfoText ? detail::parseHostMemoryUsedBytes(*meminfoText) : std::nullopt) {
    hostMemoryUsed->add(static_cast<double>(*used));
  }

  for (std::size_t i = 0; i < gpuStats.size(); ++i) {
    const detail::GpuReading reading = gpus.read(i);
    if (reading.utilPercent) gpuStats[i].util->add(*reading.utilPercent);
    if (reading.memoryUsedBytes) gpuStats[i].memoryUsed->add(*reading.memoryUsedBytes);
    if (reading.temperatureC) gpuStats[i].temperature->add(*reading.temperatureC);
    if (reading.powerWatts) gpuStats[i].power->add(*reading.powerWatts);
  }
  samples.fetch_add(1, std::memory_order_relaxed);
}

void SystemStatsSampler::State::run() {
  // Real time, not `clock`: the thread only needs to wake about once a period.
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(wakeMutex);
  while (!stop) {
    lock.unlock();
    sample();
    lock.lock();
    next += options.period;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + options.period;  // descheduled for long: no burst of catch-up reads
    wake.wait_until(lock, next, [this] { return stop; });
  }
}

SystemStatsSampler::SystemStatsSampler(SystemStatsOptions options) {
  validate(options);
  state_ = std::make_unique<State>(std::move(options));
  if (state_->options.backgroundThread) {
    State& state = *state_;
    state.thread = std::thread([&state] { state.run(); });
  }
}

SystemStatsSampler::~SystemStatsSampler() {
  if (::getpid() != state_->pid) {
    // Inherited through fork(): the thread does not exist here and NVML's state is the parent's.
    // Touch none of it; the process's exit reclaims the memory.
    static_cast<void>(state_.release());
    return;
  }
  if (state_->thread.joinable()) {
    {
      std::lock_guard lock(state_->wakeMutex);
      state_->stop = true;
    }
    state_->wake.notify_all();
    state_->thread.join();
  }
}

void SystemStatsSampler::sampleNow() { state_->sample(); }

uint64_t SystemStatsSampler::samples() const noexcept { return state_->samples.load(std::memory_order_relaxed); }

std::size_t SystemStatsSampler::gpuCount() const noexcept { return state_->gpuStats.size(); }

const std::string& SystemStatsSampler::gpuStatus() const noexcept { return state_->gpus.status(); }

const SystemStatsOptions& SystemStatsSampler::options() const noexcept { return state_->options; }

std::shared_ptr<SystemStatsSampler> sharedSystemStatsSampler(std::chrono::milliseconds window) {
  static std::mutex mutex;
  static pid_t owner = 0;
  static auto* shared = new std::weak_ptr<SystemStatsSampler>();  // never destroyed: used until exit
  std::lock_guard lock(mutex);
  if (owner == ::getpid()) {
    if (auto running = shared->lock()) return running;
  } else {
    // Forked: the parent's sampler has no thread here; its holders keep it, nobody gets it again.
    *shared = std::weak_ptr<SystemStatsSampler>();
    owner = ::getpid();
  }
  SystemStatsOptions options;
  options.window = window;
  auto sampler = std::make_shared<SystemStatsSampler>(options);
  *shared = sampler;
  return sampler;
}

bool systemStatsRequested() {
  const std::string variable(kSystemStatsEnvironmentVariable);
  const char* text = std::getenv(variable.c_str());
  const std::string_view value = text != nullptr ? text : "";
  if (value != "" && value != "0" && value != "1") {
    throw std::invalid_argument(variable + " must be 1 (on), 0 or empty (off), got \"" + std::string(value) + "\"");
  }
  return value == "1";
}

SystemStatsHandle enableSystemStats(std::chrono::milliseconds window) {
  if (window.count() < 1) {
    throw std::invalid_argument("enableSystemStats: window must be at least 1 ms, got " + std::to_string(window.count()) +
                                " ms");
  }
  return SystemStatsHandle(sharedSystemStatsSampler(window));
}

}  // namespace livemon
