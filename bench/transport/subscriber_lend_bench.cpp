// Events per second a Subscriber delivers, its events handed (onEvent: each decoded into an owning
// Event) or lent (onEventView: read in place from the message), beside raw libzmq moving single
// 96-byte frames in the same round (issue 32, goal 3: the subscriber decodes at least 1.5x as many
// events per second as libzmq moves such frames). Each round, one after the other so all see the
// same machine:
//   - raw libzmq: bench::rawFrameRate, messages per second;
//   - a Subscriber connected over tcp loopback to a bare PUB socket whose thread sends a run of
//     pre-encoded messages of 16 six-field events (the transport benches' event) as fast as it
//     can, high-water marks unlimited; the callback visits every field of every event. Events
//     delivered per second, from the first send to the last delivery, once with onEvent and once
//     with onEventView.
// Prints the medians over the rounds and each path's ratio to raw libzmq. Results:
// docs/benchmarks.md, "issue 32, goal 3".
//
// Also per second of the receiving thread's own CPU time, which the other threads' share of the
// cores does not change.
//
//   build/bench/transport/subscriber_lend_bench [rounds, default 5] [messages per round, default 20000]
//                                               [lent: only the lent path, for a profile]
// GCC 12 misreads std::string's inlined copies here as overlapping (a known false positive).
#pragma GCC diagnostic ignored "-Wrestrict"
#include <zmq.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "bench_events.h"
#include "bench_support.h"
#include "raw_zmq_rate.h"

using namespace livemon;
using namespace livemon::transport;

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kEventsPerMessage = 16;

volatile double g_sink = 0;

SourceInfo benchSource() {
  SourceInfo source;
  source.run = "bench";
  source.host = "h";
  source.pid = 1;
  source.instanceId = 11;
  source.startTime = std::chrono::system_clock::now();
  return source;
}

