#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/event.h>
#include <livemon/run_config.h>
#include <livemon/system_stats.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/wire_format.h>

namespace livemon::transport {

// What the publisher does when a subscriber cannot keep up with it.
enum class SlowSubscriberPolicy {
  // ZeroMQ PUB: messages to that subscriber are dropped once its high-water mark is reached; other
  // subscribers are not affected. The subscriber sees the loss as sequence gaps.
  DropForThatSubscriber,
  // The I/O thread waits until every subscriber has room (ZMQ_XPUB_NODROP). Meanwhile the queue
  // fills and the calling threads drop new events and count them in droppedCount(). One stalled
  // subscriber stalls delivery to all of them.
  WaitForSlowest,
};

// The environment variable that makes publishers connect (to a relay) instead of binding:
// LIVEMON_CONNECT=tcp://head:5556, or several endpoints separated by commas.
inline constexpr std::string_view kConnectEnvironmentVariable = "LIVEMON_CONNECT";

// PublisherOptions' default endpoints, read from the environment whenever options are made:
// with LIVEMON_CONNECT set (and not empty) a publisher binds nothing and connects to its
// endpoints; otherwise it binds kDefaultEndpoint and connects nowhere.
std::vector<std::string> defaultPublisherBind();
std::vector<std::string> defaultPublisherConnect();

// The environment variable that names the run of every Publisher whose PublisherOptions::runName
// is empty: LIVEMON_RUN=resnet-lr3e-4.
inline constexpr std::string_view kRunEnvironmentVariable = "LIVEMON_RUN";

// The run name a Publisher takes when PublisherOptions::runName is empty (see there), for the
// program named `program` (empty: this one; the Python module gives its script's name, as the
// program's is "python3") with `rank` (none: the RANK environment variable's, if any).
std::string defaultRunName(std::string_view program = {}, std::optional<int64_t> rank = std::nullopt);

// The environment variable that sets the history a publisher keeps for late subscribers, in MiB
// (0 turns it off), when PublisherOptions::historyBytes is not set.
inline constexpr std::string_view kHistoryEnvironmentVariable = "LIVEMON_HISTORY_MB";
inline constexpr std::size_t kDefaultHistoryBytes = 32 * 1024 * 1024;

// The environment variable that turns PublisherOptions::systemStats on for every Publisher of
// the process: LIVEMON_SYSTEM_STATS=1 (0 or empty: as unset). Core's (livemon/system_stats.h).
using livemon::kSystemStatsEnvironmentVariable;

// Thread-safety: a plain value type.
struct PublisherOptions {
  // Endpoints to bind and to connect to (at least one in all). Port "*" binds a free port;
  // Publisher::endpoints() tells which. The defaults follow LIVEMON_CONNECT (see above), so a
  // program that uses them joins a cluster's relay without a change to its code.
  std::vector<std::string> bind = defaultPublisherBind();
  std::vector<std::string> connect = defaultPublisherConnect();
  // Bytes of encoded events the queue holds (an event with 6 fields takes about 100). When it is
  // full, new events are dropped and counted.
  std::size_t queueCapacityBytes = 8 * 1024 * 1024;
  // ZMQ_SNDHWM: messages (batches of events) buffered per subscriber.
  int sendHighWaterMark = 1000;
  SlowSubscriberPolicy slowSubscriber = SlowSubscriberPolicy::DropForThatSubscriber;
  // How long destruction may spend delivering what is still queued (ZMQ_LINGER).
  std::chrono::milliseconds linger{1000};
  // At most 1 s: subscribers count a publisher stale after a few missed heartbeats.
  std::chrono::milliseconds heartbeatInterval{1000};
  // A batch is sent when it reaches either bound, or when the queue runs empty.
  std::size_t maxBatchEvents = 4096;
  std::size_t maxBatchBytes = 256 * 1024;
  // Identity. An empty run name takes the environment variable LIVEMON_RUN when it is set, else
  // the program's name and the time the process's first Publisher started (defaultRunName()),
  // "train-20261127-224501", the same for every Publisher of the process. A process with a rank
  // (below, or RANK) takes the job id its launcher gives every rank instead of the time, as its
  // ranks start at different seconds: "train-<TORCHELASTIC_RUN_ID>" (unless torchrun's default
  // "none"), else "train-<SLURM_JOB_ID>", else the program's name alone. An unset rank, worldSize or
  // localRank is read from the environment variable torchrun sets, RANK, WORLD_SIZE or
  // LOCAL_RANK, when it holds an integer (otherwise it stays unset). The constructor throws
  // std::invalid_argument for a combination readers would refuse (see identityBroken(): a
  // worldSize below 1, a rank outside 0..worldSize-1, a negative localRank or one of worldSize
  // or more), naming the values.
  std::string runName;
  std::optional<int64_t> rank;
  std::optional<int64_t> worldSize;
  std::optional<int64_t> localRank;
  // The publisher reports its counters as Stats "<statName>.published" and "<statName>.dropped"
  // (aggregation value, windows of statWindow), with CURVE "<statName>.curve_refused" too. An
  // empty name turns this off.
  std::string statName = "livemon.publisher";
  std::chrono::milliseconds statWindow{5000};
  // What subscribers may make the publisher hold. A subscriber's connection carries only its
  // handshake and subscriptions (a livemon Subscriber sends a few hundred bytes), but ZeroMQ keeps
  // every subscription it receives, at some 64 bytes of memory per byte. So a TCP connection
  // that has sent more than maxSubscriberBytes is closed, as is the one that has sent the most
  // while all together have sent more than maxTotalSubscriberBytes, and the newest beyond
  // maxSubscriberConnections. A closed subscriber may reconnect at once.
  std::size_t maxSubscriberBytes = 64 * 1024;
  std::size_t maxTotalSubscriberBytes = 256 * 1024;
  std::size_t maxSubscriberConnections = 128;
  // Serves this job's own Stats for Prometheus at http://metricsAddress:metricsPort/metrics (see
  // MetricsExporter), fed with the Stat events this Publisher is given, as events (the logging
  // threads only copy them into a bounded hand-off; the I/O thread feeds the exporter). The server is
  // livemon::exporters': a program that does not link it serves no metrics, and its Publishers
  // refuse a metricsPort (publisher_metrics.h). 0 reads the port from
  // the environment variable LIVEMON_METRICS_PORT (plus LOCAL_RANK when set, so the ranks of a
  // node, separate processes under torchrun, take ports of their own); unset or 0 there too means
  // off.
  // The Publishers of one process that take the port from LIVEMON_METRICS_PORT share one exporter
  // (the process has one such port: `demo --ranks`, or a job with two publishers), which serves
  // them all, each source with its own labels, and stops with the last of them. A later one that
  // asks for another metricsAddress gets an exporter of its own. An explicit metricsPort is never
  // shared: a second Publisher given the same port fails to bind it.
  // A port that cannot be bound (taken by another process, as anyone on a shared node can) never
  // stops the job: the Publisher comes up without metrics, says so once on stderr and sets
  // PublisherStats::metricsUnavailable. A bad LIVEMON_METRICS_PORT value still throws.
  uint16_t metricsPort = 0;
  std::string metricsAddress = "127.0.0.1";
  // True: the publisher registers as an event handler, so every event the process logs goes
  // out. False: only the events given to Publisher::publish() do, as when one process publishes
  // for several sources (`livemonctl demo --ranks`).
  bool handleLoggedEvents = true;
  // The whole run for subscribers that join late: the publisher keeps the event messages it sent
  // (Stat windows and other events), the newest within historyBytes, and answers history
  // requests on a socket of its own (docs/wire-format.md, "History") from its I/O thread, never
  // from the logging threads. Unset reads LIVEMON_HISTORY_MB (MiB), else kDefaultHistoryBytes;
  // 0 turns it off. Only a publisher that binds and connects nowhere keeps history: one that
  // connects to a relay leaves it to the relay.
  std::optional<std::size_t> historyBytes;
  // Where the history socket binds; empty: beside the first bound endpoint (the same host with a
  // free port, or the ipc/inproc name plus ".history"). The heartbeats advertise it.
  std::string historyEndpoint;
  // What the machine is doing: the process's CPU % and RSS, the host's memory used and each
  // GPU's utilization, memory, temperature and power (with NVML), sampled every second as
  // `system.*` Stats in windows of statWindow (livemon/system_stats.h lists them). The switch is
  // core's enableSystemStats(), which any program may call without a Publisher; this option has
  // the Publisher hold it while it lives. False still turns it on when LIVEMON_SYSTEM_STATS=1.
  // The process has one sampler however many ask for it; its Stats log like any other, so they
  // leave through every Publisher that handles logged events, and a Publisher that does not
  // (handleLoggedEvents = false) starts no sampler.
  bool systemStats = false;
  // CURVE encryption and authentication (CurveOptions): the bound endpoints and the history socket
  // admit only the subscribers whose certificates are in curve.allow; connecting to a relay, the
  // publisher proves itself with curve.certificate to the relay whose certificate is
  // curve.serverCertificate. The defaults come from LIVEMON_CURVE_SECRET, LIVEMON_CURVE_ALLOW,
  // LIVEMON_CURVE_SERVER and LIVEMON_REQUIRE_CURVE, so ranks need no change to their code.
  CurveOptions curve = publisherCurveFromEnvironment();
};

// Thread-safety: a plain value type. Counters of one publisher.
struct PublisherStats {
  uint64_t published = 0;         // events handed to the socket
  uint64_t droppedQueueFull = 0;  // events that found the queue full
  uint64_t droppedTooLarge = 0;   // events beyond the wire limits (see WireLimits)
  uint64_t messages = 0;          // event messages (batches) sent
  uint64_t heartbeats = 0;        // heartbeats sent
  uint64_t ioWakeups = 0;         // times the I/O thread woke from a wait (when idle: once a heartbeat)
  std::size_t queuedBytes = 0;    // bytes waiting in the queue now
  uint64_t subscribersDisconnected = 0;  // connections reset: sent too much, or too many connections
  std::size_t historyBytes = 0;      // held for late subscribers now (bookkeeping included)
  std::size_t historyMessages = 0;   // messages held
  uint64_t historyDropped = 0;       // messages dropped to stay within historyBytes
  // The newest livemon.run_config message of each source published, kept beside historyBytes for
  // late subscribers when it dropped them (docs/wire-format.md, "History"): how many, their
  // bytes, and those let go beyond the bound.
  std::size_t historyConfigs = 0;
  std::size_t historyConfigBytes = 0;
  uint64_t historyConfigsDropped = 0;
  uint64_t historyRequests = 0;      // history requests answered or refused
  uint64_t curveRefused = 0;         // CURVE clients refused: a key not in curve.allow, no CURVE, the wrong server key
  uint64_t metricsDropped = 0;       // Stat events the metrics exporter missed: its hand-off was full or busy
  // A metrics port was asked for (PublisherOptions::metricsPort or LIVEMON_METRICS_PORT) but could
  // not be served (another process holds it): the publisher runs without it.
  bool metricsUnavailable = false;
};

// Thread-safe: every member may be called from any thread.
//
// Publishes every logged event over ZeroMQ (wire format: docs/wire-format.md). The event handler
// it registers runs on the threads that log events; it encodes the event and copies it into a
// bounded queue under a spin lock that covers only that copy, never I/O. It makes one system call
// (a write to an eventfd) only for the first event after the I/O thread fell asleep, which it does
// when nothing was queued for about 1.5 ms; while events keep coming it makes none (unless another
// logging thread was descheduled in the middle of its copy; then it yields). A dedicated I/O
// thread owns the socket: it drains the queue, batches events by name, sends them and sends
// heartbeats. Idle, it wakes only for a heartbeat or a history request.
// Overflow policy: when the queue is full the new event is dropped and counted; logEvent() never
// waits for the network.
//
// Fork: in a child process forked while a Publisher exists, the inherited publisher does nothing.
// Its handler ignores events and its destructor releases nothing it inherited (ZeroMQ state must
// not be touched after fork), so the child exits promptly. The child may create its own Publisher.
class Publisher {
 public:
  using Options = PublisherOptions;

