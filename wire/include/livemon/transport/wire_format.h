#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/event.h>
#include <livemon/source_info.h>

// Version 1 of the livemon wire format, specified byte for byte in docs/wire-format.md.
// Nothing here depends on ZeroMQ: recorders and tools can encode and decode payloads directly.
namespace livemon::transport {

inline constexpr std::string_view kDefaultEndpoint = "tcp://127.0.0.1:5555";

// The value of the "v" key that starts every payload.
inline constexpr uint64_t kWireVersion = 1;

// Topic (first frame) of heartbeat and goodbye messages. Event messages use the event name.
inline constexpr std::string_view kHeartbeatTopic = "livemon.heartbeat";

// Topic (first frame) of the history protocol's own messages: a request, and the end of an
// answer (docs/wire-format.md, "History"). They travel on a source's history socket, never on
// its PUB socket.
inline constexpr std::string_view kHistoryTopic = "livemon.history";

// Thread-safety: a plain value type.
//
// The limits of version 1. A publisher never sends more; a subscriber rejects more.
struct WireLimits {
  std::size_t maxPayloadBytes = 4 * 1024 * 1024;  // the MessagePack frame
  std::size_t maxTopicBytes = 1024;               // also the longest event name
  std::size_t maxEventsPerMessage = 65536;
  std::size_t maxFieldsPerEvent = 1024;
  std::size_t maxKeyBytes = 1024;                 // a data key
  std::size_t maxStringBytes = 65536;             // a string value
  std::size_t maxIdentityStringBytes = 1024;      // run name, host
  // What the decoded events of one message may cost in memory: this many bytes per payload byte
  // plus the allowance. Each decoded event holds its own copy of the event name, so without it
  // 200 KB of empty events under a 1 KiB name decode to 75 MB. An event with a real timestamp
  // takes at least 11 bytes on the wire and at most some 1.2 KB decoded, so every message a
  // livemon publisher sends fits, whatever its names.
  std::size_t decodedBytesPerPayloadByte = 128;
  std::size_t decodedBytesAllowance = 64 * 1024;
};

// Who published a message: the identity type of core (<livemon/source_info.h>), named here too so
// code written against the wire's name keeps compiling; describe() is core's.
using SourceInfo = livemon::SourceInfo;
using livemon::describe;

// What makes `source`'s rank, worldSize and localRank unfit for the wire, or nullptr when they
// are fine: a worldSize below 1, a negative localRank, or a rank or localRank of worldSize or
// more (or a negative rank) beside a worldSize. A reader takes such a "src" for malformed. A rank
// alone may be any integer, as before worldSize existed.
const char* identityBroken(const SourceInfo& source) noexcept;

// The kinds of message. Values only ever grow.
enum class MessageKind : uint8_t {
  Events = 0,     // a batch of events that share one name
  Heartbeat = 1,  // "still here", with the publisher's counters
  Goodbye = 2,    // the publisher is shutting down cleanly
};

// The "kind" string of each MessageKind: "events", "heartbeat", "goodbye".
std::string_view messageKindName(MessageKind kind) noexcept;

// Thread-safety: a plain value type. Counters a publisher reports in its heartbeats and goodbye.
struct PublisherCounters {
  std::chrono::system_clock::time_point timestamp;  // when the heartbeat was sent
  std::chrono::milliseconds interval{0};            // how often heartbeats are sent
  uint64_t published = 0;                           // events handed to the socket so far
  uint64_t dropped = 0;                             // events the publisher could not send
};

// Thread-safety: a plain value type. One decoded payload.
struct WireMessage {
  MessageKind kind = MessageKind::Events;
  SourceInfo source;
  // Events: the sequence number of events[0]; events[i] has sequence + i. Numbers count the
  // events of one topic from one publisher, from 0, so a subscriber filtering by topic still sees
  // them consecutive. Heartbeat/Goodbye: the number of earlier heartbeat-topic messages.
  uint64_t sequence = 0;
  std::string name;             // Events only
  std::vector<Event> events;    // Events only
  PublisherCounters counters;   // Heartbeat and Goodbye only
  // Heartbeat and Goodbye: the endpoint where this source serves the history of what it sent, as
  // it bound it ("tcp://127.0.0.1:40123"); empty when it serves none.
  std::string history;
};

enum class DecodeStatus : uint8_t {
  Ok,
  Malformed,           // not a valid version-1 message
  TooLarge,            // breaks a WireLimits limit
  UnsupportedVersion,  // "v" is not kWireVersion: skip it
  UnknownKind,         // a kind this reader does not know (added by a later writer): skip it
};

std::string_view decodeStatusName(DecodeStatus status) noexcept;

// Decodes one message (its topic frame and payload frame). Never throws for bad input: on
// failure returns the status and, when `error` is given, a description of what broke and where.
// `out` is unspecified after a failure.
DecodeStatus decodeMessage(std::string_view topic, std::string_view payload, const WireLimits& limits,
                           WireMessage& out, std::string* error = nullptr);

// Encodes an events payload; every event must carry `name`. The events' own names are ignored.
// Throws std::invalid_argument naming the broken limit when the result would break `limits`, and
// naming the fault when identityBroken(source).
std::string encodeEventsPayload(const SourceInfo& source, uint64_t sequence, std::string_view name,
                                const std::vector<Event>& events, const WireLimits& limits = {});

// Encodes a heartbeat or goodbye payload (kind must be Heartbeat or Goodbye); `history`, when not
// empty, is the endpoint serving the source's history. Throws std::invalid_argument when
// identityBroken(source).
std::string encodeHeartbeatPayload(MessageKind kind, const SourceInfo& source, uint64_t sequence,
                                   const PublisherCounters& counters, std::string_view history = {});

// Thread-safety: a plain value type. A history request: the topic prefixes the reader follows
// (empty: all of them). At most kMaxHistoryFilters, each at most WireLimits::maxTopicBytes.
struct HistoryRequest {
  std::vector<std::string> filters;
};
inline constexpr std::size_t kMaxHistoryFilters = 64;

// Thread-safety: a plain value type. The last message of a history answer.
struct HistoryEnd {
  uint64_t messages = 0;  // event messages the answer carried before this one
  // True when the source no longer holds everything it sent: the oldest messages went to keep
  // the history within its byte bound.
  bool truncated = false;
  // The timestamp of the first event the source still holds; none when it holds nothing.
  std::optional<std::chrono::system_clock::time_point> oldest;
  std::string error;  // why the request was refused ("busy"); empty when it was answered
};

// The payloads of the history protocol (docs/wire-format.md). The decoders never throw for bad
// input: they return the status and, when `error` is given, what broke and where.
std::string encodeHistoryRequest(const HistoryRequest& request);
DecodeStatus decodeHistoryRequest(std::string_view payload, const WireLimits& limits, HistoryRequest& out,
                                  std::string* error = nullptr);
std::string encodeHistoryEnd(const HistoryEnd& end);
DecodeStatus decodeHistoryEnd(std::string_view payload, HistoryEnd& out, std::string* error = nullptr);

// Nanoseconds since the Unix epoch, the wire form of every timestamp.
int64_t toWireTime(std::chrono::system_clock::time_point t) noexcept;
std::chrono::system_clock::time_point fromWireTime(int64_t nanoseconds) noexcept;

}  // namespace livemon::transport
