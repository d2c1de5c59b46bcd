#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include <livemon/clock.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/wire_format.h>
#include <livemonctl/command_line.h>

// `livemonctl replay`: republishes a recording as its publishers sent it.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct ReplayOptions {
  std::string path{};
  std::string endpoint{transport::kDefaultEndpoint};
  bool connect = false;  // connect to `endpoint` instead of binding it
  double speed = 1.0;    // 2: twice as fast as recorded
  bool loop = false;
  // Wait this long for a first subscriber before starting, so the start is not lost.
  std::chrono::milliseconds waitForSubscriber{3000};
  // A longer wait between two events (after dividing by `speed`) is cut to this, with a notice.
  std::chrono::nanoseconds maxGap{std::chrono::seconds(60)};
  bool progress = false;  // a status line on `err`, rewritten in place (a terminal)
  // Paces the replay: now() of `clock` (nullptr: livemon::systemClock()) and `sleepUntil` (empty:
  // std::this_thread::sleep_until), so a test can replay without waiting.
  Clock* clock = nullptr;
  std::function<void(std::chrono::steady_clock::time_point)> sleepUntil{};
  // CURVE (transport::CurveOptions): --curve-secret, --curve-allow, --curve-server, --require-curve.
  transport::CurveOptions curve;
};

// Thread-safety: a plain value type.
//
// The waits of a replay. Each message is due `gap / speed` after the one before it, where `gap` is
// the difference of their log times: never negative (a message logged earlier than the one before
// it is due at once) and never more than `maxGap`. What a recording claims cannot make a replay
// wait for years, and no arithmetic here overflows.
class ReplayPacer {
 public:
  // Throws std::invalid_argument when `speed` is not a positive finite number or maxGap < 0.
  ReplayPacer(double speed, std::chrono::nanoseconds maxGap);

  // The wait before the message logged at `logTimeNs`; 0 for the first message.
  std::chrono::nanoseconds next(uint64_t logTimeNs);
  // Whether the last next() cut a longer gap to maxGap, and that gap as recorded.
  bool cut() const noexcept { return cut_; }
  uint64_t recordedGapNs() const noexcept { return recordedGap_; }
  uint64_t cutCount() const noexcept { return cutCount_; }

 private:
  double speed_;
  std::chrono::nanoseconds maxGap_;
  std::optional<uint64_t> previous_;
  bool cut_ = false;
  uint64_t recordedGap_ = 0;
  uint64_t cutCount_ = 0;
};

// Republishes a recording's events with their original sources and spacing (divided by `speed`,
// paced by ReplayPacer), with heartbeats for each source, until the end (or `stop`), through a
// transport::PayloadPublisher. With `loop` it starts over; each pass's sources get new instance
// ids, as a restarted job would. Returns 0 (also when stopped), or kFailedExitCode when the file
// cannot be replayed, an option is bad or the endpoint cannot be used (`err` says which).
int runReplay(const ReplayOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// Adds `replay` and its options to `app` (command_line.h).
Command addReplayCommand(CLI::App& app);

}  // namespace livemon::livemonctl
