#include "curve_security.h"

#include <dirent.h>
#include <sys/stat.h>

#include <array>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <thread>

#include <zmq.h>

#include <livemon/transport/error.h>

#include "curve_revocation.h"
#include "peer_guard.h"
#include "zmq_support.h"

namespace livemon::transport::detail {

namespace {

constexpr std::string_view kZapEndpoint = "inproc://zeromq.zap.01";
// How long the ZAP thread waits before it looks at its stop flag again.
constexpr int kZapPollMs = 50;
// ZAP requests (RFC 27) come from libzmq itself: 6 frames plus the mechanism's credentials.
constexpr int kMaxZapFrames = 8;
constexpr std::size_t kMaxZapFrameBytes = 512;
// How often the ZAP thread looks whether an allow list lost a key that has live connections
// (AdmittedConnections::enforce): a removed key is cut off within this and the look itself.
constexpr auto kRevocationCheck = std::chrono::milliseconds(200);

int64_t nanoseconds(const struct timespec& time) {
  return static_cast<int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

int64_t modifiedNs(const struct stat& info) { return nanoseconds(info.st_mtim); }

}  // namespace

// Thread-safe: acquire(), add() and remove() may be called from any thread.
//
// The process's ZAP handler (ZeroMQ RFC 27): one REP socket at inproc://zeromq.zap.01 in the
// shared context, answered on a thread of its own, which libzmq asks about every CURVE client
// before it admits it. Each secured socket has a ZAP domain of its own, mapped to its allow list;
// an unknown domain is refused. It lives while any SocketSecurity holds it.
class ZapHandler {
 public:
  static std::shared_ptr<ZapHandler> acquire(std::shared_ptr<void> context) {
    static std::mutex mutex;
    static std::weak_ptr<ZapHandler>* current = nullptr;  // never destroyed: a child forks its own
    static uint64_t generation = 0;
    std::lock_guard lock(mutex);
    if (current == nullptr || generation != forkGeneration()) {
      current = new std::weak_ptr<ZapHandler>();
      generation = forkGeneration();
    }
    std::shared_ptr<ZapHandler> handler = current->lock();
    if (!handler) {
      handler = std::shared_ptr<ZapHandler>(new ZapHandler(std::move(context)));
      *current = handler;
    }
    return handler;
  }

  ~ZapHandler() {
    if (forkGeneration() != generation_) {
      // Inherited through fork(): the thread is the parent's; touch nothing.
      thread_.release();
      return;
    }
    stop_.store(true, std::memory_order_relaxed);
    thread_->join();
    zmq_close(socket_);
  }

  std::string add(std::shared_ptr<AllowList> allow) {
    std::lock_guard lock(mutex_);
    std::string domain = "livemon-" + std::to_string(++domains_);
    allowLists_.emplace(domain, std::move(allow));
    return domain;
  }

  void remove(const std::string& domain) {
    std::lock_guard lock(mutex_);
    allowLists_.erase(domain);
  }

 private:
  explicit ZapHandler(std::shared_ptr<void> context) : context_(std::move(context)), generation_(forkGeneration()) {
    socket_ = zmq_socket(context_.get(), ZMQ_REP);
    if (socket_ == nullptr) throwEndpointError("open the ZAP handler at", std::string(kZapEndpoint), errno);
    setIntOption(socket_, ZMQ_LINGER, 0, "ZMQ_LINGER");
    if (zmq_bind(socket_, std::string(kZapEndpoint).c_str()) != 0) {
      const int error = errno;
      zmq_close(socket_);
      throwEndpointError("bind the ZAP handler at", std::string(kZapEndpoint), error);
    }
    thread_ = std::make_unique<std::thread>([this] { run(); });
  }

  void run() {
    auto nextCheck = std::chrono::steady_clock::now() + kRevocationCheck;
    while (!stop_.load(std::memory_order_relaxed)) {
      if (const auto now = std::chrono::steady_clock::now(); now >= nextCheck) {
        admitted_.enforce();
        nextCheck = now + kRevocationCheck;
      }
      zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, kZapPollMs) <= 0 || !(item.revents & ZMQ_POLLIN)) continue;
      answer();
    }
  }

