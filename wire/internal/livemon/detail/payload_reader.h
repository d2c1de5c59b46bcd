#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <livemon/transport/wire_format.h>

#include <livemon/detail/msgpack_reader.h>

// The one reader of version-1 payloads (docs/wire-format.md) behind both decoders: decodeMessage,
// which builds owning Events, and EventBatchDecoder, which lends views into the payload. Every
// check, limit and the decoded-size bound are here, so the two accept and refuse the same bytes
// with the same status; only what they do with a field differs (the Sink). Internal to livemon::wire.
namespace livemon::transport::detail {

// Depth allowed for values under unknown keys, which a reader skips.
inline constexpr int kMaxSkipDepth = 16;
// The longest key of the payload and "src" maps, and the longest "kind" (data keys have their own
// limit, WireLimits::maxKeyBytes).
inline constexpr std::size_t kMaxStructureKeyBytes = 1024;

// The heap bytes a std::string of `size` bytes takes beyond the string itself (none within the
// short-string buffer).
constexpr std::size_t heapBytes(std::size_t size) { return size < 16 ? 0 : size + 1; }
// A data field's node in an owning event's hash map, with its share of the bucket array.
inline constexpr std::size_t kFieldNodeBytes = 88 + 2 * sizeof(void*);

// A data value as read, its text still in the payload; the alternatives in DataValue's order.
using RawValue = std::variant<std::string_view, double, int64_t, bool>;

[[noreturn]] inline void tooLarge(const std::string& what, std::size_t size, std::size_t limit) {
  throw DecodeFailure{DecodeStatus::TooLarge,
                      what + " " + std::to_string(size) + " exceeds the limit of " + std::to_string(limit)};
}

// Reads a "src" map into `source`, reusing its strings' memory.
void readSource(MsgpackReader& reader, const WireLimits& limits, SourceInfo& source);

// Thread-safety: a plain value type. The header of a payload as read: everything but the
// events, which go to the Sink.
struct PayloadHeader {
  WireMessage& message;  // kind, source, sequence, counters, history (not name nor events)
  std::string_view name;  // in the payload
};

// Reads one event entry, handing its timestamp and fields to `sink`; returns what it would cost
// an owning decoder in memory beyond the Event itself and its name (the decoded-size bound).
//
// Sink: beginEvent(int64_t timestampNs, uint32_t fields); field(std::string_view key, T value) for T
// each of RawValue's alternatives;
// endEvent() -> false when a key came twice in the event.
template <typename Sink>
std::size_t readEvent(MsgpackReader& reader, const WireLimits& limits, Sink& sink) {
  if (reader.arrayHeader("event") != 2) reader.fail("an event is not a [timestamp, data] pair");
  const int64_t timestamp = reader.int64("event timestamp");
  const uint32_t fields = reader.mapHeader("event data");
  if (fields > limits.maxFieldsPerEvent) tooLarge("event field count", fields, limits.maxFieldsPerEvent);
  sink.beginEvent(timestamp, fields);
  std::size_t decodedBytes = fields * kFieldNodeBytes;
  for (uint32_t i = 0; i < fields; ++i) {
    const std::string_view key = reader.str("data key", limits.maxKeyBytes);
    // Each value goes to the sink as its own type: a RawValue built here and copied on would be
    // stored in parts and reloaded whole, a store-forwarding stall per field.
    switch (reader.peekType()) {
      case MsgpackReader::Type::Float: sink.field(key, reader.float64("data value")); break;
      case MsgpackReader::Type::Int: sink.field(key, reader.int64("data value")); break;
      case MsgpackReader::Type::Bool: sink.field(key, reader.boolean("data value")); break;
      case MsgpackReader::Type::Str: {
        const std::string_view text = reader.str("string value", limits.maxStringBytes);
        decodedBytes += heapBytes(text.size());
        sink.field(key, text);
        break;
      }
      default:
        reader.fail("the value of \"" + std::string(key) + "\" is not a string, float, integer or boolean");
    }
    decodedBytes += heapBytes(key.size());
  }
  // Checked once the event is read, the same way by both decoders.
  if (!sink.endEvent()) reader.fail("duplicate data key in one event");
  return decodedBytes;
}

// Reads a whole payload. Sink, beyond readEvent's: reserveEvents(std::size_t);
// std::vector<std::optional<int64_t>>& steps() (emptied here; filled in order);
// std::size_t eventCount(); finish(std::string_view name, bool hasSteps), called once everything
// is read and checked, events only.
template <typename Sink>
void readPayload(std::string_view topic, std::string_view payload, const WireLimits& limits, PayloadHeader& header,
                 Sink& sink) {
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

  WireMessage& out = header.message;
  out.history.clear();
  header.name = {};
  // "steps" may come before "events" (readers accept any key order), so it is held apart until
  // both are read.
  std::vector<std::optional<int64_t>>& steps = sink.steps();
  steps.clear();
  std::size_t decodedBytes = 0;  // what the events cost beyond themselves and their names
  enum Key : uint32_t { Kind = 1, Src = 2, Seq = 4, Name = 8, Events = 16, Ts = 32, Interval = 64, Published = 128,
                        Dropped = 256, Steps = 512, History = 1024 };
  // After "v": the keys in the order of Key's bits.
  const uint32_t seen = readMapEntries(
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
          case Src: readSource(reader, limits, out.source); break;
          case Seq: out.sequence = reader.uint64("\"seq\""); break;
          case Name: header.name = reader.str("\"name\"", limits.maxTopicBytes); break;
          case Events: {
            const uint32_t count = reader.arrayHeader("\"events\"");
            if (count > limits.maxEventsPerMessage) tooLarge("event count", count, limits.maxEventsPerMessage);
            // An event takes at least 3 bytes, so a lying count cannot make this allocate much.
            sink.reserveEvents(std::min<std::size_t>(count, payload.size() / 3));
            for (uint32_t e = 0; e < count; ++e) decodedBytes += readEvent(reader, limits, sink);
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
    if (topic != header.name) MsgpackReader::failAt(0, "the topic is not the event name");
    if (seen & History) MsgpackReader::failAt(0, "an events payload holds \"history\"");
    const std::size_t events = sink.eventCount();
    if ((seen & Steps) && steps.size() != events) {
      MsgpackReader::failAt(0, "\"steps\" holds " + std::to_string(steps.size()) + " steps for " +
                                   std::to_string(events) + " events");
    }
    // Checked before an owning decoder copies the names, which is where a message of many small
    // events under a long name would multiply its size.
    decodedBytes += events * (sizeof(Event) + heapBytes(header.name.size())) +
                    steps.size() * sizeof(std::optional<int64_t>);
    const std::size_t allowed = limits.decodedBytesPerPayloadByte * payload.size() + limits.decodedBytesAllowance;
    if (decodedBytes > allowed) tooLarge("decoded size of", decodedBytes, allowed);
    sink.finish(header.name, (seen & Steps) != 0);
  } else {
    const uint32_t needed = Ts | Interval | Published | Dropped;
    if ((seen & needed) != needed || (seen & (Name | Events | Steps))) {
      MsgpackReader::failAt(0, "a heartbeat needs exactly ts, interval_ms, published and dropped");
    }
    if (topic != kHeartbeatTopic) MsgpackReader::failAt(0, "a heartbeat's topic is not \"livemon.heartbeat\"");
  }
}

}  // namespace livemon::transport::detail
