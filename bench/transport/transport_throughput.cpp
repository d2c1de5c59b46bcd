// End-to-end events per second, publisher to subscriber in one process, over tcp loopback and
// ipc, side by side with raw libzmq PUB/SUB sending one message per event of the same size (the
// topic frame and payload a lone livemon event would take). Rounds alternate between the two so
// both see the same machine. High-water marks are unlimited on both sides, so nothing is lost
// while the receiver keeps up and the rate is what the receiving side sustains. The livemon
// producer holds back while the publisher's queue is over half full: the rate measured is the
// transport's, not how fast a full queue can drop.
// Results: docs/benchmarks.md.
//
//   build/bench/transport/transport_throughput [events per round, default 1000000] [rounds, default 5]
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/subscriber.h>

#include "bench_events.h"

#include "bench_support.h"

namespace {

using livemon::bench::median;

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
namespace lt = livemon::transport;

// A receiver that hears nothing for this long has lost the rest.
constexpr auto kIdleLimit = 3s;

struct Result {
  double eventsPerSecond = 0;
  uint64_t lost = 0;
  double eventsPerMessage = 1;
};

using livemon::bench::sixFieldEvent;

int setInt(void* socket, int option, int value) { return zmq_setsockopt(socket, option, &value, sizeof(value)); }

Result runRaw(const std::string& bindEndpoint, const std::string& topic, const std::string& payload, uint64_t events) {
  void* context = zmq_ctx_new();
  void* pub = zmq_socket(context, ZMQ_PUB);
  void* sub = zmq_socket(context, ZMQ_SUB);
  setInt(pub, ZMQ_SNDHWM, 0);
  setInt(pub, ZMQ_LINGER, 0);
  setInt(sub, ZMQ_RCVHWM, 0);
  setInt(sub, ZMQ_LINGER, 0);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
  if (zmq_bind(pub, bindEndpoint.c_str()) != 0) {
    std::fprintf(stderr, "raw bind %s: %s\n", bindEndpoint.c_str(), zmq_strerror(zmq_errno()));
    std::exit(1);
  }
  char endpoint[256];
  std::size_t size = sizeof(endpoint);
  zmq_getsockopt(pub, ZMQ_LAST_ENDPOINT, endpoint, &size);
  zmq_connect(sub, endpoint);

  // Until the subscription has reached the publisher, messages are dropped: send warm-ups until
  // one arrives, then drain them.
  zmq_pollitem_t item{sub, 0, ZMQ_POLLIN, 0};
  while (true) {
    zmq_send(pub, "w", 1, ZMQ_SNDMORE);
    zmq_send(pub, "w", 1, 0);
    if (zmq_poll(&item, 1, 10) > 0) break;
  }
  char buffer[1 << 16];
  while (zmq_poll(&item, 1, 50) > 0) {  // drain the warm-ups still in flight
    while (zmq_recv(sub, buffer, sizeof(buffer), ZMQ_DONTWAIT) >= 0) {
    }
  }

  const auto start = Clock::now();
  std::thread sender([&] {
    for (uint64_t i = 0; i < events; ++i) {
      if (!topic.empty()) zmq_send(pub, topic.data(), topic.size(), ZMQ_SNDMORE);
      zmq_send(pub, payload.data(), payload.size(), 0);
    }
  });
  uint64_t received = 0;
  auto last = start;
  while (received < events) {
    if (zmq_poll(&item, 1, static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(kIdleLimit).count())) <= 0) {
      break;
    }
    while (zmq_recv(sub, buffer, sizeof(buffer), ZMQ_DONTWAIT) >= 0) {
      int more = 0;
      std::size_t moreSize = sizeof(more);
      zmq_getsockopt(sub, ZMQ_RCVMORE, &more, &moreSize);
      if (!more) ++received;  // the payload frame ends a message
    }
    last = Clock::now();
  }
  sender.join();
  zmq_close(pub);
  zmq_close(sub);
  zmq_ctx_term(context);
  return Result{static_cast<double>(received) / std::chrono::duration<double>(last - start).count(), events - received};
}

