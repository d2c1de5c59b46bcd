#include "peer_guard.h"

#include <fcntl.h>
#include <linux/tcp.h>  // the kernel's struct tcp_info: glibc's lacks tcpi_bytes_received
#include <linux/sockios.h>  // SIOCOUTQ
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <climits>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <zmq.h>

#include <livemon/transport/error.h>

#include "zmq_support.h"

namespace livemon::transport::detail {

namespace {

// The largest frame a subscriber may send (ZMQ_MAXMSGSIZE; libzmq closes the connection of a peer
// that sends more). Subscribers send a handshake and subscriptions: a subscription is one byte and
// a topic prefix, and no topic is longer than WireLimits::maxTopicBytes; handshake commands with
// their metadata take a few hundred bytes.
constexpr int64_t kMaxSubscriberFrameBytes = 2048;
// Subscription messages libzmq queues per connection before the owner takes them in (ZMQ_RCVHWM);
// a subscriber waits for room without losing any. One: whatever is queued is taken in even after
// the connection is reset, and a peer that reconnects in a loop gets a queue each time.
constexpr int kSubscriptionQueueMessages = 1;

[[noreturn]] void throwMonitorError(int error) {
  throw TransportError("", zmq_strerror(error),
                       std::string("livemon transport: cannot watch a socket's connections: ") + zmq_strerror(error));
}

// While a connection is new or its peer keeps sending, it is checked this often. libzmq takes
// subscriptions in at some 15 KB a millisecond (about 1 MB of memory).
constexpr long kBusyCheckMs = 1;
// Quiet connections are checked when they have data to read, and this often besides: libzmq may
// read the data before the poll sees it.
constexpr long kQuietCheckMs = 50;

// Thread-safety: a plain value type. One end of a TCP or a Unix stream (ipc://) connection.
struct Address {
  sockaddr_storage storage{};
  socklen_t size = 0;

  bool operator==(const Address& other) const {
    return size == other.size && std::memcmp(&storage, &other.storage, size) == 0;
  }
  bool isUnixSocket() const { return storage.ss_family == AF_UNIX; }
  uint16_t port() const {
    if (storage.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(storage).sin_port);
    return ntohs(reinterpret_cast<const sockaddr_in6&>(storage).sin6_port);
  }
  // A Unix socket's path as an ipc:// endpoint names it ("@name" in the abstract namespace).
  std::string path() const {
    const std::size_t offset = offsetof(sockaddr_un, sun_path);
    if (size <= offset) return {};
    std::string text(reinterpret_cast<const sockaddr_un&>(storage).sun_path, size - offset);
    if (text.front() == '\0') {
      text.front() = '@';
      return text;
    }
    return text.substr(0, text.find('\0'));
  }
};

// Both ends of `fd` and its socket's inode (no other open socket has it) if it is a TCP or a Unix
// stream connection.
bool readAddresses(int fd, Address& local, Address& remote, ino_t& inode) {
  int domain = 0;
  int protocol = 0;
  int type = 0;
  socklen_t size = sizeof(domain);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &size) != 0) return false;
  size = sizeof(type);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) != 0 || type != SOCK_STREAM) return false;
  size = sizeof(protocol);
  if (domain != AF_UNIX && (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &size) != 0 || protocol != IPPROTO_TCP)) {
    return false;
  }
  struct stat status {};
  if (fstat(fd, &status) != 0) return false;
  inode = status.st_ino;
  local.size = sizeof(local.storage);
  remote.size = sizeof(remote.storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local.storage), &local.size) != 0) return false;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&remote.storage), &remote.size) != 0) return false;
  const int family = local.storage.ss_family;
  return family == AF_INET || family == AF_INET6 || (family == AF_UNIX && domain == AF_UNIX);
}

