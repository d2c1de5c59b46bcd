#include <livemon/transport/recording_tools.h>

#include <zmq.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <livemon/transport/error.h>
#include <livemon/transport/tail.h>

#include "peer_guard.h"
#include "zmq_support.h"

namespace livemon::transport {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Distinct sources `record` counts for its summary; a peer inventing identities cannot make the
// set grow beyond.
constexpr std::size_t kMaxCountedSources = 10000;
// Notices of cut gaps a replay prints; later ones are only counted.
constexpr uint64_t kMaxGapNotices = 10;

std::string humanBytes(uint64_t bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else if (bytes < 1024ULL * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024 * 1024));
  } else {
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  }
  return text;
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// "2026-11-22 18:00:00.123 UTC"
std::string utcText(uint64_t ns) {
  const auto seconds = static_cast<time_t>(ns / 1'000'000'000ULL);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<int>((ns / 1'000'000ULL) % 1000));
  return text;
}

// 16 lower-case hex digits, as instance ids are shown elsewhere (JSON numbers lose 64-bit ids).
std::string hex16(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

double ratio(uint64_t uncompressed, uint64_t compressed) {
  return compressed == 0 ? 0.0 : static_cast<double>(uncompressed) / static_cast<double>(compressed);
}

std::string doubleExact(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, result.ptr);
  if (std::isfinite(value) && text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// Shortest text that reads back as `value`: "0.05", "60".
std::string shortest(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

// b - a, or 0 when b is earlier: what a file claims may be in any order.
uint64_t after(uint64_t a, uint64_t b) { return b > a ? b - a : 0; }

std::string csvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// A line rewritten in place on a terminal.
class StatusLine {
 public:
  StatusLine(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}
  ~StatusLine() { finish(); }
  void show(const std::string& text, bool force = false) {
    if (!enabled_) return;
    const auto now = SteadyClock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    err_ << '\r' << text << "\033[K" << std::flush;
    shown_ = true;
  }
  void finish() {
    if (shown_) err_ << '\n' << std::flush;
    shown_ = false;
  }

 private:
  std::ostream& err_;
  bool enabled_;
  bool shown_ = false;
  SteadyClock::time_point last_{};
};

}  // namespace

bool recordEvent(RecordingWriter& writer, const ReceivedEvent& event) {
  static const SourceInfo unknown{};
  const SourceInfo& source = event.source ? *event.source : unknown;
  const std::string payload =
      encodeEventsPayload(source, event.sequence, event.event.name, std::vector<Event>{event.event});
  return writer.write(event.event.name, static_cast<uint64_t>(toWireTime(event.receivedAt)),
                      static_cast<uint64_t>(toWireTime(event.event.timestamp)), payload);
}

RecordedEventDecoder::RecordedEventDecoder(const std::string& recordingPath, WireLimits limits)
    : path_(std::make_shared<const std::string>(recordingPath)), limits_(limits) {}

bool RecordedEventDecoder::decode(const RecordedMessage& message, ReceivedEvent& out, std::string* error) {
  const DecodeStatus status = decodeMessage(message.channel->topic, message.payload, limits_, scratch_, error);
  if (status != DecodeStatus::Ok) {
    if (error && error->empty()) *error = std::string(decodeStatusName(status));
    return false;
  }
  if (scratch_.kind != MessageKind::Events || scratch_.events.size() != 1) {
    if (error) *error = "a recorded message must hold exactly one event";
    return false;
  }
  out.event = std::move(scratch_.events.front());
  out.event.name = scratch_.name;
  auto& shared = sources_[scratch_.source];
  if (!shared) shared = std::make_shared<const SourceInfo>(scratch_.source);
  out.source = shared;
  out.sequence = scratch_.sequence;
  out.endpoint = path_;
  out.receivedAt = fromWireTime(static_cast<int64_t>(message.logTimeNs));
  return true;
}

namespace {

constexpr std::string_view kLatestTimeBoundText = "2554-07-21T23:34:33.709551615Z";

std::string afterTheLatest() {
  return "is after " + std::string(kLatestTimeBoundText) + ", the latest time a recording can hold";
}

bool isDigit(char c) noexcept { return c >= '0' && c <= '9'; }

// `digits` (no leading zeros) times 10^exponent, rounded to the nearest integer; std::nullopt
// when that does not fit in 64 bits.
std::optional<uint64_t> scaledDecimal(std::string_view digits, int64_t exponent) {
  std::string_view whole = digits;
  bool roundUp = false;
  if (exponent < 0) {
    const auto dropped = static_cast<uint64_t>(-exponent);
    if (dropped > digits.size()) return 0;  // below one half
    whole = digits.substr(0, digits.size() - dropped);
    roundUp = digits[whole.size()] >= '5';
    exponent = 0;
  }
  // A value of more than 20 digits cannot fit; checked before the loop so its work stays bounded.
  if (whole.size() + static_cast<uint64_t>(exponent) > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : whole) {
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, c - '0', &value)) return std::nullopt;
  }
  for (int64_t i = 0; i < exponent; ++i) {
    if (__builtin_mul_overflow(value, 10, &value)) return std::nullopt;
  }
  if (roundUp && __builtin_add_overflow(value, 1, &value)) return std::nullopt;
  return value;
}

// A non-negative decimal number of seconds ("90", "1.5", "2e3") in nanoseconds, computed
// exactly in decimal (a double would lose nanoseconds beyond 2^53). `fits` is false when it is a
// number but more than 64 bits of nanoseconds.
std::optional<uint64_t> parseSeconds(std::string_view text, bool& fits) {
  fits = true;
  std::size_t at = 0;
  std::string digits;  // significant digits, without leading zeros
  int64_t exponent = 9;  // nanoseconds per second
  bool anyDigit = false;
  for (; at < text.size() && isDigit(text[at]); ++at) {
    anyDigit = true;
    if (!digits.empty() || text[at] != '0') digits += text[at];
  }
  if (at < text.size() && text[at] == '.') {
    for (++at; at < text.size() && isDigit(text[at]); ++at) {
      anyDigit = true;
      if (!digits.empty() || text[at] != '0') digits += text[at];
      --exponent;
    }
  }
  if (!anyDigit) return std::nullopt;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    bool negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) negative = text[at++] == '-';
    if (at == text.size()) return std::nullopt;
    int64_t written = 0;
    for (; at < text.size() && isDigit(text[at]); ++at) {
      // Saturates where the value is zero or out of range whatever the digits (there are fewer
      // than 10^17 of them).
      written = std::min<int64_t>(written * 10 + (text[at] - '0'), 100'000'000'000'000'000);
    }
    if (at != text.size()) return std::nullopt;
    exponent += negative ? -written : written;
  }
  if (at != text.size()) return std::nullopt;
  // Trailing zeros only scale: keep the digits short.
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  if (digits.empty()) return 0;
  const auto value = scaledDecimal(digits, exponent);
  fits = value.has_value();
  return value;
}

// `count` digits at text[at], as a number; std::nullopt unless they are all digits.
std::optional<unsigned> fixedDigits(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  unsigned value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!isDigit(text[i])) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return value;
}

}  // namespace

