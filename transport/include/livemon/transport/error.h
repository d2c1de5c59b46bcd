#pragma once

#include <stdexcept>
#include <string>

namespace livemon::transport {

// Thread-safety: a plain value type.
// A socket could not be set up: an endpoint that cannot be bound or connected, or a ZeroMQ
// failure. what() names the endpoint and the reason, e.g.
// "cannot bind tcp://127.0.0.1:5555: Address already in use".
class TransportError : public std::runtime_error {
 public:
  TransportError(std::string endpoint, std::string reason, const std::string& message)
      : std::runtime_error(message), endpoint_(std::move(endpoint)), reason_(std::move(reason)) {}

  const std::string& endpoint() const noexcept { return endpoint_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string endpoint_;
  std::string reason_;
};

}  // namespace livemon::transport
