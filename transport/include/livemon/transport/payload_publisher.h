#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/transport/curve.h>

namespace livemon::transport {

// Thread-safety: a plain value type.
struct PayloadPublisherOptions {
  // Endpoints to bind and to connect to (at least one in all). Port "*" binds a free port;
  // PayloadPublisher::endpoints() tells which.
  std::vector<std::string> bind;
  std::vector<std::string> connect;
  // ZMQ_SNDHWM: messages buffered per subscriber. Beyond it that subscriber misses messages (it
  // sees sequence gaps); others are not affected.
  int sendHighWaterMark = 1000;
  // How long destruction may spend delivering what is still buffered (ZMQ_LINGER).
  std::chrono::milliseconds linger{1000};
  // What subscribers may make it hold, as for Publisher (see PublisherOptions::maxSubscriberBytes).
  std::size_t maxSubscriberBytes = 64 * 1024;
  std::size_t maxTotalSubscriberBytes = 256 * 1024;
  std::size_t maxSubscriberConnections = 128;
  // CURVE (CurveOptions), as for a Publisher: bound, a server admitting curve.allow; connecting,
  // a client of curve.serverCertificate.
  CurveOptions curve;
};

// Thread-safety: a plain value type.
//
// Counters of one PayloadPublisher.
struct PayloadPublisherStats {
  uint64_t sent = 0;    // messages handed to the socket
  uint64_t unsent = 0;  // messages the socket did not take (it is never waited for)
  uint64_t subscribersDisconnected = 0;  // connections reset: sent too much, or too many connections
  uint64_t curveRefused = 0;             // CURVE subscribers refused: not in curve.allow, no CURVE, wrong server key
};

// Not thread-safe: one owner at a time; one thread at a time calls its members; stats() and the
// counts may be read from any thread.
//
// Sends messages that are already encoded (a topic and a payload, docs/wire-format.md) to
// subscribers, under whatever identity each payload carries: what a replay of a recording or a
// relay needs, where Publisher sends the events of its own process under its own identity. It adds
// nothing of its own, neither sequence numbers nor heartbeats: the caller sends those its sources
// need. Its subscribers are held to the same limits as a Publisher's.
// Overflow policy: send() never waits. A subscriber that cannot keep up misses messages beyond its
// high-water mark (ZeroMQ PUB); a message the socket refuses as a whole is counted in
// unsentCount().
//
// Fork: in a child process forked while it exists, the inherited instance sends nothing (send()
// returns false) and its destructor releases nothing it inherited, as with Publisher.
class PayloadPublisher {
 public:
  using Options = PayloadPublisherOptions;

  // Opens the socket. Throws TransportError naming the endpoint and the reason when an endpoint
  // cannot be bound or connected, and std::invalid_argument naming the option for a bad option.
  explicit PayloadPublisher(Options options);
  // Closes the socket, waiting at most `linger` for buffered messages to go out.
  ~PayloadPublisher();

  PayloadPublisher(const PayloadPublisher&) = delete;
  PayloadPublisher& operator=(const PayloadPublisher&) = delete;

  // Waits up to `timeout` for a subscriber; true when one came. A subscriber's subscriptions
  // arrive one at a time, the heartbeat topic's often first, so after one arrives it waits until
  // none has come for 100 ms: a message sent before its topic's subscription is in place is lost.
  // Returns false at once when `stop` becomes true.
  bool waitForSubscriber(std::chrono::milliseconds timeout, const std::atomic<bool>& stop);

  // Sends one message: `topic` (the event name, or kHeartbeatTopic) and its payload. Never waits.
  // False when the socket did not take it; it is counted in unsentCount().
  bool send(std::string_view topic, std::string_view payload) noexcept;

  uint64_t sentCount() const noexcept;
  uint64_t unsentCount() const noexcept;
  PayloadPublisherStats stats() const noexcept;

  // The endpoints in use; a bound "tcp://host:*" appears with its port.
  const std::vector<std::string>& endpoints() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace livemon::transport