std::optional<uint64_t> parseTimeBound(const std::string& text, uint64_t startNs, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<uint64_t> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  const std::string_view form = "is neither seconds from the start nor a UTC time like 2026-11-22T18:00:00Z";
  if (text.empty()) return fail(std::string(form));

  // Seconds from the start.
  bool fits = true;
  if (const auto seconds = parseSeconds(text, fits)) {
    uint64_t bound = 0;
    if (__builtin_add_overflow(startNs, *seconds, &bound)) {
      return fail("seconds from the start of the recording " + afterTheLatest());
    }
    return bound;
  }
  if (!fits) return fail("seconds from the start of the recording " + afterTheLatest());
  if (text[0] == '-' && text.size() > 1 && (isDigit(text[1]) || text[1] == '.')) {
    return fail("is negative: seconds from the start must be 0 or more");
  }

  // YYYY-MM-DDTHH:MM:SS[.fraction]Z, each field exactly that many digits.
  const std::string_view s = text;
  const auto year = fixedDigits(s, 0, 4);
  const auto month = fixedDigits(s, 5, 2);
  const auto day = fixedDigits(s, 8, 2);
  const auto hour = fixedDigits(s, 11, 2);
  const auto minute = fixedDigits(s, 14, 2);
  const auto second = fixedDigits(s, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
      s[13] != ':' || s[16] != ':') {
    return fail(std::string(form));
  }
  std::size_t at = 19;
  uint64_t fractionNs = 0;
  if (at < s.size() && s[at] == '.') {
    const std::size_t first = ++at;
    uint64_t scale = 100'000'000;
    for (; at < s.size() && isDigit(s[at]); ++at) {
      fractionNs += static_cast<uint64_t>(s[at] - '0') * scale;
      scale /= 10;
    }
    if (at == first) return fail(std::string(form));
  }
  if (at + 1 != s.size() || s[at] != 'Z') return fail(std::string(form));

  const std::chrono::year_month_day date{std::chrono::year{static_cast<int>(*year)}, std::chrono::month{*month},
                                         std::chrono::day{*day}};
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 59) {
    return fail("is not a valid date and time");
  }
  if (*year < 1970) return fail("is before 1970-01-01T00:00:00Z, where recording times begin");
  const auto days = static_cast<uint64_t>(std::chrono::sys_days(date).time_since_epoch().count());
  const uint64_t seconds = days * 86'400 + *hour * 3'600ULL + *minute * 60ULL + *second;
  uint64_t bound = 0;
  if (__builtin_mul_overflow(seconds, 1'000'000'000ULL, &bound) || __builtin_add_overflow(bound, fractionNs, &bound)) {
    return fail(afterTheLatest());
  }
  return bound;
}

