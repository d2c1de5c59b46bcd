#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <zmq.h>

#include <livemon/clock.h>
#include <livemon/transport/subscriber.h>

#include "curve_security.h"
#include "subscriber_history.h"

// The Subscriber's sockets. Only transport/src includes this header.
namespace livemon::transport::detail {

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

// ZMQ_RCVHWM of a subscriber's endpoint sockets: as many messages of the largest size the limits
// let through as fit in SubscriberOptions::receiveBufferBytes (at least one), and at most
// receiveHighWaterMark.
int receiveQueueMessages(const SubscriberOptions& options);

// Not thread-safe: one owner at a time. One message received from a socket, meant to be a topic
// and a payload frame.
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

// Thread-safety: a plain value type. One event of a socket's monitor (zmq_socket_monitor).
struct ConnectionEvent {
  uint16_t event = 0;
  uint32_t value = 0;
};

// Not thread-safe: one owner at a time (the Subscriber, under its socket lock).
//
// One endpoint of a Subscriber: its SUB socket, connected or bound with the endpoint's CURVE
// settings and subscribed to the filters (heartbeats always), the PAIR socket its connection
// events arrive on, the reconnect after ZeroMQ dropped a connection for good, and the endpoint's
// history while it is fetched. Closes its sockets when destroyed.
class EndpointSocket {
 public:
  // Opens the socket and connects or binds it. Throws TransportError naming the endpoint.
  // `options` and `context` must outlive the socket.
  EndpointSocket(const SubscriberOptions& options, void* context, const std::string& endpoint, EndpointMode mode,
                 std::shared_ptr<SocketSecurity> security);
  ~EndpointSocket();
  EndpointSocket(const EndpointSocket&) = delete;
  EndpointSocket& operator=(const EndpointSocket&) = delete;

  // As used: a bound "tcp://host:*" with its port.
  const std::shared_ptr<const std::string>& endpoint() const noexcept { return endpoint_; }
  EndpointMode mode() const noexcept { return mode_; }
  void* socket() const noexcept { return socket_; }
  void* monitor() const noexcept { return monitor_; }

  // Begins fetching the endpoint's history (SubscriberOptions::history).
  void startHistory(Clock& clock);
  // The history while it is fetched; null before and after.
  HistoryFetch* history() const noexcept { return history_.get(); }
  void endHistory() noexcept { history_.reset(); }

  // Reads the connection events the monitor holds; notes connections dropped without a retry
  // (at `now`) and failed handshakes.
  std::vector<ConnectionEvent> takeConnectionEvents(std::chrono::steady_clock::time_point now);
  // Counts one of them in the endpoint's status: connections, handshake failures and why.
  void record(const ConnectionEvent& event, EndpointStatus& status);
  // Connects again when ZeroMQ dropped the connection for good at least `grace` before `now`.
  // True when that was for breaking the protocol (not a failed handshake): a protocol error.
  bool reconnectIfDropped(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration grace);

 private:
  void open(const std::string& endpoint, EndpointMode mode);
  void close() noexcept;

  const SubscriberOptions& options_;
  void* context_;
  std::shared_ptr<const std::string> endpoint_;
  EndpointMode mode_;
  void* socket_ = nullptr;
  void* monitor_ = nullptr;  // PAIR socket receiving the SUB socket's connection events
  // When ZeroMQ dropped a connection it made without (yet) saying it retries.
  std::optional<std::chrono::steady_clock::time_point> droppedAt_;
  // The last connection ended in its handshake, not for breaking the protocol later.
  bool handshakeFailed_ = false;
  // A failure since the last success said why (a refused key, a mechanism mismatch): a later one
  // without detail (libzmq often reports the same cause so) does not replace that reason.
  bool handshakeReasonKnown_ = false;
  // The CURVE settings of this endpoint and its history requests: the subscriber's, or the
  // endpoint's own (addEndpoint with CurveOptions).
  std::shared_ptr<SocketSecurity> security_;
  std::unique_ptr<HistoryFetch> history_;
};

}  // namespace livemon::transport::detail
