#pragma once

#include <cstdint>

// Internal to livemon: shared by core, the libraries above it and the Python module through
// core's build-only include root (core/internal). Never installed; not part of the API.

namespace livemon::detail {

// The parts of livemon that act around fork(), in the order their prepare hooks run (the forking
// thread, before fork). Their parent and child hooks run in the reverse order. One process-wide
// pthread_atfork handler runs them all, so the order does not depend on which part happened to
// be used first.
//
// A prepare hook may wait for work that needs the locks of the stages after it, never before it.
enum class ForkStage : unsigned {
  // core: holds the Stat window thread between two closes. First, because a close in progress
  // logs through every stage below (ranges, Python handlers, the handler list).
  WindowThread,
  // core: only a child hook, on the thread that forked: its Stat slots (stat_slots.h) belong to
  // the child's process; the other threads' are inherited, to be merged and freed.
  StatSlots,
  // core: the range registry (names, thread buffers, the profiler slot) and its clock.
  Ranges,
  // core: the list of event handlers.
  EventHandlers,
  // python: the registrations of Python handlers and the objects waiting for the GIL.
  PythonHandlers,
  // transport: the ZeroMQ context. It has only a child hook, which runs first in the child: the
  // transport objects there learn they were inherited before anything else can run (the window
  // thread that WindowThread's child hook restarts logs to the publishers).
  ZmqContext,
};
inline constexpr unsigned kForkStages = 6;

using ForkHook = void (*)() noexcept;

// Thread-safety: a plain value type.
// What one stage does around fork(); any hook may be null.
struct ForkHooks {
  ForkHook prepare = nullptr;  // before fork(), on the forking thread
  ForkHook parent = nullptr;   // after fork(), in the parent, on the forking thread
  ForkHook child = nullptr;    // after fork(), in the child (its only thread)
};

// Thread-safe. Makes `hooks` run at every later fork() of the process. Each stage is registered
// once: a second registration of a stage is ignored. The hooks of a stage registered while
// another thread forks run from the next fork on, never a parent or child hook without its
// prepare. Returns false when the hooks will not run: the stage already has hooks, or the
// process's fork handler could not be installed (pthread_atfork failed, out of memory; the
// failure is not retried).
bool registerForkHooks(ForkStage stage, const ForkHooks& hooks) noexcept;

// Thread-safe. Increments in the child at every fork() after the first call of countForks() (or
// the first registerForkHooks()), before any stage's child hook runs. An object that saw another
// generation when it was made was inherited through fork(): it must not touch what its parent's
// threads own (ZeroMQ sockets, a file another thread writes, their locks).
uint64_t forkGeneration() noexcept;
// Thread-safe. Makes forkGeneration() count the forks from now on; false when the process's fork
// handler could not be installed (pthread_atfork failed).
bool countForks() noexcept;

}  // namespace livemon::detail
