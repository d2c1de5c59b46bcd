#include "mcap_records.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace livemon::transport::mcap {
namespace {

std::string hexByte(uint8_t value) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", value);
  return text;
}

std::string opcodeName(uint8_t op) {
  switch (static_cast<Opcode>(op)) {
    case Opcode::Header: return "Header";
    case Opcode::Footer: return "Footer";
    case Opcode::Schema: return "Schema";
    case Opcode::Channel: return "Channel";
    case Opcode::Message: return "Message";
    case Opcode::Chunk: return "Chunk";
    case Opcode::MessageIndex: return "Message Index";
    case Opcode::ChunkIndex: return "Chunk Index";
    case Opcode::Attachment: return "Attachment";
    case Opcode::AttachmentIndex: return "Attachment Index";
    case Opcode::Statistics: return "Statistics";
    case Opcode::Metadata: return "Metadata";
    case Opcode::MetadataIndex: return "Metadata Index";
    case Opcode::SummaryOffset: return "Summary Offset";
    case Opcode::DataEnd: return "Data End";
  }
  return "unknown record " + hexByte(op);
}

}  // namespace

std::string recordName(uint8_t op) {
  std::string name = opcodeName(op);
  return name.rfind("unknown", 0) == 0 ? name : name + " record";
}

RecordingChannel parseChannel(ByteReader& r) {
  RecordingChannel channel;
  channel.id = r.u16();
  r.u16();  // schema id
  channel.topic = std::string(r.string("channel topic"));
  if (channel.topic.size() > kMaxRecordingTopicBytes) {
    r.fail("a channel topic of " + std::to_string(channel.topic.size()) + " bytes, longer than any event name (" +
           std::to_string(kMaxRecordingTopicBytes) + ")");
  }
  channel.messageEncoding = std::string(r.string("message encoding"));
  if (channel.messageEncoding.size() > kMaxEncodingBytes) r.fail("a message encoding name longer than any");
  ByteReader metadata(r.string("channel metadata"), r.offset());
  if (metadata.remaining() > kMaxChannelMetadataBytes) r.fail("more channel metadata than livemon reads");
  while (metadata.remaining() > 0) {
    std::string key(metadata.string("metadata key"));
    channel.metadata[key] = std::string(metadata.string("metadata value"));
  }
  return channel;
}

}  // namespace livemon::transport::mcap

namespace livemon::transport {

int recordingFormatVersion(const RecordingChannel& channel) noexcept {
  const auto found = channel.metadata.find(std::string(kRecordingFormatKey));
  if (found == channel.metadata.end()) return 1;
  int version = 0;
  const std::string& text = found->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), version);
  return error == std::errc() && end == text.data() + text.size() && version >= 1 ? version : 1;
}

int recordingFormatVersion(const RecordingSummary& summary) noexcept {
  int version = 1;
  for (const auto& [id, channel] : summary.channels) version = std::max(version, recordingFormatVersion(channel));
  return version;
}

}  // namespace livemon::transport
