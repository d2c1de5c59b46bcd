#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "test_support.h"

namespace livemon::transport::test {

struct RelayEndpoints {
  std::string listen;
  std::string serve;
};

// Starts `livemonctl relay` (the program at `livemonctl`) on free loopback ports, plus `extra`
// arguments, and reads where it listens and serves from its first line.
inline std::optional<RelayEndpoints> startRelay(const std::string& livemonctl, std::unique_ptr<ChildProcess>& relay,
                                                std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{livemonctl, "relay", "--listen", "tcp://127.0.0.1:*", "--serve", "tcp://127.0.0.1:*"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  relay = std::make_unique<ChildProcess>(argv);
  // "... publishers connect to LISTEN, subscribers to SERVE\n" (plain string search: GCC 12's
  // std::regex warns under the sanitizer builds' -Werror).
  const std::string listenAt = "publishers connect to ";
  const std::string serveAt = ", subscribers to ";
  RelayEndpoints endpoints;
  const auto parse = [&](const std::string& out) {
    const std::size_t listen = out.find(listenAt);
    if (listen == std::string::npos) return false;
    const std::size_t serve = out.find(serveAt, listen);
    if (serve == std::string::npos) return false;
    const std::size_t end = out.find('\n', serve);
    if (end == std::string::npos) return false;
    endpoints.listen = out.substr(listen + listenAt.size(), serve - listen - listenAt.size());
    endpoints.serve = out.substr(serve + serveAt.size(), end - serve - serveAt.size());
    return true;
  };
  if (!relay->readStdoutUntil(parse)) return std::nullopt;
  return endpoints;
}

}  // namespace livemon::transport::test
