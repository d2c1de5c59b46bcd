// The registry of fork hooks that core, transport and the Python module share. The hooks are
// process-wide and cannot be removed, so every test registers its own in a process of its own
// (a death-test child) and forks from there.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <livemon/detail/fork_hooks.h>

namespace {

using livemon::detail::ForkHooks;
using livemon::detail::ForkStage;
using livemon::detail::kForkStages;
using livemon::detail::registerForkHooks;

// What the hooks did in this process, e.g. "p0 p1 c1 c0".
std::string g_log;

template <unsigned Stage>
void prepareHook() noexcept {
  g_log += " p" + std::to_string(Stage);
}
template <unsigned Stage>
void parentHook() noexcept {
  g_log += " a" + std::to_string(Stage);
}
template <unsigned Stage>
void childHook() noexcept {
  g_log += " c" + std::to_string(Stage);
}
template <unsigned Stage>
ForkHooks hooksOf() {
  return ForkHooks{prepareHook<Stage>, parentHook<Stage>, childHook<Stage>};
}

// Leaves the death-test child with status 0, or 1 after printing why.
[[noreturn]] void finish(bool ok, const std::string& why) {
  if (!ok) std::fprintf(stderr, "%s\n", why.c_str());
  std::fflush(stderr);
  std::_Exit(ok ? 0 : 1);
}

// Forks once and returns what the hooks logged in the parent and in the child (the child's log
// comes back through a pipe). The log is cleared first.
struct ForkLogs {
  std::string parent;
  std::string child;
};
ForkLogs forkAndLog() {
  int fds[2];
  if (pipe(fds) != 0) finish(false, "pipe failed");
  g_log.clear();
  const pid_t pid = fork();
  if (pid < 0) finish(false, "fork failed");
  if (pid == 0) {
    const ssize_t written = write(fds[1], g_log.data(), g_log.size());
    _exit(written == static_cast<ssize_t>(g_log.size()) ? 0 : 1);
  }
  ForkLogs logs;
  logs.parent = g_log;
  close(fds[1]);
  char buffer[256];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) logs.child.append(buffer, static_cast<std::size_t>(n));
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    finish(false, "the child did not report its log");
  }
  return logs;
}

void expectLogs(const ForkLogs& logs, const std::string& parent, const std::string& child) {
  if (logs.parent != parent) finish(false, "parent ran [" + logs.parent + " ], expected [" + parent + " ]");
  if (logs.child != child) finish(false, "child ran [" + logs.child + " ], expected [" + child + " ]");
}

// Each scenario runs in a death-test child, which ends with finish().
[[noreturn]] void stagesDecideTheOrder() {
  // Registered out of order: the stages decide, not the order of registration.
  const bool ok = registerForkHooks(ForkStage::EventHandlers, hooksOf<3>()) &&
                  registerForkHooks(ForkStage::ZmqContext, hooksOf<5>()) &&
                  registerForkHooks(ForkStage::WindowThread, hooksOf<0>()) &&
                  registerForkHooks(ForkStage::PythonHandlers, hooksOf<4>()) &&
                  registerForkHooks(ForkStage::Ranges, hooksOf<2>()) &&
                  registerForkHooks(ForkStage::StatSlots, hooksOf<1>());
  if (!ok) finish(false, "a registration failed");
  const std::string parent = " p0 p1 p2 p3 p4 p5 a5 a4 a3 a2 a1 a0";
  const std::string child = " p0 p1 p2 p3 p4 p5 c5 c4 c3 c2 c1 c0";
  expectLogs(forkAndLog(), parent, child);
  // And at every fork, not only the first.
  expectLogs(forkAndLog(), parent, child);
  finish(true, "");
}

[[noreturn]] void firstHooksStay() {
  if (!registerForkHooks(ForkStage::Ranges, hooksOf<1>())) finish(false, "the first registration failed");
  if (registerForkHooks(ForkStage::Ranges, hooksOf<3>())) finish(false, "the second registration succeeded");
  expectLogs(forkAndLog(), " p1 a1", " p1 c1");
  finish(true, "");
}

[[noreturn]] void missingHooksSkipped() {
  // As the ZeroMQ context registers: a child hook only.
  const bool ok = registerForkHooks(ForkStage::ZmqContext, ForkHooks{nullptr, nullptr, childHook<4>}) &&
                  registerForkHooks(ForkStage::WindowThread, ForkHooks{prepareHook<0>, nullptr, nullptr});
  if (!ok) finish(false, "a registration failed");
  expectLogs(forkAndLog(), " p0", " p0 c4");
  finish(true, "");
}

// A stage registered while a fork is under way (here: by a later stage's prepare hook, after the
// new stage's place in the order has passed) must not get a parent or child hook without its
// prepare; it takes part from the next fork on.
void registerRangesLate() noexcept {
  g_log += " p3";
  registerForkHooks(ForkStage::Ranges, hooksOf<1>());
}

[[noreturn]] void lateStageWaitsForTheNextFork() {
  if (!registerForkHooks(ForkStage::PythonHandlers, ForkHooks{registerRangesLate, nullptr, nullptr})) {
    finish(false, "the registration failed");
  }
  expectLogs(forkAndLog(), " p3", " p3");
  expectLogs(forkAndLog(), " p1 p3 a1", " p1 p3 c1");
  finish(true, "");
}

TEST(ForkHooks, PrepareRunsInStageOrderAndParentAndChildInReverse) {
  static_assert(kForkStages == 6);
  EXPECT_EXIT(stagesDecideTheOrder(), ::testing::ExitedWithCode(0), "");
}

TEST(ForkHooks, AStageKeepsItsFirstHooks) { EXPECT_EXIT(firstHooksStay(), ::testing::ExitedWithCode(0), ""); }

TEST(ForkHooks, MissingHooksAreSkipped) { EXPECT_EXIT(missingHooksSkipped(), ::testing::ExitedWithCode(0), ""); }

TEST(ForkHooks, AStageRegisteredDuringAForkWaitsForTheNextFork) {
  EXPECT_EXIT(lateStageWaitsForTheNextFork(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
