#include "mcap_records.h"

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