  // Reads one request (its frames bounded) and always replies, as REP must.
  void answer() {
    std::array<std::string, kMaxZapFrames> frames;
    int count = 0;
    int more = 1;
    while (more) {
      char buffer[kMaxZapFrameBytes];
      const int size = zmq_recv(socket_, buffer, sizeof(buffer), 0);
      if (size < 0) return;
      if (count < kMaxZapFrames) frames[count] = std::string(buffer, std::min<std::size_t>(size, sizeof(buffer)));
      ++count;
      std::size_t moreSize = sizeof(more);
      if (zmq_getsockopt(socket_, ZMQ_RCVMORE, &more, &moreSize) != 0) more = 0;
    }
    // version, request id, domain, address, identity, mechanism, credentials
    bool allowed = false;
    std::shared_ptr<AllowList> allow;
    CurveKey key{};
    AdmittedConnections::Waiting waiting;
    if (count >= 7 && frames[0] == "1.0" && frames[5] == "CURVE" && frames[6].size() == CurveKey{}.size()) {
      {
        std::lock_guard lock(mutex_);
        if (auto found = allowLists_.find(frames[2]); found != allowLists_.end()) allow = found->second;
      }
      std::memcpy(key.data(), frames[6].data(), key.size());
      allowed = allow && allow->admit(key);
      // The connections this answer may be for, looked at before it is sent.
      if (allowed) waiting = admitted_.waitingFrom(frames[3]);
    }
    const std::string requestId = count >= 2 ? frames[1] : std::string();
    const std::array<std::string_view, 6> reply{"1.0", requestId, allowed ? "200" : "400",
                                                allowed ? "OK" : "key not in the allow list", "", ""};
    for (std::size_t i = 0; i < reply.size(); ++i) {
      zmq_send(socket_, reply[i].data(), reply[i].size(), i + 1 < reply.size() ? ZMQ_SNDMORE : 0);
    }
    if (allowed) {
      admitted_.admitted(std::move(waiting), key, allow);
    } else {
      admitted_.refused();
    }
  }

  std::shared_ptr<void> context_;
  const uint64_t generation_;
  void* socket_ = nullptr;
  std::atomic<bool> stop_{false};
  std::unique_ptr<std::thread> thread_;
  std::mutex mutex_;
  uint64_t domains_ = 0;  // under mutex_
  std::map<std::string, std::shared_ptr<AllowList>> allowLists_;  // under mutex_
  AdmittedConnections admitted_;  // the thread's
};

AllowList::AllowList(std::string directory) : directory_(std::move(directory)) {
  std::lock_guard lock(mutex_);
  std::string error;
  if (!reload(error)) throw std::invalid_argument("CURVE allow list " + directory_ + ": " + error);
}

bool AllowList::reload(std::string& error) {
  struct stat info {};
  if (::stat(directory_.c_str(), &info) != 0) {
    error = std::strerror(errno);
    forget();
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = "not a directory";
    forget();
    return false;
  }
  if (modifiedNs(info) == seenModified_ && filesUnchanged()) return true;
  DIR* dir = ::opendir(directory_.c_str());
  if (dir == nullptr) {
    error = std::strerror(errno);
    forget();
    return false;
  }
  std::set<CurveKey> keys;
  std::vector<SeenFile> seen;
  std::string skipped;
  std::size_t entries = 0;
  std::size_t files = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (++entries > kMaxAllowDirectoryEntries || files >= kMaxAllowedCertificates) {
      skipped = "more than " + std::to_string(kMaxAllowedCertificates) + " certificates or " +
                std::to_string(kMaxAllowDirectoryEntries) + " entries; the rest were ignored";
      break;
    }
    const std::string_view name = entry->d_name;
    if (name.size() <= 4 || !name.ends_with(".key") || name.front() == '.') continue;
    ++files;
    const std::string path = directory_ + "/" + std::string(name);
    // Looked at before it is read: a change after this is seen at the next admit().
    struct stat file {};
    if (::stat(path.c_str(), &file) == 0) {
      seen.push_back({path, static_cast<uint64_t>(file.st_ino), static_cast<int64_t>(file.st_size),
                      nanoseconds(file.st_mtim), nanoseconds(file.st_ctim)});
    }
    try {
      keys.insert(readCertificateFile(path, false).publicKey);
    } catch (const std::invalid_argument& bad) {
      skipped = bad.what();
    }
  }
  ::closedir(dir);
  keys_ = std::move(keys);
  ++generation_;
  seenFiles_ = std::move(seen);
  seenModified_ = modifiedNs(info);
  lastError_ = skipped;
  return true;
}

