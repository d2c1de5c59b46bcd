#pragma once

// The hostile side of relay_abuse_test (issue 29): peers that try, all at once, what the items of
// the issue describe, each counting what it did. Loopback only.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <livemon/transport/wire_format.h>

namespace livemon::transport::test {

// A "Field:   123 kB" line of /proc/PID/status, in KiB; -1 when there is none (the process ended).
inline int64_t processStatusKb(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(field.size()));
  }
  return -1;
}

// Thread-safe: peakKb() and peakFiles() may be called from any thread; the sampling runs on a
// thread of its own.
//
// What another process holds at its peak: resident memory (VmRSS sampled every 20 ms, and the
// kernel's own peak VmHWM at each sample, so a peak between two samples counts too) and open
// files (the entries of /proc/PID/fd, every 100 ms).
class ProcessWatch {
 public:
  explicit ProcessWatch(pid_t pid) : pid_(pid), thread_([this] { sample(); }) {}
  ~ProcessWatch() { stop(); }
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  void stop() {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  int64_t peakKb() const { return peakKb_.load(); }
  int64_t peakFiles() const { return peakFiles_.load(); }

 private:
  void sample() {
    const std::filesystem::path fds = "/proc/" + std::to_string(pid_) + "/fd";
    for (int round = 0; running_; ++round) {
      const int64_t kb = std::max(processStatusKb(pid_, "VmRSS:"), processStatusKb(pid_, "VmHWM:"));
      if (kb > peakKb_.load()) peakKb_ = kb;
      if (round % 5 == 0) {
        std::error_code error;
        int64_t files = 0;
        for (auto it = std::filesystem::directory_iterator(fds, error); !error && it != std::filesystem::directory_iterator();
             it.increment(error)) {
          ++files;
        }
        if (files > peakFiles_.load()) peakFiles_ = files;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the sampling period
    }
  }

  pid_t pid_;
  std::atomic<bool> running_{true};
  std::atomic<int64_t> peakKb_{0};
  std::atomic<int64_t> peakFiles_{0};
  std::thread thread_;
};

// Not thread-safe: one owner at a time.
//
// A ZeroMQ socket that closes without lingering.
class ZmqSocket {
 public:
  ZmqSocket(void* context, int type) : socket_(zmq_socket(context, type)) { set(ZMQ_LINGER, 0); }
  ~ZmqSocket() { zmq_close(socket_); }
  ZmqSocket(const ZmqSocket&) = delete;
  ZmqSocket& operator=(const ZmqSocket&) = delete;

  void set(int option, int value) { zmq_setsockopt(socket_, option, &value, sizeof value); }
  void set(int option, std::string_view value) { zmq_setsockopt(socket_, option, value.data(), value.size()); }
  bool connect(const std::string& endpoint) { return zmq_connect(socket_, endpoint.c_str()) == 0; }
  // Sends the frames as one message without waiting; false when the socket did not take it.
  bool send(const std::vector<std::string_view>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const int flags = ZMQ_DONTWAIT | (i + 1 < frames.size() ? ZMQ_SNDMORE : 0);
      if (zmq_send(socket_, frames[i].data(), frames[i].size(), flags) < 0) return false;
    }
    return true;
  }
  // One whole message, waiting up to `timeout`; nothing when none came.
  std::optional<std::vector<std::string>> receive(std::chrono::milliseconds timeout) {
    zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, static_cast<long>(timeout.count())) <= 0) return std::nullopt;
    std::vector<std::string> frames;
    int more = 1;
    while (more) {
      zmq_msg_t message;
      zmq_msg_init(&message);
      if (zmq_msg_recv(&message, socket_, 0) < 0) {
        zmq_msg_close(&message);
        return std::nullopt;
      }
      frames.emplace_back(static_cast<const char*>(zmq_msg_data(&message)), zmq_msg_size(&message));
      more = zmq_msg_more(&message);
      zmq_msg_close(&message);
    }
    return frames;
  }

 private:
  void* socket_;
};

