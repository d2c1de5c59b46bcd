#include "curve_revocation.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/tcp.h>  // the kernel's struct tcp_info: glibc's lacks tcpi_bytes_acked and tcpi_bytes_received
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <chrono>
#include <map>
#include <optional>
#include <thread>

#include "curve_security.h"

namespace livemon::transport::detail {

namespace {

// A CURVE server's connection while libzmq waits for the ZAP answer (ZMTP 3.0 and RFC 26): it
// has sent its greeting (64 bytes) and WELCOME (a 168-byte command in a 2-byte frame header),
// and the client's INITIATE, which follows it, acknowledged all of that; it has received the
// client's greeting, HELLO (200 bytes and a 2-byte header) and that INITIATE.
constexpr uint64_t kServerBytesBeforeReady = 64 + 170;
constexpr uint64_t kClientBytesBeforeInitiate = 64 + 202;

// Both ends of `fd` if it is a TCP connection over IPv4 or IPv6.
bool readEnds(int fd, TcpEnds& ends) {
  int protocol = 0;
  socklen_t size = sizeof(protocol);
  if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &size) != 0 || protocol != IPPROTO_TCP) return false;
  ends.localSize = sizeof(ends.local);
  ends.remoteSize = sizeof(ends.remote);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ends.local), &ends.localSize) != 0) return false;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ends.remote), &ends.remoteSize) != 0) return false;
  return ends.local.ss_family == AF_INET || ends.local.ss_family == AF_INET6;
}

// Calls visit(pinned, ends) for each TCP connection of this process. `pinned` is a duplicate of
// its descriptor, closed afterwards: whatever visit() reads or does concerns that connection,
// even when libzmq closes its own descriptor meanwhile and the number is reused.
template <typename Visit>
void forEachTcpConnection(Visit&& visit) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  const int own = ::dirfd(dir);
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    int fd = -1;
    if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc() || fd == own) continue;
    const int pinned = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (pinned < 0) continue;
    TcpEnds ends;
    if (readEnds(pinned, ends)) visit(pinned, ends);
    ::close(pinned);
  }
  ::closedir(dir);
}

// How long the ZAP thread waits, after answering one of several connections waiting at once, to
// see which one the answer was for (it sends READY).
constexpr auto kSettleTime = std::chrono::milliseconds(50);
constexpr auto kSettleStep = std::chrono::microseconds(200);
// How long after a refusal the refused client's connection may still look as if it waited.
constexpr auto kRefusalSettleTime = std::chrono::seconds(1);

// The kernel's counters of `fd`; false if it is closed or the kernel has none.
bool readInfo(int fd, tcp_info& info) {
  socklen_t size = sizeof(info);
  return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) == 0 &&
         size >= offsetof(tcp_info, tcpi_bytes_sent) + sizeof(info.tcpi_bytes_sent);
}

// Whether `fd`, a connection from `peerAddress`, waits for a ZAP answer now.
bool awaitsAnswer(int fd, const TcpEnds& ends, std::string_view peerAddress, tcp_info& info) {
  char host[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&ends.remote), ends.remoteSize, host, sizeof(host), nullptr, 0,
                  NI_NUMERICHOST) != 0 ||
      peerAddress != host) {
    return false;
  }
  return readInfo(fd, info) && info.tcpi_bytes_acked == kServerBytesBeforeReady &&
         info.tcpi_bytes_received > kClientBytesBeforeInitiate;
}

// Resets the connection: the kernel sends the peer a RST and libzmq fails on it and drops it (see
// PeerGuard, which does the same).
void reset(int fd) {
  sockaddr unspecified{};
  unspecified.sa_family = AF_UNSPEC;
  ::connect(fd, &unspecified, sizeof(unspecified));
}

}  // namespace

bool TcpEnds::operator==(const TcpEnds& other) const {
  return localSize == other.localSize && remoteSize == other.remoteSize &&
         std::memcmp(&local, &other.local, localSize) == 0 && std::memcmp(&remote, &other.remote, remoteSize) == 0;
}

