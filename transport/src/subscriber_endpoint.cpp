#include "subscriber_endpoint.h"

#include <atomic>
#include <cerrno>
#include <cstring>

#include <livemon/transport/error.h>

#include "zmq_support.h"

namespace livemon::transport::detail {

namespace {

bool isHandshakeFailure(uint16_t event) noexcept {
  return event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
         event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
}

std::string hex(uint32_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text = "0x00000000";
  for (int i = 9; i >= 2; --i, value >>= 4) text[static_cast<std::size_t>(i)] = kDigits[value & 0xF];
  return text;
}

// Why a handshake failed, for a person, from the monitor's event and value. `curve`: this side
// uses CURVE. `connecting`: this side connected (the peer is a publisher or relay that binds);
// otherwise a peer connected to this side's bound endpoint.
std::string describeHandshakeFailure(uint16_t event, uint32_t value, bool curve, bool connecting) {
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {  // the value is the ZAP status code (RFC 27)
    if (value == 400) {
      return connecting ? "refused: this side's key is not in the publisher's allow list"
                        : "refused a peer whose key is not in the allow list";
    }
    return (connecting ? "refused by the publisher's authentication (ZAP status "
                       : "refused a peer (ZAP status ") + std::to_string(value) + ")";
  }
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) {
    if (connecting) {
      return curve ? "the publisher does not use CURVE"
                   : "the publisher requires CURVE: give this side its certificates (--curve-server and "
                     "--curve-client, or LIVEMON_CURVE_SERVER and LIVEMON_CURVE_CLIENT)";
    }
    return curve ? "refused a peer without CURVE" : "a peer uses CURVE and this side does not";
  }
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
    return std::string(curve ? "the CURVE handshake failed" : "the handshake failed") + " (ZeroMQ protocol error " +
           hex(value) + ")";
  }
  // No detail: the peer closed the connection during the handshake.
  if (!connecting) return "a peer's handshake failed";
  return curve ? "the CURVE handshake failed: is the server certificate (--curve-server) the publisher's?"
               : "the handshake failed: does the publisher require CURVE?";
}

}  // namespace

int receiveQueueMessages(const SubscriberOptions& options) {
  const auto largest = static_cast<std::size_t>(maxFrameBytes(options.limits)) + options.limits.maxTopicBytes;
  const std::size_t fits = std::max<std::size_t>(1, options.receiveBufferBytes / largest);
  const auto bound = static_cast<int>(std::min<std::size_t>(fits, std::numeric_limits<int>::max()));
  // ZMQ_RCVHWM 0 is no limit in messages: the bytes still bound it.
  return options.receiveHighWaterMark == 0 ? bound : std::min(options.receiveHighWaterMark, bound);
}

bool ReceivedFrames::receive(void* socket) {
  if (zmq_msg_recv(&topic_, socket, ZMQ_DONTWAIT) < 0) return false;
  annotateAfterReceive();
  wellFramed_ = zmq_msg_more(&topic_) != 0 && zmq_msg_recv(&payload_, socket, 0) >= 0;
  // Parts beyond the second make the message malformed; read them to keep the socket in step.
  if (wellFramed_ && zmq_msg_more(&payload_)) {
    wellFramed_ = false;
    zmq_msg_t rest;
    zmq_msg_init(&rest);
    while (zmq_msg_recv(&rest, socket, 0) >= 0 && zmq_msg_more(&rest)) {
    }
    zmq_msg_close(&rest);
  }
  return true;
}

EndpointSocket::EndpointSocket(const SubscriberOptions& options, void* context, const std::string& endpoint,
                               EndpointMode mode, std::shared_ptr<SocketSecurity> security)
    : options_(options), context_(context), mode_(mode), security_(std::move(security)) {
  try {
    open(endpoint, mode);
  } catch (...) {
    close();
    throw;
  }
}

EndpointSocket::~EndpointSocket() { close(); }

