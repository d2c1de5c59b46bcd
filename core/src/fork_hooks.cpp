#include <livemon/detail/fork_hooks.h>

#include <pthread.h>

#include <atomic>

namespace livemon::detail {
namespace {

// A stage's hooks are written once, before its `ready` flag is published, and never change.
ForkHooks g_hooks[kForkStages];
std::atomic<bool> g_claimed[kForkStages];
std::atomic<bool> g_ready[kForkStages];

// The stages whose prepare hook ran in this thread's fork, so that a stage registered during
// the fork gets no parent or child hook without its prepare. Per thread, since two threads may
// fork at once; the child's only thread is a copy of the forking one, with its value.
thread_local unsigned t_prepared = 0;

std::atomic<uint64_t> g_forkGeneration{0};

void prepareAll() noexcept {
  unsigned prepared = 0;
  for (unsigned stage = 0; stage < kForkStages; ++stage) {
    if (!g_ready[stage].load(std::memory_order_acquire)) continue;
    prepared |= 1u << stage;
    if (g_hooks[stage].prepare != nullptr) g_hooks[stage].prepare();
  }
  t_prepared = prepared;
}

void afterFork(ForkHook ForkHooks::*hook) noexcept {
  const unsigned prepared = t_prepared;
  t_prepared = 0;
  for (unsigned stage = kForkStages; stage-- > 0;) {
    if ((prepared & (1u << stage)) != 0 && g_hooks[stage].*hook != nullptr) (g_hooks[stage].*hook)();
  }
}

void parentAll() noexcept { afterFork(&ForkHooks::parent); }
void childAll() noexcept {
  g_forkGeneration.fetch_add(1, std::memory_order_relaxed);
  afterFork(&ForkHooks::child);
}

// Installed at the first registration, so a process that never needs it has no fork handler.
bool installed() noexcept {
  static const bool ok = pthread_atfork(prepareAll, parentAll, childAll) == 0;
  return ok;
}

}  // namespace

bool registerForkHooks(ForkStage stage, const ForkHooks& hooks) noexcept {
  const auto index = static_cast<unsigned>(stage);
  if (index >= kForkStages || !installed()) return false;
  if (g_claimed[index].exchange(true, std::memory_order_relaxed)) return false;
  g_hooks[index] = hooks;
  g_ready[index].store(true, std::memory_order_release);
  return true;
}

uint64_t forkGeneration() noexcept { return g_forkGeneration.load(std::memory_order_relaxed); }

bool countForks() noexcept { return installed(); }

}  // namespace livemon::detail