int runRecord(const RecordOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  SubscriberOptions subscriberOptions;
  subscriberOptions.connect = options.endpoints;
  subscriberOptions.filters = options.filters;
  Subscriber subscriber(subscriberOptions);
  std::unique_ptr<RecordingWriter> writer;
  try {
    writer = std::make_unique<RecordingWriter>(options.output);
  } catch (const RecordingError& error) {
    err << "livemonctl record: " << error.what() << '\n';
    return 1;
  }
  std::string where;
  for (const auto& endpoint : options.endpoints) where += (where.empty() ? "" : ", ") + endpoint;
  out << "recording " << where << " to " << options.output << " (Ctrl-C stops)" << std::endl;

  // Only names that were recorded: at most kMaxRecordingChannels.
  std::map<std::string, uint64_t> perName;
  std::set<SourceInfo> sources;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) {
    if (!recordEvent(*writer, event)) return;
    ++perName[event.event.name];
    if (event.source && sources.size() < kMaxCountedSources) sources.insert(*event.source);
  };
  callbacks.onSourceChange = [&](const SourceChange& change) {
    if (change.joined && change.source) {
      err << (options.progress ? "\r\033[K" : "") << "source joined: " << printableText(describe(*change.source)) << '\n';
    }
  };
  StatusLine status(err, options.progress);
  const auto started = SteadyClock::now();
  int exitCode = 0;
  try {
    while (!stop.load(std::memory_order_relaxed)) {
      const auto elapsed = SteadyClock::now() - started;
      if (options.duration.count() > 0 && elapsed >= options.duration) break;
      subscriber.poll(std::chrono::milliseconds(100), callbacks);
      writer->flushIfDue();
      status.show("recording: " + std::to_string(writer->messageCount()) + " events, " +
                  humanBytes(writer->bytesWritten()) + ", " +
                  fixed(std::chrono::duration<double>(SteadyClock::now() - started).count(), 0) + " s" +
                  (writer->droppedCount() ? ", " + std::to_string(writer->droppedCount()) + " not recorded" : ""));
    }
    writer->close();
  } catch (const RecordingError& error) {
    status.finish();
    err << "livemonctl record: " << error.what() << '\n';
    exitCode = 1;
  }
  status.finish();
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
  out << (exitCode == 0 ? "wrote " : "stopped after ") << writer->messageCount() << " events (" << perName.size()
      << " event names, " << sources.size() << (sources.size() == kMaxCountedSources ? "+" : "") << " sources) in "
      << fixed(seconds, 1) << " s to " << options.output << ": " << humanBytes(writer->bytesWritten())
      << ", compression " << fixed(ratio(writer->uncompressedBytes(), writer->compressedBytes()), 1) << "x";
  if (writer->droppedCount() > 0) {
    out << "; " << writer->droppedCount() << " events not recorded: a recording holds at most " << kMaxRecordingChannels
        << " event names of up to " << kMaxRecordingTopicBytes << " bytes";
  }
  out << std::endl;
  err << "livemonctl record: received " << formatReceiveSummary(subscriber.stats()) << std::endl;
  return exitCode;
}

