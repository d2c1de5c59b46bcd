// What an idle Publisher costs its process: wake-ups (voluntary context switches of every thread,
// from /proc/self/task/*/status) and CPU time per second while nothing is logged, with the
// default options (heartbeat every 100 ms, history on, the self-report Stats). The source builds
// against any livemon version, so the same program measures the code before a change too.
// Results: docs/benchmarks.md.
//
//   build/bench/transport/publisher_idle [seconds, default 10]
#include <dirent.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <livemon/transport/publisher.h>

namespace {

// Per thread name ("comm"): voluntary context switches so far, summed over threads of that name.
std::map<std::string, long long> voluntarySwitches() {
  std::map<std::string, long long> byName;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return byName;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string base = std::string("/proc/self/task/") + entry->d_name;
    std::string name;
    std::getline(std::ifstream(base + "/comm"), name);
    std::ifstream status(base + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) byName[name] += std::atoll(line.c_str() + 24);
    }
  }
  closedir(dir);
  return byName;
}

double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  const int seconds = argc > 1 ? std::atoi(argv[1]) : 10;
  if (seconds < 1) {
    std::fprintf(stderr, "usage: publisher_idle [seconds >= 1]\n");
    return 2;
  }
  livemon::transport::PublisherOptions options;
  options.bind = {"tcp://127.0.0.1:*"};
  livemon::transport::Publisher publisher(options);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // its threads have started and settled

  const auto before = voluntarySwitches();
  const double cpuBefore = cpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const auto after = voluntarySwitches();
  const double cpuAfter = cpuSeconds();

  long long total = 0;
  std::printf("idle Publisher, %d s: voluntary context switches per second by thread\n", seconds);
  for (const auto& [name, count] : after) {
    const auto found = before.find(name);
    const long long delta = count - (found == before.end() ? 0 : found->second);
    total += delta;
    std::printf("  %-16s %8.1f\n", name.c_str(), static_cast<double>(delta) / seconds);
  }
  std::printf("process: %.1f wake-ups/s, %.2f ms CPU/s\n", static_cast<double>(total) / seconds,
              (cpuAfter - cpuBefore) * 1000.0 / seconds);
  return 0;
}
