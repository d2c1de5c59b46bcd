#pragma once

#include <algorithm>
#include <atomic>
#include <limits>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include <zmq.h>

#include <livemon/transport/subscriber.h>

#include "curve_security.h"
#include "sequence_ranges.h"

// The Subscriber's state, shared by subscriber.cpp and subscriber_history.cpp. Only transport/src
// includes this header.
namespace livemon::transport {

namespace detail {

// Messages, deliveries and payload bytes handled by one poll() at most, so a flood cannot starve
// the caller and deliveries stay in cache until they are handed over. The bytes bound what one
// poll holds decoded at once: decoding multiplies a payload's size many times over. A poll stops
// taking messages once past a bound, so it may go beyond by one message.
constexpr std::size_t kMaxMessagesPerPoll = 4096;
constexpr std::size_t kMaxDeliveriesPerPoll = 8192;
constexpr std::size_t kMaxPayloadBytesPerPoll = 1024 * 1024;

// Frames beyond WireLimits::maxPayloadBytes but within this headroom are received and counted as
// oversized; ZeroMQ refuses anything larger at its header (ZMQ_MAXMSGSIZE), before buffering it,
// and drops the connection.
constexpr std::size_t kFrameHeadroomBytes = 1024 * 1024;

// ZMQ_MAXMSGSIZE of the subscriber's sockets.
inline int64_t maxFrameBytes(const WireLimits& limits) {
  const std::size_t largest = std::max(limits.maxPayloadBytes, limits.maxTopicBytes);
  return static_cast<int64_t>(std::min<std::size_t>(largest, std::numeric_limits<int64_t>::max() - kFrameHeadroomBytes) +
                              kFrameHeadroomBytes);
}

using Delivery = std::variant<ReceivedEvent, SourceChange, GapInfo, HistoryStatus>;

// Not thread-safe: one message received from a socket, meant to be a topic and a payload frame.
class ReceivedFrames {
 public:
  ReceivedFrames() noexcept {
    zmq_msg_init(&topic_);
    zmq_msg_init(&payload_);
  }
  ~ReceivedFrames() {
    zmq_msg_close(&topic_);
    zmq_msg_close(&payload_);
  }
  ReceivedFrames(const ReceivedFrames&) = delete;
  ReceivedFrames& operator=(const ReceivedFrames&) = delete;

  // Receives the next message without waiting; false when none is there. Frames beyond the
  // second are read and dropped (the message is then not well framed).
  bool receive(void* socket);

  std::string_view topic() const noexcept { return view(topic_); }
  std::string_view payload() const noexcept { return view(payload_); }
  bool wellFramed() const noexcept { return wellFramed_; }
  std::size_t bytes() const noexcept { return topic().size() + payload().size(); }

 private:
  static std::string_view view(const zmq_msg_t& frame) noexcept {
    auto& message = const_cast<zmq_msg_t&>(frame);
    return {static_cast<const char*>(zmq_msg_data(&message)), zmq_msg_size(&message)};
  }
  zmq_msg_t topic_;
  zmq_msg_t payload_;
  bool wellFramed_ = false;
};

}  // namespace detail

// Thread-safe: each mutex below says what it guards (socketMutex before stateMutex); the
// immutable members and the atomics need none.
struct Subscriber::State {
  // Not thread-safe: used under socketMutex. A live message held back while the history comes.
  struct Held {
    std::string topic;
    std::string payload;
    bool wellFramed = true;
  };
  // Not thread-safe: used under socketMutex. An endpoint's history while it is fetched (see
  // SubscriberOptions::history): waiting for an advertisement, then for the answer, then
  // releasing the live messages held back meanwhile.
  struct HistoryFetch {
    enum class Phase { Waiting, Requesting, Releasing };
    Phase phase = Phase::Waiting;
    std::chrono::steady_clock::time_point since;  // Clock::now() when the phase began or the answer last moved
    void* dealer = nullptr;                       // DEALER connected to the history socket
    std::deque<Held> held;
    std::size_t heldBytes = 0;
    HistoryStatus status;
  };
  // Where a message came from, which decides how its overlaps count.
  enum class Origin { Live, History, Released };

