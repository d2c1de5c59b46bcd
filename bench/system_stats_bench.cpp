// What PublisherOptions::systemStats costs: the sampler thread's CPU time per wake (one read of
// /proc, and of NVML when present), side by side with a no-op thread that wakes on the same
// schedule, scaled to an hour at the real period of one second. The threads' CPU time is read
// from /proc/self/task/<tid>/schedstat (nanoseconds on the CPU).
//
//   build/bench/system_stats_bench [seconds per run, default 5] [runs, default 5]
//
// The sampler runs here with a 10 ms period so that a few seconds hold hundreds of wakes; at the
// default 1 s period it does the same work per wake, 100 times less often.
#include <livemon/system_stats.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"

namespace {

using livemon::bench::median;

using namespace std::chrono_literals;
constexpr auto kPeriod = 10ms;

std::set<long> threadIds() {
  std::set<long> ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    ids.insert(std::stol(entry.path().filename().string()));
  }
  return ids;
}

// The thread's time on the CPU so far, in nanoseconds.
double cpuNanoseconds(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  double ns = 0;
  in >> ns;
  return ns;
}

// Not thread-safe: one owner. Wakes every kPeriod as the sampler does, and does nothing.
class NoOpThread {
 public:
  NoOpThread() {
    thread_ = std::thread([this] {
      tid_.store(static_cast<long>(::syscall(SYS_gettid)));
      auto next = std::chrono::steady_clock::now();
      std::unique_lock lock(mutex_);
      while (!stop_) {
        ++wakes_;
        next += kPeriod;
        const auto now = std::chrono::steady_clock::now();
        if (next < now) next = now + kPeriod;
        wake_.wait_until(lock, next, [this] { return stop_; });
      }
    });
    while (tid_.load() == 0) std::this_thread::yield();
  }
  ~NoOpThread() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  long tid() const { return tid_.load(); }
  uint64_t wakes() {
    std::lock_guard lock(mutex_);
    return wakes_;
  }

 private:
  std::thread thread_;
  std::atomic<long> tid_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  uint64_t wakes_ = 0;
};

struct Measure {
  double nsPerWake;
  uint64_t wakes;
};

Measure measureSampler(std::chrono::seconds duration) {
  const std::set<long> before = threadIds();
  livemon::SystemStatsOptions options;
  options.period = kPeriod;
  options.window = 1000ms;
  livemon::SystemStatsSampler sampler(options);
  // New since: the sampler's thread and, on the first run, livemon's window thread, which the
  // sampler's first sample starts (so it comes second and has the higher id).
  std::vector<long> fresh;
  for (long id : threadIds()) {
    if (!before.contains(id)) fresh.push_back(id);
  }
  const long tid = fresh.empty() ? 0 : *std::min_element(fresh.begin(), fresh.end());
  const double start = cpuNanoseconds(tid);
  const uint64_t firstSamples = sampler.samples();
  std::this_thread::sleep_for(duration);
  const double used = cpuNanoseconds(tid) - start;
  const uint64_t wakes = sampler.samples() - firstSamples;
  return {used / static_cast<double>(std::max<uint64_t>(wakes, 1)), wakes};
}

Measure measureNoOp(std::chrono::seconds duration) {
  NoOpThread thread;
  const double start = cpuNanoseconds(thread.tid());
  const uint64_t firstWakes = thread.wakes();
  std::this_thread::sleep_for(duration);
  const double used = cpuNanoseconds(thread.tid()) - start;
  const uint64_t wakes = thread.wakes() - firstWakes;
  return {used / static_cast<double>(std::max<uint64_t>(wakes, 1)), wakes};
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "system_stats_bench [seconds per run, default 5] [runs, default 5]";
  livemon::bench::exitOnHelp(argc, argv, usage);
  const std::chrono::seconds duration(livemon::bench::countArgument(argc, argv, 1, 5, 1, 3600, usage));
  const int runs = static_cast<int>(livemon::bench::countArgument(argc, argv, 2, 5, 1, 1000, usage));
  {
    livemon::SystemStatsOptions options;
    options.backgroundThread = false;
    livemon::SystemStatsSampler probe(options);
    std::printf("GPUs: %s\n", probe.gpuStatus().c_str());
  }
  std::vector<double> sampler, noOp;
  for (int run = 0; run < runs; ++run) {
    const Measure s = measureSampler(duration);
    const Measure n = measureNoOp(duration);
    std::printf("run %d: sampler %.1f us/wake (%llu wakes), no-op thread %.1f us/wake (%llu wakes)\n", run + 1,
                s.nsPerWake / 1e3, static_cast<unsigned long long>(s.wakes), n.nsPerWake / 1e3,
                static_cast<unsigned long long>(n.wakes));
    sampler.push_back(s.nsPerWake);
    noOp.push_back(n.nsPerWake);
  }
  const double s = median(sampler);
  const double n = median(noOp);
  // At the real period, one wake a second: 3600 wakes an hour.
  std::printf("median per wake: sampler %.1f us, no-op thread %.1f us, the reads %.1f us\n", s / 1e3, n / 1e3,
              (s - n) / 1e3);
  std::printf("CPU per hour at 1 wake/s: sampler %.1f ms, no-op thread %.1f ms (%.5f %% of one core)\n", s * 3600 / 1e6,
              n * 3600 / 1e6, s * 3600 / 1e9 / 3600 * 100);
  return 0;
}
