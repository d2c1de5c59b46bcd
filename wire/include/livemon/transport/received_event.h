#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <livemon/event.h>
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

}  // namespace livemon::transport
