// Fuzzes the Subscriber's handling of what arrives: framing, decoding, sources (joining, going
// stale, saying goodbye, being forgotten past maxSources, or past maxRankedSources for runs that
// state a world size) and sequence numbers (gaps, duplicates).
// Each input gets a fresh Subscriber connected to an XPUB socket over inproc://, which delivers
// in the calling thread's order without timing. Input: see appendSubscriberMessage in
// fuzz_support.h.
// Properties beyond "no crash, no undefined behaviour, no leak", for each message: it is counted
// once, in the category decodeMessage gives it (a message that decodes may still be rejected as
// malformed: that is the Subscriber's policy); an accepted events message has each event either
// delivered or counted as a duplicate, the delivered ones being its last, in order, with their own
// sequence numbers; the same message again delivers nothing (one publisher reached over two
// endpoints); a gap reports numbers that were skipped; events lent (onEventView, inputs of odd
// length) are those decodeMessage reads. And sources stay within maxSources. How a
// source's numbers may jump between messages is the Subscriber's policy and is not checked.
#include <zmq.h>

#include <string>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "fuzz_support.h"
#include "wire_equality.h"
#include "zmq_support.h"

namespace {

using namespace livemon;
using namespace livemon::transport;

constexpr std::size_t kMaxMessagesPerInput = 64;
constexpr std::size_t kMaxSources = 4;  // small, so inputs reach the point where sources are forgotten
constexpr std::size_t kMaxRankedSources = 6;  // what world sizes may raise it to

// How decodeMessage sees a message, which is what the Subscriber must count it as (it may still
// reject a message that decodes, for reasons of its own, as malformed).
struct Verdict {
  DecodeStatus status = DecodeStatus::Malformed;
  WireMessage message;  // when status is Ok
};

Verdict judge(const std::vector<std::string_view>& frames, const WireLimits& limits) {
  Verdict verdict;
  if (frames.size() == 2) verdict.status = decodeMessage(frames[0], frames[1], limits, verdict.message);
  return verdict;
}

// The XPUB end the messages are sent from. Thread-safety: one thread.
class Sender {
 public:
  explicit Sender(void* context) : socket_(zmq_socket(context, ZMQ_XPUB)) {
    static uint64_t count = 0;
    endpoint_ = "inproc://livemon-fuzz-subscriber-" + std::to_string(count++);
    const int linger = 0;
    const int unlimited = 0;
    LIVEMON_FUZZ_CHECK(socket_ != nullptr);
    LIVEMON_FUZZ_CHECK(zmq_setsockopt(socket_, ZMQ_LINGER, &linger, sizeof linger) == 0);
    LIVEMON_FUZZ_CHECK(zmq_setsockopt(socket_, ZMQ_SNDHWM, &unlimited, sizeof unlimited) == 0);
    LIVEMON_FUZZ_CHECK(zmq_bind(socket_, endpoint_.c_str()) == 0);
  }
  ~Sender() { zmq_close(socket_); }
  Sender(const Sender&) = delete;
  Sender& operator=(const Sender&) = delete;

  const std::string& endpoint() const { return endpoint_; }

  // Waits for the subscriber's subscription, which reaches this socket when it connects; before
  // it, XPUB would drop what is sent. Only a broken harness waits the whole timeout.
  void awaitSubscription() {
    const int timeoutMs = 60'000;
    LIVEMON_FUZZ_CHECK(zmq_setsockopt(socket_, ZMQ_RCVTIMEO, &timeoutMs, sizeof timeoutMs) == 0);
    char buffer[256];
    LIVEMON_FUZZ_CHECK(zmq_recv(socket_, buffer, sizeof buffer, 0) >= 1 && buffer[0] == 1);
  }

  void send(const std::vector<std::string_view>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const int flags = i + 1 < frames.size() ? ZMQ_SNDMORE : 0;
      LIVEMON_FUZZ_CHECK(zmq_send(socket_, frames[i].data(), frames[i].size(), flags) ==
                         static_cast<int>(frames[i].size()));
    }
  }

 private:
  void* socket_;
  std::string endpoint_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  // Held for the whole run: the context lives while someone holds it, and inproc:// needs the
  // subscriber's.
  static const std::shared_ptr<void> context = transport::detail::sharedContext();
  livemon::fuzz::InputReader input(data, size);

  Sender sender(context.get());
  ManualClock clock;
  SubscriberOptions options;
  options.connect = {sender.endpoint()};
  options.clock = &clock;
  options.maxSources = kMaxSources;
  options.maxRankedSources = kMaxRankedSources;
  Subscriber subscriber(options);
  sender.awaitSubscription();

