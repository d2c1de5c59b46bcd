#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/time_bound.h>

// `livemonctl record`, `info`, `export` and `replay`, and the pieces they share with the
// dashboard: turning received events into recorded messages and back.
namespace livemon::transport {

// Appends `event` to `writer`: channel = event name, log time = when it was received, publish
// time = the event's timestamp, payload = a version-1 wire payload holding just this event with
// its source and sequence number (docs/recording-format.md). Returns false when the writer could
// not take the event's name (RecordingWriter::write(): beyond kMaxRecordingChannels names); the
// writer counts it in droppedCount() and goes on recording.
bool recordEvent(RecordingWriter& writer, const ReceivedEvent& event);

// The exit status of a command stopped by Ctrl-C (SIGINT) before it finished: 128 + SIGINT, as
// shells report it.
inline constexpr int kInterruptedExitCode = 130;

// Decodes recorded messages back into events with their sources and sequence numbers.
// `receivedAt` is the message's log time; `endpoint` is the recording's path. Sources are shared:
// every event of one publisher instance points at the same SourceInfo.
// Not thread-safe.
class RecordedEventDecoder {
 public:
  explicit RecordedEventDecoder(const std::string& recordingPath, WireLimits limits = {});

  // False, with the reason in `error`, when the payload is not a single-event version-1 message.
  bool decode(const RecordedMessage& message, ReceivedEvent& out, std::string* error = nullptr);

 private:
  std::shared_ptr<const std::string> path_;
  WireLimits limits_;
  WireMessage scratch_;
  std::map<SourceInfo, std::shared_ptr<const SourceInfo>> sources_;
};

struct RecordOptions {
  std::vector<std::string> endpoints{std::string(kDefaultEndpoint)};
  std::string output{};
  std::vector<std::string> filters{};    // event-name prefixes; empty records everything
  std::chrono::milliseconds duration{0};  // 0: until stopped
  bool progress = false;                 // a status line on `err`, rewritten in place (a terminal)
};

// Subscribes to the endpoints and records every event into `output` until `stop` or `duration`,
// then closes the file and prints what it wrote. Events whose names do not fit in the recording
// (kMaxRecordingChannels) are counted and reported, and recording goes on. Returns the exit
// code: 0, or 1 when the file could not be written (the error names it; what was written up to
// then stays readable).
int runRecord(const RecordOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

struct InfoOptions {
  std::string path{};
  bool json = false;
  bool progress = false;
};

// Prints a recording's duration, event count, counts per event name and per source, compression
// ratio and any damage found. Names, runs and hosts are printed through printableText() (JSON
// escapes them anyway). Returns 0, 1 when the file is not a readable recording, or
// kInterruptedExitCode when `stop` became true first (nothing is printed to `out` then).
int runInfo(const InfoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);
int runInfo(const InfoOptions& options, std::ostream& out, std::ostream& err);

enum class ExportFormat { JsonLines, Csv };

struct ExportOptions {
  std::string path{};
  ExportFormat format = ExportFormat::JsonLines;
  std::string output{};  // empty: `out`
  // Bounds on the receive time: seconds from the recording's start ("90", "1.5") or an absolute
  // UTC time ("2026-11-22T18:00:00Z", fractions allowed). Empty: unbounded.
  std::string from{};
  std::string to{};
  bool progress = false;
};

// Writes a recording's events as JSON lines (the objects of `livemonctl tail --json`) or as CSV
// with one row per data field: time_ns,time,source,name,seq,key,type,value. Returns 0, 1 when a
// file cannot be read or written, 2 for a bad --from/--to, kInterruptedExitCode when `stop`
// became true first (what was written until then stays, ending with a whole event).
int runExport(const ExportOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

struct ReplayOptions {
  std::string path{};
  std::string endpoint{kDefaultEndpoint};
  bool connect = false;  // connect to `endpoint` instead of binding it
  double speed = 1.0;    // 2: twice as fast as recorded
  bool loop = false;
  // Wait this long for a first subscriber before starting, so the start is not lost.
  std::chrono::milliseconds waitForSubscriber{3000};
  // A longer wait between two events (after dividing by `speed`) is cut to this, with a notice.
  std::chrono::nanoseconds maxGap{std::chrono::seconds(60)};
  bool progress = false;
  // Paces the replay: now() of `clock` (nullptr: livemon::systemClock()) and `sleepUntil` (empty:
  // std::this_thread::sleep_until), so a test can replay without waiting.
  Clock* clock = nullptr;
  std::function<void(std::chrono::steady_clock::time_point)> sleepUntil{};
};

// The waits of a replay. Each message is due `gap / speed` after the one before it, where `gap`
// is the difference of their log times: never negative (a message logged earlier than the one
// before it is due at once) and never more than `maxGap`. What a recording claims cannot make a
// replay wait for years, and no arithmetic here overflows.
// Not thread-safe: a plain value type.
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
// paced by ReplayPacer), with heartbeats for each source, until the end (or `stop`). With `loop`
// it starts over; each pass's sources get new instance ids, as a restarted job would. Returns 0
// (also when stopped), or 1 on an error.
int runReplay(const ReplayOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

}  // namespace livemon::transport
