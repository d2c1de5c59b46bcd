#pragma once

#include <atomic>
#include <iosfwd>

#include <livemonctl/command_line.h>
#include <livemonctl/demo_options.h>

// `livemonctl demo`: a synthetic training job that publishes what a real one would.
namespace livemon::livemonctl {

// Runs the demo until `stop` becomes true, `duration` passes or `steps` steps are done (with
// ranks > 1 or a straggler: runDemoRanks): sets the run's config (setRunConfig) when there is one,
// and publishes Stats (train.loss,
// train.lr, train.samples_per_s, train.step_time_ms with p50/p90/p99, train.grad_norm,
// system.memory_gb), an "eval" event each epoch, a WaitCounter "train.data_loading", and nested
// ranges (train_step around data, forward, backward with allreduce inside, optimizer) timed live
// as range/<name> Stats with the Stat window. Prints where it publishes, and each eval, to `out`.
// With options.recordPath, every event it publishes is also written into that recording
// (DemoRecording), closed when the demo stops. Returns the exit code: 0, or kFailedExitCode for a
// bad option, an endpoint that cannot be bound, or a recording that could not be written (`err`
// names it).
int runDemo(const DemoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// Adds `demo` and its options to `app` (command_line.h).
Command addDemoCommand(CLI::App& app);

}  // namespace livemon::livemonctl
