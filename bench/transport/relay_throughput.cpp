// N publishers through one `livemonctl relay` process to one subscriber, side by side with the same
// publishers connected to the subscriber directly, rounds alternating so both see the same
// machine. Each publisher is a PayloadPublisher sending batches of the six-field event (16 events
// per message, as a Publisher batches a busy topic) under its own identity and sequence numbers.
//   throughput: every publisher sends its share as fast as it can, high-water marks unlimited, so
//               nothing is dropped and the rate is what the path sustains; the relay's CPU time
//               (from /proc) over that phase.
//   latency:    a paced 20 000 events/s in all; each event's timestamp is its send time, and the
//               subscriber's receive time minus it is the latency (one machine, one clock).
// Results: docs/benchmarks.md.
//
//   build/bench/transport/relay_throughput [rounds, default 3] [events per publisher, default 20000]
// LIVEMON_BENCH_RELAY_COMPARE=/path/to/another/livemonctl adds a third path in every round, through
// that program's relay ("relay-b"): two builds compared in one run, on the same machine state
// (LIVEMON_BENCH_RELAY_B_ARGS: its extra options). With queues this deep, give this build's relay
// "--max-queued-mb 65536" too, or it keeps them within its default byte bound by dropping.
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "bench_events.h"

#include "bench_support.h"

namespace {

using livemon::bench::median;

using SteadyClock = std::chrono::steady_clock;
using namespace std::chrono_literals;
namespace lt = livemon::transport;

constexpr std::size_t kEventsPerMessage = 16;
constexpr double kPacedEventsPerSecond = 20000;
constexpr auto kIdleLimit = 3s;  // a subscriber that hears nothing this long has lost the rest

// A `livemonctl relay` child on free loopback ports.
class RelayProcess {
 public:
  explicit RelayProcess(const char* livemonctl = LIVEMONCTL_PATH, const char* argsVariable = "LIVEMON_BENCH_RELAY_ARGS") {
    int out[2];
    if (pipe(out) != 0) std::abort();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    // Queues as deep as the direct path's (unlimited there), in messages and in bytes: the rate
    // compared is the path's, not how much a relay drops for a subscriber that decodes slower than
    // publishers send (with the default 256 MiB byte bound, 256 publishers lost a third).
    std::vector<std::string> argv{livemonctl, "relay", "--listen", "tcp://127.0.0.1:*", "--serve",
                                  "tcp://127.0.0.1:*", "--high-water-mark", "10000000", "--max-queued-mb", "4096"};
    // More relay options, separated by spaces: "--history-mb 0" measures a relay without history.
    if (const char* extra = std::getenv(argsVariable)) {
      std::istringstream words(extra);
      for (std::string word; words >> word;) argv.push_back(word);
    }
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) std::abort();
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string text;
    char buffer[512];
    std::smatch match;
    const std::regex line("publishers connect to (\\S+), subscribers to (\\S+)\n");
    while (!std::regex_search(text, match, line)) {
      const ssize_t got = read(out[0], buffer, sizeof(buffer));
      if (got <= 0) std::abort();
      text.append(buffer, static_cast<std::size_t>(got));
    }
    listen = match[1].str();
    serve = match[2].str();
    close(out[0]);  // it prints its summary into a closed pipe at the end, which is fine
  }
  ~RelayProcess() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  // User plus system CPU time so far, in seconds.
  double cpuSeconds() const {
    std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }

  std::string listen;
  std::string serve;

 private:
  pid_t pid_ = -1;
};

struct Result {
  double eventsPerSecond = 0;
  uint64_t lost = 0;
  double p50Ms = 0;
  double p99Ms = 0;
  double relayCpu = 0;  // fraction of one core
};

struct Setup {
  std::vector<std::unique_ptr<lt::PayloadPublisher>> publishers;
  std::vector<lt::SourceInfo> sources;
  std::vector<uint64_t> sequences;
  std::unique_ptr<lt::Subscriber> subscriber;
};