int runInfo(const InfoOptions& options, std::ostream& out, std::ostream& err) {
  const std::atomic<bool> never{false};
  return runInfo(options, never, out, err);
}

int runInfo(const InfoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  StatusLine status(err, options.progress);
  std::unique_ptr<RecordingReader> reader;
  const auto interrupted = [&] {
    status.finish();
    err << "livemonctl info: interrupted\n";
    return kInterruptedExitCode;
  };
  try {
    reader = std::make_unique<RecordingReader>(
        options.path,
        [&](uint64_t done, uint64_t total) {
          status.show("scanning: " +
                      fixed(100.0 * static_cast<double>(done) / static_cast<double>(std::max<uint64_t>(total, 1)), 0) + " %");
        },
        &stop);
  } catch (const RecordingStopped&) {
    return interrupted();
  } catch (const RecordingError& error) {
    status.finish();
    err << "livemonctl info: " << printableText(error.what()) << '\n';
    return 1;
  }
  if (stop.load(std::memory_order_relaxed)) return interrupted();
  const RecordingSummary& summary = reader->summary();
  // Sources are inside the payloads, so counting them reads every chunk.
  RecordedEventDecoder decoder(options.path);
  std::map<SourceInfo, uint64_t> perSource;
  uint64_t undecodable = 0;
  std::string firstDecodeError;
  ReceivedEvent event;
  reader->forEachMessage(
      0, UINT64_MAX,
      [&](const RecordedMessage& message) {
        std::string error;
        if (decoder.decode(message, event, &error)) {
          ++perSource[*event.source];
        } else {
          if (undecodable++ == 0) firstDecodeError = error;
        }
        return true;
      },
      [&](uint64_t done, uint64_t total) {
        status.show("reading: chunk " + std::to_string(done) + " of " + std::to_string(total));
      });
  if (stop.load(std::memory_order_relaxed)) return interrupted();
  status.finish();

  const double duration =
      summary.messageCount ? static_cast<double>(summary.endTimeNs - summary.startTimeNs) / 1e9 : 0.0;
  const double compression = ratio(summary.uncompressedBytes, summary.compressedBytes);
  if (options.json) {
    out << "{\"path\": " << jsonString(options.path) << ", \"bytes\": " << summary.fileSize
        << ", \"indexed\": " << (reader->indexed() ? "true" : "false") << ", \"events\": " << summary.messageCount
        << ", \"start_ns\": " << summary.startTimeNs << ", \"end_ns\": " << summary.endTimeNs
        << ", \"duration_s\": " << doubleExact(duration) << ", \"chunks\": " << summary.chunks.size()
        << ", \"compressed_bytes\": " << summary.compressedBytes
        << ", \"uncompressed_bytes\": " << summary.uncompressedBytes
        << ", \"compression_ratio\": " << doubleExact(compression) << ", \"channels\": [";
    bool first = true;
    for (const auto& [id, channel] : summary.channels) {
      const auto count = summary.messageCounts.count(id) ? summary.messageCounts.at(id) : 0;
      out << (first ? "" : ", ") << "{\"id\": " << id << ", \"topic\": " << jsonString(channel.topic)
          << ", \"encoding\": " << jsonString(channel.messageEncoding) << ", \"events\": " << count << "}";
      first = false;
    }
    out << "], \"sources\": [";
    first = true;
    for (const auto& [source, count] : perSource) {
      out << (first ? "" : ", ") << "{\"run\": " << jsonString(source.run) << ", \"host\": " << jsonString(source.host)
          << ", \"pid\": " << source.pid << ", \"rank\": " << (source.rank ? std::to_string(*source.rank) : "null")
          << ", \"id\": \"" << hex16(source.instanceId) << "\", \"events\": " << count << "}";
      first = false;
    }
    out << "], \"undecodable\": " << undecodable << ", \"problems\": [";
    first = true;
    for (const auto& problem : reader->problems()) {
      out << (first ? "" : ", ") << "{\"offset\": " << problem.offset << ", \"what\": " << jsonString(problem.what) << "}";
      first = false;
    }
    out << "], \"unlisted_problems\": " << reader->unlistedProblems() << "}" << std::endl;
    return 0;
  }

  out << "file         " << printableText(options.path) << " (" << humanBytes(summary.fileSize) << ", "
      << (reader->indexed() ? "closed cleanly" : "not closed cleanly: read by scanning") << ")\n";
  if (summary.messageCount) {
    out << "duration     " << fixed(duration, 3) << " s, " << utcText(summary.startTimeNs) << " to "
        << utcText(summary.endTimeNs) << '\n';
  }
  out << "events       " << summary.messageCount << '\n';
  out << "chunks       " << summary.chunks.size() << ", compression " << fixed(compression, 1) << "x ("
      << humanBytes(summary.uncompressedBytes) << " in " << humanBytes(summary.compressedBytes) << ")\n";
  out << "by name\n";
  for (const auto& [id, channel] : summary.channels) {
    const auto count = summary.messageCounts.count(id) ? summary.messageCounts.at(id) : 0;
    const std::string topic = printableText(channel.topic);
    out << "  " << topic << std::string(topic.size() < 40 ? 40 - topic.size() : 1, ' ') << count << '\n';
  }
  out << "by source\n";
  for (const auto& [source, count] : perSource) {
    const std::string name = printableText(describe(source));
    out << "  " << name << std::string(name.size() < 40 ? 40 - name.size() : 1, ' ') << count << '\n';
  }
  if (undecodable) out << "undecodable  " << undecodable << " events (first: " << printableText(firstDecodeError) << ")\n";
  if (!reader->problems().empty()) {
    out << "problems\n";
    for (const auto& problem : reader->problems()) {
      out << "  byte " << problem.offset << ": " << printableText(problem.what) << '\n';
    }
    if (reader->unlistedProblems() > 0) out << "  and " << reader->unlistedProblems() << " more\n";
  }
  out << std::flush;
  return 0;
}