// The port of a "tcp://host:port" endpoint (also "tcp://source:port;host:port").
std::optional<uint16_t> endpointPort(std::string_view endpoint) {
  const std::size_t colon = endpoint.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= endpoint.size()) return std::nullopt;
  uint32_t port = 0;
  for (const char c : endpoint.substr(colon + 1)) {
    if (c < '0' || c > '9' || port > 65535) return std::nullopt;
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port > 65535) return std::nullopt;
  return static_cast<uint16_t>(port);
}

// Not thread-safe: owned by the guard's thread, in its Watch. One connection of the socket.
struct Peer {
  int fd = -1;  // libzmq's descriptor: read only, never closed here
  Address local;
  Address remote;
  ino_t inode = 0;
  uint64_t order = 0;     // higher is newer
  uint64_t received = 0;  // bytes: as the kernel counts them (TCP); read by libzmq or waiting (ipc://)
  SendProgress progress;  // whether it takes what waits for it (TCP)
  bool reset = false;     // reset here (or found to be another socket): waiting for its DISCONNECTED
};

// The kernel counts the bytes a TCP connection received (TCP_INFO), not those of a Unix socket.
// But it moves a Unix socket's peek offset (SO_PEEK_OFF, used only by reads that peek, which
// libzmq never does) back by what each read takes: set far ahead when the connection is seen, the
// offset's distance from that start is what libzmq has read since, exactly, however fast it
// reads. With what waits in the socket to be read (FIONREAD), that is what the peer sent, as TCP
// counts it, but for what libzmq read before the guard saw the connection (its handshake).
constexpr int kPeekOffsetStart = INT_MAX;

void startCountingUnix(const Peer& peer) {
  const int start = kPeekOffsetStart;
  setsockopt(peer.fd, SOL_SOCKET, SO_PEEK_OFF, &start, sizeof(start));
}

// What a Unix socket received since startCountingUnix(), if known: read by libzmq, or waiting.
std::optional<uint64_t> unixBytesReceived(const Peer& peer) {
  int offset = -1;
  socklen_t size = sizeof(offset);
  int waiting = 0;
  if (getsockopt(peer.fd, SOL_SOCKET, SO_PEEK_OFF, &offset, &size) != 0 || offset < 0 ||
      ioctl(peer.fd, FIONREAD, &waiting) != 0 || waiting < 0) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(kPeekOffsetStart - offset) + static_cast<uint64_t>(waiting);
}

// Bytes received over `peer` so far; nullopt once libzmq has closed it (its DISCONNECTED follows).
std::optional<uint64_t> bytesReceived(const Peer& peer) {
  if (peer.local.isUnixSocket()) return unixBytesReceived(peer);
  tcp_info info{};
  socklen_t size = sizeof(info);
  if (getsockopt(peer.fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0 ||
      size < offsetof(tcp_info, tcpi_bytes_received) + sizeof(info.tcpi_bytes_received)) {
    return std::nullopt;
  }
  return info.tcpi_bytes_received;
}

}  // namespace

// Not thread-safe: owned by the guard's thread while it runs.
struct PeerGuard::Watch {
  void* monitor = nullptr;
  PeerLimits limits;
  std::vector<Peer> peers;
  uint64_t nextOrder = 0;
  std::atomic<uint64_t>* handshakeFailures = nullptr;  // the guard's counters
  std::atomic<uint64_t>* stalled = nullptr;

  void run(int stopFd, std::atomic<uint64_t>& closed) noexcept;
  bool readEvents();
  bool onEvent(uint16_t event, uint32_t value, std::string_view address);
  bool enforce(std::atomic<uint64_t>& closed);
  bool stalls(Peer& peer, std::chrono::steady_clock::time_point now);
  static bool reset(Peer& peer);
};

