// What a Publisher's Prometheus exporter (metricsPort) costs the thread that logs: logEvent of a
// Stat window (two Stats' worth of keys) and of a 6-field event with a Publisher attached, with
// metrics off and on, in the same run. The exporter must cost the logging thread nothing a
// publisher without it does not already pay. Results: docs/benchmarks.md.
//
//   build/bench/transport/publisher_metrics_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>

#include "bench_events.h"

namespace {

// A TCP port free now on loopback, for the exporter's HTTP server.
uint16_t freePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof(address);
  bind(fd, reinterpret_cast<sockaddr*>(&address), size);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

livemon::Event statWindow() {
  return livemon::Event{std::string(livemon::kStatEventName),
                        std::chrono::system_clock::now(),
                        {{"loss.mean", 0.4321}, {"loss.max", 0.9}, {"loss.min", 0.1},
                         {"grad_norm.mean", 1.25}, {"grad_norm.max", 2.5}, {"grad_norm.p99", 2.4}}};
}

// Arguments: the event (0: a Stat window, 1: a 6-field event) and metrics (0: off, 1: on).
void BM_LogEvent_PublisherMetrics(benchmark::State& state) {
  livemon::transport::PublisherOptions options;
  options.bind = {"inproc://publisher-metrics-bench"};
  options.statName.clear();
  options.historyBytes = 0;
  if (state.range(1) != 0) options.metricsPort = freePort();
  auto publisher = std::make_unique<livemon::transport::Publisher>(options);
  const livemon::Event event = state.range(0) == 0 ? statWindow() : livemon::bench::sixFieldEvent();
  const uint64_t droppedBefore = publisher->droppedCount();
  for (auto _ : state) livemon::logEvent(event);
  const auto dropped = static_cast<double>(publisher->droppedCount() - droppedBefore);
  state.counters["dropped_fraction"] = dropped / static_cast<double>(state.iterations());
  publisher.reset();
}
BENCHMARK(BM_LogEvent_PublisherMetrics)->ArgNames({"six_field", "metrics"})->ArgsProduct({{0, 1}, {0, 1}});

}  // namespace

BENCHMARK_MAIN();
