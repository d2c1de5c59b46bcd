#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/transport/curve.h>
#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/history_archive.h>
#include <livemon/transport/wire_format.h>

namespace livemon::transport {

// Where a relay takes publishers by default; subscribers connect to kDefaultEndpoint, where they
// would find a single publisher.
inline constexpr std::string_view kDefaultRelayListenEndpoint = "tcp://127.0.0.1:5556";
// Where a relay serving kDefaultEndpoint answers history requests by default: a fixed port, so an
// SSH tunnel can carry it beside the serve port.
inline constexpr std::string_view kDefaultRelayHistoryEndpoint = "tcp://127.0.0.1:5557";
inline constexpr std::size_t kDefaultRelayHistoryBytes = 256 * 1024 * 1024;

// Thread-safety: a plain value type.
struct RelayOptions {
  // Bound: publishers connect to `listen` (ZeroMQ XSUB), subscribers to `serve` (XPUB). Port "*"
  // binds a free port; Relay::listenEndpoint() and serveEndpoint() tell which.
  std::string listen{kDefaultRelayListenEndpoint};
  std::string serve{kDefaultEndpoint};
  // Other relays' listen endpoints: the serve socket connects there too, so what this relay
  // forwards also reaches them (and their subscribers' subscriptions reach this relay's
  // publishers). Relays chain: one per node, one on the head node.
  std::vector<std::string> upstream;
  // Messages queued per connection each way (ZMQ_RCVHWM of listen, ZMQ_SNDHWM of serve). A
  // subscriber that stops reading misses what goes beyond, as with a Publisher; the others do not
  // wait for it. Ten times a Publisher's, because one connection of a relay carries the messages
  // of many publishers (toward an upstream relay: all of them); raise it for hundreds of ranks.
  // It is also what a stalled subscriber may make the relay hold: this many messages, within
  // maxQueuedBytes.
  int highWaterMark = 10000;
  // Bytes: what one subscriber that stops reading may make the relay hold (the last highWaterMark
  // messages it forwarded are kept within this; a message that would exceed it is dropped for
  // every subscriber and counted in RelayStats::queueDropped), and a quarter of what all queues
  // together may hold. A stream whose messages average more than maxQueuedBytes / highWaterMark
  // (26 KiB by default) loses the excess.
  std::size_t maxQueuedBytes = 256 * 1024 * 1024;
  // Frames beyond maxPayloadBytes (plus 1 MiB, as the Subscriber allows) drop the publisher's
  // connection (ZMQ_MAXMSGSIZE); onMessage sees only messages these limits accept.
  WireLimits limits{};
  // What subscribers (and upstream relays) may make the serve socket hold, as for a Publisher
  // (PublisherOptions::maxSubscriberBytes).
  std::size_t maxSubscriberBytes = 64 * 1024;
  std::size_t maxTotalSubscriberBytes = 256 * 1024;
  std::size_t maxSubscriberConnections = 128;
  // Live TCP connections to `listen` (publishers, downstream relays): the newest beyond it is reset
  // (RelayStats::publishersRefused), so idle connections cannot use up the relay's file
  // descriptors. Fewer when RLIMIT_NOFILE leaves room for fewer beside maxSubscriberConnections and
  // 64 more (`livemonctl relay` raises its soft limit to the hard one).
  std::size_t maxPublisherConnections = 4096;
  // A subscriber connection (one a peer made to `serve`) that takes no byte of what waits for it
  // for this long is reset (RelayStats::subscribersCut), so the messages its queue holds go back
  // to the others: a peer that stops reading cannot keep its part of the queues' bytes. A
  // subscriber whose connection was cut connects again and sees the messages it missed as a gap.
  // 0: never.
  std::chrono::milliseconds maxStall{5000};
  // The relay reports itself as a source with this run name: heartbeats and the Stats
  // livemon.relay.{down,up}_{messages,bytes} (value: totals so far) every reportInterval. An empty
  // run name turns the report off. With CURVE, livemon.relay.curve_refused too (RelayStats).
  std::string runName = "relay";
  std::chrono::milliseconds reportInterval{1000};
  // Called on the relay's worker thread with each well-formed message on its way from
  // publishers to subscribers (events and heartbeats, the relay's own included): what a recorder
  // or a metrics exporter needs. Set, the relay subscribes to everything itself, so publishers
  // send every message whether or not a subscriber asks for it. Empty: messages are not copied
  // off the proxy at all, and publishers send only what subscribers ask for. The copies
  // queue in front of the worker (highWaterMark messages); beyond that the copy is dropped (the
  // callback sees a sequence gap), so a slow callback never slows forwarding. Malformed messages
  // are forwarded as they are but skipped here (RelayStats::captureSkipped). An exception the
  // callback throws is counted (callbackErrors) and forwarding goes on.
  std::function<void(std::string_view topic, const WireMessage& message)> onMessage;
  // The same, with the payload frame as it arrived beside the decoded message: what a recorder
  // stores (docs/recording-format.md). Called after onMessage when both are set.
  std::function<void(std::string_view topic, std::string_view payload, const WireMessage& message)> onRawMessage;
  // The same for a consumer that keeps no events (a recorder, an exporter): the message borrowed,
  // not decoded into Events (event_batch_view.h), valid only during the call (its payload() is
  // the frame as it arrived). Called after onRawMessage when both are set.
  std::function<void(const EventBatchView& batch)> onBatch;
  // The whole run for subscribers that join late: the relay keeps the event messages it
  // forwards, the newest within historyBytes (the oldest go first; a recording keeps them), and
  // answers history requests (docs/wire-format.md, "History") on `history`, which its heartbeats
  // advertise. Then it subscribes to everything itself, as with onMessage. Empty `history`:
  // kDefaultRelayHistoryEndpoint when serving kDefaultEndpoint, else the serve host with a free
  // port. 0 bytes turns it off. A relay that forwards upstream keeps none: the relay at the top
  // of the chain answers for all of them.
  std::size_t historyBytes = kDefaultRelayHistoryBytes;
  std::string history;
  // Where the stream is kept beyond historyBytes, such as the recordings of what onMessage is
  // given (`livemonctl relay --record DIR`: livemon::recording's RecordingHistoryArchive over
  // DIR); null: nowhere. Then what the history dropped to stay within historyBytes is answered
  // from the archive first, a piece at a time, so a late subscriber still gets the run from its
  // start. The relay's worker thread reads it.
  std::shared_ptr<HistoryArchive> historyArchive;
  // CURVE (CurveOptions): the relay is the CURVE server on listen, serve and history, with the
  // key pair curve.certificate on all three. Subscribers (serve, history) must be in curve.allow;
  // toward `upstream` it is a client of the relay whose certificate is curve.serverCertificate.
  // `livemonctl relay` fills it from --curve-secret, --curve-allow, --curve-server and their
  // environment variables.
  CurveOptions curve;
  // With CURVE: the directory of the public certificates of the publishers (and downstream
  // relays) admitted at `listen`, read again as curve.allow is (`livemonctl relay
  // --curve-allow-publish DIR`, LIVEMON_CURVE_ALLOW_PUBLISH). Empty: curve.allow admits
  // publishers too, so a key allowed to watch may also publish. A key in this list only may
  // publish but not watch; one in curve.allow only may watch but not publish.
  std::string curveAllowPublish;
};

// Thread-safety: a plain value type. Totals since the relay started: messages (a topic frame and a
// payload frame count once) and their bytes.
struct RelayStats {
  uint64_t downMessages = 0;  // received from publishers, forwarded toward subscribers
  uint64_t downBytes = 0;
  uint64_t upMessages = 0;    // subscriptions received from subscribers, forwarded toward publishers
  uint64_t upBytes = 0;
  uint64_t downRefused = 0;   // from publishers, not a topic and a payload frame: dropped
  uint64_t upRefused = 0;     // from subscribers, not a subscription (one frame, 0 or 1 first): dropped
  uint64_t queueDropped = 0;  // dropped to keep the queues within RelayOptions::maxQueuedBytes
  uint64_t queuedBytes = 0;   // of forwarded messages, held in the queues now
  uint64_t publishersRefused = 0;  // connections to listen reset beyond maxPublisherConnections
  uint64_t subscribersCut = 0;     // connections to serve reset after taking nothing for maxStall
  uint64_t captured = 0;        // messages handed to onMessage
  uint64_t captureSkipped = 0;  // messages not handed to onMessage: malformed or beyond the limits
  uint64_t callbackErrors = 0;
  std::size_t historyBytes = 0;     // held for late subscribers now
  std::size_t historyMessages = 0;
  uint64_t historyDropped = 0;      // messages dropped to stay within RelayOptions::historyBytes
  // Each source's newest livemon.run_config message, kept beside historyBytes when it dropped them
  // (docs/wire-format.md, "History"): how many, their bytes, and those let go beyond the bound.
  std::size_t historyConfigs = 0;
  std::size_t historyConfigBytes = 0;
  uint64_t historyConfigsDropped = 0;
  uint64_t historyRequests = 0;
  uint64_t historyBusy = 0;       // requests told "busy": every answer place was taken
  uint64_t historyAbandoned = 0;  // answers ended before their end: the reader left or read too slowly
  // CURVE peers refused: publishers whose key is not in the publish list (curveAllowPublish, or
  // curve.allow), subscribers whose key is not in curve.allow, subscribers without CURVE or with
  // the wrong server key, and the live connections cut because their key left its list.
  uint64_t curveRefused = 0;
};

// Thread-safe: every member may be called from any thread.
//
// Forwards every message from the publishers connected to `listen` to the subscribers connected
// to `serve`, and their subscriptions back (and nothing else a subscriber sends), with a loop of
// its own on a thread of its own: filtering happens at the publishers, and the relay never decodes
// what it forwards. A worker thread reports the relay's counters (see RelayOptions::runName) and, when
// RelayOptions::onMessage is set, decodes a copy of the stream for it.
// Overflow policy: per connection, up to highWaterMark messages queue; beyond that a slow
// subscriber misses messages (it sees sequence gaps) and a publisher faster than the relay drops
// at its own send queue. Nothing waits for a slow peer.
// Not for fork(): a child must not use a relay it inherited.
class Relay {
 public:
  using Options = RelayOptions;

  // Binds both endpoints and starts forwarding. Throws TransportError naming the endpoint when
  // one cannot be bound or connected, and std::invalid_argument naming the option for a bad one.
  explicit Relay(Options options = {});
  // stop().
  ~Relay();

  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Stops forwarding and joins the threads. A second call does nothing.
  void stop();

  // The counters now; after stop(), the final ones.
  RelayStats stats() const;

  // As bound: a "tcp://host:*" endpoint appears with its port.
  const std::string& listenEndpoint() const noexcept;
  const std::string& serveEndpoint() const noexcept;
  // Where history requests are answered, as bound; empty when the relay keeps no history.
  const std::string& historyEndpoint() const noexcept;
  // The relay's own identity as a source (its run name is RelayOptions::runName).
  const SourceInfo& identity() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace livemon::transport