AdmittedConnections::Waiting::~Waiting() {
  for (const Pinned& pinned : pinned_) ::close(pinned.fd);
}

AdmittedConnections::Waiting::Waiting(Waiting&& other) noexcept : pinned_(std::move(other.pinned_)) {
  other.pinned_.clear();
}

AdmittedConnections::Waiting& AdmittedConnections::Waiting::operator=(Waiting&& other) noexcept {
  std::swap(pinned_, other.pinned_);
  return *this;
}

AdmittedConnections::Waiting AdmittedConnections::waitingFrom(std::string_view peerAddress) {
  std::vector<bool> live(connections_.size(), false);
  Waiting waiting;
  forEachTcpConnection([&](int fd, const TcpEnds& ends) {
    bool known = false;
    for (std::size_t i = 0; i < connections_.size(); ++i) {
      if (connections_[i].ends == ends) live[i] = known = true;
    }
    // One already admitted may not have sent its READY yet.
    tcp_info info{};
    if (known || !awaitsAnswer(fd, ends, peerAddress, info)) return;
    const int pinned = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (pinned >= 0) waiting.pinned_.push_back({pinned, ends, info.tcpi_bytes_sent});
  });
  std::size_t index = 0;
  std::erase_if(connections_, [&](const Connection&) { return !live[index++]; });
  return waiting;
}

void AdmittedConnections::admitted(Waiting waiting, const CurveKey& key, const std::shared_ptr<AllowList>& allow) {
  const std::vector<Waiting::Pinned>& pinned = waiting.pinned_;
  std::optional<std::size_t> chosen;
  if (pinned.size() == 1) chosen = 0;
  // The answer is out: the connection it was for sends READY now, the others wait for theirs. A
  // client refused lately may not have been sent its ERROR yet, and would look the same: then
  // each is noted.
  const auto now = std::chrono::steady_clock::now();
  const bool refusedLately = lastRefusal_ && now - *lastRefusal_ < kRefusalSettleTime;
  const auto deadline = now + kSettleTime;
  while (!chosen && !refusedLately && pinned.size() > 1 && std::chrono::steady_clock::now() < deadline) {
    for (std::size_t i = 0; i < pinned.size() && !chosen; ++i) {
      tcp_info info{};
      if (readInfo(pinned[i].fd, info) && info.tcpi_bytes_sent > pinned[i].sent) chosen = i;
    }
    if (!chosen) std::this_thread::sleep_for(kSettleStep);
  }
  const uint64_t generation = allow->generation();
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    if (!chosen || *chosen == i) connections_.push_back({pinned[i].ends, key, allow, generation});
  }
}

std::size_t AdmittedConnections::enforce() {
  if (connections_.empty()) return 0;
  // Each list read again (if its directory changed) once per call.
  std::map<const AllowList*, uint64_t> generations;
  std::vector<Connection> revoked;
  std::erase_if(connections_, [&](Connection& connection) {
    const std::shared_ptr<AllowList> allow = connection.allow.lock();
    if (!allow) return true;
    auto [at, added] = generations.try_emplace(allow.get(), 0);
    if (added) at->second = allow->refresh();
    if (at->second == connection.generation) return false;
    if (allow->contains(connection.key)) {
      connection.generation = at->second;
      return false;
    }
    revoked.push_back(std::move(connection));
    return true;
  });
  if (revoked.empty()) return 0;
  std::size_t count = 0;
  forEachTcpConnection([&](int fd, const TcpEnds& ends) {
    for (const Connection& connection : revoked) {
      if (!(connection.ends == ends)) continue;
      reset(fd);
      if (const std::shared_ptr<AllowList> allow = connection.allow.lock()) allow->countRefused();
      ++count;
      break;
    }
  });
  return count;
}

}  // namespace livemon::transport::detail