  uint64_t delivered = 0;
  std::vector<uint64_t> sequences;  // delivered for the message just sent
  std::vector<Event> lentEvents;    // their owning copies, when lent
  SubscriberCallbacks callbacks;
  // Inputs of odd length have their events lent (onEventView), the others handed (onEvent): the
  // same properties hold both ways, and a lent event is what decodeMessage reads.
  const bool lend = size % 2 == 1;
  if (lend) {
    callbacks.onEventView = [&](const ReceivedEventView& event) {
      ++delivered;
      LIVEMON_FUZZ_CHECK(event.source != nullptr && event.endpoint != nullptr);
      LIVEMON_FUZZ_CHECK(event.sequence == event.message.sequence() +
                                               static_cast<uint64_t>(&event.event - event.message.begin()));
      sequences.push_back(event.sequence);
      lentEvents.push_back(event.event.toEvent());
    };
  } else {
    callbacks.onEvent = [&](ReceivedEvent& event) {
      ++delivered;
      LIVEMON_FUZZ_CHECK(event.source != nullptr && event.endpoint != nullptr);
      sequences.push_back(event.sequence);
    };
  }
  callbacks.onSourceChange = [&](const SourceChange& change) {
    LIVEMON_FUZZ_CHECK(change.source != nullptr);
    if (change.joined) LIVEMON_FUZZ_CHECK(change.state == SourceState::Alive);
  };
  callbacks.onGap = [&](const GapInfo& gap) {
    LIVEMON_FUZZ_CHECK(gap.source != nullptr);
    LIVEMON_FUZZ_CHECK(gap.received > gap.expected);
  };

  uint64_t sent = 0;
  std::vector<std::string_view> frames;
  std::vector<std::string_view> previous;
  bool previousAccepted = false;  // the previous message was an events message the Subscriber took
  for (std::size_t n = 0; n < kMaxMessagesPerInput && !input.empty(); ++n) {
    const uint8_t control = input.u8();
    // A repeat is how one publisher reached over two endpoints looks; as a flag it costs the
    // fuzzer one bit instead of a copy of the whole message.
    if (!(control & livemon::fuzz::kSubscriberRepeat) || previous.empty()) {
      frames.clear();
      for (int i = 0; i <= (control & 3); ++i) frames.push_back(input.bytes(input.u16()));
    } else {
      frames = previous;
    }
    clock.advance(std::chrono::seconds(control >> 3));
    const Verdict verdict = judge(frames, options.limits);
    const SubscriberStats before = subscriber.stats();
    sequences.clear();
    lentEvents.clear();
    sender.send(frames);
    ++sent;
    // inproc:// hands the message over within zmq_send; a poll or two picks it up.
    for (int polls = 0; polls < 100 && subscriber.stats().messages < sent; ++polls) {
      subscriber.poll(std::chrono::milliseconds(0), callbacks);
    }
    const SubscriberStats after = subscriber.stats();
    LIVEMON_FUZZ_CHECK(after.messages == before.messages + 1);

    const uint64_t malformed = after.malformed - before.malformed;
    const uint64_t oversized = after.oversized - before.oversized;
    const uint64_t unsupported = after.unsupported - before.unsupported;
    const uint64_t heartbeats = after.heartbeats - before.heartbeats;
    const uint64_t duplicates = after.duplicates - before.duplicates;
    LIVEMON_FUZZ_CHECK(after.events - before.events == sequences.size());
    const bool rejected = malformed + oversized + unsupported == 1;
    if (rejected) LIVEMON_FUZZ_CHECK(!after.lastError.empty());
    bool accepted = false;
    switch (verdict.status) {
      case DecodeStatus::Ok:
        accepted = !rejected;
        LIVEMON_FUZZ_CHECK(accepted || malformed == 1);
        break;
      case DecodeStatus::Malformed: LIVEMON_FUZZ_CHECK(malformed == 1); break;
      case DecodeStatus::TooLarge: LIVEMON_FUZZ_CHECK(oversized == 1); break;
      case DecodeStatus::UnsupportedVersion:
      case DecodeStatus::UnknownKind: LIVEMON_FUZZ_CHECK(unsupported == 1); break;
    }
    const bool events = accepted && verdict.message.kind == MessageKind::Events;
    LIVEMON_FUZZ_CHECK(heartbeats == (accepted && !events ? 1u : 0u));
    if (events) {
      const WireMessage& message = verdict.message;
      const uint64_t count = message.events.size();
      LIVEMON_FUZZ_CHECK(sequences.size() + duplicates == count);
      // Those delivered are the message's last ones: events[i] has number sequence + i.
      for (std::size_t i = 0; i < sequences.size(); ++i) {
        LIVEMON_FUZZ_CHECK(sequences[i] == message.sequence + (count - sequences.size()) + i);
        if (lend) {
          LIVEMON_FUZZ_CHECK(livemon::fuzz::sameEvent(lentEvents[i], message.events[count - sequences.size() + i]));
        }
      }
      if (previousAccepted && frames == previous) LIVEMON_FUZZ_CHECK(sequences.empty());
    } else {
      LIVEMON_FUZZ_CHECK(sequences.empty() && duplicates == 0);
    }
    previous = frames;
    previousAccepted = events;
  }
  subscriber.poll(std::chrono::milliseconds(0), callbacks);

  LIVEMON_FUZZ_CHECK(subscriber.stats().events == delivered);
  LIVEMON_FUZZ_CHECK(subscriber.sources().size() <= kMaxRankedSources);
  const auto endpoints = subscriber.endpoints();
  LIVEMON_FUZZ_CHECK(endpoints.size() == 1 && endpoints.front().messages == sent);
  return 0;
}
