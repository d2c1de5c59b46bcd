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

bool ReceivedEventRecorder::record(const ReceivedEvent& event) {
  bool recorded = false;
  if (!event.message) {
    recorded = recordEvent(writer_, event);
  } else if (event.message == message_) {
    recorded = messageWritten_;  // its message is in the file (or was refused) already
  } else {
    // The first event of a message: its log time is when the message arrived, its publish time
    // the first event's timestamp, as in a version-1 recording.
    message_ = event.message;
    messageWritten_ = writer_.write(message_->topic, static_cast<uint64_t>(toWireTime(event.receivedAt)),
                                    static_cast<uint64_t>(toWireTime(event.event.timestamp)), message_->payload);
    recorded = messageWritten_;
  }
  ++(recorded ? events_ : notRecorded_);
  return recorded;
}

bool ReceivedEventRecorder::record(const ReceivedEventView& event) {
  bool recorded = false;
  if (!event.wholeMessage) {
    recorded = recordEvent(writer_, event.toReceivedEvent());
  } else if (&event.event != &event.message[0]) {
    recorded = messageWritten_;  // written (or refused) with the message's first event
  } else {
    message_.reset();
    messageWritten_ = writer_.write(event.message.topic(), static_cast<uint64_t>(toWireTime(event.receivedAt)),
                                    static_cast<uint64_t>(event.event.timestampNs()), event.message.payload());
    recorded = messageWritten_;
  }
  ++(recorded ? events_ : notRecorded_);
  return recorded;
}

RecordedEventDecoder::RecordedEventDecoder(const std::string& recordingPath, WireLimits limits)
    : path_(std::make_shared<const std::string>(recordingPath)), limits_(limits) {}

bool RecordedEventDecoder::decodeScratch(const RecordedMessage& message, std::string* error) {
  std::string reason;
  DecodeStatus status = decodeMessage(message.channel->topic, message.payload, limits_, scratch_, &reason);
  if (status == DecodeStatus::Ok && scratch_.kind != MessageKind::Events) {
    status = DecodeStatus::Malformed;
    reason = "a recorded message must hold events, not a " + std::string(messageKindName(scratch_.kind));
  } else if (status == DecodeStatus::Ok && scratch_.events.empty()) {
    status = DecodeStatus::Malformed;
    reason = "a recorded message must hold at least one event";
  } else if (status == DecodeStatus::Ok && scratch_.sequence > UINT64_MAX - scratch_.events.size()) {
    status = DecodeStatus::Malformed;
    reason = "sequence numbers run past 2^64";
  }
  if (status != DecodeStatus::Ok) {
    if (error) {
      if (reason.empty()) reason = std::string(decodeStatusName(status));
      *error = "the \"" + message.channel->topic + "\" message at byte " + std::to_string(message.offsetInChunk) +
               " of the chunk at byte " + std::to_string(message.chunkOffset) + ": " + reason;
    }
    return false;
  }
  auto& shared = sources_[scratch_.source];
  if (!shared) shared = std::make_shared<const SourceInfo>(scratch_.source);
  source_ = shared;
  return true;
}

ReceivedEvent RecordedEventDecoder::eventFromScratch(const RecordedMessage& message, std::size_t index) {
  ReceivedEvent out;
  out.event = std::move(scratch_.events[index]);
  out.event.name = scratch_.name;
  out.source = source_;
  out.sequence = scratch_.sequence + index;
  out.endpoint = path_;
  out.receivedAt = fromWireTime(static_cast<int64_t>(message.logTimeNs));
  return out;
}

bool RecordedEventDecoder::decode(const RecordedMessage& message, std::vector<ReceivedEvent>& out, std::string* error) {
  out.clear();
  if (!decodeScratch(message, error)) return false;
  out.reserve(scratch_.events.size());
  for (std::size_t i = 0; i < scratch_.events.size(); ++i) out.push_back(eventFromScratch(message, i));
  return true;
}

bool RecordedEventDecoder::decode(const RecordedMessage& message, ReceivedEvent& out, std::string* error) {
  if (!decodeScratch(message, error)) return false;
  if (scratch_.events.size() != 1) {
    if (error) {
      *error = "the \"" + message.channel->topic + "\" message at byte " + std::to_string(message.offsetInChunk) +
               " of the chunk at byte " + std::to_string(message.chunkOffset) + " holds " +
               std::to_string(scratch_.events.size()) + " events, not one";
    }
    return false;
  }
  out = eventFromScratch(message, 0);
  return true;
}

}  // namespace livemon::transport