void PeerGuard::Watch::run(int stopFd, std::atomic<uint64_t>& closed) noexcept {
  try {
    std::vector<zmq_pollitem_t> items;
    bool busy = false;
    while (true) {
      items.clear();
      items.push_back(zmq_pollitem_t{monitor, 0, ZMQ_POLLIN, 0});
      items.push_back(zmq_pollitem_t{nullptr, stopFd, ZMQ_POLLIN, 0});
      // While busy the descriptors are not watched: data libzmq has not read yet would keep the
      // poll returning at once.
      if (!busy && limits.countBytes) {
        for (const Peer& peer : peers) {
          if (!peer.reset) items.push_back(zmq_pollitem_t{nullptr, peer.fd, ZMQ_POLLIN, 0});
        }
      }
      const long timeout = peers.empty() || !limits.countBytes ? -1 : busy ? kBusyCheckMs : kQuietCheckMs;
      if (zmq_poll(items.data(), static_cast<int>(items.size()), timeout) < 0 && zmq_errno() == ETERM) return;
      if (items[1].revents != 0) return;
      const bool joined = (items[0].revents & ZMQ_POLLIN) != 0 && readEvents();
      bool traffic = false;
      for (std::size_t i = 2; i < items.size(); ++i) traffic = traffic || items[i].revents != 0;
      busy = enforce(closed) || traffic || joined;
    }
  } catch (...) {
    // Out of memory for the peer list: stop guarding rather than terminate the process.
  }
}

// Each monitor event is two frames: 6 bytes (a 16-bit event and a 32-bit value, here the
// connection's descriptor, in native byte order), then the endpoint. True if a connection came.
bool PeerGuard::Watch::readEvents() {
  bool joined = false;
  while (true) {
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, monitor, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      return joined;
    }
    annotateAfterReceive();
    uint16_t event = 0;
    uint32_t value = 0;
    if (zmq_msg_size(&frame) >= sizeof(event) + sizeof(value)) {
      const auto* data = static_cast<const char*>(zmq_msg_data(&frame));
      std::memcpy(&event, data, sizeof(event));
      std::memcpy(&value, data + sizeof(event), sizeof(value));
    }
    std::string address;
    if (zmq_msg_more(&frame) && zmq_msg_recv(&frame, monitor, 0) >= 0) {
      address.assign(static_cast<const char*>(zmq_msg_data(&frame)), zmq_msg_size(&frame));
    }
    while (zmq_msg_more(&frame) && zmq_msg_recv(&frame, monitor, 0) >= 0) {
    }
    zmq_msg_close(&frame);
    joined = onEvent(event, value, address) || joined;
  }
}

// True if it is a TCP or ipc:// connection to watch.
bool PeerGuard::Watch::onEvent(uint16_t event, uint32_t value, std::string_view address) {
  // Its value is an error code, not a descriptor.
  if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) {
    handshakeFailures->fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const int fd = static_cast<int>(value);
  // Whatever was known under this descriptor belonged to an earlier connection.
  std::erase_if(peers, [&](const Peer& peer) { return peer.fd == fd; });
  // Only accepted connections: one the socket made itself is to a peer the user named (a
  // Publisher's --connect relay, a relay's --upstream), which passes on the subscriptions of all
  // its own subscribers. Counting those would cut the link whenever many watch, or subscriptions
  // come and go long enough (RelayHostile.ManySubscriptionsDoNotCutAPublisherOffTheRelay).
  if (event != ZMQ_EVENT_ACCEPTED) return false;
  Peer peer;
  peer.fd = fd;
  if (!readAddresses(fd, peer.local, peer.remote, peer.inode)) return false;  // closed already
  // The event may be read after libzmq closed the connection and the descriptor was reused: keep
  // it only if it still has the port (or path) of this socket's endpoint.
  if (peer.local.isUnixSocket()) {
    if (!address.starts_with("ipc://") || address.substr(6) != peer.local.path()) return false;
    if (limits.countBytes) startCountingUnix(peer);
  } else {
    const std::optional<uint16_t> port = endpointPort(address);
    if (!port || *port != peer.local.port()) return false;
  }
  peer.order = nextOrder++;
  peers.push_back(peer);
  return true;
}

