#include <livemon/detail/wire_codec.h>

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

const char* eventLimitBroken(const Event& event, const WireLimits& limits) noexcept {
  if (event.name.size() > limits.maxTopicBytes) return "event name too long";
  if (event.data.size() > limits.maxFieldsPerEvent) return "too many fields";
  std::size_t bytes = 16 + kMaxStepBytes;
  for (const auto& [key, value] : event.data) {
    if (key.size() > limits.maxKeyBytes) return "data key too long";
    bytes += key.size() + 14;
    if (const auto* text = std::get_if<std::string>(&value)) {
      if (text->size() > limits.maxStringBytes) return "string value too long";
      bytes += text->size();
    }
  }
  if (bytes + kPayloadHeaderReserve > limits.maxPayloadBytes) return "event larger than a payload";
  return nullptr;
}

void appendEventEntry(std::string& out, const Event& event) {
  MsgpackWriter writer(out);
  writer.arrayHeader(2);
  writer.sint(toWireTime(event.timestamp));
  writer.mapHeader(static_cast<uint32_t>(event.data.size()));
  for (const auto& [key, value] : event.data) {
    writer.str(key);
    switch (value.index()) {
      case 0: writer.str(*std::get_if<std::string>(&value)); break;
      case 1: writer.float64(*std::get_if<double>(&value)); break;
      case 2: writer.sint(*std::get_if<int64_t>(&value)); break;
      default: writer.boolean(*std::get_if<bool>(&value)); break;
    }
  }
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
