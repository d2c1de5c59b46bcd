#include <livemon/transport/relay.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include <zmq.h>

#include <livemon/event.h>
#include <livemon/transport/error.h>
#include <livemon/transport/payload_publisher.h>

#include "curve_security.h"
#include "history_server.h"
#include "history_store.h"
#include "peer_guard.h"
#include "relay_proxy.h"
#include "zmq_support.h"

namespace livemon::transport {

namespace {

using SteadyClock = std::chrono::steady_clock;

// As the Subscriber: frames a little beyond the payload limit still arrive (and are counted as
// oversized by whoever decodes them); larger ones are refused at their header.
constexpr int64_t kFrameHeadroomBytes = 1024 * 1024;
// How long the worker waits at most before it looks at the stop flag again.
constexpr std::chrono::milliseconds kStopCheck{50};
// Messages the worker takes off the capture socket before it looks at the clock again.
constexpr int kCaptureBurst = 1024;
// A forwarding loop that does not take TERMINATE within this long has ended.
constexpr int kControlTimeoutMs = 5000;
// Room for a few large batches.
constexpr std::size_t kMinQueuedBytes = 1024 * 1024;
// The relay's own goodbye gets this long to leave.
constexpr std::chrono::milliseconds kReportLinger{200};

// Descriptors kept beside the subscribers' for the recording, the history and libzmq's own.
constexpr std::size_t kReservedDescriptors = 64;

// maxPublisherConnections, or fewer when the descriptors the process may open leave room for
// fewer beside the subscribers': beyond that accept() fails anyway, and a recording rotation with it.
std::size_t publisherConnectionCap(const RelayOptions& options) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return options.maxPublisherConnections;
  const std::size_t reserved = options.maxSubscriberConnections + kReservedDescriptors;
  const std::size_t room = limit.rlim_cur > reserved ? static_cast<std::size_t>(limit.rlim_cur) - reserved : 1;
  return std::clamp<std::size_t>(room, 1, options.maxPublisherConnections);
}

void validate(const RelayOptions& options) {
  auto bad = [](const std::string& message) { throw std::invalid_argument("RelayOptions: " + message); };
  if (options.listen.empty()) bad("listen is empty");
  if (options.serve.empty()) bad("serve is empty");
  for (const std::string& endpoint : options.upstream) {
    if (endpoint.empty()) bad("an upstream endpoint is empty");
  }
  if (options.highWaterMark < 1) bad("highWaterMark must be at least 1, got " + std::to_string(options.highWaterMark));
  if (options.maxPublisherConnections < 1) bad("maxPublisherConnections must be at least 1");
  if (options.maxStall.count() < 0) bad("maxStall must not be negative, got " + std::to_string(options.maxStall.count()) + " ms");
  if (options.maxQueuedBytes < kMinQueuedBytes) {
    bad("maxQueuedBytes must be at least " + std::to_string(kMinQueuedBytes) + ", got " +
        std::to_string(options.maxQueuedBytes));
  }
  if (options.reportInterval.count() < 1 || options.reportInterval.count() > 1000) {
    bad("reportInterval must be 1..1000 ms, got " + std::to_string(options.reportInterval.count()) + " ms");
  }
  detail::checkSubscriberLimits(
      {options.maxSubscriberBytes, options.maxTotalSubscriberBytes, options.maxSubscriberConnections}, "RelayOptions");
}

SourceInfo makeIdentity(const std::string& runName) {
  SourceInfo identity;
  identity.run = runName.substr(0, WireLimits{}.maxIdentityStringBytes);
  char host[256] = {};
  identity.host = gethostname(host, sizeof(host) - 1) == 0 ? host : "unknown";
  identity.pid = getpid();
  std::random_device random;
  while (identity.instanceId == 0) identity.instanceId = (static_cast<uint64_t>(random()) << 32) ^ random();
  identity.startTime = std::chrono::system_clock::now();
  return identity;
}

void closeSocket(void*& socket) {
  if (socket == nullptr) return;
  int zero = 0;
  zmq_setsockopt(socket, ZMQ_LINGER, &zero, sizeof(zero));
  zmq_close(socket);
  socket = nullptr;
}

}  // namespace