Setup connect(std::size_t count, const RelayProcess* relay) {
  Setup setup;
  std::vector<std::string> endpoints;
  for (std::size_t i = 0; i < count; ++i) {
    lt::PayloadPublisherOptions options;
    options.sendHighWaterMark = 0;  // unlimited: the throughput phase loses nothing at the sender
    options.linger = 0ms;
    if (relay) {
      options.connect = {relay->listen};
    } else {
      options.bind = {"tcp://127.0.0.1:*"};
    }
    setup.publishers.push_back(std::make_unique<lt::PayloadPublisher>(options));
    if (!relay) endpoints.push_back(setup.publishers.back()->endpoints().front());
    lt::SourceInfo source;
    source.run = "bench";
    source.host = "here";
    source.pid = 1000 + static_cast<int64_t>(i);
    source.rank = static_cast<int64_t>(i);
    source.instanceId = 1 + i;
    source.startTime = std::chrono::system_clock::now();
    setup.sources.push_back(source);
    setup.sequences.push_back(0);
  }
  lt::SubscriberOptions options;
  options.connect = relay ? std::vector<std::string>{relay->serve} : endpoints;
  options.receiveHighWaterMark = 0;
  options.maxSources = 4096;
  setup.subscriber = std::make_unique<lt::Subscriber>(options);
  // Warm-ups until every publisher has been heard: its subscription is then in place.
  std::vector<bool> heard(count);
  std::size_t heardCount = 0;
  lt::SubscriberCallbacks callbacks;
  callbacks.onEventView = [&](const lt::ReceivedEventView& event) {
    const auto i = static_cast<std::size_t>(*event.source->rank);
    if (event.source->run == "bench" && i < count && !heard[i]) {
      heard[i] = true;
      ++heardCount;
    }
  };
  while (heardCount < count) {
    for (std::size_t i = 0; i < count; ++i) {
      if (heard[i]) continue;
      setup.publishers[i]->send("warmup", lt::encodeEventsPayload(setup.sources[i], setup.sequences[i]++, "warmup",
                                                                   {livemon::bench::sixFieldEvent()}));
    }
    setup.subscriber->poll(20ms, callbacks);
  }
  while (setup.subscriber->poll(50ms, callbacks) > 0) {
  }
  return setup;
}

