#pragma once

#include <atomic>
#include <iosfwd>
#include <string>

#include <livemonctl/demo.h>

// `livemonctl demo --ranks N`: the demo's training job as N ranks of one process.
namespace livemon::livemonctl {

// The endpoint rank `rank` binds when the ranks bind rather than connect: `endpoint` for rank 0;
// for the others a TCP port `rank` above its port, or, for ipc:// and inproc://, the address with
// "-<rank>" appended. A "*" port stays "*".
std::string rankEndpoint(const std::string& endpoint, int64_t rank);

// Runs options.ranks ranks (0..ranks-1, one run name, each its own Publisher, seed and pace) in
// lockstep until `stop` or options.duration. Each rank publishes the demo's Stats (train.loss,
// train.lr, train.samples_per_s, train.step_time_ms, train.grad_norm, system.memory_gb) and its
// eval events; the ranges and the WaitCounter of a single-rank demo are left out. Options are
// checked by the caller. Returns 0.
int runDemoRanks(const DemoOptions& options, const std::atomic<bool>& stop, std::ostream& out);

}  // namespace livemon::livemonctl