// Thread-safe: the listen, serve and capture sockets belong to the forwarding loop's thread while
// it runs; the capture reader and the reporter to the worker thread; the control socket is used
// under controlMutex; the counters are atomic (the loop's in RelayProxy).
struct Relay::State {
  explicit State(RelayOptions o) : options(std::move(o)) {}

  RelayOptions options;
  SourceInfo identity;
  std::string listenEndpoint;
  std::string serveEndpoint;
  std::shared_ptr<void> context;
  void* listen = nullptr;         // XSUB
  void* serve = nullptr;          // XPUB
  void* capture = nullptr;        // PUB: never blocks the loop; a full queue drops the copy
  void* controlProxy = nullptr;   // PAIR, the loop's end
  void* control = nullptr;        // PAIR, ours
  std::unique_ptr<detail::RelayProxy> proxy;
  // Not thread-safe: one owner at a time; made by open(), then let go of by closeAll() and read
  // by query() under controlMutex.
  //
  // The peer guards, and their counts once let go of (for stats() after stop()).
  struct Guards {
    std::unique_ptr<detail::PeerGuard> serve;   // what subscribers send, whether they read
    std::unique_ptr<detail::PeerGuard> listen;  // how many publishers connect
    uint64_t publishersRefused = 0;
    uint64_t subscribersCut = 0;
    uint64_t handshakeFailures = 0;  // at serve: CURVE peers refused before the allow list
  } guards;
  // Kept until the relay is destroyed, after its sockets close: stats() reads its count.
  std::unique_ptr<detail::SocketSecurity> security;

  mutable std::mutex controlMutex;
  bool proxyRunning = false;  // under controlMutex

  std::atomic<uint64_t> captured{0};
  std::atomic<uint64_t> captureSkipped{0};
  std::atomic<uint64_t> callbackErrors{0};

  std::mutex stopMutex;
  std::atomic<bool> stopping{false};
  bool stopped = false;  // under stopMutex
  std::thread proxyThread;
  std::thread workerThread;

  // Not thread-safe: one owner at a time; the worker thread's, once open() has made them (the
  // history's counters are read for stats() under controlMutex).
  //
  // What the worker thread reads the proxy's copies with, and keeps and reports.
  struct Worker {
    void* captureReader = nullptr;  // SUB
    std::unique_ptr<PayloadPublisher> reporter;
    // Null without history.
    std::unique_ptr<detail::HistoryStore> history;
    std::unique_ptr<detail::HistoryServer> historyServer;
    detail::HistoryServerStats historyServed;  // its counts once let go of (for stats() after stop())
    std::string historyEndpoint;
    detail::HistoryCounters historyCounters;
    uint64_t statSequence = 0;
    uint64_t heartbeatSequence = 0;
    WireMessage scratch;
    EventBatchDecoder batches;  // for onBatch alone
  } worker;

  void open();
  void closeAll();
  RelayStats query() const;
  void runWorker();
  bool keepsHistory() const { return options.historyBytes > 0 && options.upstream.empty(); }
  int drainCapture();
  // Keeps and hands on one captured message; `batch` when only onBatch wants it decoded.
  void take(std::string_view topic, std::string_view payload, const EventBatchView* batch);
  void keep(std::string_view topic, std::string_view payload, int64_t firstEventNs);
  void report(MessageKind kind);
};