int runExport(const ExportOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  StatusLine status(err, options.progress);
  std::unique_ptr<RecordingReader> reader;
  try {
    reader = std::make_unique<RecordingReader>(options.path, RecordingReader::Progress{}, &stop);
  } catch (const RecordingStopped&) {
    err << "livemonctl export: interrupted\n";
    return kInterruptedExitCode;
  } catch (const RecordingError& error) {
    err << "livemonctl export: " << printableText(error.what()) << '\n';
    return 1;
  }
  const uint64_t start = reader->summary().startTimeNs;
  uint64_t from = 0;
  uint64_t to = UINT64_MAX;
  for (auto [flag, text, bound] : {std::tuple{"--from", &options.from, &from}, std::tuple{"--to", &options.to, &to}}) {
    if (text->empty()) continue;
    std::string why;
    const auto parsed = parseTimeBound(*text, start, &why);
    if (!parsed) {
      err << "livemonctl export: " << flag << ' ' << *text << ' ' << why << '\n';
      return 2;
    }
    *bound = *parsed;
  }
  std::ofstream file;
  if (!options.output.empty()) {
    file.open(options.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      err << "livemonctl export: cannot create " << options.output << ": " << std::strerror(errno) << '\n';
      return 1;
    }
  }
  std::ostream& sink = options.output.empty() ? out : file;
  if (options.format == ExportFormat::Csv) sink << "time_ns,time,source,name,seq,key,type,value\n";

  RecordedEventDecoder decoder(options.path);
  ReceivedEvent event;
  uint64_t exported = 0;
  uint64_t undecodable = 0;
  std::string line;
  reader->forEachMessage(
      from, to,
      [&](const RecordedMessage& message) {
        if (!decoder.decode(message, event)) {
          ++undecodable;
          return !stop.load(std::memory_order_relaxed);
        }
        if (options.format == ExportFormat::JsonLines) {
          sink << formatEventJson(event) << '\n';
        } else {
          const std::string prefix = std::to_string(message.logTimeNs) + "," + csvField(utcText(message.logTimeNs)) +
                                     "," + csvField(describe(*event.source)) + "," + csvField(event.event.name) + "," +
                                     std::to_string(event.sequence) + ",";
          std::vector<const std::pair<const std::string, DataValue>*> fields;
          for (const auto& field : event.event.data) fields.push_back(&field);
          std::sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->first < b->first; });
          for (const auto* field : fields) {
            line = prefix + csvField(field->first) + ",";
            const DataValue& value = field->second;
            switch (value.index()) {
              case 0: line += "string," + csvField(std::get<std::string>(value)); break;
              case 1: line += "double," + doubleExact(std::get<double>(value)); break;
              case 2: line += "int," + std::to_string(std::get<int64_t>(value)); break;
              default: line += std::string("bool,") + (std::get<bool>(value) ? "true" : "false"); break;
            }
            sink << line << '\n';
          }
        }
        ++exported;
        return !stop.load(std::memory_order_relaxed);
      },
      [&](uint64_t done, uint64_t total) {
        status.show("exporting: " + fixed(100.0 * static_cast<double>(done) / static_cast<double>(std::max<uint64_t>(total, 1)), 0) +
                    " %, " + std::to_string(exported) + " events");
      });
  sink.flush();
  status.finish();
  if (stop.load(std::memory_order_relaxed)) {
    err << "livemonctl export: interrupted after " << exported << " events\n";
    return kInterruptedExitCode;
  }
  if (!sink) {
    err << "livemonctl export: writing " << (options.output.empty() ? "the output" : options.output) << " failed\n";
    return 1;
  }
  err << "exported " << exported << " events" << (options.output.empty() ? "" : " to " + options.output);
  if (undecodable) err << " (" << undecodable << " undecodable skipped)";
  err << '\n';
  for (const auto& problem : reader->problems()) {
    err << "livemonctl export: " << printableText(options.path) << ": byte " << problem.offset << ": "
        << printableText(problem.what) << '\n';
  }
  return 0;
}

