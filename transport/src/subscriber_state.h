#pragma once

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/subscriber.h>

#include "curve_security.h"
#include "source_table.h"
#include "subscriber_endpoint.h"

// The Subscriber's state: its endpoints' sockets (subscriber_endpoint.h), the sources it hears
// (source_table.h) and the endpoint counters, with the locks that guard them. Only
// subscriber.cpp includes this header.
namespace livemon::transport {

namespace detail {

// Not thread-safe: one owner at a time (one poll(), from its receiving to the end of its
// callbacks).
//
// What a poll lends to SubscriberCallbacks::onEventView: the messages it decoded, held by the
// decoder, and their bytes, copied out of ZeroMQ's frames and the history's buffers (which the
// poll lets go of before it calls back) into chunks that never move. A copy of the bytes costs a
// fraction of what decoding them into owning events did.
class LentMessages {
 public:
  explicit LentMessages(const WireLimits& limits) : decoder(limits) {}

  // `topic` and `payload`, where they stay put until clear().
  std::pair<std::string_view, std::string_view> keep(std::string_view topic, std::string_view payload);
  // Forgets what was lent; keeps one chunk of the usual size for the next poll.
  void clear() noexcept;

  EventBatchDecoder decoder;

 private:
  static constexpr std::size_t kChunkBytes = 1 << 20;
  std::vector<std::string> chunks_;  // each filled within the capacity it was made with
  std::size_t used_ = 0;             // chunks_[0, used_) hold this poll's bytes
};

}  // namespace detail

// Thread-safe: each mutex below says what it guards (socketMutex before stateMutex); the
// immutable members and the atomics need none.
struct Subscriber::State {
  State(SubscriberOptions opts, uint64_t generation)
      : options(std::move(opts)),
        clock(options.clock ? *options.clock : systemClock()),
        forkGeneration(generation),
        sources(detail::SourceTableLimits{options.staleAfter, options.maxSources, options.maxTopicsPerSource,
                                          options.maxTopics, options.maxRankedSources},
                clock, stats) {}

  void wakePoller() noexcept {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = write(wakeFd, &one, sizeof(one));
  }

  // Thread-safe: held by the thread that changes the endpoints. A poll() in progress is woken
  // and lets the change through first.
  class ChangeGuard {
   public:
    explicit ChangeGuard(State& state) : state_(state) {
      state_.pendingChanges.fetch_add(1, std::memory_order_acq_rel);
      state_.wakePoller();
    }
    ~ChangeGuard() {
      {
        std::lock_guard lock(state_.changeMutex);
        state_.pendingChanges.fetch_sub(1, std::memory_order_acq_rel);
      }
      state_.changeDone.notify_all();
    }
    ChangeGuard(const ChangeGuard&) = delete;
    ChangeGuard& operator=(const ChangeGuard&) = delete;

   private:
    State& state_;
  };

  void waitForChanges() {
    std::unique_lock lock(changeMutex);
    changeDone.wait(lock, [this] { return pendingChanges.load(std::memory_order_acquire) == 0; });
  }

  // Under socketMutex. `ownSecurity`: the endpoint's own CURVE settings; null: `security`.
  std::string openEndpoint(const std::string& endpoint, EndpointMode mode,
                           std::shared_ptr<detail::SocketSecurity> ownSecurity = nullptr);
  void readConnectionEvents(detail::EndpointSocket& socket);
  void reconnectDropped();
  // Waits up to `timeout` and receives what came, within one poll's bounds.
  void receiveFor(std::chrono::milliseconds timeout, std::vector<detail::Delivery>& deliveries);
  std::size_t receive(std::vector<detail::Delivery>& deliveries);
  // Decodes and delivers one message; the events delivered, or nothing when it was rejected.
  // While `lending` is set (a poll for onEventView), messages are decoded borrowed into it.
  std::optional<std::size_t> handle(const std::shared_ptr<const std::string>& endpoint, std::string_view topic,
                                    std::string_view payload, bool wellFramed, std::vector<detail::Delivery>& deliveries,
                                    detail::Origin origin = detail::Origin::Live);
  void reject(DecodeStatus status, const std::string& error);
  // Closes every socket and the wake descriptor (the context last).
  void close() noexcept;

  const SubscriberOptions options;
  Clock& clock;
  const uint64_t forkGeneration;
  std::shared_ptr<void> context;
  // Applies options.curve to every socket opened, the history requests' included.
  std::shared_ptr<detail::SocketSecurity> security;
  int wakeFd = -1;

  std::mutex pollMutex;    // serializes poll()
  std::mutex socketMutex;  // guards sockets and `message`; taken before stateMutex
  std::vector<std::unique_ptr<detail::EndpointSocket>> sockets;
  WireMessage message;  // decode buffer
  detail::LentMessages* lending = nullptr;  // the poll's, while it receives for onEventView
  std::size_t lentEvents = 0;  // events lent by this poll, which count against its bound as deliveries do
  std::atomic<int> pendingChanges{0};
  std::mutex changeMutex;
  std::condition_variable changeDone;

  mutable std::mutex stateMutex;  // guards everything below
  std::vector<EndpointStatus> endpointStatus;
  SubscriberStats stats;
  detail::SourceTable sources;  // counts in `stats`

  // A delivery buffer kept between polls so its memory is reused; a poll called from inside a
  // callback finds it taken and uses its own.
  std::mutex spareMutex;
  std::vector<detail::Delivery> spareDeliveries;
  std::unique_ptr<detail::LentMessages> spareLent;  // the same for lent messages
};

}  // namespace livemon::transport
