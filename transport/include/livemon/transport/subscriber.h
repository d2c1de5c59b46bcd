#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/clock.h>
#include <livemon/event.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/received_event.h>
#include <livemon/transport/wire_format.h>

namespace livemon::transport {

enum class EndpointMode { Connect, Bind };

// Thread-safety: a plain value type.
struct SubscriberOptions {
  // Endpoints to connect to and to bind at construction; more can be added later.
  std::vector<std::string> connect;
  std::vector<std::string> bind;
  // Topic prefixes (event names start the topic); empty receives everything. Heartbeats are
  // always received.
  std::vector<std::string> filters;
  // A source with no message for this long is stale.
  std::chrono::milliseconds staleAfter{3000};
  // Measures staleness; nullptr means livemon::systemClock(). Must outlive the Subscriber.
  Clock* clock = nullptr;
  // The decoder's limits; messages beyond them are counted as oversized and skipped.
  WireLimits limits{};
  // Hand each delivered event the message it arrived in (ReceivedEvent::message: its topic and
  // payload frames as they arrived, a copy per message), when every event of that message is
  // delivered: what a recorder stores (docs/recording-format.md). Events lent to onEventView
  // have their message whatever this says (ReceivedEventView::message, wholeMessage).
  bool keepMessages = false;
  // ZMQ_RCVHWM per endpoint, in messages (a message may carry thousands of events).
  int receiveHighWaterMark = 1000;
  // What the subscriber holds per connection for a consumer that does not keep up, in bytes:
  // the receive queue takes at most this many messages of the largest size `limits` let through
  // (and at most receiveHighWaterMark), so with the defaults 12 messages of up to 5 MiB. Beyond
  // it ZeroMQ stops reading the connection; the publisher then drops at its own queue, and what
  // it dropped arrives as a gap (SubscriberStats::gaps, missedEvents).
  std::size_t receiveBufferBytes = 64 * 1024 * 1024;
  // How soon a lost connection is retried (ZMQ_RECONNECT_IVL and ZMQ_RECONNECT_IVL_MAX).
  std::chrono::milliseconds reconnectInterval{100};
  std::chrono::milliseconds reconnectIntervalMax{1000};
  // Sources remembered at most; beyond that the one silent longest is forgotten. A run that says
  // its world size (SourceInfo::worldSize) raises the bound by that many, so all its ranks are
  // kept (1 024 ranks through a relay), but never past maxRankedSources in all: a peer claiming
  // huge worlds or inventing runs cannot grow it further.
  std::size_t maxSources = 1024;
  // Topics whose sequence numbers are followed, per source and in all; beyond either, the topic
  // heard from longest ago is forgotten (its next message starts it afresh, uncounted as a gap).
  // maxTopics grows in proportion when world sizes raise the source bound (65 536 at most with
  // the defaults).
  std::size_t maxTopicsPerSource = 1024;
  std::size_t maxTopics = 16384;
  std::size_t maxRankedSources = 4096;
  // The whole run, for a subscriber that joins late (docs/wire-format.md, "History"): on each
  // endpoint it connects to, it waits up to historyWait for a heartbeat that advertises a
  // history (a relay's, or a publisher's that binds), asks for it, and delivers the answer (the
  // run's events from the oldest the source still holds) before the live events that arrived
  // meanwhile, which it holds back, up to historyHoldBytes. Sequence numbers make the seam
  // exact: what came both ways is delivered once. Without an advertisement, or when the answer
  // stops for historyTimeout, it goes on live. Endpoints the subscriber binds take no history.
  bool history = false;
  std::chrono::milliseconds historyWait{3000};
  std::chrono::milliseconds historyTimeout{10000};
  std::size_t historyHoldBytes = 64 * 1024 * 1024;
  // CURVE (CurveOptions): connecting, the subscriber proves itself with curve.certificate (its
  // NAME.key_secret) to the publisher or relay whose certificate is curve.serverCertificate, on
  // every endpoint and for history requests. The defaults come from LIVEMON_CURVE_CLIENT,
  // LIVEMON_CURVE_SERVER and LIVEMON_REQUIRE_CURVE.
  CurveOptions curve = clientCurveFromEnvironment();
};

enum class SourceState {
  Alive,  // a message arrived within staleAfter
  Stale,  // silent for longer than staleAfter
  Gone,   // said goodbye
};

std::string_view sourceStateName(SourceState state) noexcept;  // "alive" "stale" "gone"

// Thread-safety: a plain value type.
struct SourceChange {
  std::shared_ptr<const SourceInfo> source;
  SourceState state = SourceState::Alive;
  bool joined = false;  // first message from this source (state is Alive)
  std::shared_ptr<const std::string> endpoint;  // where it was last heard
};

enum class HistoryOutcome {
  Received,     // the answer came to its end
  Unavailable,  // no source on the endpoint advertised a history within historyWait
  Refused,      // the source was busy answering others
  Failed,       // the answer stopped (historyTimeout), or live messages outgrew historyHoldBytes
};

std::string_view historyOutcomeName(HistoryOutcome outcome) noexcept;  // "received" "unavailable" ...

// Thread-safety: a plain value type. How fetching an endpoint's history went.
struct HistoryStatus {
  std::shared_ptr<const std::string> endpoint;
  HistoryOutcome outcome = HistoryOutcome::Unavailable;
  std::string server;       // where it was asked for
  uint64_t messages = 0;    // event messages received in the answer
  uint64_t events = 0;      // events delivered from it (not counting ones already delivered)
  // The source no longer held everything it sent: the run began before `oldest`.
  bool truncated = false;
  std::optional<std::chrono::system_clock::time_point> oldest;  // its oldest event
  std::string error;
};

// Thread-safety: a plain value type.
struct GapInfo {
  std::shared_ptr<const SourceInfo> source;
  std::string topic;
  uint64_t expected = 0;  // the sequence number that should have come
  uint64_t received = 0;  // the one that came
  uint64_t missed() const noexcept { return received - expected; }
};

// Thread-safety: a plain value type.
struct SourceStatus {
  std::shared_ptr<const SourceInfo> source;
  SourceState state = SourceState::Alive;
  std::shared_ptr<const std::string> endpoint;  // where it was last heard
  std::chrono::steady_clock::time_point firstSeen;  // Clock::now() times
  std::chrono::steady_clock::time_point lastSeen;
  std::optional<std::chrono::steady_clock::time_point> lastHeartbeat;
  std::map<std::string, uint64_t> lastSequence;  // per topic
  uint64_t events = 0;
  uint64_t gaps = 0;          // times events went missing
  uint64_t missedEvents = 0;  // how many went missing
  uint64_t duplicates = 0;    // events seen before (one publisher reached over two endpoints)
  uint64_t sequenceResets = 0;  // messages whose numbers could not follow on (see SubscriberStats)
  std::optional<PublisherCounters> lastCounters;  // from its latest heartbeat
};

// Thread-safety: a plain value type.
struct EndpointStatus {
  std::shared_ptr<const std::string> endpoint;
  EndpointMode mode = EndpointMode::Connect;
  // Live tcp:// and ipc:// connections, as ZeroMQ reports them (updated by poll()). ZeroMQ does
  // not report inproc:// connections; there, messages and lastMessage tell.
  uint32_t connections = 0;
  uint64_t messages = 0;
  uint64_t events = 0;
  std::optional<std::chrono::steady_clock::time_point> lastMessage;
  uint64_t protocolErrors = 0;  // connections re-established after ZeroMQ dropped them (see SubscriberStats)
  // Connections whose security handshake failed (a CURVE publisher and a plain subscriber, a key
  // not in the publisher's allow list, the wrong server certificate), and why the latest one did,
  // for a person: "refused: this side's key is not in the publisher's allow list". Empty again
  // once a handshake succeeds.
  uint64_t handshakeFailures = 0;
  std::string handshakeError;
};

// Thread-safety: a plain value type.
struct SubscriberStats {
  uint64_t messages = 0;     // messages received, well-formed or not
  uint64_t events = 0;       // events handed to the caller
  uint64_t heartbeats = 0;   // heartbeats and goodbyes
  uint64_t malformed = 0;    // skipped: not valid version-1 messages
  uint64_t oversized = 0;    // skipped: beyond the limits
  uint64_t unsupported = 0;  // skipped: an unknown version or message kind
  uint64_t gaps = 0;
  uint64_t missedEvents = 0;
  uint64_t duplicates = 0;   // skipped: sequence numbers seen before, in the same message again
  // Events delivered although their sequence numbers had been delivered before in a message with
  // other bytes: a peer posing as the source claimed them (or the source's own events after it).
  uint64_t conflicts = 0;
  // Messages whose sequence numbers jumped too far to be believed (more than 2^32 ahead of or
  // behind what came before), such as a peer posing as a source could send: followed from there
  // as if the numbering had restarted, neither a gap nor duplicates.
  uint64_t sequenceResets = 0;
  uint64_t sourcesJoined = 0;
  uint64_t sourcesEvicted = 0;  // forgotten beyond maxSources
  uint64_t topicsEvicted = 0;   // forgotten beyond maxTopicsPerSource or maxTopics
  // Connections ZeroMQ closed for good because the peer broke the protocol (a frame beyond the
  // size limit, a bad handshake) and that were connected again.
  uint64_t protocolErrors = 0;
  uint64_t historyEvents = 0;   // events delivered from history answers
  uint64_t historyOverlap = 0;  // skipped at the seam: came in the history and live
  std::string lastError;     // what was wrong with the last skipped message
};

using EventCallback = std::function<void(ReceivedEvent&)>;
using EventViewCallback = std::function<void(const ReceivedEventView&)>;

// Thread-safety: a plain value type; the callbacks run on the thread that calls
// Subscriber::poll().
struct SubscriberCallbacks {
  EventCallback onEvent;  // may move from the event
  // When set, events are lent here instead of handed to onEvent: read in place from the message
  // as it arrived (names, keys and strings views into its bytes, the fields a span), with no map
  // and no allocation per event; valid only during the call. For consumers that look at events
  // and do not keep them (the dashboard's ingest, tail, watch, record); the same events, in the
  // same order, with the same sources, sequence numbers, gaps and duplicates skipped as onEvent.
  EventViewCallback onEventView;
  std::function<void(const SourceChange&)> onSourceChange;
  std::function<void(const GapInfo&)> onGap;
  std::function<void(const HistoryStatus&)> onHistory;  // once per endpoint, with SubscriberOptions::history
};

// Thread-safe: every member may be called from any thread. poll() calls are serialized; callbacks
// run on the polling thread with no lock held, so they may call any member. addEndpoint() and
// removeEndpoint() wake a poll() in progress and take effect before they return.
//
// Receives events from any number of publishers (wire format: docs/wire-format.md).
//
// Connections are retried by ZeroMQ, so a publisher that restarts on the same endpoint is
// received again; it has a new identity, so it appears as a new source (and the old one goes
// stale), not as a gap. Every message is checked against `limits` by this decoder; a malformed,
// oversized or unknown one is counted and skipped.
//
// Whatever a peer sends costs bounded memory: ZeroMQ refuses a frame more than 1 MiB beyond
// limits.maxPayloadBytes at its header (ZMQ_MAXMSGSIZE) and drops the connection, for good in
// libzmq 4.3, so the subscriber connects again (counted in protocolErrors); one poll decodes about
// 1 MiB of payload at most and leaves the rest for the next; the sources and topics followed are
// bounded (maxSources up to maxRankedSources, maxTopicsPerSource, maxTopics). Sequence numbers too far off to be believed
// restart the numbering (sequenceResets) rather than silence a source or count absurd losses.
class Subscriber {
 public:
  using Options = SubscriberOptions;

