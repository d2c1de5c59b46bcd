// How fast the subscriber's decoders read events, beside raw libzmq moving single 96-byte frames
// in the same run (issue 32, goal 3: the subscriber decodes at least 1.5x as many events per
// second as libzmq moves such frames). Each round times, one after the other so all see the same
// machine:
//   - raw libzmq: a PUB thread sends 96-byte single-frame messages over tcp loopback to a SUB
//     socket that receives them (high-water marks unlimited), messages per second;
//   - decodeMessage, the owning decoder (an Event with an unordered_map per event), and
//     EventBatchDecoder, the borrowed view, each visiting every field of every event, on batches
//     of the 6-field event the transport benches publish (16, 100 and 4096 per message) and of
//     4096 Stat windows of 8 values; events per second.
// Prints the medians over the rounds and each decoder's ratio to raw libzmq. Results:
// docs/benchmarks.md, "issue 32, goal 3".
//
//   build/bench/transport/wire_decode_bench [rounds, default 7] [raw frames per round, default 300000]
// GCC 12 misreads std::string's inlined copies here as overlapping (a known false positive).
#pragma GCC diagnostic ignored "-Wrestrict"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/wire_format.h>

#include "bench_events.h"
#include "raw_zmq_rate.h"
#include "bench_support.h"

using namespace livemon;
using namespace livemon::transport;

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Thread-safety: a plain value type. One batch to decode.
struct Batch {
  std::string label;
  std::string topic;
  std::string payload;
  std::size_t events = 0;
  int repeats = 0;  // decodes per timing, about 100 000 events
};

volatile double g_sink = 0;

double owningRate(const Batch& batch) {
  WireMessage message;
  double sum = 0;
  const auto start = Clock::now();
  for (int i = 0; i < batch.repeats; ++i) {
    if (decodeMessage(batch.topic, batch.payload, WireLimits{}, message) != DecodeStatus::Ok) std::exit(1);
    for (const Event& event : message.events) sum += bench::touch(event);
  }
  const double elapsed = seconds(start);
  g_sink = g_sink + sum;
  return static_cast<double>(batch.repeats) * static_cast<double>(batch.events) / elapsed;
}

double viewRate(const Batch& batch, EventBatchDecoder& decoder) {
  double sum = 0;
  const auto start = Clock::now();
  for (int i = 0; i < batch.repeats; ++i) {
    const DecodeStatus status = decoder.decode(batch.topic, batch.payload, [&](const EventBatchView& view) {
      for (const EventView& event : view) sum += bench::touch(event);
    });
    if (status != DecodeStatus::Ok) std::exit(1);
  }
  const double elapsed = seconds(start);
  g_sink = g_sink + sum;
  return static_cast<double>(batch.repeats) * static_cast<double>(batch.events) / elapsed;
}

Batch makeBatch(std::string label, const std::vector<Event>& events) {
  SourceInfo source;
  source.run = "bench";
  source.host = "h";
  source.pid = 1;
  source.instanceId = 3;
  source.startTime = std::chrono::system_clock::now();
  Batch batch;
  batch.label = std::move(label);
  batch.topic = events.front().name;
  batch.payload = encodeEventsPayload(source, 0, batch.topic, events);
  batch.events = events.size();
  batch.repeats = static_cast<int>(std::max<std::size_t>(1, 100000 / events.size()));
  return batch;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int frames = argc > 2 ? std::atoi(argv[2]) : 300000;
  if (rounds < 1 || frames < 1) {
    std::fprintf(stderr, "usage: wire_decode_bench [rounds] [raw frames per round]\n");
    return 2;
  }
  std::vector<Batch> batches;
  for (const std::size_t count : {16, 100, 4096}) {
    char label[64];
    std::snprintf(label, sizeof label, "6-field events x %zu", count);
    batches.push_back(makeBatch(label, std::vector<Event>(count, bench::sixFieldEvent())));
  }
  std::vector<Event> stats;
  for (int i = 0; i < 4096; ++i) {
    Event event{std::string(kStatEventName), std::chrono::system_clock::now(), {}};
    for (const char* key : {"train.loss.mean", "train.loss.max", "train.loss.min", "lr.value", "tokens.count",
                            "grad.norm.p99", "step.time.mean", "x.sum"}) {
      event.data[key] = 1.5 * i;
    }
    stats.push_back(event);
  }
  batches.push_back(makeBatch("Stat windows of 8 values x 4096", stats));

  EventBatchDecoder decoder;
  std::vector<double> raw;
  std::vector<std::vector<double>> owning(batches.size());
  std::vector<std::vector<double>> viewed(batches.size());
  for (int round = 0; round < rounds; ++round) {
    raw.push_back(bench::rawFrameRate(frames));
    for (std::size_t b = 0; b < batches.size(); ++b) {
      owning[b].push_back(owningRate(batches[b]));
      viewed[b].push_back(viewRate(batches[b], decoder));
    }
  }
  const double rawRate = bench::median(raw);
  std::printf("raw libzmq, single 96-byte frames over tcp loopback: %.0f msg/s (median of %d rounds)\n", rawRate, rounds);
  std::printf("%-34s %14s %8s %14s %8s %7s\n", "batch", "owning ev/s", "x raw", "view ev/s", "x raw", "view/own");
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const double own = bench::median(owning[b]);
    const double view = bench::median(viewed[b]);
    std::printf("%-34s %14.0f %7.2fx %14.0f %7.2fx %6.2fx   (%zu-byte payload)\n", batches[b].label.c_str(), own,
                own / rawRate, view, view / rawRate, view / own, batches[b].payload.size());
  }
  return 0;
}
