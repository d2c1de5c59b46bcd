#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <zmq.h>

// Helpers around the libzmq C API. Only transport/src includes this header.
namespace livemon::transport::detail {

// Increments in every child process forked after the first call of watchForks()
// (livemon::detail::forkGeneration()). An object that saw another generation when it was created
// was inherited through fork(): it must not touch its ZeroMQ context or sockets (libzmq returns
// EINTR there and termination never finishes). watchForks() throws TransportError when the fork
// handler cannot be installed.
uint64_t forkGeneration() noexcept;
void watchForks();

// The process's ZeroMQ context, shared by every Publisher and Subscriber alive in it (so inproc://
// endpoints connect them), created on first need and terminated when the last one lets go. It is
// not blocky (ZMQ_BLOCKY = 0). In a forked child a new one is created; the inherited one is never
// touched. Throws TransportError if ZeroMQ cannot create a context.
std::shared_ptr<void> sharedContext();

// Throws TransportError: "<action> <endpoint>: <zmq_strerror(errno)>" (with a hint for EINVAL).
[[noreturn]] void throwEndpointError(const char* action, const std::string& endpoint, int error);

// Set an int (int64_t) socket option; throw TransportError naming `option` on failure.
void setIntOption(void* socket, int option, int value, const char* optionName);
void setInt64Option(void* socket, int option, int64_t value, const char* optionName);

// ZMQ_LAST_ENDPOINT of `socket`, or `fallback` if it cannot be read.
std::string lastEndpoint(void* socket, const std::string& fallback);

// ThreadSanitizer cannot see libzmq's own synchronization (it is not instrumented), so a message
// written by one thread and read by another through an inproc:// pipe looks like a race. These
// tell it what ZeroMQ guarantees: sending a message happens before receiving it. No-ops in other
// builds.
void annotateBeforeSend() noexcept;
void annotateAfterReceive() noexcept;

// Makes `message` refer to `payload`'s bytes without a copy, holding a share of it until libzmq is
// done with the message (it lets go on one of its own threads). False, with `message` untouched,
// when ZeroMQ refuses.
bool initSharedMessage(zmq_msg_t& message, const std::shared_ptr<const std::string>& payload);

}  // namespace livemon::transport::detail
