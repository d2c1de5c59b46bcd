#pragma once

// What stat_bench and torch_stat_bench add: the same samples, the same loop.

#include <benchmark/benchmark.h>

#include <cstddef>
#include <random>
#include <vector>

namespace livemon::bench {

// Step-time-like samples (milliseconds, skewed), so the quantile sketch sees a realistic spread.
inline const std::vector<double>& statSamples() {
  static const std::vector<double> values = [] {
    std::mt19937_64 rng(3);
    std::gamma_distribution<double> dist(9, 12);
    std::vector<double> out(4096);
    for (double& v : out) v = dist(rng);
    return out;
  }();
  return values;
}

// Adds a sample per iteration; each thread starts at its own place in the samples.
template <typename StatT>
void addLoop(benchmark::State& state, StatT& stat) {
  const auto& values = statSamples();
  std::size_t i = static_cast<std::size_t>(state.thread_index()) * 977;
  for (auto _ : state) {
    stat.add(values[i++ & 4095]);
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace livemon::bench
