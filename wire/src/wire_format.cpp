#include <livemon/transport/wire_format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include <livemon/detail/msgpack_reader.h>
#include <livemon/detail/msgpack_writer.h>
#include <livemon/detail/payload_reader.h>
#include <livemon/detail/wire_codec.h>

namespace livemon::transport {

namespace {

using detail::DecodeFailure;
using detail::MsgpackReader;
using detail::MsgpackWriter;

// Builds owning Events from what the payload reader hands it.
class OwningSink {
 public:
  explicit OwningSink(WireMessage& out) : out_(out) {
    out_.events.clear();
    out_.name.clear();
  }

  std::vector<std::optional<int64_t>>& steps() { return steps_; }
  void reserveEvents(std::size_t count) { out_.events.reserve(count); }
  std::size_t eventCount() const { return out_.events.size(); }

  void beginEvent(int64_t timestamp, uint32_t fields) {
    Event& event = out_.events.emplace_back();
    event.timestamp = fromWireTime(timestamp);
    event.data.reserve(fields);
    duplicate_ = false;
  }
  template <typename T>
  void field(std::string_view key, T raw) {
    DataValue value;
    if constexpr (std::is_same_v<T, std::string_view>) {
      value = std::string(raw);
    } else {
      value = raw;
    }
    if (!out_.events.back().data.emplace(key, std::move(value)).second) duplicate_ = true;
  }
  bool endEvent() const { return !duplicate_; }

  void finish(std::string_view name, bool hasSteps) {
    out_.name = name;
    for (std::size_t e = 0; e < out_.events.size(); ++e) {
      out_.events[e].name = out_.name;
      if (hasSteps) out_.events[e].step = steps_[e];
    }
  }