namespace {

// A PUB socket that republishes recorded payloads. Thread-safety: one thread.
class ReplaySocket {
 public:
  ReplaySocket(const ReplayOptions& options) : context_(detail::sharedContext()) {
    socket_ = zmq_socket(context_.get(), ZMQ_XPUB);
    if (!socket_) detail::throwEndpointError("create a socket for", options.endpoint, zmq_errno());
    detail::setIntOption(socket_, ZMQ_LINGER, 1000, "ZMQ_LINGER");
    detail::setIntOption(socket_, ZMQ_SNDHWM, 100000, "ZMQ_SNDHWM");
    // Subscribers reach a replay as they reach a training job: bound what they can make it hold.
    try {
      guard_ = detail::guardSendingSocket(context_.get(), socket_, detail::PeerLimits{});
    } catch (...) {
      zmq_close(socket_);
      throw;
    }
    const int rc = options.connect ? zmq_connect(socket_, options.endpoint.c_str())
                                   : zmq_bind(socket_, options.endpoint.c_str());
    if (rc != 0) {
      const int error = zmq_errno();
      guard_.reset();
      zmq_close(socket_);
      detail::throwEndpointError(options.connect ? "connect to" : "bind", options.endpoint, error);
    }
    endpoint_ = detail::lastEndpoint(socket_, options.endpoint);
  }
  ~ReplaySocket() {
    guard_.reset();
    zmq_close(socket_);
  }
  ReplaySocket(const ReplaySocket&) = delete;
  ReplaySocket& operator=(const ReplaySocket&) = delete;

  // Waits up to `timeout` for a subscription; true when one came. A subscriber's subscriptions
  // arrive one at a time (one is queued per connection), so it then waits until none has come for
  // kSettle: the first is often the heartbeat topic, and events sent before their own topic's
  // subscription arrives would be lost.
  bool waitForSubscriber(std::chrono::milliseconds timeout, const std::atomic<bool>& stop) {
    constexpr auto kSettle = std::chrono::milliseconds(100);
    const auto until = SteadyClock::now() + timeout;
    std::optional<SteadyClock::time_point> settled;
    while (!stop.load(std::memory_order_relaxed)) {
      const auto now = SteadyClock::now();
      if (settled && now >= *settled) return true;
      if (now >= until) return settled.has_value();
      zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
      if (zmq_poll(&item, 1, 10) > 0) {
        char buffer[256];
        while (zmq_recv(socket_, buffer, sizeof buffer, ZMQ_DONTWAIT) >= 0) {
        }
        settled = SteadyClock::now() + kSettle;
      }
    }
    return false;
  }