  struct Socket {
    std::shared_ptr<const std::string> endpoint;
    EndpointMode mode = EndpointMode::Connect;
    void* socket = nullptr;
    void* monitor = nullptr;  // PAIR socket receiving the SUB socket's connection events
    // When ZeroMQ dropped a connection it made without (yet) saying it retries.
    std::optional<std::chrono::steady_clock::time_point> droppedAt;
    // The last connection ended in its handshake, not for breaking the protocol later.
    bool handshakeFailed = false;
    // A failure since the last success said why (a refused key, a mechanism mismatch): a later one
    // without detail (libzmq often reports the same cause so) does not replace that reason.
    bool handshakeReasonKnown = false;
    std::unique_ptr<HistoryFetch> history;  // while the endpoint's history is fetched
    // The CURVE settings of this endpoint and its history requests: the subscriber's, or the
    // endpoint's own (addEndpoint with CurveOptions).
    std::shared_ptr<detail::SocketSecurity> security;
  };
  struct Source;
  // Not thread-safe: guarded by stateMutex, as the sources are. A topic in the order topics were
  // last heard, over all sources.
  struct TopicRef {
    Source* source;
    const std::string* name;  // the key in source->topics
  };
  struct Topic {
    detail::SequenceRanges delivered;
    std::optional<uint64_t> lastSequence;  // of the last event delivered
    uint64_t historyEnd = 0;  // past the highest number delivered from a history answer
    std::list<const std::string*>::iterator inSource;
    std::list<TopicRef>::iterator inAll;
  };
  struct Source {
    SourceStatus status;  // lastSequence is filled in by sources()
    const SourceInfo* key = nullptr;  // in `sources`
    std::list<Source*>::iterator inOrder;
    std::unordered_map<std::string, Topic> topics;
    std::list<const std::string*> topicOrder;  // heard from longest ago first
  };

  State(SubscriberOptions opts, uint64_t generation)
      : options(std::move(opts)), clock(options.clock ? *options.clock : systemClock()), forkGeneration(generation) {}

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

  // `ownSecurity`: the endpoint's own CURVE settings; null: `security`.
  std::string openEndpoint(const std::string& endpoint, EndpointMode mode,
                           std::shared_ptr<detail::SocketSecurity> ownSecurity = nullptr);
  static void closeSocket(const Socket& socket);
  void readConnectionEvents(Socket& socket);
  void reconnectDropped();
  std::size_t receive(std::vector<detail::Delivery>& deliveries);
  // Decodes and delivers one message; the events delivered, or nothing when it was rejected.
  std::optional<std::size_t> handle(const std::shared_ptr<const std::string>& endpoint, std::string_view topic,
                                    std::string_view payload, bool wellFramed, std::vector<detail::Delivery>& deliveries,
                                    Origin origin = Origin::Live);
  // subscriber_history.cpp
  void startHistory(Socket& socket);
  bool holdBack(Socket& socket, std::string_view topic, std::string_view payload, bool wellFramed,
                std::vector<detail::Delivery>& deliveries);
  void noticeAdvertisement(Socket& socket);
  std::size_t serviceHistory(Socket& socket, std::vector<detail::Delivery>& deliveries, std::size_t& bytes);
  void finishHistory(Socket& socket, HistoryOutcome outcome, std::string error, std::vector<detail::Delivery>& deliveries);
  static void closeHistory(HistoryFetch& fetch);
  Source& sourceFor(const SourceInfo& info, const std::shared_ptr<const std::string>& endpoint,
                    std::chrono::steady_clock::time_point now, std::vector<detail::Delivery>& deliveries);
  Topic& topicFor(Source& source, const std::string& name);
  void forgetTopic(Source& source, std::unordered_map<std::string, Topic>::iterator topic);
  void forgetSource(Source& source);
  void checkStaleness(std::vector<detail::Delivery>& deliveries);
  void reject(DecodeStatus status, const std::string& error);

  const SubscriberOptions options;
  Clock& clock;
  const uint64_t forkGeneration;
  std::shared_ptr<void> context;
  // Applies options.curve to every socket opened, the history requests' included.
  std::shared_ptr<detail::SocketSecurity> security;
  int wakeFd = -1;

  std::mutex pollMutex;    // serializes poll()
  std::mutex socketMutex;  // guards sockets; taken before stateMutex
  std::vector<Socket> sockets;
  std::atomic<int> pendingChanges{0};
  std::mutex changeMutex;
  std::condition_variable changeDone;

  mutable std::mutex stateMutex;  // guards everything below
  std::vector<EndpointStatus> endpointStatus;
  std::map<SourceInfo, Source> sources;
  std::list<Source*> sourceOrder;  // heard from longest ago first
  std::list<TopicRef> topicOrder;  // over all sources, heard from longest ago first
  SubscriberStats stats;

  WireMessage message;  // decode buffer, used under socketMutex

  // A delivery buffer kept between polls so its memory is reused; a poll called from inside a
  // callback finds it taken and uses its own.
  std::mutex spareMutex;
  std::vector<detail::Delivery> spareDeliveries;
};

}  // namespace livemon::transport
