#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

// Only transport/src includes this header.
namespace livemon::transport::detail {

// Not thread-safe: one owner at a time; a publisher's I/O thread.
//
// A publisher that connects (to a relay) sends its run config message again, byte for byte, a few
// times after it first went out: ZeroMQ drops what a connecting PUB sends before the peer's
// subscription has arrived, and a run's config is sent once, at the start, exactly then. The
// copies go 1, 2, 4, 8, 16 and 32 s after the first (63 s in all, by then a relay that was up
// has long subscribed). A reader that has the message skips a copy as a duplicate (same
// sequence numbers, same bytes); one that missed it takes it, so the relay's history and
// recordings hold the config.
class ConfigResend {
 public:
  static constexpr int kCopies = 6;
  static constexpr std::chrono::seconds kFirstDelay{1};

  // The config message just sent (its payload as sent); replaces one pending.
  void sent(std::string payload, std::chrono::steady_clock::time_point now) {
    payload_ = std::move(payload);
    delay_ = kFirstDelay;
    due_ = now + delay_;
    left_ = kCopies;
  }

  // The payload to send again now, if a copy is due; the next is then twice as far off.
  std::optional<std::string_view> due(std::chrono::steady_clock::time_point now) {
    if (left_ == 0 || now < due_) return std::nullopt;
    --left_;
    delay_ *= 2;
    due_ = now + delay_;
    return std::string_view(payload_);
  }

  int copiesLeft() const noexcept { return left_; }

 private:
  std::string payload_;
  std::chrono::steady_clock::duration delay_{};
  std::chrono::steady_clock::time_point due_{};
  int left_ = 0;
};

}  // namespace livemon::transport::detail