Result runLivemon(const std::string& bindEndpoint, uint64_t events) {
  lt::PublisherOptions options;
  options.bind = {bindEndpoint};
  options.sendHighWaterMark = 0;
  options.statName.clear();
  lt::Publisher publisher(options);
  lt::SubscriberOptions subscriberOptions;
  subscriberOptions.connect = publisher.endpoints();
  subscriberOptions.receiveHighWaterMark = 0;
  lt::Subscriber subscriber(subscriberOptions);
  while (subscriber.sources().empty()) subscriber.poll(10ms, [](lt::ReceivedEvent&) {});

  const livemon::Event event = sixFieldEvent();
  const std::size_t halfQueue = options.queueCapacityBytes / 2;
  const auto start = Clock::now();
  std::thread producer([&] {
    for (uint64_t i = 0; i < events; ++i) {
      if ((i & 255) == 0) {
        while (publisher.stats().queuedBytes > halfQueue) std::this_thread::yield();
      }
      livemon::logEvent(event);
    }
  });
  uint64_t received = 0;
  auto last = start;
  auto lastProgress = start;
  while (received < events && Clock::now() - lastProgress < kIdleLimit) {
    const std::size_t got = subscriber.poll(100ms, [&](lt::ReceivedEvent&) { ++received; });
    if (got > 0) {
      last = Clock::now();
      lastProgress = last;
    }
  }
  producer.join();
  const uint64_t dropped = publisher.droppedCount();
  if (dropped != 0) std::fprintf(stderr, "  (publisher dropped %llu events)\n", static_cast<unsigned long long>(dropped));
  const auto messages = static_cast<double>(std::max<uint64_t>(1, publisher.stats().messages));
  return Result{static_cast<double>(received) / std::chrono::duration<double>(last - start).count(), events - received,
                static_cast<double>(publisher.publishedCount()) / messages};
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "transport_throughput [events per round, default 1000000] [rounds, default 5]";
  livemon::bench::exitOnHelp(argc, argv, usage);
  const uint64_t events = livemon::bench::countArgument(argc, argv, 1, 1'000'000, 1, 1'000'000'000, usage);
  const int rounds = static_cast<int>(livemon::bench::countArgument(argc, argv, 2, 5, 1, 1000, usage));

  // The frames a lone event would take, so raw libzmq moves the same bytes per message.
  const livemon::Event event = sixFieldEvent();
  lt::SourceInfo identity;
  identity.run = "transport_throughput";
  identity.host = "localhost";
  identity.pid = 12345;
  identity.instanceId = 0x0123456789abcdefULL;
  identity.startTime = std::chrono::system_clock::now();
  const std::string payload = lt::encodeEventsPayload(identity, 0, event.name, {event});
  std::printf("%llu events per round, %d rounds; one event alone: topic %zu + payload %zu bytes\n",
              static_cast<unsigned long long>(events), rounds, event.name.size(), payload.size());

  const auto dir = std::filesystem::temp_directory_path() / ("livemon-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct Case {
    const char* name;
    std::string endpoint;
    std::vector<double> raw, livemon, raw96;
    uint64_t rawLost = 0, livemonLost = 0;
  };
  std::vector<Case> cases{{"tcp loopback", "tcp://127.0.0.1:*", {}, {}, {}},
                          {"ipc", "ipc://" + (dir / "bench.sock").string(), {}, {}, {}}};
  for (int round = 0; round < rounds; ++round) {
    for (Case& c : cases) {
      const Result raw = runRaw(c.endpoint, event.name, payload, events);
      const Result ours = runLivemon(c.endpoint, events);
      // The reference point quoted for this machine: single 96-byte frames.
      c.raw96.push_back(runRaw(c.endpoint, "", std::string(96, 'x'), events).eventsPerSecond);
      c.raw.push_back(raw.eventsPerSecond);
      c.livemon.push_back(ours.eventsPerSecond);
      c.rawLost += raw.lost;
      c.livemonLost += ours.lost;
      std::printf("round %d %-12s raw libzmq %9.0f msg/s (lost %llu)   livemon %9.0f events/s (lost %llu, %.0f events/message)\n",
                  round + 1, c.name, raw.eventsPerSecond, static_cast<unsigned long long>(raw.lost), ours.eventsPerSecond,
                  static_cast<unsigned long long>(ours.lost), ours.eventsPerMessage);
      std::fflush(stdout);
    }
  }
  std::printf("\nmedian of %d rounds:\n", rounds);
  for (const Case& c : cases) {
    const double raw = median(c.raw);
    const double ours = median(c.livemon);
    std::printf("%-12s raw libzmq %9.0f msg/s   livemon %9.0f events/s   ratio %.2fx   lost raw %llu, livemon %llu"
                "   (raw 96-byte frames %9.0f msg/s)\n",
                c.name, raw, ours, ours / raw, static_cast<unsigned long long>(c.rawLost),
                static_cast<unsigned long long>(c.livemonLost), median(c.raw96));
  }
  std::filesystem::remove_all(dir);
  return 0;
}
