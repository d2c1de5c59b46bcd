#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <livemon/event.h>
#include <livemon/transport/wire_format.h>

#include <livemon/detail/msgpack_writer.h>

// Pieces of the version-1 encoder shared by encodeEventsPayload and the Publisher, which writes
// event entries on the logging thread and the header later on its I/O thread.
namespace livemon::transport::detail {

// Writes the map header and the "v", "kind", "src" and "seq" entries that start every payload.
// Throws std::invalid_argument when identityBroken(source) (a reader would refuse the payload);
// the Publisher checks its identity once, when it is made.
void writePayloadStart(MsgpackWriter& writer, uint32_t mapEntries, MessageKind kind, const SourceInfo& source,
                       uint64_t sequence);

// Map entries of an events payload: v, kind, src, seq, name, events, and steps when one of the
// events has a step.
inline constexpr uint32_t kEventsPayloadEntries = 6;
inline constexpr uint32_t kEventsPayloadEntriesWithSteps = 7;

// The most bytes one element of "steps" takes (int 64).
inline constexpr std::size_t kMaxStepBytes = 9;

// Why an event cannot be encoded, or nullptr when it can.
const char* eventLimitBroken(const Event& event, const WireLimits& limits) noexcept;

// Appends one event entry, [timestamp, {key: value, ...}]. The event must be within `limits`
// (eventLimitBroken returned nullptr).
void appendEventEntry(std::string& out, const Event& event);

// Appends one element of the "steps" array: the step as an integer, or nil when there is none.
void appendStep(std::string& out, const std::optional<int64_t>& step);

// Appends the "steps" key and the header of its array of `count` elements.
void appendStepsHeader(std::string& out, uint32_t count);

// Room kept in a payload for everything but its event entries: the identity, name and headers.
inline constexpr std::size_t kPayloadHeaderReserve = 4 * 1024 + 64;

}  // namespace livemon::transport::detail
