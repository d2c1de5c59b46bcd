#include "zmq_support.h"

#include <atomic>
#include <cerrno>
#include <mutex>

#include <zmq.h>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#endif

#include <livemon/detail/fork_hooks.h>
#include <livemon/detail/spin_lock.h>
#include <livemon/transport/error.h>

namespace livemon::transport::detail {

namespace {

// Guards the shared context below. A spin lock, so the fork handler can release it in a child
// forked while another thread held it (the child replaces the context anyway).
livemon::detail::SpinLock g_contextLock;
// Never destroyed: a child leaves the parent's in place and starts its own.
std::weak_ptr<void>* g_context = nullptr;
uint64_t g_contextGeneration = 0;

// The fork registry has counted the new generation before this runs.
void onForkChild() noexcept { g_contextLock.unlock(); }

constexpr int kMaxSockets = 8192;

void* newContext() {
  void* context = zmq_ctx_new();
  if (context == nullptr) {
    const int error = errno;
    throw TransportError("", zmq_strerror(error),
                         std::string("livemon transport: cannot create a ZeroMQ context: ") + zmq_strerror(error));
  }
  zmq_ctx_set(context, ZMQ_BLOCKY, 0);
  // libzmq's default of 1023 sockets is reached by a few hundred publishers or subscribed endpoints
  // in one process (each also has its monitor sockets): `demo --ranks 512`, a dashboard on many
  // nodes. A slot costs some bytes of the context; the descriptors themselves are the OS's limit.
  zmq_ctx_set(context, ZMQ_MAX_SOCKETS, kMaxSockets);
  return context;
}

}  // namespace

uint64_t forkGeneration() noexcept { return livemon::detail::forkGeneration(); }

void watchForks() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (!livemon::detail::registerForkHooks(livemon::detail::ForkStage::ZmqContext, {.child = onForkChild})) {
      throw TransportError("", "pthread_atfork failed", "livemon transport: cannot watch for fork()");
    }
  });
}

std::shared_ptr<void> sharedContext() {
  std::lock_guard lock(g_contextLock);
  if (g_context == nullptr || g_contextGeneration != forkGeneration()) {
    g_context = new std::weak_ptr<void>();
    g_contextGeneration = forkGeneration();
  }
  std::shared_ptr<void> context = g_context->lock();
  if (!context) {
    context = std::shared_ptr<void>(newContext(), [](void* c) { zmq_ctx_term(c); });
    *g_context = context;
  }
  return context;
}

void throwEndpointError(const char* action, const std::string& endpoint, int error) {
  std::string reason = zmq_strerror(error);
  if (error == EINVAL) reason += " (expected transport://address, e.g. tcp://127.0.0.1:5555)";
  throw TransportError(endpoint, reason, std::string("livemon transport: cannot ") + action + " " + endpoint + ": " + reason);
}

void setIntOption(void* socket, int option, int value, const char* optionName) {
  if (zmq_setsockopt(socket, option, &value, sizeof(value)) != 0) {
    const int error = errno;
    throw TransportError("", zmq_strerror(error),
                         std::string("livemon transport: cannot set ") + optionName + " to " + std::to_string(value) +
                             ": " + zmq_strerror(error));
  }
}

void setInt64Option(void* socket, int option, int64_t value, const char* optionName) {
  if (zmq_setsockopt(socket, option, &value, sizeof(value)) != 0) {
    const int error = errno;
    throw TransportError("", zmq_strerror(error),
                         std::string("livemon transport: cannot set ") + optionName + " to " + std::to_string(value) +
                             ": " + zmq_strerror(error));
  }
}

std::string lastEndpoint(void* socket, const std::string& fallback) {
  char buffer[1024];
  std::size_t size = sizeof(buffer);
  if (zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, buffer, &size) != 0 || size == 0) return fallback;
  return std::string(buffer, size - 1);
}

}  // namespace livemon::transport::detail

#if defined(__SANITIZE_THREAD__)
namespace livemon::transport::detail {
namespace {
char g_messageHandOver;  // the address the annotations synchronize on
}  // namespace

void annotateBeforeSend() noexcept { __tsan_release(&g_messageHandOver); }
void annotateAfterReceive() noexcept { __tsan_acquire(&g_messageHandOver); }
}  // namespace livemon::transport::detail

// libzmq's threads also hand buffers over through lock-free queues, and the reads and writes it
// makes through intercepted calls (recv, memcpy, free) would look like races with livemon's own
// accesses to message data. Ignore what libzmq does; livemon's own code stays fully checked.
// Weak, so a program with suppressions of its own keeps them.
extern "C" __attribute__((weak)) const char* __tsan_default_suppressions() {
  return "called_from_lib:libzmq.so\n";
}
#else
namespace livemon::transport::detail {
void annotateBeforeSend() noexcept {}
void annotateAfterReceive() noexcept {}
}  // namespace livemon::transport::detail
#endif

namespace livemon::transport::detail {

bool initSharedMessage(zmq_msg_t& message, const std::shared_ptr<const std::string>& payload) {
  auto* held = new std::shared_ptr<const std::string>(payload);
  // libzmq calls this on its I/O thread once the message is sent; what the sender wrote before
  // handing the message over happens before (annotateBeforeSend).
  const auto release = [](void*, void* hint) {
    annotateAfterReceive();
    delete static_cast<std::shared_ptr<const std::string>*>(hint);
  };
  if (zmq_msg_init_data(&message, const_cast<char*>((*held)->data()), (*held)->size(), release, held) != 0) {
    delete held;
    return false;
  }
  return true;
}

}  // namespace livemon::transport::detail