// Resets what is beyond the limits; true if any peer has sent something since the last check.
bool PeerGuard::Watch::enforce(std::atomic<uint64_t>& closed) {
  auto resetCounted = [&](Peer& peer) {
    if (reset(peer)) closed.fetch_add(1, std::memory_order_relaxed);
  };
  bool sent = false;
  std::size_t live = 0;
  uint64_t total = 0;
  const auto now = std::chrono::steady_clock::now();
  for (Peer& peer : peers) {
    if (peer.reset) continue;
    const std::optional<uint64_t> received = limits.countBytes ? bytesReceived(peer) : std::nullopt;
    if (received) {
      sent = sent || *received != peer.received;
      peer.received = *received;
    }
    if (peer.received > limits.maxBytesPerPeer) {
      resetCounted(peer);
      continue;
    }
    if (received && stalls(peer, now)) {
      if (reset(peer)) stalled->fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    ++live;
    total += peer.received;
  }
  auto pick = [&](auto better) {
    Peer* chosen = nullptr;
    for (Peer& peer : peers) {
      if (!peer.reset && (chosen == nullptr || better(peer, *chosen))) chosen = &peer;
    }
    return chosen;
  };
  while (total > limits.maxBytesTotal && live > 0) {
    Peer* largest = pick([](const Peer& a, const Peer& b) { return a.received > b.received; });
    total -= largest->received;
    --live;
    resetCounted(*largest);
  }
  while (live > limits.maxPeers) {
    Peer* newest = pick([](const Peer& a, const Peer& b) { return a.order > b.order; });
    --live;
    resetCounted(*newest);
  }
  return sent;
}

// Whether `peer` has taken none of what waits for it for maxStall (SendProgress), from its
// counters `info`.
// Only TCP connections: a Unix socket has no count of what its peer took.
bool PeerGuard::Watch::stalls(Peer& peer, std::chrono::steady_clock::time_point now) {
  if (limits.maxStall.count() <= 0 || peer.local.isUnixSocket()) return false;
  tcp_info info{};
  socklen_t size = sizeof(info);
  int waiting = 0;  // bytes in the send queue, sent or not, not acknowledged
  if (getsockopt(peer.fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0 ||
      size < offsetof(tcp_info, tcpi_bytes_acked) + sizeof(info.tcpi_bytes_acked) ||
      ioctl(peer.fd, SIOCOUTQ, &waiting) != 0) {
    return false;
  }
  return peer.progress.stalled(info.tcpi_bytes_acked, static_cast<uint64_t>(std::max(waiting, 0)), now, limits.maxStall);
}

// Resets the connection (the kernel discards what it holds from the peer and sends it a RST);
// libzmq then fails on it and drops it. A duplicate of the descriptor pins the socket while it is
// checked to still be that connection, so a descriptor libzmq has closed and the process reused
// meanwhile is never touched. A connect() to AF_UNSPEC rather than shutdown(): after shutdown
// libzmq's next send on it would raise SIGPIPE; after the reset it fails with ECONNRESET. A Unix
// socket has no reset: it is shut for reading only (the peer can send no more, libzmq can still
// send without a SIGPIPE), what the peer had sent is read away here (at most its send buffer),
// and libzmq, reading the end of the stream, drops the connection.
bool PeerGuard::Watch::reset(Peer& peer) {
  peer.reset = true;
  const int pinned = fcntl(peer.fd, F_DUPFD_CLOEXEC, 0);
  if (pinned < 0) return false;
  Address local;
  Address remote;
  ino_t inode = 0;
  const bool same = readAddresses(pinned, local, remote, inode) && local == peer.local && remote == peer.remote &&
                    inode == peer.inode;
  if (same && local.isUnixSocket()) {
    shutdown(pinned, SHUT_RD);
    char discard[4096];
    while (recv(pinned, discard, sizeof(discard), MSG_DONTWAIT) > 0) {
    }
  } else if (same) {
    sockaddr unspecified{};
    unspecified.sa_family = AF_UNSPEC;
    connect(pinned, &unspecified, sizeof(unspecified));
  }
  close(pinned);
  return same;
}

PeerGuard::PeerGuard(void* context, void* socket, PeerLimits limits) : socket_(socket), watch_(std::make_unique<Watch>()) {
  static std::atomic<uint64_t> monitors{0};
  watch_->limits = limits;
  watch_->handshakeFailures = &handshakeFailures_;
  watch_->stalled = &stalled_;
  const std::string address = "inproc://livemon-peer-guard-" + std::to_string(monitors++);
  if (zmq_socket_monitor(socket, address.c_str(),
                         ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_CONNECTED | ZMQ_EVENT_DISCONNECTED |
                             ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) != 0) {
    throwMonitorError(errno);
  }
  try {
    watch_->monitor = zmq_socket(context, ZMQ_PAIR);
    if (watch_->monitor == nullptr) throwMonitorError(errno);
    setIntOption(watch_->monitor, ZMQ_LINGER, 0, "ZMQ_LINGER");
    if (zmq_connect(watch_->monitor, address.c_str()) != 0) throwMonitorError(errno);
    stopFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (stopFd_ < 0) throwMonitorError(errno);
    // The monitor socket moves to the thread; starting it orders everything above before it.
    thread_ = std::thread([this] { watch_->run(stopFd_, closed_); });
  } catch (...) {
    zmq_socket_monitor(socket, nullptr, 0);
    if (watch_->monitor != nullptr) zmq_close(watch_->monitor);
    if (stopFd_ >= 0) close(stopFd_);
    throw;
  }
}

PeerGuard::~PeerGuard() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = write(stopFd_, &one, sizeof(one));
  thread_.join();
  zmq_socket_monitor(socket_, nullptr, 0);
  zmq_close(watch_->monitor);
  close(stopFd_);
}

bool SendProgress::stalled(uint64_t acked, uint64_t waiting, std::chrono::steady_clock::time_point now,
                           std::chrono::milliseconds limit) {
  if (waiting == 0 || acked != acked_ || !since_) {
    acked_ = acked;
    since_ = waiting == 0 ? std::nullopt : std::optional(now);
    return false;
  }
  return limit.count() > 0 && now - *since_ >= limit;
}

void checkSubscriberLimits(const PeerLimits& limits, std::string_view optionsName) {
  auto bad = [&](const std::string& message) {
    throw std::invalid_argument(std::string(optionsName) + ": " + message);
  };
  // Room for a handshake and a few subscriptions of the longest topic.
  constexpr std::size_t kMinSubscriberBytes = 4096;
  if (limits.maxBytesPerPeer < kMinSubscriberBytes) {
    bad("maxSubscriberBytes must be at least " + std::to_string(kMinSubscriberBytes) + ", got " +
        std::to_string(limits.maxBytesPerPeer));
  }
  if (limits.maxBytesTotal < limits.maxBytesPerPeer) {
    bad("maxTotalSubscriberBytes must be at least maxSubscriberBytes (" + std::to_string(limits.maxBytesPerPeer) +
        "), got " + std::to_string(limits.maxBytesTotal));
  }
  if (limits.maxPeers < 1) bad("maxSubscriberConnections must be at least 1");
}

std::unique_ptr<PeerGuard> guardSendingSocket(void* context, void* socket, PeerLimits limits) {
  setInt64Option(socket, ZMQ_MAXMSGSIZE, kMaxSubscriberFrameBytes, "ZMQ_MAXMSGSIZE");
  setIntOption(socket, ZMQ_RCVHWM, kSubscriptionQueueMessages, "ZMQ_RCVHWM");
  return std::make_unique<PeerGuard>(context, socket, limits);
}

}  // namespace livemon::transport::detail
