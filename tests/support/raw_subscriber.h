#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "test_support.h"

namespace livemon::transport::test {

// Not thread-safe: one test thread drives it.
// A subscriber that speaks ZMTP 3.0 (rfc.zeromq.org/spec/23) over a plain TCP or Unix socket, so a
// test can send what a hostile peer would: frames of any size, and any number of subscriptions without
// keeping them itself (libzmq's XSUB stores every subscription it sends). It does the NULL
// handshake as a SUB socket.
class RawSubscriber {
 public:
  // `endpoint`: "tcp://127.0.0.1:PORT" or "ipc://PATH".
  explicit RawSubscriber(const std::string& endpoint) {
    sockaddr_storage address{};
    socklen_t size = 0;
    if (endpoint.starts_with("ipc://")) {
      auto& local = reinterpret_cast<sockaddr_un&>(address);
      local.sun_family = AF_UNIX;
      endpoint.copy(local.sun_path, sizeof(local.sun_path) - 1, 6);
      size = sizeof(local);
    } else {
      auto& inet = reinterpret_cast<sockaddr_in&>(address);
      inet.sin_family = AF_INET;
      inet.sin_port = htons(static_cast<uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1))));
      inet_pton(AF_INET, "127.0.0.1", &inet.sin_addr);
      size = sizeof(inet);
    }
    fd_ = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval timeout{30, 0};  // a publisher that stops reading fails the test instead of hanging it
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    if (fd_ < 0 || connect(fd_, reinterpret_cast<const sockaddr*>(&address), size) != 0) {
      open_ = false;
      return;
    }
    std::string greeting(64, '\0');
    greeting[0] = '\xff';
    greeting[9] = '\x7f';
    greeting[10] = 3;  // version 3.0
    greeting.replace(12, 4, "NULL");
    std::string ready = std::string("\x05READY") + property("Socket-Type", "SUB");
    // Messages may follow only once the publisher's READY has come.
    open_ = sendAll(greeting) && sendFrame(0x04, ready) && receive(64) && receiveFrame();
  }
  ~RawSubscriber() {
    if (fd_ >= 0) close(fd_);
  }
  RawSubscriber(const RawSubscriber&) = delete;
  RawSubscriber& operator=(const RawSubscriber&) = delete;

  // False once the publisher has closed the connection.
  bool subscribe(std::string_view prefix) {
    std::string body = "\x01";
    body.append(prefix);
    return sendFrame(0, body);
  }
  // Sends one subscription frame of `size` bytes, streamed from a small buffer; false when the
  // publisher closed the connection before taking all of it.
  bool subscribeHuge(uint64_t size) {
    if (!sendAll(frameHeader(0, size)) || !sendAll("\x01")) return false;
    const std::string chunk(64 * 1024, 'h');
    for (uint64_t left = size - 1; left > 0;) {
      const std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(left, chunk.size()));
      if (!sendAll(std::string_view(chunk).substr(0, n))) return false;
      left -= n;
    }
    return true;
  }
  // Reads (and ignores) what the publisher sends until it closes the connection or the deadline
  // passes; true if it closed it.
  bool waitUntilClosed(std::chrono::milliseconds deadline = kDeadline) {
    const auto end = std::chrono::steady_clock::now() + deadline;
    char buffer[4096];
    while (open_ && std::chrono::steady_clock::now() < end) {
      pollfd item{fd_, POLLIN, 0};
      if (::poll(&item, 1, 20) > 0 && recv(fd_, buffer, sizeof(buffer), 0) <= 0) open_ = false;
    }
    return !open_;
  }
  bool open() const { return open_; }

 private:
  static std::string property(std::string_view name, std::string_view value) {
    std::string text(1, static_cast<char>(name.size()));
    text += name;
    for (int shift = 24; shift >= 0; shift -= 8) text += static_cast<char>((value.size() >> shift) & 0xff);
    return text + std::string(value);
  }
  // flags: 0x04 for a command; a body beyond 255 bytes takes the long form (0x02, 8-byte size).
  static std::string frameHeader(uint8_t flags, uint64_t size) {
    std::string header;
    if (size <= 255) {
      header.push_back(static_cast<char>(flags));
      header.push_back(static_cast<char>(size));
      return header;
    }
    header.push_back(static_cast<char>(flags | 0x02));
    for (int shift = 56; shift >= 0; shift -= 8) header.push_back(static_cast<char>((size >> shift) & 0xff));
    return header;
  }
  bool sendFrame(uint8_t flags, std::string_view body) {
    std::string frame = frameHeader(flags, body.size());
    frame.append(body);
    return sendAll(frame);
  }
  bool receive(std::size_t size) {
    std::string data(size, '\0');
    for (std::size_t got = 0; open_ && got < size;) {
      const ssize_t n = recv(fd_, data.data() + got, size - got, 0);
      if (n <= 0) open_ = false;
      got += n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    received_ = std::move(data);
    return open_;
  }
  bool receiveFrame() {
    if (!receive(2)) return false;
    uint64_t size = static_cast<uint8_t>(received_[1]);
    if (received_[0] & 0x02) {
      if (!receive(7)) return false;
      for (const char c : received_) size = (size << 8) | static_cast<uint8_t>(c);
    }
    return receive(static_cast<std::size_t>(size));
  }
  bool sendAll(std::string_view data) {
    while (open_ && !data.empty()) {
      const ssize_t sent = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (sent <= 0) {
        open_ = false;
        break;
      }
      data.remove_prefix(static_cast<std::size_t>(sent));
    }
    return open_;
  }

  int fd_ = -1;
  bool open_ = true;
  std::string received_;
};

// Not thread-safe: one test thread drives it.
// A peer that keeps subscribing to new prefixes of 2 KiB (libzmq keeps each one, about 64 bytes of
// memory per byte received), coming back at once whenever it is cut off.
class SubscriptionFlood {
 public:
  explicit SubscriptionFlood(std::string endpoint)
      : endpoint_(std::move(endpoint)), peer_(std::make_unique<RawSubscriber>(endpoint_)) {}

  // Sends subscription `i` (distinct for each i), reconnecting as often as it takes; false once
  // the endpoint has refused it `maxReconnects` times in all (it no longer accepts connections).
  bool send(int i, int maxReconnects) {
    std::string prefix(2047, 'p');
    const std::string number = std::to_string(i);
    prefix.replace(0, number.size(), number);
    while (!peer_->subscribe(prefix)) {
      if (++reconnects_ >= maxReconnects) return false;
      peer_ = std::make_unique<RawSubscriber>(endpoint_);
    }
    return true;
  }
  int reconnects() const { return reconnects_; }

 private:
  std::string endpoint_;
  std::unique_ptr<RawSubscriber> peer_;
  int reconnects_ = 0;
};

}  // namespace livemon::transport::test
