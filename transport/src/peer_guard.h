#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>

// Only transport/src includes this header.
namespace livemon::transport::detail {

// Thread-safety: a plain value type. What the peers of one sending socket may make it hold.
struct PeerLimits {
  std::size_t maxBytesPerPeer = 64 * 1024;   // received over one connection, in all
  std::size_t maxBytesTotal = 256 * 1024;    // received over all live connections together
  std::size_t maxPeers = 128;                // live TCP and ipc:// connections
  // False: only the connections are counted (a socket whose peers send data, such as a relay's
  // listen socket); the guard then wakes only when one comes or goes.
  bool countBytes = true;
  // With countBytes: a connection whose peer takes none of what waits for it for this long
  // (SendProgress) is reset too, so what the socket queued for it is let go. 0: never.
  std::chrono::milliseconds maxStall{0};
};

// Not thread-safe: one owner at a time (a guard's thread).
//
// Whether the peer of one connection has stopped taking what is sent to it: bytes have waited in
// the kernel's send queue for a whole `limit` with none of them acknowledged. A peer that reads,
// however slowly, acknowledges some; one that is sent nothing has nothing waiting. (ZMTP
// heartbeats cannot tell: libzmq queues its PING behind the data the peer does not take, and only
// starts waiting for the answer once the PING is out.)
class SendProgress {
 public:
  // The connection's counters at `now`: the bytes the peer has acknowledged in all (TCP_INFO's
  // tcpi_bytes_acked) and those waiting in the send queue (SIOCOUTQ). True once bytes have waited
  // for `limit` since they began to or since the peer last acknowledged some; never for a
  // `limit` of 0.
  bool stalled(uint64_t acked, uint64_t waiting, std::chrono::steady_clock::time_point now,
               std::chrono::milliseconds limit);

 private:
  uint64_t acked_ = 0;
  std::optional<std::chrono::steady_clock::time_point> since_;  // bytes wait, none taken, since
};

// Thread-safe: the counts may be read from any thread; the constructor and the destructor from
// the thread that owns `socket`.
//
// Guards a ZeroMQ socket that only sends (PUB, XPUB) against peers that send it too much, and
// (with maxStall) against peers that take nothing. Such a socket's peers only ever send a
// handshake and subscriptions, but libzmq keeps every distinct subscription, at some 64 bytes of
// memory per byte received, for as long as the connection lives, and no socket option bounds
// that; and it keeps a queue of messages for each peer, which stays full while the peer does not
// read. So a thread of its own watches the socket's TCP and ipc:// connections (from its monitor
// events) and the bytes the kernel received on each (for a Unix socket: what libzmq read, from the
// socket's peek offset, and what waits), and resets a connection whose peer sent more than
// maxBytesPerPeer, the one that sent the most while all together sent more than maxBytesTotal,
// the newest beyond maxPeers, and a TCP one that has taken none of what waits for it for
// maxStall. libzmq then drops the connection and what it kept for it; the peer may reconnect. It
// checks every millisecond while a connection is new or its peer keeps sending, and otherwise
// when a connection has data to read or 50 ms have passed: a flood is stopped within about a
// millisecond (some 15 KB at the speed libzmq takes subscriptions in), a stalled peer within
// 50 ms of maxStall, and quiet subscribers cost 20 wakeups a second.
//
// Only connections the socket accepted are watched: one it made itself (a Publisher connected to a
// relay, a relay to its --upstream) goes to a peer the user named, which passes on the
// subscriptions of all its own subscribers. ipc:// connections are watched as TCP ones are: any
// process allowed to write the socket file reaches them (with a umask of 002 a whole group), and
// so does a careless one of the same user.
class PeerGuard {
 public:
  // Starts monitoring `socket` (in `context`); call before it binds or connects. Throws
  // TransportError if the monitor cannot be set up.
  PeerGuard(void* context, void* socket, PeerLimits limits);
  // Stops the thread and the monitor; call before closing the socket.
  ~PeerGuard();

  PeerGuard(const PeerGuard&) = delete;
  PeerGuard& operator=(const PeerGuard&) = delete;

  // Connections reset so far for what they sent or for their number.
  uint64_t closedCount() const noexcept { return closed_.load(std::memory_order_relaxed); }
  // Connections reset so far for taking nothing for maxStall.
  uint64_t stalledCount() const noexcept { return stalled_.load(std::memory_order_relaxed); }
  // Connections whose security handshake failed before any authentication was asked: a client
  // without CURVE at a CURVE socket, or one holding the wrong server key. (ZAP counts the keys it
  // refuses itself.)
  uint64_t handshakeFailureCount() const noexcept { return handshakeFailures_.load(std::memory_order_relaxed); }

 private:
  struct Watch;
  void* socket_;
  std::unique_ptr<Watch> watch_;  // owned by the thread while it runs
  std::atomic<uint64_t> closed_{0};
  std::atomic<uint64_t> handshakeFailures_{0};
  std::atomic<uint64_t> stalled_{0};
  int stopFd_ = -1;
  std::thread thread_;
};

// Checks `limits`, given as the options maxSubscriberBytes, maxTotalSubscriberBytes and
// maxSubscriberConnections of `optionsName` (e.g. "PublisherOptions"). Throws
// std::invalid_argument "<optionsName>: <option> must ..." naming the first bad one.
void checkSubscriberLimits(const PeerLimits& limits, std::string_view optionsName);

// Readies a socket that only sends (PUB, XPUB) for peers that may be hostile: a cap on the size of
// the frames they send (ZMQ_MAXMSGSIZE), one subscription message queued per connection
// (ZMQ_RCVHWM), and a PeerGuard with `limits`. Call before the socket binds or connects; keep the
// guard until just before the socket closes. Throws TransportError naming the option that failed.
std::unique_ptr<PeerGuard> guardSendingSocket(void* context, void* socket, PeerLimits limits);

}  // namespace livemon::transport::detail
