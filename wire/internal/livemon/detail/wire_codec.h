#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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

// Not thread-safe: one owner at a time. A growable byte buffer that a RawMsgpackWriter writes
// into with no check per byte: reserve() room for what comes, write it, commit() the new end.
// Unlike std::string it neither zero-fills nor checks the capacity at each byte, which is most
// of what encoding an event into a string costs.
class RecordBuffer {
 public:
  // Room for `bytes` more after the content; where they go. Throws std::bad_alloc.
  char* reserve(std::size_t bytes) {
    if (capacity_ - size_ < bytes) grow(bytes);
    return data_.get() + size_;
  }
  // The content now ends at `end`, written since the last reserve().
  void commit(char* end) noexcept { size_ = static_cast<std::size_t>(end - data_.get()); }
  void clear() noexcept { size_ = 0; }
  // Frees the memory when more than `bytes` are held (a rare large event grew it).
  void shrinkAbove(std::size_t bytes) noexcept {
    if (capacity_ > bytes) *this = RecordBuffer();
  }
  std::string_view view() const noexcept { return {data_.get(), size_}; }
  std::size_t size() const noexcept { return size_; }
  char* data() noexcept { return data_.get(); }

 private:
  void grow(std::size_t bytes);

  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// Appends one event entry as appendEventEntry does, byte for byte, checking `limits` on the way
// as eventLimitBroken does: one walk over the fields instead of two. Returns why the event cannot
// be encoded (then what was appended is to be discarded), or nullptr. Throws std::bad_alloc.
const char* appendCheckedEventEntry(RecordBuffer& out, const Event& event, const WireLimits& limits);

// Appends one element of the "steps" array: the step as an integer, or nil when there is none.
void appendStep(std::string& out, const std::optional<int64_t>& step);

// Appends the "steps" key and the header of its array of `count` elements.
void appendStepsHeader(std::string& out, uint32_t count);

// Room kept in a payload for everything but its event entries: the identity, name and headers.
inline constexpr std::size_t kPayloadHeaderReserve = 4 * 1024 + 64;

}  // namespace livemon::transport::detail
