// Raw libzmq's rate, the reference the subscriber's decode is measured against (issue 32, goal 3):
// single 96-byte frames over tcp loopback, a PUB thread to a SUB socket, high-water marks
// unlimited. Shared by wire_decode_bench and subscriber_lend_bench.
#pragma once

#include <time.h>
#include <zmq.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace livemon::bench {

inline int setSocketInt(void* socket, int option, int value) {
  return zmq_setsockopt(socket, option, &value, sizeof(value));
}

// The calling thread's CPU time, seconds.
inline double threadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// A PUB socket of `context` bound to a free loopback port, its send queue unlimited; `endpoint`
// says where. Exits the bench when it cannot bind.
inline void* bindLoopbackPub(void* context, std::string& endpoint) {
  void* pub = zmq_socket(context, ZMQ_PUB);
  setSocketInt(pub, ZMQ_LINGER, 0);
  setSocketInt(pub, ZMQ_SNDHWM, 0);
  if (zmq_bind(pub, "tcp://127.0.0.1:*") != 0) {
    std::fprintf(stderr, "bind: %s\n", zmq_strerror(zmq_errno()));
    std::exit(1);
  }
  char bound[256];
  std::size_t length = sizeof(bound);
  zmq_getsockopt(pub, ZMQ_LAST_ENDPOINT, bound, &length);
  endpoint = bound;
  return pub;
}

// Messages per second raw libzmq moves as single 96-byte frames over tcp loopback; with
// `perReceiverCpu`, also per second of the receiving thread's CPU time.
inline double rawFrameRate(int frames, double* perReceiverCpu = nullptr) {
  using Clock = std::chrono::steady_clock;
  void* context = zmq_ctx_new();
  std::string endpoint;
  void* pub = bindLoopbackPub(context, endpoint);
  void* sub = zmq_socket(context, ZMQ_SUB);
  setSocketInt(sub, ZMQ_LINGER, 0);
  setSocketInt(sub, ZMQ_RCVHWM, 0);
  zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0);
  zmq_connect(sub, endpoint.c_str());
  // A probe frame (1 byte) until one arrives: the subscription has reached the publisher.
  zmq_pollitem_t item{sub, 0, ZMQ_POLLIN, 0};
  char buffer[256];
  while (true) {
    zmq_send(pub, "p", 1, 0);
    if (zmq_poll(&item, 1, 10) > 0) break;
  }
  const std::string frame(96, 'f');
  const auto start = Clock::now();
  const double cpuStart = threadCpuSeconds();
  std::thread sender([&] {
    for (int i = 0; i < frames; ++i) zmq_send(pub, frame.data(), frame.size(), 0);
  });
  int received = 0;
  auto last = start;
  while (received < frames && zmq_poll(&item, 1, 3000) > 0) {
    while (true) {
      const int size = zmq_recv(sub, buffer, sizeof(buffer), ZMQ_DONTWAIT);
      if (size < 0) break;
      if (size == 96) ++received;  // probes still in flight are not counted
    }
    last = Clock::now();
  }
  const double cpu = threadCpuSeconds() - cpuStart;
  sender.join();
  if (perReceiverCpu != nullptr) *perReceiverCpu = received / cpu;
  zmq_close(pub);
  zmq_close(sub);
  zmq_ctx_term(context);
  return received / std::chrono::duration<double>(last - start).count();
}

}  // namespace livemon::bench