void Relay::State::open() {
  context = detail::sharedContext();
  auto socket = [&](int type, const char* what) {
    void* s = zmq_socket(context.get(), type);
    if (s == nullptr) detail::throwEndpointError("open a socket for", what, errno);
    return s;
  };
  listen = socket(ZMQ_XSUB, options.listen.c_str());
  detail::setIntOption(listen, ZMQ_LINGER, 0, "ZMQ_LINGER");
  detail::setIntOption(listen, ZMQ_RCVHWM, options.highWaterMark, "ZMQ_RCVHWM");
  const std::size_t largest = std::max(options.limits.maxPayloadBytes, options.limits.maxTopicBytes);
  detail::setInt64Option(listen, ZMQ_MAXMSGSIZE, static_cast<int64_t>(largest) + kFrameHeadroomBytes, "ZMQ_MAXMSGSIZE");
  guards.listen = std::make_unique<detail::PeerGuard>(
      context.get(), listen,
      detail::PeerLimits{SIZE_MAX, SIZE_MAX, publisherConnectionCap(options), /*countBytes=*/false});
  // Publishers are admitted by curveAllowPublish when given; serve and history by curve.allow.
  security = std::make_unique<detail::SocketSecurity>(options.curve, "RelayOptions", options.curveAllowPublish);
  security->prepareBind(listen, options.listen, detail::SocketSecurity::Clients::Publishers);
  if (zmq_bind(listen, options.listen.c_str()) != 0) detail::throwEndpointError("bind", options.listen, errno);
  listenEndpoint = detail::lastEndpoint(listen, options.listen);
  // Unique per relay: several may live in one process (tests, a chain in one program).
  const std::string base = "inproc://livemon-relay-" + std::to_string(identity.instanceId);
  // The relay's own report enters here: inproc:// needs no key of its own in the allow list.
  if (zmq_bind(listen, (base + "-listen").c_str()) != 0) detail::throwEndpointError("bind", base + "-listen", errno);

  serve = socket(ZMQ_XPUB, options.serve.c_str());
  detail::setIntOption(serve, ZMQ_LINGER, 0, "ZMQ_LINGER");
  detail::setIntOption(serve, ZMQ_SNDHWM, options.highWaterMark, "ZMQ_SNDHWM");
  // Subscribers send only subscriptions: short frames, a bounded number of bytes per connection.
  guards.serve = detail::guardSendingSocket(
      context.get(), serve,
      detail::PeerLimits{options.maxSubscriberBytes, options.maxTotalSubscriberBytes, options.maxSubscriberConnections,
                         /*countBytes=*/true, options.maxStall});
  security->prepareBind(serve, options.serve);
  if (zmq_bind(serve, options.serve.c_str()) != 0) detail::throwEndpointError("bind", options.serve, errno);
  serveEndpoint = detail::lastEndpoint(serve, options.serve);
  if (!options.upstream.empty()) security->prepareConnect(serve);
  for (const std::string& endpoint : options.upstream) {
    if (zmq_connect(serve, endpoint.c_str()) != 0) detail::throwEndpointError("connect to", endpoint, errno);
  }

  controlProxy = socket(ZMQ_PAIR, "control");
  if (zmq_bind(controlProxy, (base + "-control").c_str()) != 0) detail::throwEndpointError("bind", base + "-control", errno);
  control = socket(ZMQ_PAIR, "control");
  detail::setIntOption(control, ZMQ_SNDTIMEO, kControlTimeoutMs, "ZMQ_SNDTIMEO");
  if (zmq_connect(control, (base + "-control").c_str()) != 0) detail::throwEndpointError("connect to", base + "-control", errno);

  if (keepsHistory()) {
    std::string endpoint = options.history;
    if (endpoint.empty()) {
      endpoint = options.serve == kDefaultEndpoint ? std::string(kDefaultRelayHistoryEndpoint)
                                                   : detail::defaultHistoryEndpoint(serveEndpoint);
    }
    worker.history = std::make_unique<detail::HistoryStore>(options.historyBytes, options.limits);
    worker.historyServer = std::make_unique<detail::HistoryServer>(context.get(), endpoint, options.limits,
                                                                   *security, options.historyArchive);
    worker.historyEndpoint = worker.historyServer->endpoint();
  }

  if (options.onMessage || options.onRawMessage || options.onBatch || worker.history) {
    capture = socket(ZMQ_PUB, "capture");
    detail::setIntOption(capture, ZMQ_SNDHWM, options.highWaterMark, "ZMQ_SNDHWM");
    if (zmq_bind(capture, (base + "-capture").c_str()) != 0) detail::throwEndpointError("bind", base + "-capture", errno);
    worker.captureReader = socket(ZMQ_SUB, "capture");
    detail::setIntOption(worker.captureReader, ZMQ_RCVHWM, options.highWaterMark, "ZMQ_RCVHWM");
    if (zmq_setsockopt(worker.captureReader, ZMQ_SUBSCRIBE, "", 0) != 0) {
      detail::throwEndpointError("subscribe", base, errno);
    }
    if (zmq_connect(worker.captureReader, (base + "-capture").c_str()) != 0) {
      detail::throwEndpointError("connect to", base + "-capture", errno);
    }
    // A copy is for recording or exporting the whole stream, not only what subscribers ask for:
    // the relay subscribes to everything itself, so the publishers send everything. The XSUB
    // keeps this subscription beside the forwarded ones and repeats it to publishers that join.
    constexpr char kSubscribeAll = 1;
    if (zmq_send(listen, &kSubscribeAll, 1, 0) != 1) detail::throwEndpointError("subscribe at", listenEndpoint, errno);
  }

  proxy = std::make_unique<detail::RelayProxy>(detail::ProxySockets{listen, serve, capture, controlProxy},
                                               static_cast<std::size_t>(options.highWaterMark), options.maxQueuedBytes);

  if (!options.runName.empty()) {
    // The report enters like any publisher's, so subscribers and upstream relays see it.
    PayloadPublisherOptions reporterOptions;
    reporterOptions.connect = {base + "-listen"};
    reporterOptions.linger = kReportLinger;
    worker.reporter = std::make_unique<PayloadPublisher>(reporterOptions);
  }
}