  // Opens the socket(s) and registers the event handler. Throws TransportError naming the
  // endpoint and the reason when an endpoint cannot be bound or connected, and
  // std::invalid_argument naming the option for a bad option.
  explicit Publisher(Options options = {});
  // Logs the range Stats' open windows (flushRangeStats: nothing else would send them before the
  // process exits), unregisters the handler, then sends what is queued and a goodbye, waiting at
  // most `linger`.
  ~Publisher();

  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Queues `event` as the handler does a logged one: never waits; a full queue drops and counts
  // it. For a publisher that does not handle logged events (handleLoggedEvents = false).
  void publish(const Event& event) noexcept;
  // Publishes `config` as this publisher's source's run config: the livemon.run_config event
  // setRunConfig would log (livemon/run_config.h), kept in the history through trimming like
  // one. For a publisher that does not handle logged events, which speaks for a source of its own
  // (`livemonctl demo --ranks`); one that does sends the process's config (setRunConfig) when it
  // starts and whenever it is set. Throws std::invalid_argument, naming the key, as setRunConfig
  // does; never waits (a full queue drops and counts it).
  void publishRunConfig(const RunConfig& config);

  // Events handed to the socket so far.
  uint64_t publishedCount() const noexcept;
  // Events dropped so far: queue full or beyond the wire limits.
  uint64_t droppedCount() const noexcept;
  PublisherStats stats() const noexcept;

  // The endpoints in use; a bound "tcp://host:*" appears with its port.
  const std::vector<std::string>& endpoints() const noexcept;
  const SourceInfo& identity() const noexcept;
  // The port this job's Stats are served on for Prometheus, or 0 when off (see metricsPort).
  uint16_t metricsPort() const noexcept;
  // Where history requests are answered, as bound; empty when the publisher keeps no history.
  const std::string& historyEndpoint() const noexcept;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace livemon::transport
