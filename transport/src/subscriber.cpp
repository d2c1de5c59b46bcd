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
#include <tuple>
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
using detail::Origin;

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
  if (options.receiveBufferBytes < 1) bad("receiveBufferBytes must be at least 1");
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

}  // namespace

std::string_view sourceStateName(SourceState state) noexcept {
  switch (state) {
    case SourceState::Alive: return "alive";
    case SourceState::Stale: return "stale";
    case SourceState::Gone: return "gone";
  }
  return "unknown";
}


std::pair<std::string_view, std::string_view> detail::LentMessages::keep(std::string_view topic,
                                                                         std::string_view payload) {
  const std::size_t size = topic.size() + payload.size();
  if (used_ == 0 || chunks_[used_ - 1].capacity() - chunks_[used_ - 1].size() < size) {
    if (used_ == chunks_.size()) chunks_.emplace_back();
    std::string& chunk = chunks_[used_++];
    chunk.clear();
    if (chunk.capacity() < size) {
      std::string fresh;
      fresh.reserve(std::max(kChunkBytes, size));
      chunk.swap(fresh);
    }
  }
  std::string& chunk = chunks_[used_ - 1];
  const std::size_t at = chunk.size();
  chunk.append(topic).append(payload);  // within the capacity: the chunk does not move
  return {std::string_view(chunk).substr(at, topic.size()), std::string_view(chunk).substr(at + topic.size())};
}

void detail::LentMessages::clear() noexcept {
  decoder.releaseHeld();
  for (std::size_t i = 0; i < used_; ++i) chunks_[i].clear();
  used_ = 0;
  // One chunk of the usual size stays; larger ones (a message beyond it) and more go.
  if (!chunks_.empty() && chunks_[0].capacity() > kChunkBytes) chunks_[0] = std::string();
  if (chunks_.size() > 1) chunks_.resize(1);
}

std::string Subscriber::State::openEndpoint(const std::string& endpoint, EndpointMode mode,
                                           std::shared_ptr<detail::SocketSecurity> ownSecurity) {
  auto opened = std::make_unique<detail::EndpointSocket>(options, context.get(), endpoint, mode,
                                                         ownSecurity ? std::move(ownSecurity) : security);
  if (options.history && mode == EndpointMode::Connect) opened->startHistory(clock);
  EndpointStatus status;
  status.endpoint = opened->endpoint();
  status.mode = mode;
  sockets.push_back(std::move(opened));
  std::lock_guard lock(stateMutex);
  endpointStatus.push_back(status);
  return *status.endpoint;
}

void Subscriber::State::close() noexcept {
  sockets.clear();
  context.reset();
  ::close(wakeFd);
}

// Counts the connections the monitor reports in the endpoint's status.
void Subscriber::State::readConnectionEvents(detail::EndpointSocket& socket) {
  const std::vector<detail::ConnectionEvent> events = socket.takeConnectionEvents(clock.now());
  if (events.empty()) return;
  std::lock_guard lock(stateMutex);
  for (EndpointStatus& status : endpointStatus) {
    if (status.endpoint != socket.endpoint()) continue;
    for (const detail::ConnectionEvent& event : events) socket.record(event, status);
  }
}

void Subscriber::State::reconnectDropped() {
  const auto now = clock.now();
  const auto grace = std::max<std::chrono::steady_clock::duration>(kRetryReportGrace, options.reconnectInterval);
  for (const auto& socket : sockets) {
    if (!socket->reconnectIfDropped(now, grace)) continue;
    std::lock_guard lock(stateMutex);
    ++stats.protocolErrors;
    for (EndpointStatus& status : endpointStatus) {
      if (status.endpoint == socket->endpoint()) ++status.protocolErrors;
    }
  }
}

std::size_t Subscriber::State::receive(std::vector<Delivery>& deliveries) {
  std::size_t handled = 0;
  std::size_t bytes = 0;
  auto withinBounds = [&] {
    return handled < kMaxMessagesPerPoll && deliveries.size() + lentEvents < kMaxDeliveriesPerPoll &&
           bytes < kMaxPayloadBytesPerPoll;
  };
  bool more = true;
  while (more && withinBounds()) {
    more = false;
    for (const auto& socket : sockets) {
      if (!withinBounds()) break;
      const std::shared_ptr<const std::string>& endpoint = socket->endpoint();
      if (detail::HistoryFetch* history = socket->history()) {
        const std::size_t taken = history->service(
            deliveries, bytes, [&](std::string_view topic, std::string_view payload, bool wellFramed, Origin origin) {
              return handle(endpoint, topic, payload, wellFramed, deliveries, origin);
            });
        handled += taken;
        more = more || taken > 0;
        if (history->finished()) {
          socket->endHistory();
        } else if (history->releasing()) {
          continue;  // live messages wait in ZeroMQ's queue until those held back before them are out
        }
      }
      detail::ReceivedFrames frames;
      if (!frames.receive(socket->socket())) continue;
      more = true;
      ++handled;
      bytes += frames.bytes();
      detail::HistoryFetch* history = socket->history();
      if (history && history->holdBack(frames.topic(), frames.payload(), frames.wellFramed(), deliveries)) continue;
      const bool decoded = handle(endpoint, frames.topic(), frames.payload(), frames.wellFramed(), deliveries).has_value();
      if (decoded && history) history->noticeAdvertisement(message);
    }
  }
  return handled;
}

