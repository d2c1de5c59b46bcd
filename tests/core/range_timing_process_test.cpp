// Several fresh processes time the same known work as ranges while every core is busy, the way
// several training jobs share a loaded machine: each process's range Stat must agree with
// steady_clock's measurement of the same spans. A range clock calibrated while its thread was
// preempted made some of them read several times too long, for the life of the process.
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "test_paths.h"

namespace {

using namespace std::chrono_literals;

constexpr int kProbes = 4;
constexpr int kWorkMs = 20;  // long against a clock read (tens of ns) and a range's cost
constexpr int kRanges = 50;

struct Probe {
  pid_t pid = -1;
  int output = -1;  // read end of the probe's stdout
  std::string text;
  bool finished = false;
  int exitCode = -1;
};

Probe startProbe(unsigned busyThreads) {
  Probe probe;
  int fds[2];
  if (pipe(fds) != 0) return probe;
  const std::string workMs = std::to_string(kWorkMs);
  const std::string ranges = std::to_string(kRanges);
  const std::string busy = std::to_string(busyThreads);
  const std::string probePath = livemon::test_paths::builtFile("range_timing_probe");
  probe.pid = fork();
  if (probe.pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl(probePath.c_str(), probePath.c_str(), workMs.c_str(), ranges.c_str(), busy.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  probe.output = fds[0];
  return probe;
}

// Reads every probe's output until all have closed it, then reaps them; kills those still
// running at the deadline.
void finish(std::vector<Probe>& probes, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Probe*> owners;
    for (Probe& probe : probes) {
      if (probe.output >= 0) {
        fds.push_back(pollfd{probe.output, POLLIN, 0});
        owners.push_back(&probe);
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (fds.empty() || left <= 0ms) break;
    if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      char buffer[1024];
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        owners[i]->text.append(buffer, static_cast<std::size_t>(n));
      } else {
        close(owners[i]->output);  // EOF: the probe exited
        owners[i]->output = -1;
      }
    }
  }
  for (Probe& probe : probes) {
    if (probe.output >= 0) {
      close(probe.output);
      probe.output = -1;
    }
    if (probe.pid <= 0) continue;
    int status = 0;
    pid_t reaped = 0;
    while ((reaped = waitpid(probe.pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
      pollfd none{-1, 0, 0};
      poll(&none, 0, 10);
    }
    if (reaped != probe.pid) {
      kill(probe.pid, SIGKILL);
      waitpid(probe.pid, &status, 0);
      continue;
    }
    probe.finished = true;
    probe.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
}

TEST(RangeTimingProcessTest, EveryProcessOnALoadedMachineTimesItsRangesAsSteadyClockDoes) {
  // A busy loop per core here and in each probe, started before the probes calibrate.
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 0; i < cores; ++i) {
    load.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  std::vector<Probe> probes;
  for (int i = 0; i < kProbes; ++i) probes.push_back(startProbe(cores));
  finish(probes, std::chrono::steady_clock::now() + 120s);
  stop = true;
  for (std::thread& thread : load) thread.join();

  for (const Probe& probe : probes) {
    SCOPED_TRACE("probe " + std::to_string(probe.pid) + ": " + probe.text);
    ASSERT_TRUE(probe.finished);
    ASSERT_EQ(probe.exitCode, 0);
    double count = 0, rangeMs = 0, steadyMs = 0;
    ASSERT_EQ(std::sscanf(probe.text.c_str(), "count %lf range_ms %lf steady_ms %lf", &count, &rangeMs, &steadyMs), 3);
    EXPECT_EQ(count, kRanges);
    // Two measurements of the same spans: a correctness bound on their ratio, not a timing.
    // The steady_clock spans also hold the range's own cost, microseconds against a second.
    ASSERT_GT(steadyMs, 0);
    EXPECT_LT(std::abs(rangeMs / steadyMs - 1.0), 0.05);
  }
}

}  // namespace