void EndpointSocket::open(const std::string& endpoint, EndpointMode mode) {
  static std::atomic<uint64_t> monitors{0};
  socket_ = zmq_socket(context_, ZMQ_SUB);
  if (socket_ == nullptr) throwEndpointError("open a socket for", endpoint, errno);
  setIntOption(socket_, ZMQ_LINGER, 0, "ZMQ_LINGER");
  // An inproc:// peer is this process: what it queues is its own memory already, and the queue is
  // the one both ends share, so it keeps the depth in messages a publisher's flush relies on.
  const bool inproc = endpoint.starts_with("inproc://");
  setIntOption(socket_, ZMQ_RCVHWM, inproc ? options_.receiveHighWaterMark : receiveQueueMessages(options_),
               "ZMQ_RCVHWM");
  setIntOption(socket_, ZMQ_RECONNECT_IVL, static_cast<int>(options_.reconnectInterval.count()), "ZMQ_RECONNECT_IVL");
  setIntOption(socket_, ZMQ_RECONNECT_IVL_MAX, static_cast<int>(options_.reconnectIntervalMax.count()),
               "ZMQ_RECONNECT_IVL_MAX");
  setInt64Option(socket_, ZMQ_MAXMSGSIZE, maxFrameBytes(options_.limits), "ZMQ_MAXMSGSIZE");
  std::vector<std::string> prefixes = options_.filters;
  if (prefixes.empty()) {
    prefixes.emplace_back();
  } else {
    prefixes.emplace_back(kHeartbeatTopic);
  }
  for (const std::string& prefix : prefixes) {
    if (zmq_setsockopt(socket_, ZMQ_SUBSCRIBE, prefix.data(), prefix.size()) != 0) {
      throwEndpointError("subscribe on", endpoint, errno);
    }
  }
  // Connection events, so endpoints() can tell whether a publisher is connected. The monitor is
  // connected before the endpoint so no event is missed.
  const std::string monitorAddress = "inproc://livemon-subscriber-monitor-" + std::to_string(monitors++);
  if (zmq_socket_monitor(socket_, monitorAddress.c_str(),
                         ZMQ_EVENT_CONNECTED | ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CONNECT_RETRIED |
                             ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                             ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0) {
    throwEndpointError("monitor", endpoint, errno);
  }
  monitor_ = zmq_socket(context_, ZMQ_PAIR);
  if (monitor_ == nullptr) throwEndpointError("monitor", endpoint, errno);
  setIntOption(monitor_, ZMQ_LINGER, 0, "ZMQ_LINGER");
  if (zmq_connect(monitor_, monitorAddress.c_str()) != 0) throwEndpointError("monitor", endpoint, errno);

  std::string used = endpoint;
  if (mode == EndpointMode::Bind) {
    security_->prepareBind(socket_, endpoint);
    if (zmq_bind(socket_, endpoint.c_str()) != 0) throwEndpointError("bind", endpoint, errno);
    used = lastEndpoint(socket_, endpoint);
  } else {
    security_->prepareConnect(socket_);
    if (zmq_connect(socket_, endpoint.c_str()) != 0) throwEndpointError("connect to", endpoint, errno);
  }
  endpoint_ = std::make_shared<const std::string>(used);
}

void EndpointSocket::close() noexcept {
  history_.reset();
  if (socket_ == nullptr) return;
  if (monitor_ != nullptr) {
    zmq_socket_monitor(socket_, nullptr, 0);
    zmq_close(monitor_);
    monitor_ = nullptr;
  }
  zmq_close(socket_);
  socket_ = nullptr;
}

void EndpointSocket::startHistory(Clock& clock) {
  history_ = std::make_unique<HistoryFetch>(options_, clock, context_, endpoint_, security_);
}

// Each event is two frames: 6 bytes (a 16-bit event and a 32-bit value, native byte order), then
// the address.
std::vector<ConnectionEvent> EndpointSocket::takeConnectionEvents(std::chrono::steady_clock::time_point now) {
  std::vector<ConnectionEvent> events;
  while (true) {
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, monitor_, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      return events;
    }
    annotateAfterReceive();
    ConnectionEvent& got = events.emplace_back();
    if (zmq_msg_size(&frame) >= sizeof(got.event) + sizeof(got.value)) {
      std::memcpy(&got.event, zmq_msg_data(&frame), sizeof(got.event));
      std::memcpy(&got.value, static_cast<const char*>(zmq_msg_data(&frame)) + sizeof(got.event), sizeof(got.value));
    }
    while (zmq_msg_more(&frame) && zmq_msg_recv(&frame, monitor_, 0) >= 0) {
    }
    zmq_msg_close(&frame);
    if (got.event == ZMQ_EVENT_CONNECTED) handshakeFailed_ = false;
    if (isHandshakeFailure(got.event)) handshakeFailed_ = true;
    if (mode_ == EndpointMode::Connect) {
      if (got.event == ZMQ_EVENT_DISCONNECTED) {
        droppedAt_ = now;
      } else if (got.event == ZMQ_EVENT_CONNECT_RETRIED || got.event == ZMQ_EVENT_CONNECTED) {
        droppedAt_.reset();
      }
    }
  }
}

void EndpointSocket::record(const ConnectionEvent& event, EndpointStatus& status) {
  if (event.event == ZMQ_EVENT_CONNECTED || event.event == ZMQ_EVENT_ACCEPTED) {
    ++status.connections;
  } else if (event.event == ZMQ_EVENT_DISCONNECTED && status.connections > 0) {
    --status.connections;
  } else if (isHandshakeFailure(event.event)) {
    ++status.handshakeFailures;
    const bool detailed = event.event != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
    if (detailed || !handshakeReasonKnown_) {
      status.handshakeError = describeHandshakeFailure(event.event, event.value, security_ && security_->enabled(),
                                                       mode_ == EndpointMode::Connect);
    }
    handshakeReasonKnown_ = handshakeReasonKnown_ || detailed;
  } else if (event.event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
    status.handshakeError.clear();
    handshakeReasonKnown_ = false;
  }
}

// libzmq 4.3 ends a connection for good when the peer breaks the protocol (a frame beyond
// ZMQ_MAXMSGSIZE, a bad handshake), so a hostile frame would cost the endpoint for good; here it
// costs one reconnect.
bool EndpointSocket::reconnectIfDropped(std::chrono::steady_clock::time_point now,
                                        std::chrono::steady_clock::duration grace) {
  if (!droppedAt_ || now - *droppedAt_ < grace) return false;
  droppedAt_.reset();
  zmq_disconnect(socket_, endpoint_->c_str());
  if (zmq_connect(socket_, endpoint_->c_str()) != 0) {
    droppedAt_ = now;  // try again later
    return false;
  }
  // After a failed handshake (libzmq gives up on a refused key) this is a retry, which admits the
  // subscriber once the publisher's allow list has its key; not a protocol error.
  return !handshakeFailed_;
}

}  // namespace livemon::transport::detail
