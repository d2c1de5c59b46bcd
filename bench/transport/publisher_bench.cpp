// What publishing costs the thread that logs: logEvent of a 6-field event with a Publisher
// attached (history off, and on at its default size), next to logEvent with no handler and with
// an empty handler, in the same run; and the first event after the I/O thread fell asleep.
// Results: docs/benchmarks.md.
//
//   build/bench/transport/publisher_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <thread>

#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>

#include "bench_events.h"

namespace {

using livemon::bench::sixFieldEvent;

void BM_LogEvent_NoHandler(benchmark::State& state) {
  const livemon::Event event = sixFieldEvent();
  for (auto _ : state) livemon::logEvent(event);
}
BENCHMARK(BM_LogEvent_NoHandler);

void BM_LogEvent_EmptyHandler(benchmark::State& state) {
  const auto handle = livemon::registerEventHandler([](const livemon::Event& e) { benchmark::DoNotOptimize(&e); });
  const livemon::Event event = sixFieldEvent();
  for (auto _ : state) livemon::logEvent(event);
  livemon::unregisterEventHandler(handle);
}
BENCHMARK(BM_LogEvent_EmptyHandler);

// The publisher's I/O thread drains the queue meanwhile; events it could not take in time are
// dropped (and cost about as much as queued ones), so the counters report both. Argument: the
// history kept for late subscribers, in MiB (0: off; 32 is the default), which costs the I/O
// thread a copy per message and never the logging thread.
void BM_LogEvent_Publisher(benchmark::State& state) {
  livemon::transport::PublisherOptions options;
  options.bind = {"inproc://publisher-bench"};
  options.statName.clear();
  options.historyBytes = static_cast<std::size_t>(state.range(0)) * 1024 * 1024;
  auto publisher = std::make_unique<livemon::transport::Publisher>(options);
  const livemon::Event event = sixFieldEvent();
  const uint64_t droppedBefore = publisher->droppedCount();
  for (auto _ : state) livemon::logEvent(event);
  const auto dropped = static_cast<double>(publisher->droppedCount() - droppedBefore);
  state.counters["dropped_fraction"] = dropped / static_cast<double>(state.iterations());
  publisher.reset();
}
BENCHMARK(BM_LogEvent_Publisher)->ArgName("history_mb")->Arg(0)->Arg(32);

// The first event after the I/O thread fell asleep (nothing queued for about 1.5 ms): the
// logging thread also writes to the publisher's eventfd to wake it. Each iteration first waits,
// untimed, long enough for the thread to be asleep; an event every few milliseconds or more
// pays this on each event, a steady stream never.
void BM_LogEvent_PublisherAsleep(benchmark::State& state) {
  livemon::transport::PublisherOptions options;
  options.bind = {"inproc://publisher-bench-asleep"};
  options.statName.clear();
  options.historyBytes = 0;
  auto publisher = std::make_unique<livemon::transport::Publisher>(options);
  const livemon::Event event = sixFieldEvent();
  for (auto _ : state) {
    state.PauseTiming();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    state.ResumeTiming();
    livemon::logEvent(event);
  }
  publisher.reset();
}
BENCHMARK(BM_LogEvent_PublisherAsleep)->Iterations(400);

}  // namespace

BENCHMARK_MAIN();
