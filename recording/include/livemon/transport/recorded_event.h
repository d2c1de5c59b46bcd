#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <livemon/transport/recording.h>
#include <livemon/transport/received_event.h>
#include <livemon/transport/wire_format.h>

// Received events as a recording holds them, and back: what a recorder, a replay and the
// dashboard share (docs/recording-format.md).
namespace livemon::transport {

// Appends `event` to `writer` as a message of its own: channel = event name, log time = when it
// was received, publish time = the event's timestamp, payload = a version-1 wire payload holding
// just this event with its source and sequence number (docs/recording-format.md). Returns false
// when the writer could not take the event's name (RecordingWriter::write(): beyond
// kMaxRecordingChannels names); the writer counts it in droppedCount() and goes on recording.
// Recorders of received events use ReceivedEventRecorder, which stores whole messages.
bool recordEvent(RecordingWriter& writer, const ReceivedEvent& event);

// Not thread-safe: one owner at a time (the thread that receives the events).
//
// Records received events as the recording format keeps them (docs/recording-format.md): the
// events of a message that arrived whole (ReceivedEvent::message) are recorded as that message,
// its payload bytes as they arrived, written when its first event is recorded; any other event
// (part of a message some of whose events were duplicates, or made up by the caller) as a message
// of its own (recordEvent). Counts events, which a message of many holds many of.
class ReceivedEventRecorder {
 public:
  // `writer` must outlive the recorder.
  explicit ReceivedEventRecorder(RecordingWriter& writer) : writer_(writer) {}

  // Records `event` (and, with the first event of a whole message, the message). Returns false
  // when it was not recorded because the writer could not take its name. Throws RecordingError
  // when the file cannot be written.
  bool record(const ReceivedEvent& event);
  // The same for an event lent by a Subscriber (SubscriberCallbacks::onEventView), in the order
  // lent: a whole message (ReceivedEventView::wholeMessage) is written with its first event.
  bool record(const ReceivedEventView& event);

  RecordingWriter& writer() noexcept { return writer_; }
  // Events recorded, and not recorded because their names found no channel.
  uint64_t events() const noexcept { return events_; }
  uint64_t notRecorded() const noexcept { return notRecorded_; }

 private:
  RecordingWriter& writer_;
  std::shared_ptr<const ReceivedMessage> message_;  // the last message written (or refused)
  bool messageWritten_ = false;
  uint64_t events_ = 0;
  uint64_t notRecorded_ = 0;
};

// Not thread-safe: one owner at a time.
//
// Decodes recorded messages back into events with their sources and sequence numbers: version-1
// messages hold one event, version-2 messages a batch of them (docs/recording-format.md).
// `receivedAt` is the message's log time; `endpoint` is the recording's path. Sources are shared:
// every event of one publisher instance points at the same SourceInfo.
//
// A message is untrusted input: it must be a version-1 events message of its channel's name
// within `limits` (at most limits.maxPayloadBytes of payload and limits.maxEventsPerMessage
// events, docs/wire-format.md "Limits"), else it is refused whole with the reason and where it
// is in the file, and the reader goes on with the next message.
class RecordedEventDecoder {
 public:
  explicit RecordedEventDecoder(const std::string& recordingPath, WireLimits limits = {});

  // Every event of `message` into `out` (replacing what it held), in their order in the message:
  // the i-th has the message's sequence number + i. False, with `out` empty and the reason in
  // `error` (naming the message's channel and place in the file), when the message is refused.
  bool decode(const RecordedMessage& message, std::vector<ReceivedEvent>& out, std::string* error = nullptr);

  // The single event of a message that holds exactly one (every version-1 message). False, with
  // the reason in `error`, for a message refused as above or holding several events.
  bool decode(const RecordedMessage& message, ReceivedEvent& out, std::string* error = nullptr);

 private:
  // Decodes into scratch_; on failure fills `error` with the reason and where.
  bool decodeScratch(const RecordedMessage& message, std::string* error);
  ReceivedEvent eventFromScratch(const RecordedMessage& message, std::size_t index);

  std::shared_ptr<const std::string> path_;
  WireLimits limits_;
  WireMessage scratch_;
  std::shared_ptr<const SourceInfo> source_;  // of scratch_
  std::map<SourceInfo, std::shared_ptr<const SourceInfo>> sources_;
};

}  // namespace livemon::transport