// Not thread-safe: one owner at a time. A ZeroMQ context, terminated after its sockets closed.
class ZmqContext {
 public:
  ZmqContext() : context_(zmq_ctx_new()) {}
  ~ZmqContext() { zmq_ctx_term(context_); }
  ZmqContext(const ZmqContext&) = delete;
  ZmqContext& operator=(const ZmqContext&) = delete;
  void* get() const { return context_; }

 private:
  void* context_;
};

// A TCP connection to "tcp://127.0.0.1:PORT"; -1 when it failed.
inline int connectTcp(const std::string& endpoint) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1))));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// Not thread-safe: one owner at a time.
//
// TCP connections to one endpoint that never send a byte (issue 29, item 3).
class IdleConnections {
 public:
  IdleConnections(const std::string& endpoint, int count) {
    for (int i = 0; i < count; ++i) {
      const int fd = connectTcp(endpoint);
      if (fd >= 0) fds_.push_back(fd);
    }
  }
  ~IdleConnections() { closeAll(); }
  IdleConnections(const IdleConnections&) = delete;
  IdleConnections& operator=(const IdleConnections&) = delete;

  std::size_t opened() const { return fds_.size(); }
  // How many the other side has closed (end of stream or reset), looked at without waiting.
  std::size_t closedByPeer() const {
    std::size_t closed = 0;
    for (const int fd : fds_) {
      pollfd item{fd, POLLIN, 0};
      char byte;
      if (::poll(&item, 1, 0) > 0 && recv(fd, &byte, 1, MSG_DONTWAIT) <= 0) ++closed;
    }
    return closed;
  }
  void closeAll() {
    for (const int fd : fds_) close(fd);
    fds_.clear();
  }

 private:
  std::vector<int> fds_;
};

