#pragma once

#include <map>
#include <memory>
#include <string>

#include <livemon/transport/recording.h>
#include <livemon/transport/received_event.h>
#include <livemon/transport/wire_format.h>

// Received events as a recording holds them, and back: what a recorder, a replay and the
// dashboard share (docs/recording-format.md).
namespace livemon::transport {

// Appends `event` to `writer`: channel = event name, log time = when it was received, publish
// time = the event's timestamp, payload = a version-1 wire payload holding just this event with
// its source and sequence number (docs/recording-format.md). Returns false when the writer could
// not take the event's name (RecordingWriter::write(): beyond kMaxRecordingChannels names); the
// writer counts it in droppedCount() and goes on recording.
bool recordEvent(RecordingWriter& writer, const ReceivedEvent& event);

// Not thread-safe: one thread decodes.
// Decodes recorded messages back into events with their sources and sequence numbers.
// `receivedAt` is the message's log time; `endpoint` is the recording's path. Sources are shared:
// every event of one publisher instance points at the same SourceInfo.
class RecordedEventDecoder {
 public:
  explicit RecordedEventDecoder(const std::string& recordingPath, WireLimits limits = {});

  // False, with the reason in `error`, when the payload is not a single-event version-1 message.
  bool decode(const RecordedMessage& message, ReceivedEvent& out, std::string* error = nullptr);

 private:
  std::shared_ptr<const std::string> path_;
  WireLimits limits_;
  WireMessage scratch_;
  std::map<SourceInfo, std::shared_ptr<const SourceInfo>> sources_;
};

}  // namespace livemon::transport
