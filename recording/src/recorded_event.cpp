#include <livemon/transport/recorded_event.h>

#include <vector>

namespace livemon::transport {

bool recordEvent(RecordingWriter& writer, const ReceivedEvent& event) {
  static const SourceInfo unknown{};
  const SourceInfo& source = event.source ? *event.source : unknown;
  const std::string payload =
      encodeEventsPayload(source, event.sequence, event.event.name, std::vector<Event>{event.event});
  return writer.write(event.event.name, static_cast<uint64_t>(toWireTime(event.receivedAt)),
                      static_cast<uint64_t>(toWireTime(event.event.timestamp)), payload);
}

RecordedEventDecoder::RecordedEventDecoder(const std::string& recordingPath, WireLimits limits)
    : path_(std::make_shared<const std::string>(recordingPath)), limits_(limits) {}

bool RecordedEventDecoder::decode(const RecordedMessage& message, ReceivedEvent& out, std::string* error) {
  const DecodeStatus status = decodeMessage(message.channel->topic, message.payload, limits_, scratch_, error);
  if (status != DecodeStatus::Ok) {
    if (error && error->empty()) *error = std::string(decodeStatusName(status));
    return false;
  }
  if (scratch_.kind != MessageKind::Events || scratch_.events.size() != 1) {
    if (error) *error = "a recorded message must hold exactly one event";
    return false;
  }
  out.event = std::move(scratch_.events.front());
  out.event.name = scratch_.name;
  auto& shared = sources_[scratch_.source];
  if (!shared) shared = std::make_shared<const SourceInfo>(scratch_.source);
  out.source = shared;
  out.sequence = scratch_.sequence;
  out.endpoint = path_;
  out.receivedAt = fromWireTime(static_cast<int64_t>(message.logTimeNs));
  return true;
}

}  // namespace livemon::transport
