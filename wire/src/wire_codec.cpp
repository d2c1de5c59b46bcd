#include <livemon/detail/wire_codec.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>

#include <livemon/transport/wire_format.h>

#include <livemon/detail/msgpack_writer.h>

namespace livemon::transport::detail {

void writePayloadStart(MsgpackWriter& writer, uint32_t mapEntries, MessageKind kind, const SourceInfo& source,
                       uint64_t sequence) {
  if (const char* broken = identityBroken(source)) {
    throw std::invalid_argument(std::string("source \"") + describe(source) + "\": " + broken);
  }
  writer.mapHeader(mapEntries);
  writer.str("v");
  writer.uint(kWireVersion);
  writer.str("kind");
  writer.str(messageKindName(kind));
  writer.str("src");
  // The optional keys are written only when set, so a source without them is encoded byte for
  // byte as before they existed.
  writer.mapHeader(5 + (source.rank ? 1 : 0) + (source.worldSize ? 1 : 0) + (source.localRank ? 1 : 0));
  writer.str("run");
  writer.str(source.run);
  writer.str("host");
  writer.str(source.host);
  writer.str("pid");
  writer.sint(source.pid);
  if (source.rank) {
    writer.str("rank");
    writer.sint(*source.rank);
  }
  if (source.worldSize) {
    writer.str("world");
    writer.sint(*source.worldSize);
  }
  if (source.localRank) {
    writer.str("local_rank");
    writer.sint(*source.localRank);
  }
  writer.str("id");
  writer.uint(source.instanceId);
  writer.str("start");
  writer.sint(toWireTime(source.startTime));
  writer.str("seq");
  writer.uint(sequence);
}

namespace {

// The limits an event breaks before its fields are looked at.
const char* headLimitBroken(const Event& event, const WireLimits& limits) noexcept {
  if (event.name.size() > limits.maxTopicBytes) return "event name too long";
  if (event.data.size() > limits.maxFieldsPerEvent) return "too many fields";
  return nullptr;
}

// One field's limits; adds to `bytes` what the field may take on the wire, at most.
const char* fieldLimitBroken(const std::string& key, const DataValue& value, const WireLimits& limits,
                             std::size_t& bytes) noexcept {
  if (key.size() > limits.maxKeyBytes) return "data key too long";
  bytes += key.size() + 14;  // a string header of 5, a value of at most 9
  if (const auto* text = std::get_if<std::string>(&value)) {
    if (text->size() > limits.maxStringBytes) return "string value too long";
    bytes += text->size();
  }
  return nullptr;
}

// Before the fields: the entry's array header, timestamp and map header, and a step.
constexpr std::size_t kEntryHeadBytes = 16 + kMaxStepBytes;

const char* totalLimitBroken(std::size_t bytes, const WireLimits& limits) noexcept {
  return bytes + kPayloadHeaderReserve > limits.maxPayloadBytes ? "event larger than a payload" : nullptr;
}

template <typename Writer>
void writeValue(Writer& writer, const DataValue& value) {
  switch (value.index()) {
    case 0: writer.str(*std::get_if<std::string>(&value)); break;
    case 1: writer.float64(*std::get_if<double>(&value)); break;
    case 2: writer.sint(*std::get_if<int64_t>(&value)); break;
    default: writer.boolean(*std::get_if<bool>(&value)); break;
  }
}

template <typename Writer>
void writeEntryHead(Writer& writer, const Event& event) {
  writer.arrayHeader(2);
  writer.sint(toWireTime(event.timestamp));
  writer.mapHeader(static_cast<uint32_t>(event.data.size()));
}

}  // namespace

const char* eventLimitBroken(const Event& event, const WireLimits& limits) noexcept {
  if (const char* broken = headLimitBroken(event, limits)) return broken;
  std::size_t bytes = kEntryHeadBytes;
  for (const auto& [key, value] : event.data) {
    if (const char* broken = fieldLimitBroken(key, value, limits, bytes)) return broken;
  }
  return totalLimitBroken(bytes, limits);
}

void appendEventEntry(std::string& out, const Event& event) {
  MsgpackWriter writer(out);
  writeEntryHead(writer, event);
  for (const auto& [key, value] : event.data) {
    writer.str(key);
    writeValue(writer, value);
  }
}

void RecordBuffer::grow(std::size_t bytes) {
  const std::size_t capacity = std::max({size_ + bytes, 2 * capacity_, std::size_t{256}});
  auto data = std::make_unique_for_overwrite<char[]>(capacity);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

const char* appendCheckedEventEntry(RecordBuffer& out, const Event& event, const WireLimits& limits) {
  if (const char* broken = headLimitBroken(event, limits)) return broken;
  std::size_t bytes = kEntryHeadBytes;
  RawMsgpackWriter head(RawSink{out.reserve(kEntryHeadBytes)});
  writeEntryHead(head, event);
  out.commit(head.sink().cursor);
  for (const auto& [key, value] : event.data) {
    const std::size_t before = bytes;
    if (const char* broken = fieldLimitBroken(key, value, limits, bytes)) return broken;
    RawMsgpackWriter writer(RawSink{out.reserve(bytes - before)});
    writer.str(key);
    writeValue(writer, value);
    out.commit(writer.sink().cursor);
  }
  return totalLimitBroken(bytes, limits);
}

void appendStep(std::string& out, const std::optional<int64_t>& step) {
  MsgpackWriter writer(out);
  if (step) {
    writer.sint(*step);
  } else {
    writer.nil();
  }
}

void appendStepsHeader(std::string& out, uint32_t count) {
  MsgpackWriter writer(out);
  writer.str("steps");
  writer.arrayHeader(count);
}

}  // namespace livemon::transport::detail