  void send(std::string_view topic, std::string_view payload) {
    detail::annotateBeforeSend();
    zmq_send(socket_, topic.data(), topic.size(), ZMQ_SNDMORE);
    zmq_send(socket_, payload.data(), payload.size(), 0);
    // Subscription messages are of no use here; keep them from piling up.
    char buffer[256];
    while (zmq_recv(socket_, buffer, sizeof buffer, ZMQ_DONTWAIT) >= 0) {
    }
  }

  const std::string& endpoint() const { return endpoint_; }

 private:
  std::shared_ptr<void> context_;
  void* socket_ = nullptr;
  std::unique_ptr<detail::PeerGuard> guard_;
  std::string endpoint_;
};

}  // namespace

ReplayPacer::ReplayPacer(double speed, std::chrono::nanoseconds maxGap) : speed_(speed), maxGap_(maxGap) {
  if (!std::isfinite(speed) || speed <= 0) throw std::invalid_argument("replay speed must be a positive number");
  if (maxGap.count() < 0) throw std::invalid_argument("replay maxGap must not be negative");
}

std::chrono::nanoseconds ReplayPacer::next(uint64_t logTimeNs) {
  recordedGap_ = previous_ ? after(*previous_, logTimeNs) : 0;
  previous_ = logTimeNs;
  // In double, then compared with the cap before it becomes an integer again.
  const double wait = static_cast<double>(recordedGap_) / speed_;
  cut_ = wait > static_cast<double>(maxGap_.count());
  if (!cut_) return std::chrono::nanoseconds(static_cast<int64_t>(wait));
  ++cutCount_;
  return maxGap_;
}

