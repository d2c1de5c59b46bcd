// What CURVE costs: end-to-end events per second, publisher to subscriber over tcp loopback, and
// the logging thread's time per logEvent meanwhile, with CURVE (encrypted, the subscriber's key in
// the allow list) and without, rounds alternating so both see the same machine. The producer holds
// back while the publisher's queue is over half full, as in transport_throughput, and only the
// logEvent calls themselves are timed (256 at a time), not the holding back.
// Results: docs/benchmarks.md.
//
//   build/bench/transport/curve_throughput [events per round, default 1000000] [rounds, default 5]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <time.h>
#include <unistd.h>

#include <livemon/event_handler.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

#include "bench_events.h"

#include "bench_support.h"

namespace {

using livemon::bench::median;

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
namespace lt = livemon::transport;
namespace fs = std::filesystem;

using livemon::bench::sixFieldEvent;

constexpr auto kIdleLimit = 3s;
constexpr uint64_t kTimedBurst = 256;

struct Result {
  double eventsPerSecond = 0;
  double nsPerLogEvent = 0;     // wall time
  double cpuNsPerLogEvent = 0;  // the logging thread's CPU time: without the time it was preempted
  uint64_t lost = 0;
};

struct Keys {
  lt::CurveOptions server;
  lt::CurveOptions client;
};

int64_t threadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

Keys writeKeys(const fs::path& dir) {
  fs::create_directories(dir / "allow");
  const auto write = [](const fs::path& path, const std::string& text) { std::ofstream(path) << text; };
  const lt::CurveKeyPair server = lt::generateCurveKeyPair();
  const lt::CurveKeyPair client = lt::generateCurveKeyPair();
  write(dir / "server.key", lt::curveCertificateText(server, false));
  write(dir / "server.key_secret", lt::curveCertificateText(server, true));
  write(dir / "allow" / "client.key", lt::curveCertificateText(client, false));
  write(dir / "client.key_secret", lt::curveCertificateText(client, true));
  Keys keys;
  keys.server = {(dir / "server.key_secret").string(), (dir / "allow").string(), "", false};
  keys.client = {(dir / "client.key_secret").string(), "", (dir / "server.key").string(), false};
  return keys;
}

Result run(const lt::CurveOptions& serverCurve, const lt::CurveOptions& clientCurve, uint64_t events) {
  lt::PublisherOptions options;
  options.bind = {"tcp://127.0.0.1:*"};
  options.sendHighWaterMark = 0;
  options.statName.clear();
  options.historyBytes = 0;
  options.curve = serverCurve;
  lt::Publisher publisher(options);
  lt::SubscriberOptions subscriberOptions;
  subscriberOptions.connect = publisher.endpoints();
  subscriberOptions.receiveHighWaterMark = 0;
  subscriberOptions.curve = clientCurve;
  lt::Subscriber subscriber(subscriberOptions);
  while (subscriber.sources().empty()) subscriber.poll(10ms, [](lt::ReceivedEvent&) {});

  const livemon::Event event = sixFieldEvent();
  const std::size_t halfQueue = options.queueCapacityBytes / 2;
  std::atomic<int64_t> loggingNs{0};
  std::atomic<int64_t> loggingCpuNs{0};
  const auto start = Clock::now();
  std::thread producer([&] {
    int64_t ns = 0;
    int64_t cpuNs = 0;
    for (uint64_t i = 0; i < events; i += kTimedBurst) {
      while (publisher.stats().queuedBytes > halfQueue) std::this_thread::yield();
      const int64_t cpuStart = threadCpuNs();
      const auto burstStart = Clock::now();
      for (uint64_t j = i; j < std::min(events, i + kTimedBurst); ++j) livemon::logEvent(event);
      ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - burstStart).count();
      cpuNs += threadCpuNs() - cpuStart;
    }
    loggingNs = ns;
    loggingCpuNs = cpuNs;
  });
  uint64_t received = 0;
  auto last = start;
  auto lastProgress = start;
  while (received < events && Clock::now() - lastProgress < kIdleLimit) {
    if (subscriber.poll(100ms, [&](lt::ReceivedEvent&) { ++received; }) > 0) {
      last = Clock::now();
      lastProgress = last;
    }
  }
  producer.join();
  return Result{static_cast<double>(received) / std::chrono::duration<double>(last - start).count(),
                static_cast<double>(loggingNs.load()) / static_cast<double>(events),
                static_cast<double>(loggingCpuNs.load()) / static_cast<double>(events), events - received};
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "curve_throughput [events per round, default 1000000] [rounds, default 5]";
  livemon::bench::exitOnHelp(argc, argv, usage);
  const uint64_t events = livemon::bench::countArgument(argc, argv, 1, 1'000'000, 1, 1'000'000'000, usage);
  const int rounds = static_cast<int>(livemon::bench::countArgument(argc, argv, 2, 5, 1, 1000, usage));
  const fs::path dir = fs::temp_directory_path() / ("livemon-curve-bench-" + std::to_string(::getpid()));
  const Keys keys = writeKeys(dir);
  std::printf("%llu events per round, %d rounds, tcp loopback\n", static_cast<unsigned long long>(events), rounds);
  std::vector<double> plainRate, curveRate, plainNs, curveNs, plainCpu, curveCpu;
  uint64_t plainLost = 0, curveLost = 0;
  for (int round = 0; round < rounds; ++round) {
    const Result plain = run({}, {}, events);
    const Result curve = run(keys.server, keys.client, events);
    plainRate.push_back(plain.eventsPerSecond);
    curveRate.push_back(curve.eventsPerSecond);
    plainNs.push_back(plain.nsPerLogEvent);
    curveNs.push_back(curve.nsPerLogEvent);
    plainCpu.push_back(plain.cpuNsPerLogEvent);
    curveCpu.push_back(curve.cpuNsPerLogEvent);
    plainLost += plain.lost;
    curveLost += curve.lost;
    std::printf("round %d  plain %9.0f events/s %4.0f ns/logEvent (CPU %4.0f, lost %llu)   "
                "CURVE %9.0f events/s %4.0f ns/logEvent (CPU %4.0f, lost %llu)\n",
                round + 1, plain.eventsPerSecond, plain.nsPerLogEvent, plain.cpuNsPerLogEvent,
                static_cast<unsigned long long>(plain.lost), curve.eventsPerSecond, curve.nsPerLogEvent,
                curve.cpuNsPerLogEvent, static_cast<unsigned long long>(curve.lost));
    std::fflush(stdout);
  }
  std::printf("\nmedian of %d rounds: plain %.0f events/s, %.0f ns/logEvent (CPU %.0f); CURVE %.0f events/s (%.2fx), "
              "%.0f ns/logEvent (CPU %.0f); lost plain %llu, CURVE %llu\n",
              rounds, median(plainRate), median(plainNs), median(plainCpu), median(curveRate),
              median(curveRate) / median(plainRate), median(curveNs), median(curveCpu),
              static_cast<unsigned long long>(plainLost), static_cast<unsigned long long>(curveLost));
  fs::remove_all(dir);
  return 0;
}