  // Throws TransportError naming the endpoint for an endpoint that cannot be used, and
  // std::invalid_argument naming the option for a bad option.
  explicit Subscriber(Options options = {});
  ~Subscriber();

  Subscriber(const Subscriber&) = delete;
  Subscriber& operator=(const Subscriber&) = delete;

  // Adds an endpoint; returns it as used (a bound "tcp://host:*" with its port). Throws
  // TransportError naming the endpoint and the reason if it cannot be connected or bound.
  std::string addEndpoint(const std::string& endpoint, EndpointMode mode = EndpointMode::Connect);
  // The same with CURVE settings of the endpoint's own instead of SubscriberOptions::curve (the
  // dashboard's Connect dialog: each endpoint with its server's certificate). Also throws
  // std::invalid_argument naming a certificate that cannot be used.
  std::string addEndpoint(const std::string& endpoint, EndpointMode mode, const CurveOptions& curve);
  // False if no such endpoint was added.
  bool removeEndpoint(std::string_view endpoint);
  std::vector<EndpointStatus> endpoints() const;

  // Waits up to `timeout` for messages, then handles the messages already received (up to a few
  // thousand, or about 1 MiB of payload) and checks the sources for staleness. Returns the number
  // of events delivered. Returns early, possibly with 0, when interrupted by a signal or by
  // addEndpoint/removeEndpoint. An exception thrown by a callback propagates to the caller; the
  // rest of that poll's deliveries are lost.
  std::size_t poll(std::chrono::milliseconds timeout, const EventCallback& onEvent);
  std::size_t poll(std::chrono::milliseconds timeout, const SubscriberCallbacks& callbacks);

  std::vector<SourceStatus> sources() const;
  SubscriberStats stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace livemon::transport
