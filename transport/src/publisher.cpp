#include <livemon/transport/publisher.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

#include <zmq.h>

#include <livemon/detail/dispatch_step.h>
#include <livemon/record_function.h>
#include <livemon/transport/error.h>

#include <livemon/detail/wire_codec.h>

#include "publisher_setup.h"
#include "publisher_state.h"
#include "zmq_support.h"

namespace livemon::transport {

void Publisher::State::onEvent(const Event& event) noexcept {
  // Inherited through fork(): stay quiet, the socket belongs to the parent.
  if (detail::forkGeneration() != forkGeneration) return;
  if (event.name.size() > limits.maxTopicBytes) {
    counters.droppedTooLarge.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  try {
    // Encoded here, in one walk over the fields that also checks the wire limits, into memory
    // written without a check per byte; the I/O thread only batches what it is handed.
    thread_local detail::RecordBuffer record;
    record.clear();
    const std::size_t nameSize = event.name.size();
    char* const start = record.reserve(detail::kRecordNameHeader + nameSize + detail::kMaxStepBytes);
    start[0] = static_cast<char>(nameSize & 0xff);
    start[1] = static_cast<char>(nameSize >> 8);
    std::memcpy(start + detail::kRecordNameHeader, event.name.data(), nameSize);
    char* const stepStart = start + detail::kRecordNameHeader + nameSize;
    detail::RawMsgpackWriter step(detail::RawSink{stepStart});
    // A data field "step" travels as the field it is.
    if (int64_t logged = 0; livemon::detail::findLoggedStep(event, logged)) {
      step.sint(logged);
    } else {
      step.nil();
    }
    start[2] = static_cast<char>(step.sink().cursor - stepStart);
    record.commit(step.sink().cursor);
    if (detail::appendCheckedEventEntry(record, event, limits) != nullptr) {
      counters.droppedTooLarge.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    // Before it is queued, so the I/O thread that the queued event wakes finds it.
    if (metrics) metrics->offer(event);
    const bool queued = ring.push(record.view());
    record.shrinkAbove(64 * 1024);
    if (queued) {
      wake.notify();
    } else {
      counters.droppedQueueFull.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {  // out of memory while encoding
    counters.droppedQueueFull.fetch_add(1, std::memory_order_relaxed);
  }
}

Publisher::Publisher(Options options) {
  detail::validatePublisherOptions(options);
  detail::watchForks();
  state_ = std::make_shared<State>(std::move(options), detail::forkGeneration());
  State& state = *state_;
  const PublisherOptions& opts = state.options;

  state.context = detail::sharedContext();
  const bool xpub = opts.slowSubscriber == SlowSubscriberPolicy::WaitForSlowest;
  state.socket = zmq_socket(state.context.get(), xpub ? ZMQ_XPUB : ZMQ_PUB);
  try {
    if (state.socket == nullptr) detail::throwEndpointError("open a socket for", "", errno);
    detail::setIntOption(state.socket, ZMQ_LINGER, static_cast<int>(opts.linger.count()), "ZMQ_LINGER");
    detail::setIntOption(state.socket, ZMQ_SNDHWM, opts.sendHighWaterMark, "ZMQ_SNDHWM");
    if (xpub) detail::setIntOption(state.socket, ZMQ_XPUB_NODROP, 1, "ZMQ_XPUB_NODROP");
    state.guard = detail::guardSendingSocket(
        state.context.get(), state.socket,
        detail::PeerLimits{opts.maxSubscriberBytes, opts.maxTotalSubscriberBytes, opts.maxSubscriberConnections});
    state.security = std::make_unique<detail::SocketSecurity>(opts.curve, "PublisherOptions");
    for (const std::string& endpoint : opts.bind) {
      state.security->prepareBind(state.socket, endpoint);
      if (zmq_bind(state.socket, endpoint.c_str()) != 0) detail::throwEndpointError("bind", endpoint, errno);
      state.endpoints.push_back(detail::lastEndpoint(state.socket, endpoint));
    }
    // After every bind: the socket becomes a CURVE client for what it connects to.
    if (!opts.connect.empty()) state.security->prepareConnect(state.socket);
    for (const std::string& endpoint : opts.connect) {
      if (zmq_connect(state.socket, endpoint.c_str()) != 0) detail::throwEndpointError("connect to", endpoint, errno);
      state.endpoints.push_back(endpoint);
    }
    state.history =
        detail::makePublisherHistory(opts, state.context.get(), state.endpoints.front(), state.limits, *state.security);
    bool metricsUnavailable = false;
    if (std::shared_ptr<PublisherMetrics> sink = detail::publisherMetricsFor(opts, metricsUnavailable)) {
      state.metrics = std::make_unique<detail::MetricsFeed>(std::move(sink));
    }
    state.counters.metricsUnavailable.store(metricsUnavailable, std::memory_order_relaxed);
    if (!opts.statName.empty()) {
      auto stat = [&](const char* name) {
        return std::make_unique<Stat>(opts.statName + name, std::vector{Aggregation::Value}, opts.statWindow);
      };
      state.ownStats.published = stat(".published");
      if (state.security->enabled()) state.ownStats.curveRefused = stat(".curve_refused");
      state.ownStats.dropped = stat(".dropped");
    }
    if (opts.handleLoggedEvents) {
      state.handle = registerEventHandler([shared = state_](const Event& event) { shared->onEvent(event); });
      // The config set before this publisher existed; one set from now on comes through the handler.
      if (const std::optional<Event> config = currentRunConfigEvent()) state.onEvent(*config);
    }
    state.systemStats = detail::systemStatsFor(opts);
    // The socket moves to the I/O thread; starting the thread orders everything above before it.
    state.thread = std::make_unique<std::thread>([&state] { state.run(); });
  } catch (...) {
    if (state.handle) unregisterEventHandler(state.handle);
    state.history.reset();
    state.guard.reset();
    if (state.socket != nullptr) {
      int zero = 0;
      zmq_setsockopt(state.socket, ZMQ_LINGER, &zero, sizeof(zero));
      zmq_close(state.socket);
    }
    throw;
  }
}

Publisher::~Publisher() {
  State& state = *state_;
  if (detail::forkGeneration() != state.forkGeneration) {
    // Inherited through fork(): the I/O thread does not exist here, and the context, the socket,
    // the handler registry and the Stats' scheduler may hold locks taken by parent threads. Touch
    // none of it; the process's exit reclaims the memory.
    new std::shared_ptr<State>(std::move(state_));
    return;
  }
  state.systemStats.reset();  // the last holder's sampler logs its open windows while we listen
  // Range Stats have no owner whose destruction would log them: a Publisher local to main is gone
  // before exit flushes them, so their last windows go out with it.
  try {
    flushRangeStats();
  } catch (const std::exception&) {
    // Out of memory for the list: those windows are lost.
  }
  unregisterEventHandler(state.handle);
  state.stopDeadline = std::chrono::steady_clock::now() + state.options.linger;
  state.stop.store(true, std::memory_order_release);
  state.wake.signal();
  state.thread->join();
  state.history.reset();
  state.guard.reset();
  state.metrics.reset();
  // LINGER bounds how long the context's termination waits for delivery. When other livemon
  // sockets still use the context, delivery goes on in its I/O thread.
  zmq_close(state.socket);
  state.context.reset();
  state.ownStats = {};
}

void Publisher::publish(const Event& event) noexcept { state_->onEvent(event); }

void Publisher::publishRunConfig(const RunConfig& config) { state_->onEvent(makeRunConfigEvent(config)); }

uint64_t Publisher::publishedCount() const noexcept {
  return state_->counters.published.load(std::memory_order_relaxed);
}

uint64_t Publisher::droppedCount() const noexcept { return state_->counters.dropped(); }

PublisherStats Publisher::stats() const noexcept {
  const State::Counters& counters = state_->counters;
  PublisherStats stats;
  stats.published = counters.published.load(std::memory_order_relaxed);
  stats.droppedQueueFull = counters.droppedQueueFull.load(std::memory_order_relaxed);
  stats.droppedTooLarge = counters.droppedTooLarge.load(std::memory_order_relaxed);
  stats.messages = counters.messages.load(std::memory_order_relaxed);
  stats.heartbeats = counters.heartbeats.load(std::memory_order_relaxed);
  stats.ioWakeups = counters.ioWakeups.load(std::memory_order_relaxed);
  stats.queuedBytes = state_->ring.size();
  stats.subscribersDisconnected = state_->guard->closedCount();
  stats.curveRefused = state_->security->refusedCount(state_->guard.get());
  if (state_->history) state_->history->copyTo(stats);
  if (state_->metrics) stats.metricsDropped = state_->metrics->droppedCount();
  stats.metricsUnavailable = counters.metricsUnavailable.load(std::memory_order_relaxed);
  return stats;
}

const std::vector<std::string>& Publisher::endpoints() const noexcept { return state_->endpoints; }

const SourceInfo& Publisher::identity() const noexcept { return state_->identity; }

uint16_t Publisher::metricsPort() const noexcept { return state_->metrics ? state_->metrics->port() : 0; }

const std::string& Publisher::historyEndpoint() const noexcept {
  static const std::string* const none = new std::string();  // never destroyed: read until exit
  return state_->history ? state_->history->endpoint() : *none;
}

}  // namespace livemon::transport
