#include <livemon/transport/subscriber.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <list>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <variant>

#include <zmq.h>

#include <livemon/transport/error.h>

#include "subscriber_state.h"
#include "zmq_support.h"

namespace livemon::transport {

using detail::Delivery;
using detail::kMaxDeliveriesPerPoll;
using detail::kMaxMessagesPerPoll;
using detail::kMaxPayloadBytesPerPoll;

namespace {

// After ZeroMQ drops a connection it reports, at once, that it will retry it. Without that report
// for this long (or the reconnect interval if longer) it dropped the connection for good, for a
// protocol error, and the subscriber connects again itself.
constexpr std::chrono::seconds kRetryReportGrace{1};

void validate(const SubscriberOptions& options) {
  auto bad = [](const std::string& message) { throw std::invalid_argument("SubscriberOptions: " + message); };
  if (options.staleAfter.count() < 1) bad("staleAfter must be at least 1 ms, got " + std::to_string(options.staleAfter.count()) + " ms");
  if (options.receiveHighWaterMark < 0) {
    bad("receiveHighWaterMark must not be negative, got " + std::to_string(options.receiveHighWaterMark));
  }
  if (options.reconnectInterval.count() < 1) {
    bad("reconnectInterval must be at least 1 ms, got " + std::to_string(options.reconnectInterval.count()) + " ms");
  }
  if (options.reconnectIntervalMax.count() < 0) {
    bad("reconnectIntervalMax must not be negative, got " + std::to_string(options.reconnectIntervalMax.count()) + " ms");
  }
  if (options.maxSources < 1) bad("maxSources must be at least 1");
  if (options.maxTopicsPerSource < 1) bad("maxTopicsPerSource must be at least 1");
  if (options.maxTopics < 1) bad("maxTopics must be at least 1");
  for (const std::string& filter : options.filters) {
    if (filter.size() > options.limits.maxTopicBytes) bad("filter longer than the longest topic: " + filter);
  }
}

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

std::string_view sourceStateName(SourceState state) noexcept {
  switch (state) {
    case SourceState::Alive: return "alive";
    case SourceState::Stale: return "stale";
    case SourceState::Gone: return "gone";
  }
  return "unknown";
}


std::string Subscriber::State::openEndpoint(const std::string& endpoint, EndpointMode mode,
                                           std::shared_ptr<detail::SocketSecurity> ownSecurity) {
  static std::atomic<uint64_t> monitors{0};
  Socket opened;
  opened.security = ownSecurity ? std::move(ownSecurity) : security;
  opened.socket = zmq_socket(context.get(), ZMQ_SUB);
  if (opened.socket == nullptr) detail::throwEndpointError("open a socket for", endpoint, errno);
  std::string used = endpoint;
  try {
    detail::setIntOption(opened.socket, ZMQ_LINGER, 0, "ZMQ_LINGER");
    detail::setIntOption(opened.socket, ZMQ_RCVHWM, options.receiveHighWaterMark, "ZMQ_RCVHWM");
    detail::setIntOption(opened.socket, ZMQ_RECONNECT_IVL, static_cast<int>(options.reconnectInterval.count()),
                         "ZMQ_RECONNECT_IVL");
    detail::setIntOption(opened.socket, ZMQ_RECONNECT_IVL_MAX, static_cast<int>(options.reconnectIntervalMax.count()),
                         "ZMQ_RECONNECT_IVL_MAX");
    detail::setInt64Option(opened.socket, ZMQ_MAXMSGSIZE, detail::maxFrameBytes(options.limits), "ZMQ_MAXMSGSIZE");
    std::vector<std::string> prefixes = options.filters;
    if (prefixes.empty()) {
      prefixes.emplace_back();
    } else {
      prefixes.emplace_back(kHeartbeatTopic);
    }
    for (const std::string& prefix : prefixes) {
      if (zmq_setsockopt(opened.socket, ZMQ_SUBSCRIBE, prefix.data(), prefix.size()) != 0) {
        detail::throwEndpointError("subscribe on", endpoint, errno);
      }
    }
    // Connection events, so endpoints() can tell whether a publisher is connected. The monitor
    // is connected before the endpoint so no event is missed.
    const std::string monitorAddress = "inproc://livemon-subscriber-monitor-" + std::to_string(monitors++);
    if (zmq_socket_monitor(opened.socket, monitorAddress.c_str(),
                           ZMQ_EVENT_CONNECTED | ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_CONNECT_RETRIED |
                               ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0) {
      detail::throwEndpointError("monitor", endpoint, errno);
    }
    opened.monitor = zmq_socket(context.get(), ZMQ_PAIR);
    if (opened.monitor == nullptr) detail::throwEndpointError("monitor", endpoint, errno);
    detail::setIntOption(opened.monitor, ZMQ_LINGER, 0, "ZMQ_LINGER");
    if (zmq_connect(opened.monitor, monitorAddress.c_str()) != 0) detail::throwEndpointError("monitor", endpoint, errno);

    if (mode == EndpointMode::Bind) {
      opened.security->prepareBind(opened.socket, endpoint);
      if (zmq_bind(opened.socket, endpoint.c_str()) != 0) detail::throwEndpointError("bind", endpoint, errno);
      used = detail::lastEndpoint(opened.socket, endpoint);
    } else {
      opened.security->prepareConnect(opened.socket);
      if (zmq_connect(opened.socket, endpoint.c_str()) != 0) detail::throwEndpointError("connect to", endpoint, errno);
    }
  } catch (...) {
    closeSocket(opened);
    throw;
  }
  opened.endpoint = std::make_shared<const std::string>(used);
  opened.mode = mode;
  if (options.history && mode == EndpointMode::Connect) startHistory(opened);
  EndpointStatus status;
  status.endpoint = opened.endpoint;
  sockets.push_back(std::move(opened));
  std::lock_guard lock(stateMutex);
  status.mode = mode;
  endpointStatus.push_back(status);
  return used;
}

void Subscriber::State::closeSocket(const Socket& socket) {
  if (socket.history) closeHistory(*socket.history);
  if (socket.monitor != nullptr) {
    zmq_socket_monitor(socket.socket, nullptr, 0);
    zmq_close(socket.monitor);
  }
  zmq_close(socket.socket);
}

// Counts the connections the monitor reports, and notes connections dropped without a retry. Each
// event is two frames: 6 bytes (a 16-bit event and a 32-bit value, native byte order), then the
// address.
void Subscriber::State::readConnectionEvents(Socket& socket) {
  while (true) {
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, socket.monitor, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      return;
    }
    detail::annotateAfterReceive();
    uint16_t event = 0;
    uint32_t value = 0;
    if (zmq_msg_size(&frame) >= sizeof(event) + sizeof(value)) {
      std::memcpy(&event, zmq_msg_data(&frame), sizeof(event));
      std::memcpy(&value, static_cast<const char*>(zmq_msg_data(&frame)) + sizeof(event), sizeof(value));
    }
    while (zmq_msg_more(&frame) && zmq_msg_recv(&frame, socket.monitor, 0) >= 0) {
    }
    zmq_msg_close(&frame);
    const bool handshakeFailed = isHandshakeFailure(event);
    if (event == ZMQ_EVENT_CONNECTED) socket.handshakeFailed = false;
    if (handshakeFailed) socket.handshakeFailed = true;
    if (socket.mode == EndpointMode::Connect) {
      if (event == ZMQ_EVENT_DISCONNECTED) {
        socket.droppedAt = clock.now();
      } else if (event == ZMQ_EVENT_CONNECT_RETRIED || event == ZMQ_EVENT_CONNECTED) {
        socket.droppedAt.reset();
      }
    }
    std::lock_guard lock(stateMutex);
    for (EndpointStatus& status : endpointStatus) {
      if (status.endpoint != socket.endpoint) continue;
      if (event == ZMQ_EVENT_CONNECTED || event == ZMQ_EVENT_ACCEPTED) {
        ++status.connections;
      } else if (event == ZMQ_EVENT_DISCONNECTED && status.connections > 0) {
        --status.connections;
      } else if (handshakeFailed) {
        ++status.handshakeFailures;
        const bool detailed = event != ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL;
        if (detailed || !socket.handshakeReasonKnown) {
          status.handshakeError = describeHandshakeFailure(event, value, socket.security && socket.security->enabled(),
                                                           socket.mode == EndpointMode::Connect);
        }
        socket.handshakeReasonKnown = socket.handshakeReasonKnown || detailed;
      } else if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        status.handshakeError.clear();
        socket.handshakeReasonKnown = false;
      }
    }
  }
}

// libzmq 4.3 ends a connection for good when the peer breaks the protocol (a frame beyond
// ZMQ_MAXMSGSIZE, a bad handshake), so a hostile frame would cost the endpoint for good; here it
// costs one reconnect.
void Subscriber::State::reconnectDropped() {
  const auto now = clock.now();
  const auto grace = std::max<std::chrono::steady_clock::duration>(kRetryReportGrace, options.reconnectInterval);
  for (Socket& socket : sockets) {
    if (!socket.droppedAt || now - *socket.droppedAt < grace) continue;
    socket.droppedAt.reset();
    zmq_disconnect(socket.socket, socket.endpoint->c_str());
    if (zmq_connect(socket.socket, socket.endpoint->c_str()) != 0) {
      socket.droppedAt = now;  // try again later
      continue;
    }
    // After a failed handshake (libzmq gives up on a refused key) this is a retry, which
    // admits the subscriber once the publisher's allow list has its key; not a protocol error.
    if (socket.handshakeFailed) continue;
    std::lock_guard lock(stateMutex);
    ++stats.protocolErrors;
    for (EndpointStatus& status : endpointStatus) {
      if (status.endpoint == socket.endpoint) ++status.protocolErrors;
    }
  }
}

bool detail::ReceivedFrames::receive(void* socket) {
  if (zmq_msg_recv(&topic_, socket, ZMQ_DONTWAIT) < 0) return false;
  detail::annotateAfterReceive();
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

std::size_t Subscriber::State::receive(std::vector<Delivery>& deliveries) {
  std::size_t handled = 0;
  std::size_t bytes = 0;
  auto withinBounds = [&] {
    return handled < kMaxMessagesPerPoll && deliveries.size() < kMaxDeliveriesPerPoll && bytes < kMaxPayloadBytesPerPoll;
  };
  bool more = true;
  while (more && withinBounds()) {
    more = false;
    for (Socket& socket : sockets) {
      if (!withinBounds()) break;
      if (socket.history) {
        const std::size_t taken = serviceHistory(socket, deliveries, bytes);
        handled += taken;
        more = more || taken > 0;
        // Live messages wait in ZeroMQ's queue until those held back before them are out.
        if (socket.history && socket.history->phase == HistoryFetch::Phase::Releasing) continue;
      }
      detail::ReceivedFrames frames;
      if (!frames.receive(socket.socket)) continue;
      more = true;
      ++handled;
      bytes += frames.bytes();
      if (socket.history && holdBack(socket, frames.topic(), frames.payload(), frames.wellFramed(), deliveries)) continue;
      const bool decoded = handle(socket.endpoint, frames.topic(), frames.payload(), frames.wellFramed(), deliveries).has_value();
      if (decoded && socket.history) noticeAdvertisement(socket);
    }
  }
  return handled;
}

void Subscriber::State::reject(DecodeStatus status, const std::string& error) {
  switch (status) {
    case DecodeStatus::TooLarge: ++stats.oversized; break;
    case DecodeStatus::UnsupportedVersion:
    case DecodeStatus::UnknownKind: ++stats.unsupported; break;
    default: ++stats.malformed; break;
  }
  stats.lastError = std::string(decodeStatusName(status)) + ": " + error;
}

Subscriber::State::Source& Subscriber::State::sourceFor(const SourceInfo& info,
                                                        const std::shared_ptr<const std::string>& endpoint,
                                                        std::chrono::steady_clock::time_point now,
                                                        std::vector<Delivery>& deliveries) {
  auto found = sources.find(info);
  if (found != sources.end()) {
    sourceOrder.splice(sourceOrder.end(), sourceOrder, found->second.inOrder);
    return found->second;
  }
  if (sources.size() >= options.maxSources) forgetSource(*sourceOrder.front());
  auto [inserted, unused] = sources.try_emplace(info);
  Source& source = inserted->second;
  source.key = &inserted->first;
  source.inOrder = sourceOrder.insert(sourceOrder.end(), &source);
  source.status.source = std::make_shared<const SourceInfo>(info);
  source.status.firstSeen = now;
  ++stats.sourcesJoined;
  deliveries.emplace_back(SourceChange{source.status.source, SourceState::Alive, true, endpoint});
  return source;
}

// The topic's state, made the most recently heard; a new topic may push out the one heard from
// longest ago, of this source or of all.
Subscriber::State::Topic& Subscriber::State::topicFor(Source& source, const std::string& name) {
  auto found = source.topics.find(name);
  if (found != source.topics.end()) {
    Topic& topic = found->second;
    source.topicOrder.splice(source.topicOrder.end(), source.topicOrder, topic.inSource);
    topicOrder.splice(topicOrder.end(), topicOrder, topic.inAll);
    return topic;
  }
  if (source.topics.size() >= options.maxTopicsPerSource) {
    forgetTopic(source, source.topics.find(*source.topicOrder.front()));
  }
  if (topicOrder.size() >= options.maxTopics) {
    const TopicRef oldest = topicOrder.front();
    forgetTopic(*oldest.source, oldest.source->topics.find(*oldest.name));
  }
  auto [inserted, unused] = source.topics.try_emplace(name);
  Topic& topic = inserted->second;
  topic.inSource = source.topicOrder.insert(source.topicOrder.end(), &inserted->first);
  topic.inAll = topicOrder.insert(topicOrder.end(), TopicRef{&source, &inserted->first});
  return topic;
}

void Subscriber::State::forgetTopic(Source& source, std::unordered_map<std::string, Topic>::iterator topic) {
  source.topicOrder.erase(topic->second.inSource);
  topicOrder.erase(topic->second.inAll);
  source.topics.erase(topic);
  ++stats.topicsEvicted;
}

void Subscriber::State::forgetSource(Source& source) {
  for (auto& [name, topic] : source.topics) topicOrder.erase(topic.inAll);
  sourceOrder.erase(source.inOrder);
  sources.erase(*source.key);
  ++stats.sourcesEvicted;
}

std::optional<std::size_t> Subscriber::State::handle(const std::shared_ptr<const std::string>& endpoint,
                                                     std::string_view topic, std::string_view payload, bool wellFramed,
                                                     std::vector<Delivery>& deliveries, Origin origin) {
  const auto now = clock.now();
  std::string error;
  DecodeStatus status = DecodeStatus::Malformed;
  if (!wellFramed) {
    error = "a message must have exactly two frames, topic and payload";
  } else {
    status = decodeMessage(topic, payload, options.limits, message, &error);
  }

  std::lock_guard lock(stateMutex);
  ++stats.messages;
  auto endpointIt = std::find_if(endpointStatus.begin(), endpointStatus.end(),
                                 [&](const EndpointStatus& e) { return e.endpoint == endpoint; });
  if (endpointIt != endpointStatus.end()) {
    ++endpointIt->messages;
    endpointIt->lastMessage = now;
  }
  if (status == DecodeStatus::Ok && message.kind == MessageKind::Events && !message.events.empty() &&
      message.sequence > UINT64_MAX - message.events.size()) {
    status = DecodeStatus::Malformed;
    error = "sequence numbers run past 2^64";
  }
  if (status != DecodeStatus::Ok) {
    reject(status, error);
    return std::nullopt;
  }

  Source& source = sourceFor(message.source, endpoint, now, deliveries);
  SourceStatus& s = source.status;
  s.lastSeen = now;
  s.endpoint = endpoint;
  if (message.kind == MessageKind::Goodbye) {
    ++stats.heartbeats;
    s.lastCounters = message.counters;
    s.state = SourceState::Gone;
    deliveries.emplace_back(SourceChange{s.source, SourceState::Gone, false, endpoint});
    return 0;
  }
  if (s.state != SourceState::Alive) {
    s.state = SourceState::Alive;
    deliveries.emplace_back(SourceChange{s.source, SourceState::Alive, false, endpoint});
  }
  if (message.kind == MessageKind::Heartbeat) {
    ++stats.heartbeats;
    s.lastHeartbeat = now;
    s.lastCounters = message.counters;
    return 0;
  }

  const uint64_t first = message.sequence;
  const uint64_t count = message.events.size();
  Topic& tracked = topicFor(source, message.name);
  if (count == 0) return 0;
  const uint64_t end = first + count;
  const detail::SequenceRanges::Verdict verdict = tracked.delivered.classify(first, end);
  if (verdict.kind == detail::SequenceRanges::Kind::Gap) {
    const uint64_t missed = first - verdict.missingFrom;
    ++s.gaps;
    ++stats.gaps;
    s.missedEvents += missed;
    stats.missedEvents += missed;
    deliveries.emplace_back(GapInfo{s.source, message.name, verdict.missingFrom, first});
  } else if (verdict.kind == detail::SequenceRanges::Kind::Restart) {
    ++s.sequenceResets;
    ++stats.sequenceResets;
  }
  // Only numbers already delivered are duplicates (one publisher reached over two endpoints).
  const bool someSeen = tracked.delivered.overlaps(first, end);
  const auto wallNow = clock.wallNow();
  std::shared_ptr<const ReceivedMessage> arrived;
  if (options.keepMessages && !someSeen) {
    arrived = std::make_shared<const ReceivedMessage>(ReceivedMessage{std::string(topic), std::string(payload), first, count});
  }
  uint64_t delivered = 0;
  uint64_t seam = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (someSeen && tracked.delivered.contains(first + i)) {
      // Live events that came in a history answer too overlap its end: the seam, not duplicates.
      if (first + i < tracked.historyEnd) ++seam;
      continue;
    }
    auto& received = std::get<ReceivedEvent>(deliveries.emplace_back(std::in_place_type<ReceivedEvent>));
    received.event = std::move(message.events[i]);
    received.source = s.source;
    received.sequence = first + i;
    received.endpoint = endpoint;
    received.receivedAt = wallNow;
    received.fromHistory = origin == Origin::History;
    received.message = arrived;
    tracked.lastSequence = first + i;
    ++delivered;
  }
  tracked.delivered.add(first, end);
  stats.historyOverlap += seam;
  s.duplicates += count - delivered - seam;
  stats.duplicates += count - delivered - seam;
  if (origin == Origin::History) {
    stats.historyEvents += delivered;
    tracked.historyEnd = std::max(tracked.historyEnd, end);
  }
  s.events += delivered;
  stats.events += delivered;
  if (endpointIt != endpointStatus.end()) endpointIt->events += delivered;
  return delivered;
}

void Subscriber::State::checkStaleness(std::vector<Delivery>& deliveries) {
  const auto now = clock.now();
  std::lock_guard lock(stateMutex);
  for (auto& [info, source] : sources) {
    SourceStatus& s = source.status;
    if (s.state == SourceState::Alive && now - s.lastSeen > options.staleAfter) {
      s.state = SourceState::Stale;
      deliveries.emplace_back(SourceChange{s.source, SourceState::Stale, false, s.endpoint});
    }
  }
}

Subscriber::Subscriber(Options options) {
  validate(options);
  detail::watchForks();
  state_ = std::make_unique<State>(std::move(options), detail::forkGeneration());
  State& state = *state_;
  state.wakeFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (state.wakeFd < 0) {
    const int error = errno;
    throw TransportError("", std::strerror(error), std::string("livemon subscriber: eventfd failed: ") + std::strerror(error));
  }
  try {
    state.context = detail::sharedContext();
    state.security = std::make_shared<detail::SocketSecurity>(state.options.curve, "SubscriberOptions");
    std::lock_guard lock(state.socketMutex);
    for (const std::string& endpoint : state.options.connect) state.openEndpoint(endpoint, EndpointMode::Connect);
    for (const std::string& endpoint : state.options.bind) state.openEndpoint(endpoint, EndpointMode::Bind);
  } catch (...) {
    for (const auto& socket : state.sockets) State::closeSocket(socket);
    state.context.reset();
    close(state.wakeFd);
    throw;
  }
}

Subscriber::~Subscriber() {
  if (detail::forkGeneration() != state_->forkGeneration) {
    // Inherited through fork(): leave the parent's ZeroMQ state alone (see Publisher).
    static_cast<void>(state_.release());
    return;
  }
  for (const auto& socket : state_->sockets) State::closeSocket(socket);
  state_->context.reset();
  close(state_->wakeFd);
}

std::string Subscriber::addEndpoint(const std::string& endpoint, EndpointMode mode) {
  State::ChangeGuard change(*state_);
  std::lock_guard lock(state_->socketMutex);
  return state_->openEndpoint(endpoint, mode);
}

std::string Subscriber::addEndpoint(const std::string& endpoint, EndpointMode mode, const CurveOptions& curve) {
  auto security = std::make_shared<detail::SocketSecurity>(curve, "Subscriber::addEndpoint");
  State::ChangeGuard change(*state_);
  std::lock_guard lock(state_->socketMutex);
  return state_->openEndpoint(endpoint, mode, std::move(security));
}

bool Subscriber::removeEndpoint(std::string_view endpoint) {
  State::ChangeGuard change(*state_);
  std::lock_guard lock(state_->socketMutex);
  auto& sockets = state_->sockets;
  auto found = std::find_if(sockets.begin(), sockets.end(), [&](const auto& s) { return *s.endpoint == endpoint; });
  if (found == sockets.end()) return false;
  State::closeSocket(*found);
  const auto name = found->endpoint;
  sockets.erase(found);
  std::lock_guard stateLock(state_->stateMutex);
  std::erase_if(state_->endpointStatus, [&](const EndpointStatus& e) { return e.endpoint == name; });
  return true;
}

std::vector<EndpointStatus> Subscriber::endpoints() const {
  std::lock_guard lock(state_->stateMutex);
  return state_->endpointStatus;
}

std::size_t Subscriber::poll(std::chrono::milliseconds timeout, const EventCallback& onEvent) {
  SubscriberCallbacks callbacks;
  callbacks.onEvent = onEvent;
  return poll(timeout, callbacks);
}

std::size_t Subscriber::poll(std::chrono::milliseconds timeout, const SubscriberCallbacks& callbacks) {
  State& state = *state_;
  std::vector<Delivery> deliveries;
  {
    std::lock_guard lock(state.spareMutex);
    deliveries.swap(state.spareDeliveries);
  }
  deliveries.reserve(kMaxDeliveriesPerPoll + 64);
  {
    std::lock_guard pollLock(state.pollMutex);
    state.waitForChanges();
    std::lock_guard lock(state.socketMutex);
    std::vector<zmq_pollitem_t> items;
    items.reserve(2 * state.sockets.size() + 1);
    for (const auto& socket : state.sockets) {
      items.push_back(zmq_pollitem_t{socket.socket, 0, ZMQ_POLLIN, 0});
      items.push_back(zmq_pollitem_t{socket.monitor, 0, ZMQ_POLLIN, 0});
    }
    items.push_back(zmq_pollitem_t{nullptr, state.wakeFd, ZMQ_POLLIN, 0});
    // Fetching a history: its answer wakes the poll too, its deadlines are checked every poll, and
    // held-back messages being released leave no reason to wait.
    bool fetching = false;
    bool releasing = false;
    for (const auto& socket : state.sockets) {
      if (!socket.history) continue;
      fetching = true;
      if (socket.history->dealer != nullptr) items.push_back(zmq_pollitem_t{socket.history->dealer, 0, ZMQ_POLLIN, 0});
      releasing = releasing || socket.history->phase == State::HistoryFetch::Phase::Releasing;
    }
    const std::size_t wakeItem = 2 * state.sockets.size();
    const long waitMs = releasing ? 0 : std::max<long>(0, static_cast<long>(timeout.count()));
    const int ready = zmq_poll(items.data(), static_cast<int>(items.size()), waitMs);
    if (ready > 0 || fetching) {
      if (items[wakeItem].revents & ZMQ_POLLIN) {
        uint64_t counter = 0;
        [[maybe_unused]] const ssize_t got = read(state.wakeFd, &counter, sizeof(counter));
      }
      for (std::size_t i = 0; i < state.sockets.size(); ++i) {
        if (items[2 * i + 1].revents & ZMQ_POLLIN) state.readConnectionEvents(state.sockets[i]);
      }
      state.receive(deliveries);
    }
    state.reconnectDropped();
  }
  state.checkStaleness(deliveries);

  std::size_t events = 0;
  for (Delivery& delivery : deliveries) {
    if (auto* event = std::get_if<ReceivedEvent>(&delivery)) {
      ++events;
      if (callbacks.onEvent) callbacks.onEvent(*event);
    } else if (auto* change = std::get_if<SourceChange>(&delivery)) {
      if (callbacks.onSourceChange) callbacks.onSourceChange(*change);
    } else if (auto* gap = std::get_if<GapInfo>(&delivery)) {
      if (callbacks.onGap) callbacks.onGap(*gap);
    } else if (callbacks.onHistory) {
      callbacks.onHistory(std::get<HistoryStatus>(delivery));
    }
  }
  deliveries.clear();
  {
    std::lock_guard lock(state.spareMutex);
    if (state.spareDeliveries.capacity() < deliveries.capacity()) deliveries.swap(state.spareDeliveries);
  }
  return events;
}

std::vector<SourceStatus> Subscriber::sources() const {
  std::lock_guard lock(state_->stateMutex);
  std::vector<SourceStatus> result;
  result.reserve(state_->sources.size());
  for (const auto& [info, source] : state_->sources) {
    SourceStatus& status = result.emplace_back(source.status);
    for (const auto& [name, topic] : source.topics) {
      if (topic.lastSequence) status.lastSequence.emplace(name, *topic.lastSequence);
    }
  }
  return result;
}

SubscriberStats Subscriber::stats() const {
  std::lock_guard lock(state_->stateMutex);
  return state_->stats;
}

}  // namespace livemon::transport
