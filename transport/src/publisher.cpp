#include <livemon/transport/publisher.h>

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <zmq.h>

#include <livemon/detail/dispatch_step.h>
#include <livemon/event_handler.h>
#include <livemon/record_function.h>
#include <livemon/stat.h>
#include <livemon/transport/error.h>
#include <livemon/transport/publisher_metrics.h>
#include <livemon/value_key.h>

#include <livemon/detail/msgpack_reader.h>
#include <livemon/detail/msgpack_writer.h>
#include <livemon/detail/wire_codec.h>

#include "byte_ring.h"
#include "curve_security.h"
#include "history_server.h"
#include "history_store.h"
#include "peer_guard.h"
#include "publisher_setup.h"
#include "wake_signal.h"
#include "zmq_support.h"

namespace livemon::transport {

namespace {

// A queued record: [u16 name length][u8 step length][name][step][event entry], behind the
// ring's length prefix. The step is its "steps" array element (an integer, or nil for none).
constexpr std::size_t kRecordNameHeader = 3;
// The I/O thread reads about this much of the queue before it sends and looks at the clock.
constexpr std::size_t kDrainBudgetFactor = 4;
// After work, the I/O thread checks the queue again after waits that double from the first to
// the last (1.55 ms in all), so a steady stream of events never makes the logging threads wake it;
// then it sleeps until an event is queued, a history request comes or a heartbeat is due.
constexpr std::chrono::microseconds kFirstIdleWait{50};
constexpr std::chrono::microseconds kLastIdleWait{800};
// While every subscriber is full (WaitForSlowest), the I/O thread rechecks this often.
constexpr int kBlockedPollMs = 10;

// The timestamp of the first event entry of a batch body ([timestamp, data], ...), in wire time.
int64_t firstEventTime(std::string_view body) {
  try {
    detail::MsgpackReader reader(body);
    reader.arrayHeader("event");
    return reader.int64("timestamp");
  } catch (const detail::DecodeFailure&) {
    return 0;
  }
}

}  // namespace

std::vector<std::string> defaultPublisherConnect() {
  std::vector<std::string> endpoints;
  const char* value = std::getenv(std::string(kConnectEnvironmentVariable).c_str());
  if (value == nullptr) return endpoints;
  std::string_view rest(value);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view endpoint = rest.substr(0, comma);
    while (!endpoint.empty() && endpoint.front() == ' ') endpoint.remove_prefix(1);
    while (!endpoint.empty() && endpoint.back() == ' ') endpoint.remove_suffix(1);
    if (!endpoint.empty()) endpoints.emplace_back(endpoint);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return endpoints;
}

std::vector<std::string> defaultPublisherBind() {
  if (!defaultPublisherConnect().empty()) return {};
  return {std::string(kDefaultEndpoint)};
}

// Thread-safe: the calling threads touch only the immutable members, the ring and the atomic
// counters; the socket and the members after "I/O thread only" belong to the I/O thread;
// `wake` wakes the I/O thread from its sleep (see WakeSignal).
struct Publisher::State {
  // Not thread-safe: owned by the I/O thread. One topic's pending batch and its next sequence
  // number.
  struct Batch {
    std::string name;
    std::string body;   // concatenated event entries
    std::string steps;  // concatenated "steps" elements, one per entry
    bool anyStep = false;
    uint32_t count = 0;
    uint64_t nextSequence = 0;
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
  bool serveHistory();
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
  std::atomic<uint64_t> published{0};
  std::atomic<uint64_t> droppedQueueFull{0};
  std::atomic<uint64_t> droppedTooLarge{0};
  std::atomic<uint64_t> droppedAtShutdown{0};
  std::atomic<uint64_t> messages{0};
  std::atomic<uint64_t> heartbeats{0};
  std::atomic<uint64_t> ioWakeups{0};

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
  // Fed by the I/O thread with the Stat batches it sends; null when metrics are off. Its exporter
  // is shared with the process's other Publishers when the port came from LIVEMON_METRICS_PORT.
  std::shared_ptr<PublisherMetrics> metrics;
  // The messages sent, for late subscribers, and the socket that answers them; both null when
  // the publisher keeps no history. The I/O thread owns them; the counters are for stats().
  std::unique_ptr<detail::HistoryStore> history;
  std::unique_ptr<detail::HistoryServer> historyServer;
  std::string historyEndpoint;
  detail::HistoryCounters historyCounters;
  std::unique_ptr<Stat> publishedStat;
  std::unique_ptr<Stat> droppedStat;
  std::unique_ptr<Stat> curveRefusedStat;  // with CURVE only
  std::shared_ptr<SystemStatsSampler> systemStats;  // the process's, shared; null when off

