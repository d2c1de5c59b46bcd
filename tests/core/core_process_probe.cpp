// A small program whose whole-process behaviour core_process_test checks: it is run in a fresh
// process for each mode, and prints what it saw.
#include <livemon/event_handler.h>
#include <livemon/record_function.h>
#include <livemon/stat.h>

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

using namespace std::chrono_literals;
using livemon::Aggregation;
using livemon::Event;
using livemon::Stat;

namespace {

int threadCount() {
  int count = 0;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ++count;
    }
    closedir(dir);
  }
  return count;
}

// Blocks until a Stat event arrives, or a deadline passes.
struct FirstEvent {
  std::mutex mutex;
  std::condition_variable arrived;
  bool seen = false;
  bool wait(std::chrono::seconds timeout) {
    std::unique_lock lock(mutex);
    return arrived.wait_for(lock, timeout, [&] { return seen; });
  }
  void note() {
    std::lock_guard lock(mutex);
    seen = true;
    arrived.notify_all();
  }
};

// Prints whether constructing a Stat started a thread, and whether its first add did.
int lazyThread() {
  const int atStart = threadCount();
  Stat stat("probe.lazy", {Aggregation::Count}, 1h);
  const int afterConstruct = threadCount();
  stat.add(1);
  const int afterAdd = threadCount();
  // Compared, not absolute: a sanitizer runtime may start a thread of its own.
  std::printf("construct %s, first add %s\n", afterConstruct == atStart ? "started no thread" : "started a thread",
              afterAdd > afterConstruct ? "started a thread" : "started no thread");
  return 0;
}

// Returns from main with live Stats (static, leaked and scheduled) and registered handlers.
Stat staticStat("probe.static", {Aggregation::Count}, 1h);

int exitWithLiveStats() {
  livemon::registerEventHandler([](const Event& e) {
    for (const auto& [key, value] : e.data) std::printf("event %s\n", key.c_str());
    std::fflush(stdout);
  });
  static Stat* leaked = new Stat("probe.leaked", {Aggregation::Count}, 10ms);  // never destroyed
  leaked->add(1);
  staticStat.add(1);  // logged by its destructor during exit
  std::printf("returning\n");
  std::fflush(stdout);
  return 0;
}

// Returns from main with a range Stat's window open (an hour long), never calling
// flushRangeStats(): exit logs it.
int exitWithRangeStats() {
  livemon::registerEventHandler([](const Event& e) {
    for (const auto& [key, value] : e.data) std::printf("event %s\n", key.c_str());
    std::fflush(stdout);
  });
  livemon::setRangeStatsEnabled(true, std::chrono::hours(1));
  { LIVEMON_RECORD_FUNCTION("probe.range"); }
  std::printf("returning\n");
  std::fflush(stdout);
  return 0;
}

// Returns from main while a handler is stuck on the window thread.
int exitDuringHandler() {
  FirstEvent entered;
  livemon::registerEventHandler([&](const Event&) {
    entered.note();
    for (;;) pause();  // a handler that never returns
  });
  static Stat stat("probe.stuck", {Aggregation::Count}, 5ms);
  stat.add(1);
  if (!entered.wait(10s)) return 3;
  std::printf("returning\n");
  std::fflush(stdout);
  return 0;
}

// Forks while the window thread is running; the child's windows still close on time.
int forkChild() {
  FirstEvent parentSaw;
  livemon::registerEventHandler([&](const Event&) { parentSaw.note(); });
  Stat parentStat("probe.parent", {Aggregation::Count}, 5ms);
  parentStat.add(1);
  if (!parentSaw.wait(10s)) return 3;

  const pid_t child = fork();
  if (child == 0) {
    FirstEvent childSaw;
    livemon::registerEventHandler([&](const Event& e) {
      if (e.data.count("probe.child.count")) childSaw.note();
    });
    Stat childStat("probe.child", {Aggregation::Count}, 5ms);
    childStat.add(1);
    _exit(childSaw.wait(10s) ? 0 : 4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  const bool childOk = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::printf("child %s\n", childOk ? "ok" : "failed");
  return childOk ? 0 : 5;
}

// Forks while another thread has samples in the open window (in its own slot) and is still
// alive: the child, which has no such thread, logs them once with its own, and its thread goes
// on adding; the parent's window is untouched by the child's.
int forkMidWindow() {
  std::mutex mutex;
  std::condition_variable changed;
  int phase = 0;  // 1: the helper added, 2: the helper may finish; guarded by mutex
  double childCount = -1;
  livemon::registerEventHandler([&](const Event& e) {
    if (auto it = e.data.find("probe.shared.count"); it != e.data.end()) {
      std::printf("count %g\n", std::get<double>(it->second));
      std::fflush(stdout);
      childCount = std::get<double>(it->second);
    }
  });
  Stat shared("probe.shared", {Aggregation::Count}, 1h);
  std::thread helper([&] {
    for (int i = 0; i < 10; ++i) shared.add(1);
    std::unique_lock lock(mutex);
    phase = 1;
    changed.notify_all();
    changed.wait(lock, [&] { return phase == 2; });
  });
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return phase == 1; });
  }
  for (int i = 0; i < 5; ++i) shared.add(1);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    shared.add(1);
    shared.flush();  // 10 + 5 + 1
    const bool first = childCount == 16;
    shared.add(1);
    shared.add(1);
    shared.flush();  // the inherited slot is not logged again
    _exit(first && childCount == 2 ? 0 : 4);
  }
  int status = 0;
  waitpid(child, &status, 0);
  const bool childOk = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  {
    std::lock_guard lock(mutex);
    phase = 2;
    changed.notify_all();
  }
  helper.join();
  shared.flush();  // the parent's own 15
  std::printf("child %s\n", childOk ? "ok" : "failed");
  return childOk ? 0 : 5;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "lazy-thread") return lazyThread();
  if (mode == "exit-with-live-stats") return exitWithLiveStats();
  if (mode == "exit-with-range-stats") return exitWithRangeStats();
  if (mode == "exit-during-handler") return exitDuringHandler();
  if (mode == "fork") return forkChild();
  if (mode == "fork-mid-window") return forkMidWindow();
  std::fprintf(stderr, "usage: core_process_probe lazy-thread|exit-with-live-stats|exit-with-range-stats|exit-during-handler|fork|fork-mid-window\n");
  return 2;
}