bool AllowList::filesUnchanged() const {
  for (const SeenFile& seen : seenFiles_) {
    struct stat file {};
    if (::stat(seen.path.c_str(), &file) != 0 || static_cast<uint64_t>(file.st_ino) != seen.inode ||
        static_cast<int64_t>(file.st_size) != seen.size || nanoseconds(file.st_mtim) != seen.modifiedNs ||
        nanoseconds(file.st_ctim) != seen.changedNs) {
      return false;
    }
  }
  return true;
}

bool AllowList::admit(const CurveKey& key) {
  std::lock_guard lock(mutex_);
  std::string error;
  if (!reload(error)) lastError_ = directory_ + ": " + error;
  const bool allowed = keys_.contains(key);
  if (!allowed) refused_.fetch_add(1, std::memory_order_relaxed);
  return allowed;
}

uint64_t AllowList::refresh() {
  std::lock_guard lock(mutex_);
  std::string error;
  if (!reload(error)) lastError_ = directory_ + ": " + error;
  return generation_;
}

uint64_t AllowList::generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

bool AllowList::contains(const CurveKey& key) const {
  std::lock_guard lock(mutex_);
  return keys_.contains(key);
}

void AllowList::forget() {
  if (!keys_.empty()) ++generation_;
  keys_.clear();
  seenModified_ = -1;
}

std::size_t AllowList::size() const {
  std::lock_guard lock(mutex_);
  return keys_.size();
}

std::string AllowList::lastError() const {
  std::lock_guard lock(mutex_);
  return lastError_;
}