 private:
  WireMessage& out_;
  std::vector<std::optional<int64_t>> steps_;
  bool duplicate_ = false;
};

}  // namespace

namespace detail {

void readSource(MsgpackReader& reader, const WireLimits& limits, SourceInfo& source) {
  source.run.clear();
  source.host.clear();
  source.pid = 0;
  source.rank.reset();
  source.worldSize.reset();
  source.localRank.reset();
  source.instanceId = 0;
  source.startTime = {};
  const uint32_t entries = reader.mapHeader("\"src\"");
  enum Key : uint32_t { Run = 1, Host = 2, Pid = 4, Rank = 8, World = 16, LocalRank = 32, Id = 64, Start = 128 };
  const uint32_t seen = readMapEntries(
      reader, entries, {"run", "host", "pid", "rank", "world", "local_rank", "id", "start"}, "\"src\" key",
      kMaxStructureKeyBytes, kMaxSkipDepth, [&](uint32_t key) {
        switch (uint32_t{1} << key) {
          case Run: source.run = reader.str("\"run\"", limits.maxIdentityStringBytes); break;
          case Host: source.host = reader.str("\"host\"", limits.maxIdentityStringBytes); break;
          case Pid: source.pid = reader.int64("\"pid\""); break;
          case Rank: source.rank = reader.int64("\"rank\""); break;
          case World: source.worldSize = reader.int64("\"world\""); break;
          case LocalRank: source.localRank = reader.int64("\"local_rank\""); break;
          case Id: source.instanceId = reader.uint64("\"id\""); break;
          case Start: source.startTime = fromWireTime(reader.int64("\"start\"")); break;
        }
      });
  const uint32_t needed = Run | Host | Pid | Id | Start;
  if ((seen & needed) != needed) reader.fail("\"src\" lacks one of run, host, pid, id, start");
  if (const char* broken = identityBroken(source)) reader.fail(std::string("\"src\": ") + broken);
}

}  // namespace detail

const char* identityBroken(const SourceInfo& source) noexcept {
  if (source.localRank && *source.localRank < 0) return "local_rank is negative";
  if (!source.worldSize) return nullptr;
  if (*source.worldSize < 1) return "world is below 1";
  if (source.rank && (*source.rank < 0 || *source.rank >= *source.worldSize)) return "rank is not in 0..world-1";
  if (source.localRank && *source.localRank >= *source.worldSize) return "local_rank is not below world";
  return nullptr;
}

std::string_view messageKindName(MessageKind kind) noexcept {
  switch (kind) {
    case MessageKind::Events: return "events";
    case MessageKind::Heartbeat: return "heartbeat";
    case MessageKind::Goodbye: return "goodbye";
  }
  return "unknown";
}

std::string_view decodeStatusName(DecodeStatus status) noexcept {
  switch (status) {
    case DecodeStatus::Ok: return "ok";
    case DecodeStatus::Malformed: return "malformed";
    case DecodeStatus::TooLarge: return "too large";
    case DecodeStatus::UnsupportedVersion: return "unsupported version";
    case DecodeStatus::UnknownKind: return "unknown kind";
  }
  return "unknown";
}

DecodeStatus decodeMessage(std::string_view topic, std::string_view payload, const WireLimits& limits,
                           WireMessage& out, std::string* error) {
  return detail::decodeGuarded(error, [&] {
    OwningSink sink(out);
    detail::PayloadHeader header{out, {}};
    detail::readPayload(topic, payload, limits, header, sink);
  });
}

std::string encodeEventsPayload(const SourceInfo& source, uint64_t sequence, std::string_view name,
                                const std::vector<Event>& events, const WireLimits& limits) {
  if (name.size() > limits.maxTopicBytes) throw std::invalid_argument("event name longer than maxTopicBytes");
  if (events.size() > limits.maxEventsPerMessage) {
    throw std::invalid_argument("more than maxEventsPerMessage events: " + std::to_string(events.size()));
  }
  bool anyStep = false;
  for (const Event& event : events) anyStep = anyStep || event.step.has_value();
  // Only `step` goes into "steps": an int data field "step" travels as the data field it is.
  std::string out;
  MsgpackWriter writer(out);
  detail::writePayloadStart(writer,
                            anyStep ? detail::kEventsPayloadEntriesWithSteps : detail::kEventsPayloadEntries,
                            MessageKind::Events, source, sequence);
  writer.str("name");
  writer.str(name);
  writer.str("events");
  writer.arrayHeader(static_cast<uint32_t>(events.size()));
  for (const Event& event : events) {
    if (const char* broken = detail::eventLimitBroken(event, limits)) {
      throw std::invalid_argument(std::string("event \"") + event.name + "\": " + broken);
    }
    detail::appendEventEntry(out, event);
  }
  if (anyStep) {
    detail::appendStepsHeader(out, static_cast<uint32_t>(events.size()));
    for (const Event& event : events) detail::appendStep(out, event.step);
  }
  if (out.size() > limits.maxPayloadBytes) {
    throw std::invalid_argument("payload of " + std::to_string(out.size()) + " bytes exceeds maxPayloadBytes");
  }
  return out;
}

std::string encodeHeartbeatPayload(MessageKind kind, const SourceInfo& source, uint64_t sequence,
                                   const PublisherCounters& counters, std::string_view history) {
  if (kind == MessageKind::Events) throw std::invalid_argument("encodeHeartbeatPayload: kind is \"events\"");
  std::string out;
  MsgpackWriter writer(out);
  detail::writePayloadStart(writer, history.empty() ? 8 : 9, kind, source, sequence);
  writer.str("ts");
  writer.sint(toWireTime(counters.timestamp));
  writer.str("interval_ms");
  writer.sint(counters.interval.count());
  writer.str("published");
  writer.uint(counters.published);
  writer.str("dropped");
  writer.uint(counters.dropped);
  if (!history.empty()) {
    writer.str("history");
    writer.str(history);
  }
  return out;
}

int64_t toWireTime(std::chrono::system_clock::time_point t) noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

std::chrono::system_clock::time_point fromWireTime(int64_t nanoseconds) noexcept {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::nanoseconds(nanoseconds)));
}

}  // namespace livemon::transport