// Sends bytes that are no protocol at all to `endpoint` on a connection of their own.
inline void sendJunk(const std::string& endpoint, std::size_t bytes) {
  const int fd = connectTcp(endpoint);
  if (fd < 0) return;
  std::string junk(bytes, '\0');
  for (std::size_t i = 0; i < bytes; ++i) junk[i] = static_cast<char>((i * 7919 + 13) & 0xff);
  [[maybe_unused]] const ssize_t sent = send(fd, junk.data(), junk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  close(fd);
}

// Thread-safety: a plain value type. How a history request went.
struct HistoryReply {
  bool ended = false;  // the history-end message came
  HistoryEnd end;
  uint64_t messages = 0;  // answer messages before the end
};

// Asks `server` for its history on `dealer` and reads the answer to its end, handing each answer
// message (topic, payload) to `onMessage`; gives up when nothing came for `quiet`, and stops
// reading after `most` messages (a long run's answer is its whole recording).
inline HistoryReply askHistory(ZmqSocket& dealer, const std::vector<std::string>& filters,
                               std::chrono::milliseconds quiet,
                               const std::function<void(const std::string&, const std::string&)>& onMessage = {},
                               uint64_t most = UINT64_MAX) {
  HistoryReply reply;
  HistoryRequest request;
  request.filters = filters;
  const std::string payload = encodeHistoryRequest(request);
  if (!dealer.send({kHistoryTopic, payload})) return reply;
  while (const auto frames = dealer.receive(quiet)) {
    if (frames->size() != 2) continue;
    if ((*frames)[0] == kHistoryTopic) {
      reply.ended = decodeHistoryEnd((*frames)[1], reply.end) == DecodeStatus::Ok;
      return reply;
    }
    ++reply.messages;
    if (onMessage) onMessage((*frames)[0], (*frames)[1]);
    if (reply.messages >= most) return reply;
  }
  return reply;
}

// Thread-safety: plain counters; the hostile threads add to them, any thread reads them.
struct HostileCounts {
  std::atomic<uint64_t> servedForged{0};        // item 1: events a watch-only peer sent into --serve
  std::atomic<uint64_t> bigFrames{0};           // item 5: frames beyond the payload limit sent to --listen
  std::atomic<bool> bigFramesHeldBack{false};   // the sender stopped: the relay's memory passed the safety limit
  std::atomic<uint64_t> listenGarbage{0};       // malformed messages and junk connections at --listen
  std::atomic<uint64_t> historyGarbage{0};      // the same at the history endpoint
  std::atomic<uint64_t> nearMissRequests{0};    // item 4: requests whose filters match nothing
  std::atomic<uint64_t> nearMissAnswered{0};    // ... that got their end, not "busy"
  std::atomic<uint64_t> nearMissBusy{0};
  std::atomic<uint64_t> nearMissMatched{0};     // answer messages they got (none should match)
  std::atomic<uint64_t> stalledHistoryReaders{0};  // item 4: take an answer message every 10 s
};

// Thread-safety: a plain value type. Where the hostile peers go, and when some of them start.
struct HostileTargets {
  std::string listen;
  std::string serve;
  std::string history;
  // Peers left out ("serve", "big", "garbage", "history"): to find which one breaks something.
  std::vector<std::string> skip;
  // The relay's resident memory now (KiB), and where the big-frame sender stops to spare the
  // machine.
  std::function<int64_t()> relayMemoryKb;
  int64_t memorySafetyKb = 0;
  // The stalled history readers ask once the relay has forwarded this many payload bytes, so that
  // an answer outgrows the socket buffers.
  const std::atomic<uint64_t>* bytesPublished = nullptr;
  uint64_t stallAfterBytes = 0;
};

// Thread-safe: the constructor starts the peers, stop() (or the destructor) ends them; counts()
// may be read from any thread.
//
// The hostile peers that run all through the test, each on a thread of its own, each counting
// what it did: a watch-only peer publishing into --serve (item 1), frames beyond the payload limit
// at --listen beside a subscriber that never reads (item 5), history requests with near-miss
// filters and readers that stop after one answer message (item 4), and garbage at --listen and at
// the history endpoint.
class HostilePeers {
 public:
  explicit HostilePeers(HostileTargets targets) : targets_(std::move(targets)), stalled_(context_.get(), ZMQ_SUB) {
    // A subscriber to everything that never reads: ZeroMQ takes one message off its connection,
    // the kernel a few KiB; the rest waits in the relay.
    stalled_.set(ZMQ_RCVHWM, 1);
    stalled_.set(ZMQ_RCVBUF, 4096);
    stalled_.set(ZMQ_SUBSCRIBE, std::string_view());
    stalled_.connect(targets_.serve);
    const auto wanted = [this](std::string_view name) {
      return std::find(targets_.skip.begin(), targets_.skip.end(), name) == targets_.skip.end();
    };
    if (wanted("serve")) threads_.emplace_back([this] { injectAtServe(); });
    if (wanted("big")) threads_.emplace_back([this] { sendBigFrames(); });
    if (wanted("garbage")) threads_.emplace_back([this] { sendGarbage(); });
    if (wanted("history")) threads_.emplace_back([this] { abuseHistory(); });
  }
  ~HostilePeers() { stop(); }
  HostilePeers(const HostilePeers&) = delete;
  HostilePeers& operator=(const HostilePeers&) = delete;

  void stop() {
    running_ = false;
    for (std::thread& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }
  const HostileCounts& counts() const { return counts_; }

 private:
  // Item 1: an XSUB at --serve, where only readers belong, sends valid event messages of a source
  // no publisher has.
  void injectAtServe() {
    ZmqSocket injector(context_.get(), ZMQ_XSUB);
    injector.connect(targets_.serve);
    const SourceInfo invented{"forged-serve", "nowhere", 4242, std::nullopt, 99,
                              std::chrono::system_clock::now(), std::nullopt, std::nullopt};
    for (uint64_t sequence = 0; running_; std::this_thread::sleep_for(std::chrono::milliseconds(5))) {
      const Event event{"train.step", std::chrono::system_clock::now(),
                        {{"i", static_cast<int64_t>(sequence)}, {"kind", std::string("forged-serve")}}};
      const std::string payload = encodeEventsPayload(invented, sequence, "train.step", {event});
      if (injector.send({"train.step", payload})) counts_.servedForged = ++sequence;
    }
  }

  // Item 5: frames of 4.5 MiB (beyond the 4 MiB payload limit, within the 5 MiB a connection
  // allows), 20 a second, which the stalled subscriber at --serve takes none of.
  void sendBigFrames() {
    ZmqSocket publisher(context_.get(), ZMQ_PUB);
    publisher.connect(targets_.listen);
    const std::string frame(4 * 1024 * 1024 + 512 * 1024, 'B');
    while (running_) {
      if (targets_.relayMemoryKb() > targets_.memorySafetyKb) {
        counts_.bigFramesHeldBack = true;
        break;
      }
      if (publisher.send({"hostile.big", frame})) ++counts_.bigFrames;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // Malformed payloads under the readers' topic and junk connections at --listen; malformed
  // requests and junk connections at the history endpoint.
  void sendGarbage() {
    ZmqSocket publisher(context_.get(), ZMQ_PUB);
    publisher.connect(targets_.listen);
    ZmqSocket dealer(context_.get(), ZMQ_DEALER);
    dealer.connect(targets_.history);
    const std::string big(20 * 1024, 'x');
    const std::string request = encodeHistoryRequest({});
    const std::vector<std::vector<std::string_view>> badRequests{
        {"junk"}, {kHistoryTopic, "\xc1\xc1\xc1"}, {kHistoryTopic}, {kHistoryTopic, request, request},
        {kHistoryTopic, big}, {"not.history", request}};
    for (uint64_t round = 0; running_; ++round, std::this_thread::sleep_for(std::chrono::milliseconds(50))) {
      if (publisher.send({"train.step", "\xc1 not MessagePack"})) ++counts_.listenGarbage;
      if (dealer.send(badRequests[round % badRequests.size()])) ++counts_.historyGarbage;
      while (dealer.receive(std::chrono::milliseconds(0))) {
      }
      if (round % 10 == 0) {
        sendJunk(targets_.listen, 4096);
        sendJunk(targets_.history, 4096);
        counts_.listenGarbage += 1;
        counts_.historyGarbage += 1;
      }
    }
  }

  // Item 4: requests whose 64 filters each miss by their last bytes, one after another; and, once
  // the history outgrows the socket buffers, eight readers that take one answer message and then
  // one more every 10 s, within the rate a relay asks of a reader over 30 s (a relay answers eight
  // at once; one stalled for 2 s is ended when another reader asks).
  void abuseHistory() {
    std::vector<std::string> nearMiss;
    for (int i = 0; i < 64; ++i) nearMiss.push_back("train.step#" + std::string(180, 'n') + std::to_string(i));
    ZmqSocket asker(context_.get(), ZMQ_DEALER);
    asker.connect(targets_.history);
    std::vector<std::unique_ptr<ZmqSocket>> stalled;
    auto lastRead = std::chrono::steady_clock::now();
    while (running_) {
      if (std::chrono::steady_clock::now() - lastRead >= std::chrono::seconds(10)) {
        for (auto& reader : stalled) reader->receive(std::chrono::milliseconds(0));
        lastRead = std::chrono::steady_clock::now();
      }
      if (stalled.empty() && targets_.bytesPublished->load() >= targets_.stallAfterBytes) {
        for (int i = 0; i < 8; ++i) {
          auto reader = std::make_unique<ZmqSocket>(context_.get(), ZMQ_DEALER);
          reader->set(ZMQ_RCVHWM, 1);
          reader->set(ZMQ_RCVBUF, 4096);
          reader->connect(targets_.history);
          const std::string request = encodeHistoryRequest({});
          reader->send({kHistoryTopic, request});
          const auto first = reader->receive(std::chrono::seconds(5));
          if (first && (*first)[0] != kHistoryTopic) ++counts_.stalledHistoryReaders;
          stalled.push_back(std::move(reader));
        }
        lastRead = std::chrono::steady_clock::now();
      }
      ++counts_.nearMissRequests;
      const HistoryReply reply = askHistory(asker, nearMiss, std::chrono::seconds(2));
      counts_.nearMissMatched += reply.messages;
      if (reply.ended && reply.end.error.empty()) ++counts_.nearMissAnswered;
      if (reply.ended && !reply.end.error.empty()) ++counts_.nearMissBusy;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // a hundred requests a second
    }
  }

  HostileTargets targets_;
  HostileCounts counts_;
  ZmqContext context_;  // before the sockets, which close first
  ZmqSocket stalled_;
  std::atomic<bool> running_{true};
  std::vector<std::thread> threads_;
};

}  // namespace livemon::transport::test