void Subscriber::State::receiveFor(std::chrono::milliseconds timeout, std::vector<Delivery>& deliveries) {
  std::vector<zmq_pollitem_t> items;
  items.reserve(2 * sockets.size() + 1);
  for (const auto& socket : sockets) {
    items.push_back(zmq_pollitem_t{socket->socket(), 0, ZMQ_POLLIN, 0});
    items.push_back(zmq_pollitem_t{socket->monitor(), 0, ZMQ_POLLIN, 0});
  }
  items.push_back(zmq_pollitem_t{nullptr, wakeFd, ZMQ_POLLIN, 0});
  // Fetching a history: its answer wakes the poll too, its deadlines are checked every poll, and
  // held-back messages being released leave no reason to wait.
  bool fetching = false;
  bool releasing = false;
  for (const auto& socket : sockets) {
    const detail::HistoryFetch* history = socket->history();
    if (history == nullptr) continue;
    fetching = true;
    if (history->answerSocket() != nullptr) items.push_back(zmq_pollitem_t{history->answerSocket(), 0, ZMQ_POLLIN, 0});
    releasing = releasing || history->releasing();
  }
  const std::size_t wakeItem = 2 * sockets.size();
  const long waitMs = releasing ? 0 : std::max<long>(0, static_cast<long>(timeout.count()));
  const int ready = zmq_poll(items.data(), static_cast<int>(items.size()), waitMs);
  if (ready > 0 || fetching) {
    if (items[wakeItem].revents & ZMQ_POLLIN) {
      uint64_t counter = 0;
      [[maybe_unused]] const ssize_t got = read(wakeFd, &counter, sizeof(counter));
    }
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      if (items[2 * i + 1].revents & ZMQ_POLLIN) readConnectionEvents(*sockets[i]);
    }
    receive(deliveries);
  }
  reconnectDropped();
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

std::optional<std::size_t> Subscriber::State::handle(const std::shared_ptr<const std::string>& endpoint,
                                                     std::string_view topic, std::string_view payload, bool wellFramed,
                                                     std::vector<Delivery>& deliveries, Origin origin) {
  const auto now = clock.now();
  std::string error;
  DecodeStatus status = DecodeStatus::Malformed;
  std::size_t events = 0;
  if (!wellFramed) {
    error = "a message must have exactly two frames, topic and payload";
  } else if (lending != nullptr) {
    std::tie(topic, payload) = lending->keep(topic, payload);
    status = lending->decoder.hold(topic, payload, &error);
    if (status == DecodeStatus::Ok) {
      const EventBatchView& held = lending->decoder.held(lending->decoder.heldCount() - 1);
      events = held.size();
      // A history fetch looks for the advertisement in heartbeats (rare beside events).
      if (held.kind() != MessageKind::Events) {
        held.toMessage(message);
      } else {
        message.kind = MessageKind::Events;  // not a heartbeat read before
      }
    }
  } else {
    status = decodeMessage(topic, payload, options.limits, message, &error);
    events = message.events.size();
  }

  std::lock_guard lock(stateMutex);
  ++stats.messages;
  auto endpointIt = std::find_if(endpointStatus.begin(), endpointStatus.end(),
                                 [&](const EndpointStatus& e) { return e.endpoint == endpoint; });
  if (endpointIt != endpointStatus.end()) {
    ++endpointIt->messages;
    endpointIt->lastMessage = now;
  }
  const uint64_t sequence = lending != nullptr && status == DecodeStatus::Ok
                               ? lending->decoder.held(lending->decoder.heldCount() - 1).sequence()
                               : message.sequence;
  if (status == DecodeStatus::Ok && events > 0 && sequence > UINT64_MAX - events) {
    status = DecodeStatus::Malformed;
    error = "sequence numbers run past 2^64";
  }
  if (status != DecodeStatus::Ok) {
    reject(status, error);
    return std::nullopt;
  }
  if (lending != nullptr) {
    const std::size_t batch = lending->decoder.heldCount() - 1;
    const std::size_t delivered = sources.accept(lending->decoder.held(batch), static_cast<uint32_t>(batch), endpoint,
                                                 origin, deliveries);
    // Delivered whole, the message is one run, the last delivery.
    if (delivered > 0 && delivered == events) std::get<detail::LentRun>(deliveries.back()).wholeMessage = true;
    lentEvents += delivered;
    if (endpointIt != endpointStatus.end()) endpointIt->events += delivered;
    return delivered;
  }
  const std::size_t delivered = sources.accept(message, payload, endpoint, origin, deliveries);
  if (options.keepMessages && delivered > 0 && delivered == message.events.size()) {
    // Every event of the message is new (none came before over another endpoint), so a recorder
    // may store the message as it arrived. The table delivered them last, in order.
    auto arrived = std::make_shared<const ReceivedMessage>(
        ReceivedMessage{std::string(topic), std::string(payload), message.sequence, delivered});
    for (auto it = deliveries.end() - static_cast<std::ptrdiff_t>(delivered); it != deliveries.end(); ++it) {
      std::get<ReceivedEvent>(*it).message = arrived;
    }
  }
  if (endpointIt != endpointStatus.end()) endpointIt->events += delivered;
  return delivered;
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
    state.close();
    throw;
  }
}

