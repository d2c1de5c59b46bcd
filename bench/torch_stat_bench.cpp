// Stat::add beside torch.monitor's own Stat<double>::add, compiled from the headers the torch pip
// wheel ships and linked against its libtorch_cpu (for registerStat and logEvent). Not part of the
// default build: configure with -DLIVEMON_TORCH_ROOT=<site-packages>/torch (torch 2.x), then
//
//   build/bench/torch_stat_bench --benchmark_repetitions=9 --benchmark_report_aggregates_only=true
//
// Results: docs/benchmarks.md, "issue 32, goal 1".
#include <livemon/stat.h>

#include <torch/csrc/monitor/counters.h>

#include <benchmark/benchmark.h>

#include "stat_bench_samples.h"

#include <chrono>
#include <limits>
#include <vector>

namespace {

using namespace std::chrono_literals;

using livemon::bench::addLoop;

// The same five aggregations on both sides; windows of 1 s, so windows close during the run.
void BM_Torch_Add_Basic(benchmark::State& state) {
  using torch::monitor::Aggregation;
  static torch::monitor::Stat<double>* stat = nullptr;
  if (state.thread_index() == 0) {
    stat = new torch::monitor::Stat<double>(
        "bench.torch", {Aggregation::MEAN, Aggregation::COUNT, Aggregation::SUM, Aggregation::MAX, Aggregation::MIN},
        std::chrono::milliseconds(1000));
  }
  addLoop(state, *stat);
}

void BM_Livemon_Add_Basic(benchmark::State& state) {
  using livemon::Aggregation;
  static livemon::Stat* stat = nullptr;
  if (state.thread_index() == 0) {
    stat = new livemon::Stat("bench.basic",
                             {Aggregation::Mean, Aggregation::Count, Aggregation::Sum, Aggregation::Max, Aggregation::Min},
                             1s);
  }
  addLoop(state, *stat);
}

// Leaked on purpose, as in stat_bench.cpp: a window may still close after the run.
BENCHMARK(BM_Torch_Add_Basic)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_Livemon_Add_Basic)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
