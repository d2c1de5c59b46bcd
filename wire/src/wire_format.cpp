#include <livemon/transport/wire_format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>

#include <livemon/detail/msgpack_reader.h>
#include <livemon/detail/msgpack_writer.h>
#include <livemon/detail/wire_codec.h>

namespace livemon::transport {

namespace {

using detail::DecodeFailure;
using detail::MsgpackReader;
using detail::MsgpackWriter;

// Depth allowed for values under unknown keys, which a reader skips.
constexpr int kMaxSkipDepth = 16;
// The longest key of the payload and "src" maps, and the longest "kind" (data keys have their own
// limit, WireLimits::maxKeyBytes).
constexpr std::size_t kMaxStructureKeyBytes = 1024;

[[noreturn]] void tooLarge(const std::string& what, std::size_t size, std::size_t limit) {
  throw DecodeFailure{DecodeStatus::TooLarge,
                      what + " " + std::to_string(size) + " exceeds the limit of " + std::to_string(limit)};
}

SourceInfo readSource(MsgpackReader& reader, const WireLimits& limits) {
  SourceInfo source;
  const uint32_t entries = reader.mapHeader("\"src\"");
  enum Key : uint32_t { Run = 1, Host = 2, Pid = 4, Rank = 8, World = 16, LocalRank = 32, Id = 64, Start = 128 };
  const uint32_t seen = detail::readMapEntries(
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
  return source;
}

// The heap bytes a std::string of `size` bytes takes beyond the string itself (none within the
// short-string buffer).
constexpr std::size_t heapBytes(std::size_t size) { return size < 16 ? 0 : size + 1; }
// A data field's node in the event's hash map, with its share of the bucket array.
constexpr std::size_t kFieldNodeBytes = 88 + 2 * sizeof(void*);

// Returns what the event costs in memory beyond the Event itself and its name.
std::size_t readEvent(MsgpackReader& reader, const WireLimits& limits, Event& event) {
  if (reader.arrayHeader("event") != 2) reader.fail("an event is not a [timestamp, data] pair");
  event.timestamp = fromWireTime(reader.int64("event timestamp"));
  const uint32_t fields = reader.mapHeader("event data");
  if (fields > limits.maxFieldsPerEvent) tooLarge("event field count", fields, limits.maxFieldsPerEvent);
  event.data.reserve(fields);
  std::size_t decodedBytes = fields * kFieldNodeBytes;
  for (uint32_t i = 0; i < fields; ++i) {
    std::string key(reader.str("data key", limits.maxKeyBytes));
    DataValue value;
    switch (reader.peekType()) {
      case MsgpackReader::Type::Float: value = reader.float64("data value"); break;
      case MsgpackReader::Type::Int: value = reader.int64("data value"); break;
      case MsgpackReader::Type::Bool: value = reader.boolean("data value"); break;
      case MsgpackReader::Type::Str: value = std::string(reader.str("string value", limits.maxStringBytes)); break;
      default: reader.fail("the value of \"" + key + "\" is not a string, float, integer or boolean");
    }
    decodedBytes += heapBytes(key.size());
    if (const auto* text = std::get_if<std::string>(&value)) decodedBytes += heapBytes(text->size());
    if (!event.data.emplace(std::move(key), std::move(value)).second) {
      reader.fail("duplicate data key in one event");
    }
  }
  return decodedBytes;
}

void decode(std::string_view topic, std::string_view payload, const WireLimits& limits, WireMessage& out) {
  if (topic.size() > limits.maxTopicBytes) tooLarge("topic of", topic.size(), limits.maxTopicBytes);
  if (payload.size() > limits.maxPayloadBytes) tooLarge("payload of", payload.size(), limits.maxPayloadBytes);

  MsgpackReader reader(payload);
  const uint32_t entries = reader.mapHeader("payload");
  if (entries == 0 || reader.peekType() != MsgpackReader::Type::Str ||
      reader.str("first key", kMaxStructureKeyBytes) != "v") {
    MsgpackReader::failAt(1, "the payload does not start with the key \"v\"");
  }
  if (reader.peekType() != MsgpackReader::Type::Int) reader.fail("\"v\" is not an integer");
  const int64_t version = reader.int64("\"v\"");
  if (version != static_cast<int64_t>(kWireVersion)) {
    throw DecodeFailure{DecodeStatus::UnsupportedVersion,
                        "version " + std::to_string(version) + ", this reader knows version " +
                            std::to_string(kWireVersion)};
  }

  out.events.clear();
  out.name.clear();
  out.history.clear();
  // "steps" may come before "events" (readers accept any key order), so it is held apart until
  // both are read.
  std::vector<std::optional<int64_t>> steps;
  std::size_t decodedBytes = 0;  // what the events cost beyond themselves and their names
  enum Key : uint32_t { Kind = 1, Src = 2, Seq = 4, Name = 8, Events = 16, Ts = 32, Interval = 64, Published = 128,
                        Dropped = 256, Steps = 512, History = 1024 };
  // After "v": the keys in the order of Key's bits.
  const uint32_t seen = detail::readMapEntries(
      reader, entries - 1,
      {"kind", "src", "seq", "name", "events", "ts", "interval_ms", "published", "dropped", "steps", "history"}, "key",
      kMaxStructureKeyBytes, kMaxSkipDepth, [&](uint32_t key) {
        switch (uint32_t{1} << key) {
          case Kind: {
            const std::string_view kind = reader.str("\"kind\"", kMaxStructureKeyBytes);
            if (kind == "events") {
              out.kind = MessageKind::Events;
            } else if (kind == "heartbeat") {
              out.kind = MessageKind::Heartbeat;
            } else if (kind == "goodbye") {
              out.kind = MessageKind::Goodbye;
            } else {
              throw DecodeFailure{DecodeStatus::UnknownKind, "kind \"" + std::string(kind) + "\""};
            }
            break;
          }
          case Src: out.source = readSource(reader, limits); break;
          case Seq: out.sequence = reader.uint64("\"seq\""); break;
          case Name: out.name = reader.str("\"name\"", limits.maxTopicBytes); break;
          case Events: {
            const uint32_t count = reader.arrayHeader("\"events\"");
            if (count > limits.maxEventsPerMessage) tooLarge("event count", count, limits.maxEventsPerMessage);
            // An event takes at least 3 bytes, so a lying count cannot make this allocate much.
            out.events.reserve(std::min<std::size_t>(count, payload.size() / 3));
            for (uint32_t e = 0; e < count; ++e) decodedBytes += readEvent(reader, limits, out.events.emplace_back());
            break;
          }
          case Steps: {
            const uint32_t count = reader.arrayHeader("\"steps\"");
            if (count > limits.maxEventsPerMessage) tooLarge("step count", count, limits.maxEventsPerMessage);
            // A step takes at least 1 byte.
            steps.reserve(std::min<std::size_t>(count, payload.size()));
            for (uint32_t e = 0; e < count; ++e) {
              if (reader.peekType() == MsgpackReader::Type::Nil) {
                reader.skip(1);
                steps.emplace_back();
              } else {
                if (reader.peekType() != MsgpackReader::Type::Int) reader.fail("a step is not an integer or nil");
                steps.emplace_back(reader.int64("step"));
              }
            }
            break;
          }
          case Ts: out.counters.timestamp = fromWireTime(reader.int64("\"ts\"")); break;
          case Interval: out.counters.interval = std::chrono::milliseconds(reader.int64("\"interval_ms\"")); break;
          case Published: out.counters.published = reader.uint64("\"published\""); break;
          case Dropped: out.counters.dropped = reader.uint64("\"dropped\""); break;
          case History: out.history = reader.str("\"history\"", limits.maxTopicBytes); break;
        }
      });
  if (!reader.atEnd()) reader.fail("bytes follow the payload map");
  if ((seen & (Kind | Src | Seq)) != (Kind | Src | Seq)) {
    MsgpackReader::failAt(0, "the payload lacks one of \"kind\", \"src\", \"seq\"");
  }
  if (out.kind == MessageKind::Events) {
    if ((seen & (Name | Events)) != (Name | Events)) {
      MsgpackReader::failAt(0, "an events payload lacks \"name\" or \"events\"");
    }
    if (topic != out.name) MsgpackReader::failAt(0, "the topic is not the event name");
    if (seen & History) MsgpackReader::failAt(0, "an events payload holds \"history\"");
    if ((seen & Steps) && steps.size() != out.events.size()) {
      MsgpackReader::failAt(0, "\"steps\" holds " + std::to_string(steps.size()) + " steps for " +
                                   std::to_string(out.events.size()) + " events");
    }
    // Checked before the names are copied, which is where a message of many small events under a
    // long name would multiply its size.
    decodedBytes += out.events.size() * (sizeof(Event) + heapBytes(out.name.size())) +
                    steps.size() * sizeof(std::optional<int64_t>);
    const std::size_t allowed = limits.decodedBytesPerPayloadByte * payload.size() + limits.decodedBytesAllowance;
    if (decodedBytes > allowed) tooLarge("decoded size of", decodedBytes, allowed);
    for (std::size_t e = 0; e < out.events.size(); ++e) {
      out.events[e].name = out.name;
      if (seen & Steps) out.events[e].step = steps[e];
    }
  } else {
    const uint32_t needed = Ts | Interval | Published | Dropped;
    if ((seen & needed) != needed || (seen & (Name | Events | Steps))) {
      MsgpackReader::failAt(0, "a heartbeat needs exactly ts, interval_ms, published and dropped");
    }
    if (topic != kHeartbeatTopic) MsgpackReader::failAt(0, "a heartbeat's topic is not \"livemon.heartbeat\"");
  }
}

}  // namespace

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
  return detail::decodeGuarded(error, [&] { decode(topic, payload, limits, out); });
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