int runReplay(const ReplayOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  std::unique_ptr<RecordingReader> reader;
  try {
    reader = std::make_unique<RecordingReader>(options.path, RecordingReader::Progress{}, &stop);
  } catch (const RecordingStopped&) {
    return 0;
  } catch (const RecordingError& error) {
    err << "livemonctl replay: " << printableText(error.what()) << '\n';
    return 1;
  }
  const RecordingSummary& summary = reader->summary();
  if (summary.messageCount == 0) {
    err << "livemonctl replay: " << printableText(options.path) << " holds no events\n";
    return 1;
  }
  auto reportProblems = [&, reported = std::size_t{0}]() mutable {
    for (; reported < reader->problems().size(); ++reported) {
      const RecordingProblem& problem = reader->problems()[reported];
      err << "livemonctl replay: " << printableText(options.path) << ": byte " << problem.offset << ": "
          << printableText(problem.what) << '\n';
    }
  };
  reportProblems();
  Clock& clock = options.clock ? *options.clock : systemClock();
  const std::function<void(SteadyClock::time_point)> sleepUntil =
      options.sleepUntil ? options.sleepUntil : [](SteadyClock::time_point t) { std::this_thread::sleep_until(t); };
  ReplayPacer pacer(options.speed, options.maxGap);  // checks the options before the socket opens

  // What the summary claims about the time range is shown, never waited for.
  const uint64_t recordedNs = after(summary.startTimeNs, summary.endTimeNs);
  const double recordedSeconds = static_cast<double>(recordedNs) / 1e9;
  ReplaySocket socket(options);
  out << "replaying " << printableText(options.path) << " (" << summary.messageCount << " events, "
      << fixed(recordedSeconds, 1) << " s) on " << socket.endpoint() << " at " << options.speed << "x"
      << (options.loop ? ", looping" : "") << " (Ctrl-C stops)" << std::endl;
  if (options.waitForSubscriber.count() > 0 && !socket.waitForSubscriber(options.waitForSubscriber, stop)) {
    err << "livemonctl replay: no subscriber after " << options.waitForSubscriber.count()
        << " ms; replaying anyway\n";
  }

  StatusLine status(err, options.progress);
  RecordedEventDecoder decoder(options.path);
  ReceivedEvent event;
  uint64_t sent = 0;
  for (uint64_t pass = 0; !stop.load(std::memory_order_relaxed); ++pass) {
    struct ReplayedSource {
      SourceInfo identity;  // as replayed in this pass
      uint64_t heartbeats = 0;
      uint64_t events = 0;
    };
    std::map<SourceInfo, ReplayedSource> sources;
    auto replayedIdentity = [&](const SourceInfo& original) -> ReplayedSource& {
      auto [it, inserted] = sources.try_emplace(original);
      if (inserted) {
        it->second.identity = original;
        if (pass > 0) {
          // Each pass looks like a restarted job: a new instance of the same run, started one
          // recording later per pass (saturating: the summary's times are the file's word).
          it->second.identity.instanceId = original.instanceId ^ (0x9E3779B97F4A7C15ULL * pass);
          if (it->second.identity.instanceId == 0) it->second.identity.instanceId = 1;
          int64_t shift = 0;
          int64_t start = toWireTime(original.startTime);
          if (__builtin_mul_overflow(static_cast<int64_t>(std::min<uint64_t>(recordedNs, INT64_MAX)),
                                     static_cast<int64_t>(std::min<uint64_t>(pass, INT64_MAX)), &shift) ||
              __builtin_add_overflow(start, shift, &start)) {
            start = std::numeric_limits<int64_t>::max();
          }
          it->second.identity.startTime = fromWireTime(start);
        }
      }
      return it->second;
    };
    auto sendHeartbeats = [&](MessageKind kind) {
      for (auto& [original, state] : sources) {
        PublisherCounters counters;
        counters.timestamp = std::chrono::system_clock::now();
        counters.interval = std::chrono::milliseconds(1000);
        counters.published = state.events;
        socket.send(kHeartbeatTopic, encodeHeartbeatPayload(kind, state.identity, state.heartbeats++, counters));
      }
    };
    ReplayPacer passPacer = pacer;
    auto due = clock.now();
    auto nextHeartbeat = due;
    const uint64_t sentBefore = sent;
    reader->forEachMessage([&](const RecordedMessage& message) {
      due += passPacer.next(message.logTimeNs);
      if (passPacer.cut() && passPacer.cutCount() <= kMaxGapNotices) {
        err << (options.progress ? "\r\033[K" : "") << "livemonctl replay: "
            << fixed(static_cast<double>(passPacer.recordedGapNs()) / 1e9, 1) << " s without events before "
            << utcText(message.logTimeNs) << " cut to " << shortest(std::chrono::duration<double>(options.maxGap).count())
            << " s" << (passPacer.cutCount() == kMaxGapNotices ? " (further long gaps are cut without a notice)" : "")
            << '\n';
      }
      while (!stop.load(std::memory_order_relaxed)) {
        const auto now = clock.now();
        if (now >= nextHeartbeat) {
          sendHeartbeats(MessageKind::Heartbeat);
          nextHeartbeat = now + std::chrono::milliseconds(1000);
        }
        if (now >= due) break;
        sleepUntil(std::min({due, nextHeartbeat, now + std::chrono::milliseconds(50)}));
      }
      if (stop.load(std::memory_order_relaxed)) return false;
      if (!decoder.decode(message, event)) return true;
      ReplayedSource& source = replayedIdentity(*event.source);
      ++source.events;
      if (pass == 0) {
        socket.send(message.channel->topic, message.payload);
      } else {
        socket.send(message.channel->topic,
                    encodeEventsPayload(source.identity, event.sequence, event.event.name, std::vector<Event>{event.event}));
      }
      ++sent;
      const double at = static_cast<double>(after(summary.startTimeNs, message.logTimeNs)) / 1e9;
      status.show("replaying: " + fixed(at, 1) + " / " + fixed(recordedSeconds, 1) + " s (" +
                  fixed(recordedSeconds > 0 ? std::min(100.0, 100.0 * at / recordedSeconds) : 100.0, 0) + " %), " +
                  std::to_string(sent) + " events" + (pass > 0 ? ", pass " + std::to_string(pass + 1) : ""));
      return true;
    });
    reportProblems();
    const bool again = options.loop && !stop.load() && sent > sentBefore;
    sendHeartbeats(again ? MessageKind::Heartbeat : MessageKind::Goodbye);
    if (options.loop && sent == sentBefore && !stop.load()) {
      // Nothing readable: another pass would only spin.
      status.finish();
      err << "livemonctl replay: no event of " << printableText(options.path) << " could be replayed\n";
      return 1;
    }
    if (!again) break;
  }
  status.finish();
  out << "replayed " << sent << " events" << std::endl;
  return 0;
}

}  // namespace livemon::transport
