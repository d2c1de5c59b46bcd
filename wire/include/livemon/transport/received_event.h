#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <livemon/event.h>
#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/wire_format.h>

namespace livemon::transport {

// Thread-safety: a plain value type. An events message as it arrived (docs/wire-format.md): its
// topic and payload frames, which a recorder stores as they are (docs/recording-format.md).
struct ReceivedMessage {
  std::string topic;
  std::string payload;
  uint64_t sequence = 0;  // of its first event
  uint64_t events = 0;    // in the message
};

// Thread-safety: a plain value type. An event as received, with where it came from: what a
// Subscriber delivers and a recording's reader decodes (RecordedEventDecoder).
struct ReceivedEvent {
  Event event;
  std::shared_ptr<const SourceInfo> source;
  uint64_t sequence = 0;                       // among the source's events of this topic
  std::shared_ptr<const std::string> endpoint;  // the endpoint it arrived on, as given to the Subscriber
  std::chrono::system_clock::time_point receivedAt;  // Clock::wallNow() when decoded
  bool fromHistory = false;  // part of a history answer (see SubscriberOptions::history)
  // The message it arrived in, shared by its events, when the Subscriber keeps messages
  // (SubscriberOptions::keepMessages) and delivered every event of it (none was a duplicate);
  // otherwise null.
  std::shared_ptr<const ReceivedMessage> message;
};

// Thread-safety: a plain value type; borrowed: valid only during the call that lends it
// (SubscriberCallbacks::onEventView), like every view it holds.
//
// An event as received, borrowed from the message it arrived in: what a ReceivedEvent says, with
// the event a view into the message's bytes, for a consumer that looks at events without keeping
// them. toReceivedEvent() makes the owning copy of one to keep.
struct ReceivedEventView {
  const EventView& event;
  const EventBatchView& message;  // its topic and payload frames as they arrived, its first sequence number
  const std::shared_ptr<const SourceInfo>& source;
  uint64_t sequence = 0;                        // among the source's events of this topic
  const std::shared_ptr<const std::string>& endpoint;  // the endpoint it arrived on, as given to the Subscriber
  std::chrono::system_clock::time_point receivedAt;    // Clock::wallNow() when decoded
  bool fromHistory = false;  // part of a history answer (see SubscriberOptions::history)
  // Every event of `message` is delivered (none came before over another endpoint), so a recorder
  // may store the message as it arrived, once (ReceivedEvent::message's condition).
  bool wholeMessage = false;

  // The owning event with its source, sequence, endpoint, time and origin (message stays null).
  ReceivedEvent toReceivedEvent() const;
};

}  // namespace livemon::transport
