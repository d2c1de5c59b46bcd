#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>

// A plain HTTP/1.0 GET over a socket, for tests that scrape /metrics or ask Prometheus: no client
// library, so the test sees the bytes a scraper gets.
namespace livemon::transport::test {

// Thread-safety: a plain value type.
struct HttpResponse {
  int status = 0;
  std::string headers;
  std::string body;
};

// GET http://127.0.0.1:port<target>; nothing when the connection fails. A stalled server fails
// the read after 10 s instead of hanging the test.
inline std::optional<HttpResponse> httpGet(uint16_t port, const std::string& target) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return std::nullopt;
  }
  const std::string request = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      close(fd);
      return std::nullopt;
    }
    sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buffer[16384];
  while (true) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0) {
      close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    raw.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  const std::size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos || raw.size() < 12) return std::nullopt;
  HttpResponse response;
  response.status = std::stoi(raw.substr(9, 3));
  response.headers = raw.substr(0, end);
  response.body = raw.substr(end + 4);
  return response;
}

// A TCP port on 127.0.0.1 that was free a moment ago, for servers that take a port but cannot
// report the one they picked (Prometheus itself, the publisher's metricsPort).
inline uint16_t freeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd >= 0) close(fd);
    return 0;
  }
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace livemon::transport::test
