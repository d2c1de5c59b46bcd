#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <livemon/transport/relay.h>
#include <livemon/transport/wire_format.h>

// Only transport/src (and the relay capture fuzz target) includes this header.
namespace livemon::transport::detail {

// What a subscriber may send toward the publishers: one frame, a subscription (1 and a prefix) or
// its cancellation (0 and a prefix). Anything else a peer at `serve` sends is dropped.
bool isSubscription(std::string_view frame, bool more) noexcept;

// What a publisher may send: a topic frame and a payload frame. Anything else is dropped.
inline bool isPublication(std::size_t frames) noexcept { return frames == 2; }

// Thread-safety: a plain value type. What the relay's worker does with a message from the capture
// queue.
enum class CaptureVerdict {
  Skip,  // malformed or beyond the limits: counted, not kept, not handed on
  Keep,  // into the history, and (when `decode`) to the callbacks with `scratch` decoded
};

// The worker's decision on `frames` as they came off the capture queue: a pure function of them
// (and the limits), so a fuzz target can feed it anything. With `decode`, a Keep has decoded the
// message into `scratch`.
CaptureVerdict judgeCapture(std::span<const std::string_view> frames, const WireLimits& limits, bool decode,
                            WireMessage& scratch);

// Not thread-safe: one owner at a time; the forwarding loop's thread.
//
// Keeps every run of `messages` consecutive forwarded messages within `budget` bytes: a message
// that would make the latest run exceed it is refused. A subscriber that stops reading holds at
// most such a run (its queue takes `messages` in forwarding order, then drops), so at most
// `budget`. The sizes of the run are kept in a ring that grows as messages pass.
class ForwardWindow {
 public:
  ForwardWindow(std::size_t messages, std::size_t budget);
  // True (and counted in the run) if a message of `size` bytes may be forwarded while all queues
  // together hold `held` bytes: when the run of the last messages with it stays within the
  // budget, or when `held` with it does.
  bool admit(std::size_t size, std::size_t held);
  std::size_t bytes() const noexcept { return sum_; }

 private:
  std::size_t capacity_;  // the sizes of the last messages - 1 forwarded
  std::size_t budget_;
  std::vector<uint32_t> sizes_;
  std::size_t next_ = 0;
  std::size_t sum_ = 0;
};

// Thread-safety: a plain value type. The sockets and limits of a forwarding loop.
struct ProxySockets {
  void* listen = nullptr;   // XSUB: publishers
  void* serve = nullptr;    // XPUB: subscribers and upstream relays
  void* capture = nullptr;  // PUB to the worker, or null
  void* control = nullptr;  // PAIR: "TERMINATE" ends the loop
};

// Thread-safe: run() on one thread; addTo() from any.
//
// The relay's forwarding loop. From publishers to subscribers it forwards two-frame messages, a
// copy of each to `capture` first (so what a subscriber received is already queued for the
// history); from subscribers to publishers only subscriptions (isSubscription). Everything else is
// dropped and counted. It never blocks on a peer: XPUB and PUB drop for a full queue.
// Memory: every forwarded frame larger than a few dozen bytes is copied once into a buffer whose
// release (when the last queue let go of it) is counted, so queuedBytes is exact, and a message
// is refused when the run of the last highWaterMark forwarded messages would exceed
// maxQueuedBytes (two ForwardWindows of half of it: one for small messages, which always fit, one
// for large ones), or all queues together kQueuedWindows times it.
class RelayProxy {
 public:
  static constexpr std::size_t kQueuedWindows = 4;

  RelayProxy(ProxySockets sockets, std::size_t highWaterMark, std::size_t maxQueuedBytes);
  ~RelayProxy();
  RelayProxy(const RelayProxy&) = delete;
  RelayProxy& operator=(const RelayProxy&) = delete;

  // Forwards until "TERMINATE" arrives on the control socket or the context ends.
  void run();
  // Adds the loop's counters to `stats` (down/up messages and bytes, refusals, queue bytes).
  void addTo(RelayStats& stats) const;

 private:
  struct Counters;
  bool forwardDown();
  bool forwardUp();

  ProxySockets sockets_;
  // Messages up to smallBytes_ (maxQueuedBytes / 2 / highWaterMark) always fit their window;
  // larger ones share the other half, so a peer sending large frames cannot crowd out the small
  // messages most traffic is. Each half bounds its part of a stalled queue's run.
  std::size_t smallBytes_;
  ForwardWindow smallWindow_;
  ForwardWindow largeWindow_;
  std::size_t maxHeld_;
  std::shared_ptr<Counters> counters_;  // shared with the buffers still queued
};

}  // namespace livemon::transport::detail
