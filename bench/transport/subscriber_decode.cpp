// What the subscriber spends per event message before delivering it: decoding a batch of 6-field
// events, and the same plus the payload hash that tells a repeated message from a forged one
// (payload_hash.h), in the same run, for batches of 1 and 100 events. Results: docs/benchmarks.md.
//
//   build/bench/transport/subscriber_decode --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include <livemon/transport/wire_format.h>

#include "bench_events.h"
#include "payload_hash.h"

namespace {

using namespace livemon;
using namespace livemon::transport;

std::string batch(std::size_t events) {
  SourceInfo source;
  source.run = "bench";
  source.host = "host";
  source.pid = 1;
  source.instanceId = 7;
  const std::vector<Event> batch(events, bench::sixFieldEvent());
  return encodeEventsPayload(source, 0, batch.front().name, batch);
}

// Arguments: the events in the batch, and whether the payload is hashed too.
void BM_Decode(benchmark::State& state) {
  const std::string payload = batch(static_cast<std::size_t>(state.range(0)));
  const bool hashed = state.range(1) != 0;
  const WireLimits limits;
  const std::string topic = bench::sixFieldEvent().name;
  WireMessage message;
  for (auto _ : state) {
    benchmark::DoNotOptimize(decodeMessage(topic, payload, limits, message));
    if (hashed) benchmark::DoNotOptimize(detail::payloadHash(payload));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * payload.size()));
}
BENCHMARK(BM_Decode)->ArgNames({"events", "hashed"})->ArgsProduct({{1, 100}, {0, 1}});

}  // namespace

BENCHMARK_MAIN();
