#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/system_stats.h>
#include <livemon/transport/publisher.h>

#include "byte_ring.h"
#include "config_resend.h"
#include "curve_security.h"
#include "metrics_feed.h"
#include "peer_guard.h"
#include "publisher_history.h"
#include "publisher_setup.h"
#include "wake_signal.h"

// Only transport/src includes this header: a Publisher's insides, shared by publisher.cpp (making
// it, the calling threads, teardown) and publisher_io.cpp (the I/O thread).
namespace livemon::transport {

namespace detail {

// A queued record: [u16 name length][u8 step length][name][step][event entry], behind the
// ring's length prefix. The step is its "steps" array element (an integer, or nil for none).
inline constexpr std::size_t kRecordNameHeader = 3;

}  // namespace detail

// Thread-safe: the calling threads touch only the immutable members, the ring, `metrics`' offer()
// and the atomic counters; the socket and the members after "I/O thread only" belong to the I/O
// thread; `wake` wakes the I/O thread from its sleep (see WakeSignal).
struct Publisher::State {
  // Not thread-safe: one owner at a time; owned by the I/O thread. One topic's pending batch and
  // its next sequence number.
  struct Batch {
    std::string name;
    std::string body;   // concatenated event entries
    std::string steps;  // concatenated "steps" elements, one per entry
    bool anyStep = false;
    uint32_t count = 0;
    uint64_t nextSequence = 0;
  };
  // Not thread-safe: one owner at a time; owned by the I/O thread. The pending batch of each topic,
  // by name.
  struct BatchTable {
    Batch& operator[](std::string_view name) {
      auto found = index.find(std::string(name));
      if (found == index.end()) {
        found = index.emplace(std::string(name), all.size()).first;
        all.push_back(Batch{std::string(name), {}, {}, false, 0, 0});
      }
      return all[found->second];
    }
    std::vector<Batch> all;
    std::unordered_map<std::string, std::size_t> index;
  };
  // Thread-safe: atomic counters, written where counted, read by stats() from any thread.
  struct Counters {
    std::atomic<uint64_t> published{0};
    std::atomic<uint64_t> droppedQueueFull{0};
    std::atomic<uint64_t> droppedTooLarge{0};
    std::atomic<uint64_t> droppedAtShutdown{0};
    std::atomic<uint64_t> messages{0};
    std::atomic<uint64_t> heartbeats{0};
    std::atomic<uint64_t> ioWakeups{0};
    // Set by the constructor, before the I/O thread starts: the metrics port could not be served.
    std::atomic<bool> metricsUnavailable{false};
    uint64_t dropped() const noexcept {
      return droppedQueueFull.load(std::memory_order_relaxed) + droppedTooLarge.load(std::memory_order_relaxed) +
             droppedAtShutdown.load(std::memory_order_relaxed);
    }
  };
  // Thread-safety: a plain value type.
  //
  // Thread-safe, as Stat is. The publisher's counters as Stats (PublisherOptions::statName); all
  // null when off, curveRefused without CURVE.
  struct OwnStats {
    std::unique_ptr<Stat> published;
    std::unique_ptr<Stat> dropped;
    std::unique_ptr<Stat> curveRefused;
  };

  State(PublisherOptions opts, uint64_t generation)
      : options(std::move(opts)), identity(detail::makeIdentity(options)), forkGeneration(generation),
        ring(options.queueCapacityBytes) {}

  // ---- calling threads ----
  void onEvent(const Event& event) noexcept;

  // ---- I/O thread ----
  void run() noexcept;
  bool drainAndSend();
  void flushBatches();
  void sendBatch(Batch& batch);
  void sendHeartbeat(MessageKind kind);
  bool sendFrames(std::string_view topic, std::string_view header, std::string_view body,
                  std::string_view trailer = {});
  bool sendKept(std::string_view topic, std::string_view header, std::string_view body, std::string_view trailer);
  bool waitWritable();
  void discardSubscriptions();
  void waitBriefly(std::chrono::microseconds wait);
  void sleepUntilWork(std::chrono::steady_clock::time_point nextHeartbeat);
  bool stopRequested() const noexcept { return stop.load(std::memory_order_acquire); }

  const PublisherOptions options;
  const SourceInfo identity;
  const uint64_t forkGeneration;
  const WireLimits limits;
  std::vector<std::string> endpoints;

  detail::ByteRing ring;
  Counters counters;

  std::shared_ptr<void> context;
  void* socket = nullptr;
  std::unique_ptr<detail::PeerGuard> guard;
  // Outlives the sockets it prepared (the main one and the history socket).
  std::unique_ptr<detail::SocketSecurity> security;
  std::unique_ptr<std::thread> thread;
  std::atomic<bool> stop{false};
  detail::WakeSignal wake;
  std::chrono::steady_clock::time_point stopDeadline;  // set before `stop`, read after it

  EventHandlerHandle handle;
  // The Stat events for the metrics sink (the Prometheus exporter), handed over as events; null
  // when metrics are off. Its sink is shared with the process's other Publishers when the port
  // came from LIVEMON_METRICS_PORT.
  std::unique_ptr<detail::MetricsFeed> metrics;
  // The messages sent, for late subscribers, and the socket that answers them; null when the
  // publisher keeps no history. The I/O thread owns it.
  std::unique_ptr<detail::PublisherHistory> history;
  OwnStats ownStats;
  SystemStatsHandle systemStats;  // a share of the process's sampler; empty when off

  // I/O thread only.
  BatchTable batches;
  std::string scratch;
  std::string header;
  std::string stepsTrailer;
  // Not thread-safe: one owner at a time; the I/O thread. What it sends on its own schedule: the
  // heartbeats, numbered, and a connecting publisher's copies of its config.
  struct Scheduled {
    uint64_t heartbeatSequence = 0;
    detail::ConfigResend configCopies;
  };
  Scheduled scheduled;
};

}  // namespace livemon::transport