// Sends `perPublisher` events from every publisher (paced at `eventsPerSecond` in all when > 0)
// while the subscriber receives them.
Result run(Setup& setup, uint64_t perPublisher, double eventsPerSecond, const RelayProcess* relay) {
  const std::size_t count = setup.publishers.size();
  const uint64_t total = perPublisher * count;
  std::atomic<bool> sending{true};
  const double cpuBefore = relay ? relay->cpuSeconds() : 0;
  const auto start = SteadyClock::now();
  std::thread producer([&] {
    const uint64_t messages = perPublisher / kEventsPerMessage;
    std::vector<livemon::Event> batch(kEventsPerMessage, livemon::bench::sixFieldEvent());
    uint64_t sent = 0;
    for (uint64_t m = 0; m < messages; ++m) {
      for (std::size_t i = 0; i < count; ++i) {
        if (eventsPerSecond > 0) {
          const auto due = start + std::chrono::duration_cast<SteadyClock::duration>(
                                       std::chrono::duration<double>(static_cast<double>(sent) / eventsPerSecond));
          std::this_thread::sleep_until(due);
        }
        const auto now = std::chrono::system_clock::now();
        for (auto& event : batch) event.timestamp = now;
        setup.publishers[i]->send("train.step",
                                  lt::encodeEventsPayload(setup.sources[i], setup.sequences[i], "train.step", batch));
        setup.sequences[i] += kEventsPerMessage;
        sent += kEventsPerMessage;
      }
    }
    sending = false;
  });
  uint64_t received = 0;
  std::vector<double> latencies;
  latencies.reserve(static_cast<std::size_t>(total));
  auto lastArrival = SteadyClock::now();
  lt::SubscriberCallbacks callbacks;
  // Lent, as the dashboard reads them.
  callbacks.onEventView = [&](const lt::ReceivedEventView& event) {
    if (event.event.name() != "train.step") return;
    ++received;
    latencies.push_back(std::chrono::duration<double, std::milli>(event.receivedAt - event.event.timestamp()).count());
    lastArrival = SteadyClock::now();
  };
  const uint64_t expected = perPublisher / kEventsPerMessage * kEventsPerMessage * count;
  while (received < expected) {
    setup.subscriber->poll(20ms, callbacks);
    if (!sending && SteadyClock::now() - lastArrival > kIdleLimit) break;
  }
  producer.join();
  const double seconds = std::chrono::duration<double>(lastArrival - start).count();
  Result result;
  result.eventsPerSecond = static_cast<double>(received) / seconds;
  result.lost = expected - received;
  std::sort(latencies.begin(), latencies.end());
  if (!latencies.empty()) {
    result.p50Ms = latencies[latencies.size() / 2];
    result.p99Ms = latencies[std::min(latencies.size() - 1, latencies.size() * 99 / 100)];
  }
  if (relay) result.relayCpu = (relay->cpuSeconds() - cpuBefore) / seconds;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  // 256 publishers and a subscriber connected to each take more descriptors than the usual 1024.
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);
  const char* usage = "relay_throughput [rounds, default 3] [events per publisher, default 20000]";
  livemon::bench::exitOnHelp(argc, argv, usage);
  const int rounds = static_cast<int>(livemon::bench::countArgument(argc, argv, 1, 3, 1, 1000, usage));
  const uint64_t perPublisher = livemon::bench::countArgument(argc, argv, 2, 20000, 1, 100'000'000, usage);
  std::printf("N,path,round,events_per_s,lost,latency_p50_ms,latency_p99_ms,relay_cpu\n");
  for (std::size_t n : {16u, 64u, 256u}) {
    std::vector<double> rate[3], p50[3], p99[3], cpu[3];
    uint64_t lost[3] = {0, 0, 0};
    const char* other = std::getenv("LIVEMON_BENCH_RELAY_COMPARE");
    const int paths = other != nullptr ? 3 : 2;
    for (int round = 0; round < rounds; ++round) {
      for (int path = 0; path < paths; ++path) {  // 0: direct, 1: through the relay, 2: the other relay
        std::unique_ptr<RelayProcess> relay = path == 1   ? std::make_unique<RelayProcess>()
                                              : path == 2 ? std::make_unique<RelayProcess>(other, "LIVEMON_BENCH_RELAY_B_ARGS")
                                                          : nullptr;
        Setup setup = connect(n, relay.get());
        const Result throughput = run(setup, perPublisher, 0, relay.get());
        // Paced: each publisher sends about 2 s worth.
        const uint64_t pacedPerPublisher =
            std::max<uint64_t>(kEventsPerMessage, static_cast<uint64_t>(2 * kPacedEventsPerSecond / static_cast<double>(n)));
        const Result paced = run(setup, pacedPerPublisher, kPacedEventsPerSecond, relay.get());
        std::printf("%zu,%s,%d,%.0f,%llu,%.3f,%.3f,%.2f\n", n, path == 2 ? "relay-b" : path == 1 ? "relay" : "direct", round,
                    throughput.eventsPerSecond, static_cast<unsigned long long>(throughput.lost + paced.lost),
                    paced.p50Ms, paced.p99Ms, throughput.relayCpu);
        std::fflush(stdout);
        rate[path].push_back(throughput.eventsPerSecond);
        p50[path].push_back(paced.p50Ms);
        p99[path].push_back(paced.p99Ms);
        lost[path] += throughput.lost + paced.lost;
        cpu[path].push_back(throughput.relayCpu);
      }
    }
    std::printf("# N=%zu medians: direct %.0f events/s, relay %.0f events/s (%.2fx); p50 %.3f -> %.3f ms, p99 %.3f -> "
                "%.3f ms (added %.3f ms); lost %llu / %llu; relay CPU %.0f %% of a core\n",
                n, median(rate[0]), median(rate[1]), median(rate[1]) / median(rate[0]), median(p50[0]), median(p50[1]),
                median(p99[0]), median(p99[1]), median(p99[1]) - median(p99[0]),
                static_cast<unsigned long long>(lost[0]), static_cast<unsigned long long>(lost[1]), 100 * median(cpu[1]));
    if (paths == 3) {
      std::printf("# N=%zu medians: relay-b %.0f events/s (relay/relay-b %.2fx); p50 %.3f ms, p99 %.3f ms; lost %llu; "
                  "relay-b CPU %.0f %% of a core\n",
                  n, median(rate[2]), median(rate[1]) / median(rate[2]), median(p50[2]), median(p99[2]),
                  static_cast<unsigned long long>(lost[2]), 100 * median(cpu[2]));
    }
  }
}
