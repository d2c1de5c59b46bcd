#include <livemon/transport/payload_publisher.h>

#include <cerrno>
#include <optional>
#include <stdexcept>

#include <zmq.h>

#include <livemon/transport/error.h>

#include "curve_security.h"
#include "peer_guard.h"
#include "zmq_support.h"

namespace livemon::transport {

namespace {

using SteadyClock = std::chrono::steady_clock;

// Quiet time after a subscription before a subscriber counts as settled: its subscriptions come
// one at a time.
constexpr std::chrono::milliseconds kSubscriptionsSettle{100};
// How long one wait for a subscription may take before the stop flag is looked at again.
constexpr int kSubscriptionPollMs = 10;

void validate(const PayloadPublisherOptions& options) {
  auto bad = [](const std::string& message) { throw std::invalid_argument("PayloadPublisherOptions: " + message); };
  if (options.bind.empty() && options.connect.empty()) bad("no endpoint: bind and connect are both empty");
  for (const auto* list : {&options.bind, &options.connect}) {
    for (const std::string& endpoint : *list) {
      if (endpoint.empty()) bad("an endpoint is empty");
    }
  }
  if (options.sendHighWaterMark < 0) bad("sendHighWaterMark must not be negative, got " + std::to_string(options.sendHighWaterMark));
  if (options.linger.count() < 0) bad("linger must not be negative, got " + std::to_string(options.linger.count()) + " ms");
  detail::checkSubscriberLimits(
      {options.maxSubscriberBytes, options.maxTotalSubscriberBytes, options.maxSubscriberConnections},
      "PayloadPublisherOptions");
}

}  // namespace

struct PayloadPublisher::State {
  explicit State(uint64_t generation) : forkGeneration(generation) {}

  bool inherited() const noexcept { return detail::forkGeneration() != forkGeneration; }

  // An XPUB socket hands subscriptions to its owner; only waitForSubscriber() needs them.
  void discardSubscriptions() noexcept {
    char buffer[256];
    while (zmq_recv(socket, buffer, sizeof buffer, ZMQ_DONTWAIT) >= 0) {
    }
  }

  const uint64_t forkGeneration;
  std::shared_ptr<void> context;
  void* socket = nullptr;
  std::unique_ptr<detail::PeerGuard> guard;
  std::unique_ptr<detail::SocketSecurity> security;  // outlives the socket
  std::vector<std::string> endpoints;
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> unsent{0};
};

PayloadPublisher::PayloadPublisher(Options options) {
  validate(options);
  detail::watchForks();
  state_ = std::make_unique<State>(detail::forkGeneration());
  State& state = *state_;
  state.context = detail::sharedContext();
  // XPUB rather than PUB: waitForSubscriber() sees subscriptions arrive.
  state.socket = zmq_socket(state.context.get(), ZMQ_XPUB);
  try {
    if (state.socket == nullptr) detail::throwEndpointError("open a socket for", "", errno);
    detail::setIntOption(state.socket, ZMQ_LINGER, static_cast<int>(options.linger.count()), "ZMQ_LINGER");
    detail::setIntOption(state.socket, ZMQ_SNDHWM, options.sendHighWaterMark, "ZMQ_SNDHWM");
    state.guard = detail::guardSendingSocket(
        state.context.get(), state.socket,
        detail::PeerLimits{options.maxSubscriberBytes, options.maxTotalSubscriberBytes, options.maxSubscriberConnections});
    state.security = std::make_unique<detail::SocketSecurity>(options.curve, "PayloadPublisherOptions");
    for (const std::string& endpoint : options.bind) {
      state.security->prepareBind(state.socket, endpoint);
      if (zmq_bind(state.socket, endpoint.c_str()) != 0) detail::throwEndpointError("bind", endpoint, errno);
      state.endpoints.push_back(detail::lastEndpoint(state.socket, endpoint));
    }
    if (!options.connect.empty()) state.security->prepareConnect(state.socket);
    for (const std::string& endpoint : options.connect) {
      if (zmq_connect(state.socket, endpoint.c_str()) != 0) detail::throwEndpointError("connect to", endpoint, errno);
      state.endpoints.push_back(endpoint);
    }
  } catch (...) {
    state.guard.reset();
    if (state.socket != nullptr) {
      int zero = 0;
      zmq_setsockopt(state.socket, ZMQ_LINGER, &zero, sizeof zero);
      zmq_close(state.socket);
    }
    throw;
  }
}

PayloadPublisher::~PayloadPublisher() {
  if (state_->inherited()) {
    // Inherited through fork(): the guard's thread does not exist here and the context may hold
    // locks taken by parent threads. Touch none of it; the process's exit reclaims the memory.
    static_cast<void>(state_.release());
    return;
  }
  state_->guard.reset();
  zmq_close(state_->socket);
}

bool PayloadPublisher::waitForSubscriber(std::chrono::milliseconds timeout, const std::atomic<bool>& stop) {
  State& state = *state_;
  if (state.inherited()) return false;
  const auto until = SteadyClock::now() + timeout;
  std::optional<SteadyClock::time_point> settled;
  while (!stop.load(std::memory_order_relaxed)) {
    const auto now = SteadyClock::now();
    if (settled && now >= *settled) return true;
    if (now >= until) return settled.has_value();
    zmq_pollitem_t item{state.socket, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, kSubscriptionPollMs) > 0) {
      state.discardSubscriptions();
      settled = SteadyClock::now() + kSubscriptionsSettle;
    }
  }
  return false;
}

bool PayloadPublisher::send(std::string_view topic, std::string_view payload) noexcept {
  State& state = *state_;
  bool sent = false;
  if (!state.inherited()) {
    detail::annotateBeforeSend();
    // A PUB socket drops for a subscriber at its high-water mark rather than wait, so this waits
    // for nobody; DONTWAIT makes sure of it. Parts after the first are never refused for lack of
    // room.
    sent = zmq_send(state.socket, topic.data(), topic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0 &&
           zmq_send(state.socket, payload.data(), payload.size(), ZMQ_DONTWAIT) >= 0;
    // Subscriptions are of no use here; keep them from piling up.
    state.discardSubscriptions();
  }
  (sent ? state.sent : state.unsent).fetch_add(1, std::memory_order_relaxed);
  return sent;
}

uint64_t PayloadPublisher::sentCount() const noexcept { return state_->sent.load(std::memory_order_relaxed); }

uint64_t PayloadPublisher::unsentCount() const noexcept { return state_->unsent.load(std::memory_order_relaxed); }

PayloadPublisherStats PayloadPublisher::stats() const noexcept {
  PayloadPublisherStats stats;
  stats.sent = sentCount();
  stats.unsent = unsentCount();
  stats.subscribersDisconnected = state_->guard ? state_->guard->closedCount() : 0;
  stats.curveRefused = state_->security ? state_->security->refusedCount(state_->guard.get()) : 0;
  return stats;
}

const std::vector<std::string>& PayloadPublisher::endpoints() const noexcept { return state_->endpoints; }

}  // namespace livemon::transport
