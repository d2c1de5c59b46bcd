// The cost of one range (LIVEMON_RECORD_FUNCTION) when nothing records, while a Profiler records,
// and with live range stats, beside the reference: a bare pair of steady_clock::now() calls,
// what timing a range by hand costs at least. Results: docs/benchmarks.md, section Profiler.
//
//   build/bench/profiler_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <livemon/profiler.h>
#include <livemon/record_function.h>

#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

namespace {

// Recorded ranges stay in their buffers until the profiler collects them: collect (outside the
// timing) every kCollectEvery ranges, well below a thread's cap of 2^20, so none is dropped.
constexpr int64_t kCollectEvery = 1 << 19;

void BM_Reference_SteadyClockPair(benchmark::State& state) {
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(start);
    auto end = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(end);
  }
}
BENCHMARK(BM_Reference_SteadyClockPair);

void BM_Range_Idle(benchmark::State& state) {
  for (auto _ : state) {
    LIVEMON_RECORD_FUNCTION("idle");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Range_Idle);

void BM_Range_Idle_RuntimeName(benchmark::State& state) {
  const std::string name = "idle";
  for (auto _ : state) {
    livemon::RecordFunction range(name);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Range_Idle_RuntimeName);

// A Profiler collecting at every step() records from start() on; `rangeStats` also times each
// range into its Stat. `openRange` opens and closes one range.
template <typename OpenRange>
void recording(benchmark::State& state, bool rangeStats, OpenRange openRange) {
  livemon::ProfilerOptions options;
  options.rangeStats = rangeStats;
  options.schedule = livemon::Schedule(0, 0, 1);  // every step() collects
  livemon::Profiler profiler(options);
  profiler.start();
  int64_t sinceCollect = 0;
  for (auto _ : state) {
    openRange();
    if (++sinceCollect == kCollectEvery) [[unlikely]] {
      state.PauseTiming();
      profiler.step();
      sinceCollect = 0;
      state.ResumeTiming();
    }
  }
  profiler.stop();
}

void recording(benchmark::State& state, bool rangeStats) {
  recording(state, rangeStats, [] { LIVEMON_RECORD_FUNCTION("recording"); });
}

void BM_Range_Recording(benchmark::State& state) { recording(state, false); }
BENCHMARK(BM_Range_Recording);

void BM_Range_RecordingWithRangeStats(benchmark::State& state) { recording(state, true); }
BENCHMARK(BM_Range_RecordingWithRangeStats);

void BM_Range_RangeStatsOnly(benchmark::State& state) {
  livemon::setRangeStatsEnabled(true);
  for (auto _ : state) {
    LIVEMON_RECORD_FUNCTION("stats_only");
    benchmark::ClobberMemory();
  }
  livemon::setRangeStatsEnabled(false);
}
BENCHMARK(BM_Range_RangeStatsOnly);

// Python's record_function hands a name known only at run time: one lookup per range.
void BM_Range_Recording_RuntimeName(benchmark::State& state) {
  const std::string name = "recording_runtime_name";
  recording(state, false, [&name] { livemon::RecordFunction range(name); });
}
BENCHMARK(BM_Range_Recording_RuntimeName);

}  // namespace

BENCHMARK_MAIN();