bool isLocalEndpoint(std::string_view endpoint) noexcept {
  if (endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://")) return true;
  if (!endpoint.starts_with("tcp://")) return false;
  std::string_view host = endpoint.substr(6);
  if (const std::size_t semicolon = host.find(';'); semicolon != std::string_view::npos) {
    host = host.substr(semicolon + 1);  // "tcp://source;destination": the destination counts
  }
  if (host.starts_with("[")) {
    const std::size_t close = host.find(']');
    host = close == std::string_view::npos ? std::string_view() : host.substr(1, close - 1);
  } else {
    host = host.substr(0, host.rfind(':'));
  }
  return host.starts_with("127.") || host == "::1" || host == "localhost";
}

SocketSecurity::SocketSecurity(const CurveOptions& options, std::string_view optionsName, std::string publishAllow)
    : optionsName_(optionsName), require_(options.require) {
  const auto wrap = [&](auto load) {
    try {
      return load();
    } catch (const std::invalid_argument& error) {
      throw std::invalid_argument(optionsName_ + ": " + error.what());
    }
  };
  if (options.certificate.empty()) {
    if (!publishAllow.empty()) {
      throw std::invalid_argument(optionsName_ + ": curveAllowPublish needs curve.certificate (this side's "
                                                 "NAME.key_secret)");
    }
    if (!options.allow.empty() || !options.serverCertificate.empty()) {
      throw std::invalid_argument(optionsName_ +
                                  ": curve.allow and curve.serverCertificate need curve.certificate (this side's "
                                  "NAME.key_secret)");
    }
    return;
  }
  secret_ = wrap([&] { return readCertificateFile(options.certificate, true); });
  if (!options.serverCertificate.empty()) {
    server_ = wrap([&] { return readCertificateFile(options.serverCertificate, false).publicKey; });
  }
  readers_.directory = options.allow;
  publishers_.directory = std::move(publishAllow);
}

SocketSecurity::~SocketSecurity() {
  if (!zap_) return;
  for (const Admission* admission : {&readers_, &publishers_}) {
    if (admission->allow) zap_->remove(admission->domain);
  }
}

const std::string& SocketSecurity::domainOf(Admission& admission) {
  if (!admission.allow) {
    admission.allow = std::make_shared<AllowList>(admission.directory);
    if (!zap_) zap_ = ZapHandler::acquire(sharedContext());
    admission.domain = zap_->add(admission.allow);
  }
  return admission.domain;
}

void SocketSecurity::prepareBind(void* socket, const std::string& endpoint, Clients clients) {
  if (!secret_) {
    if (isLocalEndpoint(endpoint)) return;
    if (require_) {
      throw TransportError(endpoint, "CURVE is required",
                           "livemon transport: refusing to bind " + endpoint +
                               " without CURVE (LIVEMON_REQUIRE_CURVE / --require-curve): give a certificate "
                               "(--curve-secret) and an allow list (--curve-allow)");
    }
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      std::fprintf(stderr,
                   "livemon: warning: %s is reachable from other machines without CURVE: anyone who can reach "
                   "it can read every event and send forged ones. See `livemonctl keygen` and --curve-secret/"
                   "--curve-allow.\n",
                   endpoint.c_str());
    }
    return;
  }
  if (readers_.directory.empty()) {
    throw std::invalid_argument(optionsName_ + ": binding " + endpoint +
                                " with CURVE needs curve.allow (--curve-allow DIR: the clients' public certificates)");
  }
  const bool ownList = clients == Clients::Publishers && !publishers_.directory.empty();
  const std::string& domain = domainOf(ownList ? publishers_ : readers_);
  const int one = 1;
  if (zmq_setsockopt(socket, ZMQ_CURVE_SERVER, &one, sizeof(one)) != 0 ||
      zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, secret_->secretKey->data(), secret_->secretKey->size()) != 0 ||
      zmq_setsockopt(socket, ZMQ_ZAP_DOMAIN, domain.data(), domain.size()) != 0) {
    throwEndpointError("set up CURVE to bind", endpoint, errno);
  }
}

void SocketSecurity::prepareConnect(void* socket) {
  if (!secret_) return;
  if (!server_) {
    throw std::invalid_argument(optionsName_ +
                                ": connecting with CURVE needs curve.serverCertificate (--curve-server FILE, "
                                "LIVEMON_CURVE_SERVER: the server's NAME.key)");
  }
  // Setting the server key makes the socket a client for the connections made from now on; the
  // endpoints it bound before keep the server role they were bound with.
  if (zmq_setsockopt(socket, ZMQ_CURVE_PUBLICKEY, secret_->publicKey.data(), secret_->publicKey.size()) != 0 ||
      zmq_setsockopt(socket, ZMQ_CURVE_SECRETKEY, secret_->secretKey->data(), secret_->secretKey->size()) != 0 ||
      zmq_setsockopt(socket, ZMQ_CURVE_SERVERKEY, server_->data(), server_->size()) != 0) {
    throwEndpointError("set up CURVE to connect", "", errno);
  }
}

uint64_t SocketSecurity::refusedCount() const noexcept {
  uint64_t refused = 0;
  for (const Admission* admission : {&readers_, &publishers_}) {
    if (admission->allow) refused += admission->allow->refusedCount();
  }
  return refused;
}

uint64_t SocketSecurity::refusedCount(const PeerGuard* guard) const noexcept {
  return refusedCount() + (enabled() && guard != nullptr ? guard->handshakeFailureCount() : 0);
}

std::string SocketSecurity::publicKey() const { return secret_ ? encodeZ85Key(secret_->publicKey) : std::string(); }

}  // namespace livemon::transport::detail
