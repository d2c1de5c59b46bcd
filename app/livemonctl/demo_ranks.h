#pragma once

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

#include <livemonctl/demo_options.h>
#include <livemonctl/demo_recording.h>

// `livemonctl demo --ranks N`: the demo's training job as N ranks of one process.
namespace livemon::livemonctl {

// The endpoint rank `rank` binds when the ranks bind rather than connect: `endpoint` for rank 0;
// for the others a TCP port `rank` above its port, or, for ipc:// and inproc://, the address with
// "-<rank>" appended. A "*" port stays "*".
std::string rankEndpoint(const std::string& endpoint, int64_t rank);

// Thread-safety: a plain value type.
//
// One rank's share of a synchronous training step.
struct RankStepTimes {
  double computeMs = 0;    // forward and backward of its own batch
  double allreduceMs = 0;  // waiting for the slowest rank, then the exchange itself
  double stepMs = 0;       // compute + allreduce: the same for every rank
};

// One step of synchronous data-parallel training: every rank computes for computeMs[r], then
// joins an allreduce that can only finish once the slowest rank has arrived, followed by commMs
// of exchange. So a rank's allreduce time is (slowest compute - its own compute + commMs), and
// every rank's step time is (slowest compute + commMs). Empty in, empty out.
std::vector<RankStepTimes> synchronousStep(const std::vector<double>& computeMs, double commMs);

// When the demo stops, as its first lines say: "stops after 30000 ms", "stops after 500 steps",
// "Ctrl-C stops it".
std::string demoStopsWhen(const DemoOptions& options);

// Runs options.ranks ranks (0..ranks-1, one run name, each its own Publisher and seed) as one
// synchronous data-parallel job until `stop`, options.duration or options.steps. With a config,
// each rank publishes it first as a livemon.run_config event of its own; with `recording`, every
// event a rank publishes is recorded there as that rank's. Each step every rank computes
// for its own time (options.straggler's stragglerFactor times longer) and waits for the slowest in
// an allreduce (synchronousStep); the job's time is simulated, and the loop sleeps only between
// steps, so the step rate drops behind a straggler as a cluster's does. Each rank publishes the
// demo's Stats (train.loss, train.lr, train.samples_per_s, train.step_time_ms, train.grad_norm,
// system.memory_gb) plus train.compute_time_ms and train.allreduce_time_ms (mean and max), and its
// eval events; the ranges and the WaitCounter of a single-rank demo are left out. Options are
// checked by the caller. Returns 0.
int runDemoRanks(const DemoOptions& options, DemoRecording* recording, const std::atomic<bool>& stop, std::ostream& out);

}  // namespace livemon::livemonctl