  // I/O thread only.
  std::vector<Batch> batches;
  std::unordered_map<std::string, std::size_t> batchIndex;
  std::string scratch;
  std::string header;
  std::string stepsTrailer;
  std::string metricsPayload;
  WireMessage metricsMessage;
  uint64_t heartbeatSequence = 0;
};

void Publisher::State::onEvent(const Event& event) noexcept {
  // Inherited through fork(): stay quiet, the socket belongs to the parent.
  if (detail::forkGeneration() != forkGeneration) return;
  if (detail::eventLimitBroken(event, limits) != nullptr) {
    droppedTooLarge.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  try {
    thread_local std::string record;
    record.clear();
    const auto nameSize = static_cast<uint16_t>(event.name.size());
    record.push_back(static_cast<char>(nameSize & 0xff));
    record.push_back(static_cast<char>(nameSize >> 8));
    record.push_back('\0');
    record.append(event.name);
    // A data field "step" travels as the field it is.
    detail::appendStep(record, livemon::detail::loggedStep(event));
    record[2] = static_cast<char>(record.size() - kRecordNameHeader - event.name.size());
    detail::appendEventEntry(record, event);
    const bool queued = ring.push(record);
    if (record.capacity() > 64 * 1024) std::string().swap(record);
    if (queued) {
      wake.notify();
    } else {
      droppedQueueFull.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {  // out of memory while encoding
    droppedQueueFull.fetch_add(1, std::memory_order_relaxed);
  }
}

void Publisher::State::run() noexcept {
  try {
    auto nextHeartbeat = std::chrono::steady_clock::now();
    auto idleWait = kFirstIdleWait;
    while (true) {
      const bool stopping = stopRequested();
      bool busy = drainAndSend();
      const auto now = std::chrono::steady_clock::now();
      if (now >= nextHeartbeat) {
        sendHeartbeat(MessageKind::Heartbeat);
        nextHeartbeat = now + options.heartbeatInterval;
      }
      if (historyServer && !stopping) busy = serveHistory() || busy;
      if (stopping && ring.size() == 0) break;
      if (stopping && now >= stopDeadline) break;  // WaitForSlowest with a stalled subscriber
      if (busy) {
        idleWait = kFirstIdleWait;
        continue;
      }
      if (stopping) {
        waitBriefly(kFirstIdleWait);  // the linger: a slow subscriber's socket
      } else if (idleWait <= kLastIdleWait) {
        waitBriefly(std::min(idleWait, std::chrono::duration_cast<std::chrono::microseconds>(nextHeartbeat - now)));
        idleWait *= 2;
      } else {
        sleepUntilWork(nextHeartbeat);
      }
      ioWakeups.fetch_add(1, std::memory_order_relaxed);
    }
    // Whatever is still queued could not be sent within the linger time.
    std::size_t left = 0;
    while (ring.drain(SIZE_MAX, scratch, [&](std::string_view) { ++left; }) > 0) {
    }
    for (Batch& batch : batches) left += batch.count;
    droppedAtShutdown.fetch_add(left, std::memory_order_relaxed);
    sendHeartbeat(MessageKind::Goodbye);
  } catch (...) {
    // Encoding failed for lack of memory: stop publishing rather than terminate the process.
  }
}

bool Publisher::State::drainAndSend() {
  const std::size_t budget = kDrainBudgetFactor * options.maxBatchBytes;
  Batch* last = nullptr;
  const std::size_t records = ring.drain(budget, scratch, [&](std::string_view record) {
    const std::size_t nameSize =
        static_cast<uint8_t>(record[0]) | (static_cast<std::size_t>(static_cast<uint8_t>(record[1])) << 8);
    const std::size_t stepSize = static_cast<uint8_t>(record[2]);
    const std::string_view name = record.substr(kRecordNameHeader, nameSize);
    const std::string_view step = record.substr(kRecordNameHeader + nameSize, stepSize);
    const std::string_view entry = record.substr(kRecordNameHeader + nameSize + stepSize);
    if (last == nullptr || last->name != name) {
      auto found = batchIndex.find(std::string(name));
      if (found == batchIndex.end()) {
        found = batchIndex.emplace(std::string(name), batches.size()).first;
        batches.push_back(Batch{std::string(name), {}, {}, false, 0, 0});
      }
      last = &batches[found->second];
    }
    if (last->count > 0 &&
        (last->count >= options.maxBatchEvents ||
         last->body.size() + last->steps.size() + entry.size() + step.size() > options.maxBatchBytes)) {
      sendBatch(*last);
    }
    last->body.append(entry);
    last->steps.append(step);
    last->anyStep = last->anyStep || step != "\xc0";
    ++last->count;
  });
  if (records > 0) flushBatches();
  discardSubscriptions();
  return records > 0;
}

void Publisher::State::flushBatches() {
  for (Batch& batch : batches) {
    if (batch.count > 0) sendBatch(batch);
  }
}

void Publisher::State::sendBatch(Batch& batch) {
  header.clear();
  detail::MsgpackWriter writer(header);
  detail::writePayloadStart(writer,
                            batch.anyStep ? detail::kEventsPayloadEntriesWithSteps : detail::kEventsPayloadEntries,
                            MessageKind::Events, identity, batch.nextSequence);
  writer.str("name");
  writer.str(batch.name);
  writer.str("events");
  writer.arrayHeader(batch.count);
  // Batches without a step are sent without "steps", byte for byte as before steps existed.
  if (batch.anyStep) {
    stepsTrailer.clear();
    detail::appendStepsHeader(stepsTrailer, batch.count);
    stepsTrailer.append(batch.steps);
  }
  if (metrics && isStatEventName(batch.name)) {
    // The logging threads only queued bytes; the exporter reads them back here, once per Stat
    // batch (a window of each Stat, so a few per second), instead of costing the training loop.
    metricsPayload.assign(header).append(batch.body);
    if (batch.anyStep) metricsPayload.append(stepsTrailer);
    if (decodeMessage(batch.name, metricsPayload, limits, metricsMessage) == DecodeStatus::Ok) {
      metrics->observe(metricsMessage);
    }
  }
  const std::string_view trailer = batch.anyStep ? std::string_view(stepsTrailer) : std::string_view();
  if (history ? sendKept(batch.name, header, batch.body, trailer) : sendFrames(batch.name, header, batch.body, trailer)) {
    published.fetch_add(batch.count, std::memory_order_relaxed);
    messages.fetch_add(1, std::memory_order_relaxed);
    batch.nextSequence += batch.count;
  } else {
    droppedAtShutdown.fetch_add(batch.count, std::memory_order_relaxed);
  }
  batch.count = 0;
  batch.anyStep = false;
  batch.body.clear();
  batch.steps.clear();
  if (batch.body.capacity() > 2 * options.maxBatchBytes) std::string().swap(batch.body);
  if (batch.steps.capacity() > 2 * options.maxBatchBytes) std::string().swap(batch.steps);
}

void Publisher::State::sendHeartbeat(MessageKind kind) {
  PublisherCounters counters;
  counters.timestamp = std::chrono::system_clock::now();
  counters.interval = options.heartbeatInterval;
  counters.published = published.load(std::memory_order_relaxed);
  counters.dropped = droppedQueueFull.load(std::memory_order_relaxed) +
                     droppedTooLarge.load(std::memory_order_relaxed) +
                     droppedAtShutdown.load(std::memory_order_relaxed);
  const std::string payload = encodeHeartbeatPayload(kind, identity, heartbeatSequence, counters, historyEndpoint);
  // A heartbeat never waits for a slow subscriber: if it cannot go now, the next one will.
  if (zmq_send(socket, kHeartbeatTopic.data(), kHeartbeatTopic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) return;
  zmq_send(socket, payload.data(), payload.size(), ZMQ_DONTWAIT);
  ++heartbeatSequence;
  heartbeats.fetch_add(1, std::memory_order_relaxed);
  if (metrics) metrics->sourceAlive(identity);
  if (publishedStat) publishedStat->add(static_cast<double>(counters.published));
  if (droppedStat) droppedStat->add(static_cast<double>(counters.dropped));
  if (curveRefusedStat) curveRefusedStat->add(static_cast<double>(security->refusedCount(guard.get())));
}

bool Publisher::State::sendFrames(std::string_view topic, std::string_view head, std::string_view body,
                                  std::string_view trailer) {
  while (zmq_send(socket, topic.data(), topic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    if (errno != EAGAIN && errno != EINTR) return false;
    if (!waitWritable()) return false;
  }
  zmq_msg_t payload;
  if (zmq_msg_init_size(&payload, head.size() + body.size() + trailer.size()) != 0) {
    // The topic frame is out: end the message so the socket stays usable.
    zmq_send(socket, "", 0, ZMQ_DONTWAIT);
    return false;
  }
  auto* data = static_cast<char*>(zmq_msg_data(&payload));
  std::memcpy(data, head.data(), head.size());
  std::memcpy(data + head.size(), body.data(), body.size());
  if (!trailer.empty()) std::memcpy(data + head.size() + body.size(), trailer.data(), trailer.size());
  // Parts after the first are never refused for lack of room.
  detail::annotateBeforeSend();
  const bool sent = zmq_msg_send(&payload, socket, ZMQ_DONTWAIT) >= 0;
  if (!sent) zmq_msg_close(&payload);
  return sent;
}

// sendFrames() for a publisher that keeps history: the payload is built once, kept, and sent
// without a copy (ZeroMQ holds a share of it until it is out).
bool Publisher::State::sendKept(std::string_view topic, std::string_view head, std::string_view body,
                                std::string_view trailer) {
  auto payload = std::make_shared<std::string>();
  payload->reserve(head.size() + body.size() + trailer.size());
  payload->append(head).append(body).append(trailer);
  std::shared_ptr<const std::string> kept = std::move(payload);
  while (zmq_send(socket, topic.data(), topic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    if (errno != EAGAIN && errno != EINTR) return false;
    if (!waitWritable()) return false;
  }
  zmq_msg_t message;
  if (!detail::initSharedMessage(message, kept)) {
    zmq_send(socket, "", 0, ZMQ_DONTWAIT);
    return false;
  }
  detail::annotateBeforeSend();
  if (zmq_msg_send(&message, socket, ZMQ_DONTWAIT) < 0) {
    zmq_msg_close(&message);
    return false;
  }
  history->append(topic, std::move(kept), firstEventTime(body), toWireTime(std::chrono::system_clock::now()));
  historyCounters.update(*history);
  return true;
}

bool Publisher::State::serveHistory() {
  try {
    return historyServer->serve(*history);
  } catch (const std::bad_alloc&) {
    return false;  // an answer waits for memory; logging goes on
  }
}

// Waits on the wake signal alone (the history socket is served again right after), for the
// short waits after work.
void Publisher::State::waitBriefly(std::chrono::microseconds wait) {
  if (wait.count() < 0) wait = std::chrono::microseconds(0);
  pollfd item{wake.fd(), POLLIN, 0};
  const timespec timeout{static_cast<time_t>(wait.count() / 1'000'000), static_cast<long>(wait.count() % 1'000'000) * 1000};
  if (ppoll(&item, 1, &timeout, nullptr) > 0) wake.woke();
}

// Sleeps until an event is queued (the logging thread's notify), a history request comes or an
// answer in progress may go on, a subscription comes (WaitForSlowest reads them), the heartbeat is
// due, or stop.
void Publisher::State::sleepUntilWork(std::chrono::steady_clock::time_point nextHeartbeat) {
  wake.prepareToSleep();
  if (!ring.emptyForSleeper() || stopRequested()) {
    wake.cancelSleep();
    return;
  }
  zmq_pollitem_t items[3];
  int count = 0;
  items[count++] = zmq_pollitem_t{nullptr, wake.fd(), ZMQ_POLLIN, 0};
  if (historyServer) items[count++] = zmq_pollitem_t{historyServer->socket(), 0, ZMQ_POLLIN, 0};
  if (options.slowSubscriber == SlowSubscriberPolicy::WaitForSlowest) {
    items[count++] = zmq_pollitem_t{socket, 0, ZMQ_POLLIN, 0};
  }
  // Rounded up, so the thread does not wake just before the heartbeat and sleep again.
  const auto untilHeartbeat = nextHeartbeat - std::chrono::steady_clock::now();
  auto timeoutMs = std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(untilHeartbeat).count());
  // An answer whose reader's queue was full goes on when it takes more; it is not told.
  if (historyServer && historyServer->answering()) timeoutMs = std::min<int64_t>(timeoutMs, kBlockedPollMs);
  zmq_poll(items, count, static_cast<long>(timeoutMs));
  wake.woke();
}

// WaitForSlowest: waits until the socket takes messages again. False once stopping has run
// past its deadline.
bool Publisher::State::waitWritable() {
  while (true) {
    if (stopRequested() && std::chrono::steady_clock::now() >= stopDeadline) return false;
    zmq_pollitem_t item{socket, 0, ZMQ_POLLOUT, 0};
    if (zmq_poll(&item, 1, kBlockedPollMs) > 0 && (item.revents & ZMQ_POLLOUT)) return true;
    discardSubscriptions();
  }
}

// XPUB hands subscription messages to the application; nothing here needs them.
void Publisher::State::discardSubscriptions() {
  if (options.slowSubscriber != SlowSubscriberPolicy::WaitForSlowest) return;
  char buffer[256];
  while (zmq_recv(socket, buffer, sizeof(buffer), ZMQ_DONTWAIT) >= 0) {
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
    if (const std::size_t historyBytes = detail::historyBytesFor(opts); historyBytes > 0 && opts.connect.empty()) {
      state.history = std::make_unique<detail::HistoryStore>(historyBytes);
      const std::string endpoint =
          opts.historyEndpoint.empty() ? detail::defaultHistoryEndpoint(state.endpoints.front()) : opts.historyEndpoint;
      state.historyServer =
          std::make_unique<detail::HistoryServer>(state.context.get(), endpoint, state.limits, *state.security);
      state.historyEndpoint = state.historyServer->endpoint();
    }
    state.metrics = detail::publisherMetricsFor(opts);
    if (!opts.statName.empty()) {
      state.publishedStat = std::make_unique<Stat>(opts.statName + ".published", std::vector{Aggregation::Value},
                                                   opts.statWindow);
      if (state.security->enabled()) {
        state.curveRefusedStat = std::make_unique<Stat>(opts.statName + ".curve_refused",
                                                        std::vector{Aggregation::Value}, opts.statWindow);
      }
      state.droppedStat = std::make_unique<Stat>(opts.statName + ".dropped", std::vector{Aggregation::Value},
                                                 opts.statWindow);
    }
    if (opts.handleLoggedEvents) {
      state.handle = registerEventHandler([shared = state_](const Event& event) { shared->onEvent(event); });
    }
    state.systemStats = detail::systemStatsFor(opts);
    // The socket moves to the I/O thread; starting the thread orders everything above before it.
    state.thread = std::make_unique<std::thread>([&state] { state.run(); });
  } catch (...) {
    if (state.handle) unregisterEventHandler(state.handle);
    state.historyServer.reset();
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
  state.historyServer.reset();
  state.guard.reset();
  state.metrics.reset();
  // LINGER bounds how long the context's termination waits for delivery. When other livemon
  // sockets still use the context, delivery goes on in its I/O thread.
  zmq_close(state.socket);
  state.context.reset();
  state.publishedStat.reset();
  state.droppedStat.reset();
  state.curveRefusedStat.reset();
}

void Publisher::publish(const Event& event) noexcept { state_->onEvent(event); }

uint64_t Publisher::publishedCount() const noexcept { return state_->published.load(std::memory_order_relaxed); }

uint64_t Publisher::droppedCount() const noexcept {
  return state_->droppedQueueFull.load(std::memory_order_relaxed) +
         state_->droppedTooLarge.load(std::memory_order_relaxed) +
         state_->droppedAtShutdown.load(std::memory_order_relaxed);
}

PublisherStats Publisher::stats() const noexcept {
  PublisherStats stats;
  stats.published = state_->published.load(std::memory_order_relaxed);
  stats.droppedQueueFull = state_->droppedQueueFull.load(std::memory_order_relaxed);
  stats.droppedTooLarge = state_->droppedTooLarge.load(std::memory_order_relaxed);
  stats.messages = state_->messages.load(std::memory_order_relaxed);
  stats.heartbeats = state_->heartbeats.load(std::memory_order_relaxed);
  stats.ioWakeups = state_->ioWakeups.load(std::memory_order_relaxed);
  stats.queuedBytes = state_->ring.size();
  stats.subscribersDisconnected = state_->guard->closedCount();
  stats.curveRefused = state_->security->refusedCount(state_->guard.get());
  state_->historyCounters.copyTo(stats);
  if (state_->historyServer) {
    const auto served = state_->historyServer->stats();
    stats.historyRequests = served.requests;
  }
  return stats;
}

const std::vector<std::string>& Publisher::endpoints() const noexcept { return state_->endpoints; }

const SourceInfo& Publisher::identity() const noexcept { return state_->identity; }

uint16_t Publisher::metricsPort() const noexcept { return state_->metrics ? state_->metrics->port() : 0; }

const std::string& Publisher::historyEndpoint() const noexcept { return state_->historyEndpoint; }

}  // namespace livemon::transport