Subscriber::~Subscriber() {
  if (detail::forkGeneration() != state_->forkGeneration) {
    // Inherited through fork(): leave the parent's ZeroMQ state alone (see Publisher).
    static_cast<void>(state_.release());
    return;
  }
  state_->close();
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
  auto found = std::find_if(sockets.begin(), sockets.end(), [&](const auto& s) { return *s->endpoint() == endpoint; });
  if (found == sockets.end()) return false;
  const auto name = (*found)->endpoint();
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
  // Lending, the poll keeps the messages it decoded until its callbacks are done.
  std::unique_ptr<detail::LentMessages> lent;
  if (callbacks.onEventView) {
    {
      std::lock_guard lock(state.spareMutex);
      lent.swap(state.spareLent);
    }
    if (!lent) lent = std::make_unique<detail::LentMessages>(state.options.limits);
  }
  {
    std::lock_guard pollLock(state.pollMutex);
    state.waitForChanges();
    std::lock_guard lock(state.socketMutex);
    state.lending = lent.get();
    state.lentEvents = 0;
    try {
      state.receiveFor(timeout, deliveries);
    } catch (...) {
      state.lending = nullptr;
      throw;
    }
    state.lending = nullptr;
  }
  {
    std::lock_guard lock(state.stateMutex);
    state.sources.checkStaleness(deliveries);
  }

  std::size_t events = 0;
  for (Delivery& delivery : deliveries) {
    if (auto* event = std::get_if<ReceivedEvent>(&delivery)) {
      ++events;
      if (callbacks.onEvent) callbacks.onEvent(*event);
    } else if (auto* run = std::get_if<detail::LentRun>(&delivery)) {
      events += run->count;
      const EventBatchView& batch = lent->decoder.held(run->batch);
      for (uint32_t i = 0; i < run->count; ++i) {
        callbacks.onEventView(ReceivedEventView{batch[run->index + i], batch, run->source, run->sequence + i,
                                                run->endpoint, run->receivedAt, run->fromHistory, run->wholeMessage});
      }
    } else if (auto* change = std::get_if<SourceChange>(&delivery)) {
      if (callbacks.onSourceChange) callbacks.onSourceChange(*change);
    } else if (auto* gap = std::get_if<GapInfo>(&delivery)) {
      if (callbacks.onGap) callbacks.onGap(*gap);
    } else if (callbacks.onHistory) {
      callbacks.onHistory(std::get<HistoryStatus>(delivery));
    }
  }
  deliveries.clear();
  if (lent) lent->clear();
  {
    std::lock_guard lock(state.spareMutex);
    if (state.spareDeliveries.capacity() < deliveries.capacity()) deliveries.swap(state.spareDeliveries);
    if (lent && !state.spareLent) state.spareLent = std::move(lent);
  }
  return events;
}

std::vector<SourceStatus> Subscriber::sources() const {
  std::lock_guard lock(state_->stateMutex);
  return state_->sources.statuses();
}

SubscriberStats Subscriber::stats() const {
  std::lock_guard lock(state_->stateMutex);
  return state_->stats;
}

}  // namespace livemon::transport