void Relay::State::closeAll() {
  std::lock_guard lock(controlMutex);
  worker.reporter.reset();
  if (worker.historyServer) worker.historyServed = worker.historyServer->stats();
  worker.historyServer.reset();
  if (guards.serve) guards.subscribersCut = guards.serve->stalledCount();
  if (guards.serve) guards.handshakeFailures = guards.serve->handshakeFailureCount();
  if (guards.listen) guards.publishersRefused = guards.listen->closedCount();
  guards.serve.reset();  // before the socket it watches closes
  guards.listen.reset();
  for (void** s : {&listen, &serve, &capture, &worker.captureReader, &controlProxy, &control}) closeSocket(*s);
}

RelayStats Relay::State::query() const {
  std::lock_guard lock(controlMutex);  // closeAll() resets the guards and the history server under it
  RelayStats stats;
  proxy->addTo(stats);
  stats.publishersRefused = guards.listen ? guards.listen->closedCount() : guards.publishersRefused;
  stats.subscribersCut = guards.serve ? guards.serve->stalledCount() : guards.subscribersCut;
  stats.captured = captured.load(std::memory_order_relaxed);
  stats.captureSkipped = captureSkipped.load(std::memory_order_relaxed);
  stats.callbackErrors = callbackErrors.load(std::memory_order_relaxed);
  worker.historyCounters.copyTo(stats);
  if (security && security->enabled()) {
    stats.curveRefused = security->refusedCount() +
                         (guards.serve ? guards.serve->handshakeFailureCount() : guards.handshakeFailures);
  }
  const detail::HistoryServerStats served = worker.historyServer ? worker.historyServer->stats() : worker.historyServed;
  stats.historyRequests = served.requests;
  stats.historyBusy = served.refused;
  stats.historyAbandoned = served.abandoned;
  return stats;
}

