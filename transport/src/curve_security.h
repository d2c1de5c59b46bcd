#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/transport/curve.h>

#include "curve_certificate.h"

// Only transport/src includes this header.
namespace livemon::transport::detail {

// At most this many *.key files are read from an allow-list directory, and at most this many
// directory entries looked at; what lies beyond is ignored (and reported in lastError()).
inline constexpr std::size_t kMaxAllowedCertificates = 1024;
inline constexpr std::size_t kMaxAllowDirectoryEntries = 4096;

// Thread-safe: every member may be called from any thread (one mutex).
//
// The public keys in a directory of certificates (*.key), read again when the directory's
// modification time changes (adding, removing or renaming a file into place) or when a file it
// read changes (edited or copied over in place: `cp new.key allowed/laptop.key` replaces a key
// without touching the directory). Files are hostile input: at most kMaxAllowedCertificates of at most
// kMaxCertificateBytes each; a file that is not a certificate is skipped and named in lastError().
class AllowList {
 public:
  // Reads the directory; throws std::invalid_argument naming it when it cannot be read.
  explicit AllowList(std::string directory);

  // Whether `key` is allowed now (reading the directory again if it changed). Counts a refusal.
  bool admit(const CurveKey& key);
  // Reads the directory again if it changed; returns generation().
  uint64_t refresh();
  // Which reading of the directory the keys are from: changes whenever they may have.
  uint64_t generation() const;
  // Whether `key` was in the directory when last read.
  bool contains(const CurveKey& key) const;
  // A refusal besides admit()'s: a live connection cut because its key left the list.
  void countRefused() noexcept { refused_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t refusedCount() const noexcept { return refused_.load(std::memory_order_relaxed); }
  std::size_t size() const;
  std::string lastError() const;

 private:
  // Returns false when the directory cannot be read. Caller holds mutex_.
  bool reload(std::string& error);
  // No keys, as when the directory cannot be read. Caller holds mutex_.
  void forget();

  const std::string directory_;
  mutable std::mutex mutex_;
  std::set<CurveKey> keys_;
  // Whether every *.key file of the last read is still the file it was (inode, size, times).
  bool filesUnchanged() const;

  struct SeenFile {
    std::string path;
    uint64_t inode = 0;
    int64_t size = 0;
    int64_t modifiedNs = 0;
    int64_t changedNs = 0;
  };

  uint64_t generation_ = 1;    // one more each time keys_ is replaced
  int64_t seenModified_ = -1;  // the directory's mtime in ns when last read
  std::vector<SeenFile> seenFiles_;  // the *.key files of that read, as they were before reading
  std::string lastError_;
  std::atomic<uint64_t> refused_{0};
};

class ZapHandler;
class PeerGuard;

// Thread-safe: refusedCount() may be called from any thread; the rest from the thread that owns
// the sockets given to it.
//
// Applies one object's CurveOptions to the sockets it opens: prepareBind() before a socket binds
// (a CURVE server whose clients a process-wide ZAP handler checks against the allow list, or the
// warning/refusal for an exposed plain endpoint), prepareConnect() before it connects (a CURVE
// client). A key removed from an allow list loses its live TCP connections to these sockets
// within about kRevocationCheck (AdmittedConnections). Keep it until the sockets it prepared are
// closed.
class SocketSecurity {
 public:
  // Who connects to a bound socket: which allow list admits them.
  enum class Clients : uint8_t {
    Readers,     // subscribers and history readers: curve.allow
    Publishers,  // publishers into a relay: the publish list if one was given, else curve.allow
  };

  // Loads the certificates `options` names. `publishAllow`: the directory of the keys admitted
  // as Clients::Publishers (a relay's curveAllowPublish), empty for curve.allow. Throws
  // std::invalid_argument "<optionsName>: ..." naming the file or the missing option.
  SocketSecurity(const CurveOptions& options, std::string_view optionsName, std::string publishAllow = {});
  ~SocketSecurity();

  SocketSecurity(const SocketSecurity&) = delete;
  SocketSecurity& operator=(const SocketSecurity&) = delete;

  // Throws TransportError for a plain endpoint beyond loopback with `require`, std::invalid_argument
  // when CURVE lacks an allow list, and TransportError when libzmq refuses an option.
  void prepareBind(void* socket, const std::string& endpoint, Clients clients = Clients::Readers);
  // Throws std::invalid_argument when CURVE lacks the server's certificate.
  void prepareConnect(void* socket);

  bool enabled() const noexcept { return secret_.has_value(); }
  // Clients refused for a key not in their allow list, and live connections cut because their key
  // left it.
  uint64_t refusedCount() const noexcept;
  // Those, and with CURVE on, the connections `guard` (the bound socket's, or null) saw fail
  // their handshake before the allow list was asked: a client without CURVE, or with the wrong
  // server key. What PublisherStats::curveRefused and its kin report.
  uint64_t refusedCount(const PeerGuard* guard) const noexcept;
  // Z85 of this side's public key; empty without CURVE.
  std::string publicKey() const;

 private:
  // Not thread-safe: one owner at a time (its SocketSecurity). One allow list and its ZAP domain.
  struct Admission {
    std::string directory;
    std::shared_ptr<AllowList> allow;  // read when a socket first binds with it
    std::string domain;
  };
  // The domain of `admission`, its list read and registered with the ZAP handler on first use.
  const std::string& domainOf(Admission& admission);

  std::string optionsName_;
  bool require_;
  std::optional<ParsedCertificate> secret_;
  std::optional<CurveKey> server_;
  Admission readers_;
  Admission publishers_;  // an empty directory: readers_ admits publishers too
  std::shared_ptr<ZapHandler> zap_;
};

// Whether `endpoint` is reachable only from this machine: tcp:// on a loopback address (127.x,
// ::1, localhost), ipc:// and inproc://.
bool isLocalEndpoint(std::string_view endpoint) noexcept;

}  // namespace livemon::transport::detail
