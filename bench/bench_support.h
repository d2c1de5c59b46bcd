// What the benchmarks share.
#pragma once

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace livemon::bench {

// A benchmark's command line. `--help` or `-h` anywhere prints `usage` (one line, the program's
// arguments) to stdout and exits 0.
inline void exitOnHelp(int argc, char** argv, const char* usage) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::printf("usage: %s\n", usage);
      std::exit(0);
    }
  }
}

// The positional argument `index` (1-based) as a whole number in [min, max]; `fallback` when it is
// not given. Anything else prints what was wrong and `usage` to stderr and exits 2.
inline uint64_t countArgument(int argc, char** argv, int index, uint64_t fallback, uint64_t min, uint64_t max,
                              const char* usage) {
  if (index >= argc) return fallback;
  const char* text = argv[index];
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (*text < '0' || *text > '9' || end == text || *end != '\0' || value < min || value > max) {
    std::fprintf(stderr, "argument %d must be a whole number from %llu to %llu, not '%s'\nusage: %s\n", index,
                 static_cast<unsigned long long>(min), static_cast<unsigned long long>(max), text, usage);
    std::exit(2);
  }
  return value;
}

// The median of `values` (the mean of the middle two for an even count); NaN when there are none.
inline double median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The nearest-rank percentile `p` (0-100) of `values`; 0 when there are none.
inline double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size()))) - 1;
  return values[std::min(index, values.size() - 1)];
}

// This process's resident memory, MiB (VmRSS).
inline double rssMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return 0.0;
}

// CPU time of the calling thread, in ms: what the thread itself cost, however long the machine kept
// it waiting.
inline double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// Runs `side` in a child process (a clean heap, its memory its own) and returns the text it
// returned; std::nullopt when the child failed.
inline std::optional<std::string> runInChild(const std::function<std::string()>& side) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::string text = side();
    const char* data = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      const ssize_t written = write(fds[1], data, left);
      if (written <= 0) _exit(3);
      data += written;
      left -= static_cast<std::size_t>(written);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buffer[65536];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return text;
}

}  // namespace livemon::bench
