#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "curve_certificate.h"

// Only transport/src includes this header.
namespace livemon::transport::detail {

class AllowList;

// Thread-safety: a plain value type. Both ends of a TCP connection: what names it while it lives,
// whichever descriptor it has.
struct TcpEnds {
  sockaddr_storage local{};
  sockaddr_storage remote{};
  socklen_t localSize = 0;
  socklen_t remoteSize = 0;

  bool operator==(const TcpEnds& other) const;
};

// Not thread-safe: one owner at a time (the ZAP handler's thread).
//
// Which live TCP connection of this process carries which admitted CURVE key, so that a key
// removed from its allow list loses the connections it has, not only the ones it would make.
// libzmq tells neither: a ZAP request names the peer's IP address but not its port, and a socket's
// monitor names a connection's descriptor but not its key. So for each admission the connections
// of this process are looked at (/proc/self/fd) for those that wait for an answer: from that
// address, not admitted before, having sent a CURVE server's greeting and WELCOME (all of it
// acknowledged) and received more than a client's greeting and HELLO (ZMTP 3.0, RFC 26: libzmq
// sends READY only after the answer). When several from one address wait at once, the answer is
// sent and the one that then sends READY is the one (waited for up to kSettleTime; failing that,
// or when a client was refused lately and its ERROR may not be out yet, the key is noted for each,
// so a removal may also cut another, which reconnects and is admitted again, but never misses
// one). Refused keys cost no look.
class AdmittedConnections {
 public:
  // Not thread-safe: one owner at a time. The connections that wait for one ZAP answer, each
  // pinned by a duplicate of its descriptor (closed at destruction).
  class Waiting {
   public:
    Waiting() = default;
    ~Waiting();
    Waiting(Waiting&& other) noexcept;
    Waiting& operator=(Waiting&& other) noexcept;
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;

   private:
    friend class AdmittedConnections;
    // Thread-safety: a plain value type. One waiting connection.
    struct Pinned {
      int fd = -1;
      TcpEnds ends;
      uint64_t sent = 0;  // bytes, as the kernel counts them, when found waiting
    };
    std::vector<Pinned> pinned_;
  };

  // Before admitting a client at `peerAddress` (the ZAP request's address frame: the numeric IP
  // address): the connections from there that wait for an answer. Forgets connections that have
  // closed.
  Waiting waitingFrom(std::string_view peerAddress);
  // After the answer admitting `key` (by `allow`) was sent: notes which of `waiting` it was for.
  void admitted(Waiting waiting, const CurveKey& key, const std::shared_ptr<AllowList>& allow);
  // After an answer refusing a client.
  void refused() { lastRefusal_ = std::chrono::steady_clock::now(); }
  // Resets the connections whose key has left its allow list (the list read again if its
  // directory changed), each counted there as a refusal; forgets those of lists gone. Returns how
  // many were reset.
  std::size_t enforce();
  std::size_t size() const noexcept { return connections_.size(); }

 private:
  // Thread-safety: a plain value type. One admitted connection.
  struct Connection {
    TcpEnds ends;
    CurveKey key{};
    std::weak_ptr<AllowList> allow;
    uint64_t generation = 0;  // of `allow` when the key was last found in it
  };
  std::vector<Connection> connections_;
  std::optional<std::chrono::steady_clock::time_point> lastRefusal_;
};

}  // namespace livemon::transport::detail
