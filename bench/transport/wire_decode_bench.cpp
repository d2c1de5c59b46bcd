// How fast decodeMessage, the subscriber's decoder, reads events: a batch of 4096 Stat windows of
// 8 values (what a relay or `tail` mostly receives) and a batch of 4096 small events of one field.
// Prints the median of 15 rounds of each, in events per second. Built against two versions of
// livemon::wire and run alternately, it compares them (docs/benchmarks.md).
#include <livemon/transport/wire_format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace livemon;
using namespace livemon::transport;

namespace {

double medianRate(const std::string& topic, const std::string& payload, std::size_t events) {
  WireMessage message;
  std::vector<double> rates;
  for (int round = 0; round < 15; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) {
      if (decodeMessage(topic, payload, WireLimits{}, message) != DecodeStatus::Ok) return 0;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(20.0 * static_cast<double>(events) / seconds);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main() {
  SourceInfo source;
  source.run = "bench";
  source.host = "h";
  source.pid = 1;
  source.instanceId = 3;
  source.startTime = std::chrono::system_clock::now();
  std::vector<Event> stats;
  std::vector<Event> small;
  for (int i = 0; i < 4096; ++i) {
    Event event{std::string(kStatEventName), std::chrono::system_clock::now(), {}};
    for (const char* key : {"train.loss.mean", "train.loss.max", "train.loss.min", "lr.value", "tokens.count",
                            "grad.norm.p99", "step.time.mean", "x.sum"}) {
      event.data[key] = 1.5 * i;
    }
    stats.push_back(event);
    small.push_back(Event{"eval.batch", std::chrono::system_clock::now(), {{"i", int64_t{i}}}});
  }
  const std::string statPayload = encodeEventsPayload(source, 0, kStatEventName, stats);
  const std::string smallPayload = encodeEventsPayload(source, 0, "eval.batch", small);
  std::printf("stat windows: %.0f events/s (%zu-byte payload)\n",
              medianRate(std::string(kStatEventName), statPayload, stats.size()), statPayload.size());
  std::printf("small events: %.0f events/s (%zu-byte payload)\n", medianRate("eval.batch", smallPayload, small.size()),
              smallPayload.size());
  return 0;
}
