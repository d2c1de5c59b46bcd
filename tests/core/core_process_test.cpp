// Runs core_process_probe in fresh processes: thread start, exit and fork behaviour can only be
// seen from outside a process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "test_paths.h"

namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

struct ProbeResult {
  bool finished = false;  // false: still running at the deadline, and killed
  int exitCode = -1;
  std::string output;
};

ProbeResult runProbe(const std::string& mode, std::chrono::milliseconds deadline) {
  int pipeFds[2];
  if (pipe(pipeFds) != 0) return {};
  const std::string probePath = livemon::test_paths::builtFile("core_process_probe");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipeFds[1], STDOUT_FILENO);
    close(pipeFds[0]);
    close(pipeFds[1]);
    execl(probePath.c_str(), probePath.c_str(), mode.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipeFds[1]);
  ProbeResult result;
  const auto until = std::chrono::steady_clock::now() + deadline;
  char buffer[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left <= 0ms) break;
    pollfd fd{pipeFds[0], POLLIN, 0};
    if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t n = read(pipeFds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // EOF: the probe closed stdout by exiting
    result.output.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipeFds[0]);
  int status = 0;
  while (std::chrono::steady_clock::now() < until) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      result.finished = true;
      result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return result;
    }
    pollfd none{-1, 0, 0};
    poll(&none, 0, 10);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return result;
}

TEST(CoreProcessTest, WindowThreadStartsOnlyWhenAWindowNeedsClosing) {
  const ProbeResult r = runProbe("lazy-thread", 30s);
  ASSERT_TRUE(r.finished);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.output, "construct started no thread, first add started a thread\n");
}

TEST(CoreProcessTest, ProcessWithLiveStatsAndHandlersExitsPromptly) {
  // "Promptly": far less than the probe's one-hour windows; the deadline only catches a hang.
  const ProbeResult r = runProbe("exit-with-live-stats", 30s);
  ASSERT_TRUE(r.finished) << "the process did not exit; output so far:\n" << r.output;
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_THAT(r.output, HasSubstr("returning\n"));
  EXPECT_THAT(r.output, HasSubstr("event probe.static.count"));  // the static Stat's last window
}

TEST(CoreProcessTest, ExitLogsTheOpenWindowsOfRangeStats) {
  const ProbeResult r = runProbe("exit-with-range-stats", 30s);
  ASSERT_TRUE(r.finished) << "the process did not exit; output so far:\n" << r.output;
  EXPECT_EQ(r.exitCode, 0);
  // After "returning": logged by the exit, not before.
  EXPECT_THAT(r.output, HasSubstr("returning\nevent range/probe.range."));
  EXPECT_THAT(r.output, HasSubstr("event range/probe.range.count"));
}

TEST(CoreProcessTest, ExitIsNotHeldUpByAHandlerStuckOnTheWindowThread) {
  const ProbeResult r = runProbe("exit-during-handler", 30s);
  ASSERT_TRUE(r.finished) << "the process did not exit; output so far:\n" << r.output;
  EXPECT_EQ(r.exitCode, 0);
}

TEST(CoreProcessTest, ForkedChildClosesItsOwnWindows) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads after a multi-threaded fork; the other builds test this";
#endif
  const ProbeResult r = runProbe("fork", 30s);
  ASSERT_TRUE(r.finished) << r.output;
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.output, "child ok\n");
}

TEST(CoreProcessTest, ForkedChildLogsAnotherThreadsOpenSamplesOnce) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads after a multi-threaded fork; the other builds test this";
#endif
  const ProbeResult r = runProbe("fork-mid-window", 30s);
  ASSERT_TRUE(r.finished) << r.output;
  EXPECT_EQ(r.exitCode, 0) << r.output;
  // The child's two windows (16, then 2) print in the child, the parent's (15) after it ends.
  EXPECT_EQ(r.output, "count 16\ncount 2\ncount 15\nchild ok\n");
}

}  // namespace