// Takes up to kCaptureBurst messages off the capture socket; returns how many.
int Relay::State::drainCapture() {
  // Only a callback needs the message decoded (borrowed, allocating nothing, for onBatch alone):
  // the history keeps the bytes, and readers decode what it answers as they decode what comes
  // live. Decoding every event into Events here took the relay from a fifth of a core to half.
  const bool decode = options.onMessage || options.onRawMessage;
  const bool viewOnly = options.onBatch && !decode;
  std::array<zmq_msg_t, 2> frames;
  for (zmq_msg_t& frame : frames) zmq_msg_init(&frame);
  int taken = 0;
  for (; taken < kCaptureBurst; ++taken) {
    // Receiving lets go of the frames before, which libzmq may free on another thread: what was
    // read of them happens before.
    detail::annotateBeforeSend();
    if (zmq_msg_recv(&frames[0], worker.captureReader, ZMQ_DONTWAIT) < 0) break;
    detail::annotateAfterReceive();
    // The loop sends only two-frame messages here.
    std::size_t count = 1;
    while (zmq_msg_more(&frames[count - 1]) != 0 && count < frames.size() &&
           zmq_msg_recv(&frames[count], worker.captureReader, 0) >= 0) {
      ++count;
    }
    if (zmq_msg_more(&frames[count - 1]) != 0) {  // more than two: not a publisher's
      while (zmq_msg_more(&frames[count - 1]) != 0 && zmq_msg_recv(&frames[count - 1], worker.captureReader, 0) >= 0) {
      }
      captureSkipped.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    std::array<std::string_view, 2> views;
    for (std::size_t i = 0; i < count; ++i) {
      views[i] = {static_cast<const char*>(zmq_msg_data(&frames[i])), zmq_msg_size(&frames[i])};
    }
    if (detail::judgeCapture(std::span(views.data(), count), options.limits, decode, worker.scratch) ==
        detail::CaptureVerdict::Skip) {
      captureSkipped.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    if (viewOnly) {
      const DecodeStatus status = worker.batches.decode(
          views[0], views[1], [&](const EventBatchView& batch) { take(views[0], views[1], &batch); });
      if (status != DecodeStatus::Ok) captureSkipped.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    take(views[0], views[1], nullptr);
  }
  detail::annotateBeforeSend();
  for (zmq_msg_t& frame : frames) zmq_msg_close(&frame);
  return taken;
}

void Relay::State::take(std::string_view topic, std::string_view payload, const EventBatchView* batch) {
  const bool decoded = options.onMessage || options.onRawMessage;
  captured.fetch_add(1, std::memory_order_relaxed);
  // A connecting publisher's copy of a config already held: forwarded (a reader that has it
  // skips it), but neither kept again nor recorded again.
  if (worker.history && worker.history->configs().isCopy(topic, payload)) return;
  if (worker.history && topic != kHeartbeatTopic) {
    const auto& events = worker.scratch.events;
    keep(topic, payload, batch && !batch->empty()    ? (*batch)[0].timestampNs()
                         : decoded && !events.empty() ? toWireTime(events.front().timestamp)
                                                      : detail::HistoryStore::kUnknownTime);
  }
  if (!decoded && !batch) return;
  try {
    if (options.onMessage) options.onMessage(topic, worker.scratch);
    if (options.onRawMessage) options.onRawMessage(topic, payload, worker.scratch);
    if (options.onBatch && batch) options.onBatch(*batch);
    if (options.onBatch && !batch) worker.batches.decode(topic, payload, options.onBatch);
  } catch (...) {
    callbackErrors.fetch_add(1, std::memory_order_relaxed);
  }
}

void Relay::State::keep(std::string_view topic, std::string_view payload, int64_t firstEventNs) {
  try {
    worker.history->append(topic, std::make_shared<const std::string>(payload.data(), payload.size()), firstEventNs,
                    toWireTime(std::chrono::system_clock::now()));
  } catch (const std::bad_alloc&) {
    return;  // not kept; forwarding goes on
  }
  worker.historyCounters.update(*worker.history);
}

void Relay::State::report(MessageKind kind) {
  if (!worker.reporter) return;
  if (kind == MessageKind::Heartbeat) {
    const RelayStats stats = query();
    Event event{std::string(kStatEventName), std::chrono::system_clock::now(), {}};
    event.data.emplace("livemon.relay.down_messages.value", static_cast<double>(stats.downMessages));
    event.data.emplace("livemon.relay.down_bytes.value", static_cast<double>(stats.downBytes));
    event.data.emplace("livemon.relay.up_messages.value", static_cast<double>(stats.upMessages));
    event.data.emplace("livemon.relay.up_bytes.value", static_cast<double>(stats.upBytes));
    // What the relay refused or dropped to hold its bounds, so a user sees an abusive peer's effect.
    event.data.emplace("livemon.relay.refused_messages.value", static_cast<double>(stats.downRefused + stats.upRefused));
    event.data.emplace("livemon.relay.queue_dropped.value", static_cast<double>(stats.queueDropped));
    event.data.emplace("livemon.relay.queued_bytes.value", static_cast<double>(stats.queuedBytes));
    event.data.emplace("livemon.relay.publishers_refused.value", static_cast<double>(stats.publishersRefused));
    event.data.emplace("livemon.relay.subscribers_cut.value", static_cast<double>(stats.subscribersCut));
    // Peers refused for a key not in the allow list, beside the traffic, where users look.
    if (options.curve.enabled()) {
      event.data.emplace("livemon.relay.curve_refused.value", static_cast<double>(stats.curveRefused));
    }
    worker.reporter->send(kStatEventName, encodeEventsPayload(identity, worker.statSequence++, kStatEventName, {event}));
  }
  PublisherCounters counters;
  counters.timestamp = std::chrono::system_clock::now();
  counters.interval = options.reportInterval;
  counters.published = worker.statSequence;
  counters.dropped = worker.reporter->unsentCount();
  worker.reporter->send(kHeartbeatTopic, encodeHeartbeatPayload(kind, identity, worker.heartbeatSequence++, counters,
                                                                 worker.historyEndpoint));
}

void Relay::State::runWorker() {
  auto nextReport = SteadyClock::now();
  while (!stopping.load(std::memory_order_relaxed)) {
    const auto now = SteadyClock::now();
    if (now >= nextReport) {
      report(MessageKind::Heartbeat);
      nextReport = std::max(nextReport + options.reportInterval, now);
    }
    const auto wait = std::min<SteadyClock::duration>(nextReport - SteadyClock::now(), kStopCheck);
    const long waitMs = std::max<long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(wait).count());
    if (worker.historyServer) {
      // Everything captured so far goes into the history before a request is answered: a
      // subscriber asks after a message that passed the proxy after its subscription, so what
      // it did not receive live is in the capture queue ahead of that message.
      zmq_pollitem_t items[] = {{worker.captureReader, 0, ZMQ_POLLIN, 0},
                                {worker.historyServer->socket(), 0, ZMQ_POLLIN, 0}};
      zmq_poll(items, 2, worker.historyServer->pollTimeoutMs(waitMs));
      while (drainCapture() == kCaptureBurst && !stopping.load(std::memory_order_relaxed)) {
      }
      try {
        worker.historyServer->serve(*worker.history);
      } catch (const std::bad_alloc&) {
        // The answer waits for memory.
      }
    } else if (worker.captureReader != nullptr) {
      zmq_pollitem_t item{worker.captureReader, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, waitMs) > 0) drainCapture();
    } else {
      // Nothing to read: the stop flag is checked at least every kStopCheck.
      std::this_thread::sleep_for(std::chrono::milliseconds(waitMs));
    }
  }
  if (worker.captureReader != nullptr) drainCapture();
  report(MessageKind::Goodbye);
}

Relay::Relay(Options options) {
  validate(options);
  state_ = std::make_unique<State>(std::move(options));
  State& state = *state_;
  state.identity = makeIdentity(state.options.runName);
  try {
    state.open();
  } catch (...) {
    state.closeAll();
    throw;
  }
  state.proxyRunning = true;
  // The sockets move to the threads; starting them orders everything above before.
  state.proxyThread = std::thread([&state] {
    state.proxy->run();
    std::lock_guard lock(state.controlMutex);
    state.proxyRunning = false;
  });
  state.workerThread = std::thread([&state] { state.runWorker(); });
}

Relay::~Relay() { stop(); }

void Relay::stop() {
  State& state = *state_;
  std::lock_guard stopLock(state.stopMutex);
  if (state.stopped) return;
  state.stopped = true;
  // The worker first: its goodbye still goes through the loop.
  state.stopping.store(true, std::memory_order_relaxed);
  state.workerThread.join();
  {
    std::lock_guard lock(state.controlMutex);
    if (state.proxyRunning) zmq_send(state.control, "TERMINATE", 9, 0);
  }
  state.proxyThread.join();
  state.closeAll();
}

RelayStats Relay::stats() const { return state_->query(); }

const std::string& Relay::listenEndpoint() const noexcept { return state_->listenEndpoint; }
const std::string& Relay::serveEndpoint() const noexcept { return state_->serveEndpoint; }
const std::string& Relay::historyEndpoint() const noexcept { return state_->worker.historyEndpoint; }
const SourceInfo& Relay::identity() const noexcept { return state_->identity; }

}  // namespace livemon::transport
