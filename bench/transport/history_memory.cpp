// What the history for late subscribers costs a training job in memory: a run of 100 Stats (mean,
// max, p99) is simulated for an hour on a ManualClock, with the publisher's history unbounded, and
// the bytes it holds (its own accounting and the process's resident memory) are reported per hour,
// for Stat windows of 1 s, 10 s and 60 s. Beside it, for reference, the size of the same Stat
// windows as JSON lines (what a log file of them would take). Results: docs/benchmarks.md.
//
//   build/bench/transport/history_memory
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/transport/publisher.h>

#include "bench_support.h"

namespace {

using namespace std::chrono_literals;

long residentKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

// Roughly what one window would take as a JSON line: {"ts":...,"name":"livemon.Stat","data":{...}}.
std::size_t jsonBytes(const livemon::Event& event) {
  std::size_t bytes = 48 + event.name.size();
  for (const auto& [key, value] : event.data) bytes += key.size() + 6 + 24;
  return bytes;
}

void measure(std::chrono::seconds window) {
  livemon::transport::PublisherOptions options;
  options.bind = {"inproc://history-memory-" + std::to_string(window.count())};
  options.statName.clear();
  options.historyBytes = std::size_t{16} * 1024 * 1024 * 1024;  // unbounded for an hour
  const long before = residentKb();
  auto publisher = std::make_unique<livemon::transport::Publisher>(options);
  std::size_t json = 0;
  const auto handle = livemon::registerEventHandler([&](const livemon::Event& event) { json += jsonBytes(event); });
  livemon::ManualClock clock;
  std::vector<std::unique_ptr<livemon::Stat>> stats;
  for (int i = 0; i < 100; ++i) {
    stats.push_back(std::make_unique<livemon::Stat>(
        "train/stat" + std::to_string(i),
        std::vector{livemon::Aggregation::Mean, livemon::Aggregation::Max, livemon::Aggregation::P99}, window,
        std::numeric_limits<int64_t>::max(), clock));
  }
  // Ten steps a second, each adding a sample to every Stat.
  uint64_t windows = 0;
  for (int tick = 0; tick < 36000; ++tick) {
    for (auto& stat : stats) stat->add(static_cast<double>(tick % 97));
    clock.advance(100ms);
    if ((tick + 1) % (window.count() * 10) == 0) windows += stats.size();
    // The I/O thread takes the windows as they come, as it would in a real hour.
    if (tick % 600 == 0) {
      while (publisher->publishedCount() < windows) std::this_thread::sleep_for(1ms);
    }
  }
  while (publisher->publishedCount() < windows) std::this_thread::sleep_for(1ms);
  livemon::unregisterEventHandler(handle);
  const livemon::transport::PublisherStats result = publisher->stats();
  const long after = residentKb();
  std::printf("%4lld s windows: %7llu windows/h  %6zu messages  history %8.2f MiB/h  (resident +%7.2f MiB)  "
              "JSON lines %7.2f MiB/h  -> 32 MiB hold %6.1f h\n",
              static_cast<long long>(window.count()), static_cast<unsigned long long>(windows), result.historyMessages,
              static_cast<double>(result.historyBytes) / (1024.0 * 1024.0),
              static_cast<double>(after - before) / 1024.0, static_cast<double>(json) / (1024.0 * 1024.0),
              32.0 * 1024 * 1024 / static_cast<double>(result.historyBytes));
  stats.clear();
  publisher.reset();
}

}  // namespace

int main(int argc, char** argv) {
  livemon::bench::exitOnHelp(argc, argv, "history_memory   (no arguments: one simulated hour for 1 s, 10 s and 60 s windows)");
  if (argc > 1) {
    std::fprintf(stderr, "history_memory takes no arguments (--help says what it does)\n");
    return 2;
  }
  std::printf("history of a 100-Stat run (mean, max, p99; 10 steps/s) over one simulated hour\n");
  for (const auto window : {1s, 10s, 60s}) measure(window);
  return 0;
}
