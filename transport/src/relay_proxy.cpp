#include "relay_proxy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>

#include <zmq.h>

#include "zmq_support.h"

namespace livemon::transport::detail {

namespace {

// Frames up to this size are forwarded as libzmq received them: their count is bounded by the
// queues' message limits, their bytes by that count times this.
constexpr std::size_t kUntrackedFrameBytes = 64;
// Messages taken from one side before the loop looks at the other.
constexpr int kBurst = 256;

// Receives the rest of a multipart message and throws it away.
void discardRest(void* socket, zmq_msg_t& frame) {
  while (zmq_msg_more(&frame) != 0 && zmq_msg_recv(&frame, socket, 0) >= 0) {
  }
}

}  // namespace

bool isSubscription(std::string_view frame, bool more) noexcept {
  return !more && !frame.empty() && (frame.front() == 0 || frame.front() == 1);
}

CaptureVerdict judgeCapture(std::span<const std::string_view> frames, const WireLimits& limits, bool decode,
                            WireMessage& scratch) {
  if (!isPublication(frames.size())) return CaptureVerdict::Skip;
  const std::string_view topic = frames[0];
  const std::string_view payload = frames[1];
  if (topic.size() > limits.maxTopicBytes || payload.size() > limits.maxPayloadBytes) return CaptureVerdict::Skip;
  if (decode && decodeMessage(topic, payload, limits, scratch) != DecodeStatus::Ok) return CaptureVerdict::Skip;
  return CaptureVerdict::Keep;
}

ForwardWindow::ForwardWindow(std::size_t messages, std::size_t budget)
    : capacity_(messages > 0 ? messages - 1 : 0), budget_(budget) {}

bool ForwardWindow::admit(std::size_t size, std::size_t held) {
  const std::size_t leaving = sizes_.size() == capacity_ && capacity_ > 0 ? sizes_[next_] : 0;
  if (size > budget_) return false;
  // The run that forwarding it would make: the last capacity_ forwarded, and this one. A run over
  // the budget is only a risk while queues still hold it: when all of them together hold so
  // little that this message fits beside it, no queue can pass the budget, and the window moves
  // on (without this, a window once full of large messages refused every later one for good).
  if (sum_ + size > budget_ && held + size > budget_) return false;
  const auto stored = static_cast<uint32_t>(std::min<std::size_t>(size, std::numeric_limits<uint32_t>::max()));
  if (capacity_ == 0) return true;
  if (sizes_.size() < capacity_) {
    sizes_.push_back(stored);
  } else {
    sizes_[next_] = stored;
    next_ = (next_ + 1) % capacity_;
  }
  sum_ = sum_ - leaving + stored;
  return true;
}

// Thread-safe: atomic counters. The loop adds; stats() reads; a queued buffer's release, on
// whichever libzmq thread lets go of it last, takes its bytes off `queued`.
struct RelayProxy::Counters {
  std::atomic<uint64_t> downMessages{0};
  std::atomic<uint64_t> downBytes{0};
  std::atomic<uint64_t> upMessages{0};
  std::atomic<uint64_t> upBytes{0};
  std::atomic<uint64_t> downRefused{0};
  std::atomic<uint64_t> upRefused{0};
  std::atomic<uint64_t> queueDropped{0};
  std::atomic<uint64_t> queued{0};
};

namespace {

// Thread-safety: immutable once made; freed by the thread that releases the buffer. Sits in front
// of a forwarded frame's bytes in one allocation.
struct TrackedHeader {
  std::shared_ptr<void> counters;  // keeps the counter alive while the buffer is queued
  std::atomic<uint64_t>* queued;
  std::size_t size;
};

// On whichever libzmq thread lets go of the buffer last; what the loop wrote before it handed the
// buffer over happens before (annotateBeforeSend).
void releaseTracked(void*, void* hint) {
  annotateAfterReceive();
  auto* header = static_cast<TrackedHeader*>(hint);
  header->queued->fetch_sub(header->size, std::memory_order_relaxed);
  header->~TrackedHeader();
  ::operator delete(hint);
}

// Moves `frame`'s bytes into a buffer counted in `queued` until libzmq releases it. False (the
// frame untouched) without memory.
bool track(zmq_msg_t& frame, const std::shared_ptr<void>& owner, std::atomic<uint64_t>& queued) {
  const std::size_t size = zmq_msg_size(&frame);
  void* block = ::operator new(sizeof(TrackedHeader) + size, std::nothrow);
  if (block == nullptr) return false;
  auto* header = new (block) TrackedHeader{owner, &queued, size};
  char* data = static_cast<char*>(block) + sizeof(TrackedHeader);
  std::memcpy(data, zmq_msg_data(&frame), size);
  zmq_msg_t copy;
  if (zmq_msg_init_data(&copy, data, size, releaseTracked, header) != 0) {
    header->~TrackedHeader();
    ::operator delete(block);
    return false;
  }
  queued.fetch_add(size, std::memory_order_relaxed);
  zmq_msg_move(&frame, &copy);
  zmq_msg_close(&copy);
  return true;
}

}  // namespace

RelayProxy::RelayProxy(ProxySockets sockets, std::size_t highWaterMark, std::size_t maxQueuedBytes)
    : sockets_(sockets),
      smallBytes_(maxQueuedBytes / 2 / std::max<std::size_t>(highWaterMark, 1)),
      smallWindow_(highWaterMark, maxQueuedBytes / 2),
      largeWindow_(highWaterMark, maxQueuedBytes / 2),
      maxHeld_(maxQueuedBytes > std::numeric_limits<std::size_t>::max() / kQueuedWindows
                   ? std::numeric_limits<std::size_t>::max()
                   : maxQueuedBytes * kQueuedWindows),
      counters_(std::make_shared<Counters>()) {}

RelayProxy::~RelayProxy() = default;

void RelayProxy::run() {
  zmq_pollitem_t items[] = {{sockets_.listen, 0, ZMQ_POLLIN, 0},
                            {sockets_.serve, 0, ZMQ_POLLIN, 0},
                            {sockets_.control, 0, ZMQ_POLLIN, 0}};
  while (true) {
    if (zmq_poll(items, 3, -1) < 0) {
      if (zmq_errno() == EINTR) continue;
      return;  // the context ended
    }
    if (items[2].revents != 0) return;  // TERMINATE: the only message the control socket gets
    for (int i = 0; i < kBurst && (items[0].revents & ZMQ_POLLIN) != 0; ++i) {
      if (!forwardDown()) break;
    }
    for (int i = 0; i < kBurst && (items[1].revents & ZMQ_POLLIN) != 0; ++i) {
      if (!forwardUp()) break;
    }
  }
}

// One message from a publisher; false when none was waiting.
bool RelayProxy::forwardDown() {
  Counters& counters = *counters_;
  zmq_msg_t topic;
  zmq_msg_t payload;
  zmq_msg_init(&topic);
  zmq_msg_init(&payload);
  bool received = false;
  if (zmq_msg_recv(&topic, sockets_.listen, ZMQ_DONTWAIT) >= 0) {
    received = true;
    const bool two = zmq_msg_more(&topic) != 0 && zmq_msg_recv(&payload, sockets_.listen, 0) >= 0 &&
                     zmq_msg_more(&payload) == 0;
    const std::size_t size = zmq_msg_size(&topic) + zmq_msg_size(&payload);
    const auto tracked = [&](zmq_msg_t& frame) {
      return zmq_msg_size(&frame) <= kUntrackedFrameBytes || track(frame, counters_, counters.queued);
    };
    if (!two) {
      discardRest(sockets_.listen, zmq_msg_more(&payload) != 0 ? payload : topic);
      counters.downRefused.fetch_add(1, std::memory_order_relaxed);
    } else if (const std::size_t held = counters.queued.load(std::memory_order_relaxed);
               held + size > maxHeld_ || !(size <= smallBytes_ ? smallWindow_ : largeWindow_).admit(size, held) ||
               !tracked(topic) || !tracked(payload)) {
      counters.queueDropped.fetch_add(1, std::memory_order_relaxed);
    } else {
      annotateBeforeSend();
      // The worker's copy first: what a subscriber received is then already queued for the history.
      if (sockets_.capture != nullptr) {
        zmq_msg_t copy;
        zmq_msg_init(&copy);
        zmq_msg_copy(&copy, &topic);
        if (zmq_msg_send(&copy, sockets_.capture, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) zmq_msg_close(&copy);
        zmq_msg_init(&copy);
        zmq_msg_copy(&copy, &payload);
        if (zmq_msg_send(&copy, sockets_.capture, ZMQ_DONTWAIT) < 0) zmq_msg_close(&copy);
      }
      if (zmq_msg_send(&topic, sockets_.serve, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0 &&
          zmq_msg_send(&payload, sockets_.serve, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&payload);
      }
      counters.downMessages.fetch_add(1, std::memory_order_relaxed);
      counters.downBytes.fetch_add(size, std::memory_order_relaxed);
    }
  }
  zmq_msg_close(&topic);
  zmq_msg_close(&payload);
  return received;
}

// One message from a subscriber (or an upstream relay); false when none was waiting.
bool RelayProxy::forwardUp() {
  Counters& counters = *counters_;
  zmq_msg_t frame;
  zmq_msg_init(&frame);
  const bool received = zmq_msg_recv(&frame, sockets_.serve, ZMQ_DONTWAIT) >= 0;
  if (received) {
    const std::string_view bytes(static_cast<const char*>(zmq_msg_data(&frame)), zmq_msg_size(&frame));
    const bool more = zmq_msg_more(&frame) != 0;
    if (isSubscription(bytes, more)) {
      const std::size_t size = bytes.size();
      if (zmq_msg_send(&frame, sockets_.listen, ZMQ_DONTWAIT) >= 0) {
        counters.upMessages.fetch_add(1, std::memory_order_relaxed);
        counters.upBytes.fetch_add(size, std::memory_order_relaxed);
      }
    } else {
      discardRest(sockets_.serve, frame);
      counters.upRefused.fetch_add(1, std::memory_order_relaxed);
    }
  }
  zmq_msg_close(&frame);
  return received;
}

void RelayProxy::addTo(RelayStats& stats) const {
  const Counters& counters = *counters_;
  stats.downMessages = counters.downMessages.load(std::memory_order_relaxed);
  stats.downBytes = counters.downBytes.load(std::memory_order_relaxed);
  stats.upMessages = counters.upMessages.load(std::memory_order_relaxed);
  stats.upBytes = counters.upBytes.load(std::memory_order_relaxed);
  stats.downRefused = counters.downRefused.load(std::memory_order_relaxed);
  stats.upRefused = counters.upRefused.load(std::memory_order_relaxed);
  stats.queueDropped = counters.queueDropped.load(std::memory_order_relaxed);
  stats.queuedBytes = counters.queued.load(std::memory_order_relaxed);
}

}  // namespace livemon::transport::detail