// Events per second a Subscriber delivers of `messages` messages sent flat out; with
// `perPollerCpu`, also per second of the polling thread's CPU time.
double subscriberRate(int messages, bool lend, double* perPollerCpu = nullptr) {
  const SourceInfo source = benchSource();
  const std::vector<Event> batch(kEventsPerMessage, bench::sixFieldEvent());
  const std::string topic = batch.front().name;
  // The first message (numbers 0..15) makes the connection; the timed ones follow on from it.
  std::vector<std::string> payloads;
  payloads.reserve(static_cast<std::size_t>(messages) + 1);
  for (int i = 0; i <= messages; ++i) {
    payloads.push_back(encodeEventsPayload(source, static_cast<uint64_t>(i) * kEventsPerMessage, topic, batch));
  }

  void* context = zmq_ctx_new();
  std::string endpoint;
  void* pub = bench::bindLoopbackPub(context, endpoint);
  auto send = [&](const std::string& payload) {
    zmq_send(pub, topic.data(), topic.size(), ZMQ_SNDMORE);
    zmq_send(pub, payload.data(), payload.size(), 0);
  };

  SubscriberOptions options;
  options.connect = {endpoint};
  options.receiveHighWaterMark = 0;
  options.receiveBufferBytes = std::size_t{1} << 40;
  Subscriber subscriber(options);
  uint64_t delivered = 0;
  double sum = 0;
  SubscriberCallbacks callbacks;
  if (lend) {
    callbacks.onEventView = [&](const ReceivedEventView& event) {
      sum += bench::touch(event.event);
      ++delivered;
    };
  } else {
    callbacks.onEvent = [&](ReceivedEvent& event) {
      sum += bench::touch(event.event);
      ++delivered;
    };
  }
  // The same first message until it arrives (its repeats are skipped as duplicates).
  while (delivered == 0) {
    send(payloads[0]);
    subscriber.poll(std::chrono::milliseconds(10), callbacks);
  }
  const uint64_t wanted = delivered + static_cast<uint64_t>(messages) * kEventsPerMessage;
  const auto start = Clock::now();
  const double cpuStart = bench::threadCpuSeconds();
  std::thread sender([&] {
    for (int i = 1; i <= messages; ++i) send(payloads[static_cast<std::size_t>(i)]);
  });
  auto last = start;
  const auto deadline = start + std::chrono::seconds(60);
  while (delivered < wanted && Clock::now() < deadline) {
    if (subscriber.poll(std::chrono::milliseconds(100), callbacks) > 0) last = Clock::now();
  }
  const double cpu = bench::threadCpuSeconds() - cpuStart;
  sender.join();
  const uint64_t timed = delivered - (wanted - static_cast<uint64_t>(messages) * kEventsPerMessage);
  if (delivered < wanted) {
    std::fprintf(stderr, "%s: %llu of %llu events arrived\n", lend ? "lent" : "handed",
                 static_cast<unsigned long long>(timed),
                 static_cast<unsigned long long>(static_cast<uint64_t>(messages) * kEventsPerMessage));
  }
  g_sink = g_sink + sum;
  if (perPollerCpu != nullptr) *perPollerCpu = static_cast<double>(timed) / cpu;
  zmq_close(pub);
  zmq_ctx_term(context);
  return static_cast<double>(timed) / std::chrono::duration<double>(last - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const int messages = argc > 2 ? std::atoi(argv[2]) : 20000;
  const bool lentOnly = argc > 3 && std::string(argv[3]) == "lent";
  if (rounds < 1 || messages < 1) {
    std::fprintf(stderr, "usage: subscriber_lend_bench [rounds] [messages per round]\n");
    return 2;
  }
  // Wall: from the first send to the last delivery, the sender and ZeroMQ's threads sharing the
  // cores. CPU: per second of the receiving thread's own CPU time, what the receiver costs.
  std::vector<double> raw, handed, lent, rawCpu, handedCpu, lentCpu;
  std::printf("round,raw_msg_per_s,handed_events_per_s,lent_events_per_s,raw_msg_per_cpu_s,handed_per_cpu_s,lent_per_cpu_s\n");
  for (int round = 0; round < rounds; ++round) {
    double cpu[3] = {0, 0, 0};
    if (lentOnly) {
      lent.push_back(subscriberRate(messages, true, &cpu[2]));
      std::printf("%d,,,%.0f,,,%.0f\n", round, lent.back(), cpu[2]);
      continue;
    }
    raw.push_back(bench::rawFrameRate(300000, &cpu[0]));
    handed.push_back(subscriberRate(messages, false, &cpu[1]));
    lent.push_back(subscriberRate(messages, true, &cpu[2]));
    rawCpu.push_back(cpu[0]);
    handedCpu.push_back(cpu[1]);
    lentCpu.push_back(cpu[2]);
    std::printf("%d,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n", round, raw.back(), handed.back(), lent.back(), cpu[0], cpu[1],
                cpu[2]);
    std::fflush(stdout);
  }
  if (lentOnly) return 0;
  const double rawRate = bench::median(raw);
  const double rawCpuRate = bench::median(rawCpu);
  std::printf("# medians of %d rounds, %zu-event messages, wall: raw libzmq %.0f msg/s; handed (onEvent) %.0f events/s "
              "= %.2fx raw; lent (onEventView) %.0f events/s = %.2fx raw; lent/handed %.2fx\n",
              rounds, kEventsPerMessage, rawRate, bench::median(handed), bench::median(handed) / rawRate,
              bench::median(lent), bench::median(lent) / rawRate, bench::median(lent) / bench::median(handed));
  std::printf("# per second of the receiving thread's CPU: raw libzmq %.0f msg; handed %.0f events = %.2fx raw; lent "
              "%.0f events = %.2fx raw\n",
              rawCpuRate, bench::median(handedCpu), bench::median(handedCpu) / rawCpuRate, bench::median(lentCpu),
              bench::median(lentCpu) / rawCpuRate);
  return 0;
}
