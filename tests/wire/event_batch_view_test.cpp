// The borrowed view of a decoded message (event_batch_view.h) against the owning decoder
// (decodeMessage): the same bytes, valid or corrupt, give the same status and the same events.
// GCC 12 misreads std::string's inlined copies here as overlapping (a known false positive).
#pragma GCC diagnostic ignored "-Wrestrict"
#include <livemon/transport/event_batch_view.h>

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include <livemon/detail/msgpack_writer.h>
#include <livemon/detail/wire_codec.h>

#include "wire_equality.h"

namespace livemon::transport {
namespace {

// The view lives only inside the decoder's callback: it cannot be kept by copy or move.
static_assert(!std::is_copy_constructible_v<EventBatchView>);
static_assert(!std::is_move_constructible_v<EventBatchView>);
static_assert(!std::is_default_constructible_v<EventBatchView>);
static_assert(!std::is_copy_constructible_v<EventBatchDecoder>);

SourceInfo source() {
  SourceInfo info;
  info.run = "a run name longer than the short-string buffer";
  info.host = "host";
  info.pid = 42;
  info.rank = 3;
  info.worldSize = 8;
  info.instanceId = 77;
  info.startTime = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  return info;
}

std::vector<Event> sampleEvents() {
  std::vector<Event> events;
  for (int i = 0; i < 5; ++i) {
    Event event{"train.step", std::chrono::system_clock::time_point(std::chrono::milliseconds(1000 + i)), {}};
    event.data["loss"] = 0.5 * i;
    event.data["tokens"] = int64_t{1000 + i};
    event.data["phase"] = std::string(i == 2 ? 40 : 3, 'p');
    event.data["ok"] = i % 2 == 0;
    if (i != 1) event.step = 10 + i;
    events.push_back(event);
  }
  return events;
}

// Decodes with both; they must agree on the status, the message, and (with `error`) the reason.
void expectAgreement(std::string_view topic, std::string_view payload, const std::string& what) {
  WireMessage owned;
  std::string ownedError;
  const DecodeStatus ownedStatus = decodeMessage(topic, payload, WireLimits{}, owned, &ownedError);
  EventBatchDecoder decoder;
  std::string viewError;
  int calls = 0;
  WireMessage viewed;
  const DecodeStatus viewStatus = decoder.decode(
      topic, payload,
      [&](const EventBatchView& batch) {
        ++calls;
        batch.toMessage(viewed);
      },
      &viewError);
  ASSERT_EQ(viewStatus, ownedStatus) << what << ": " << ownedError << " / " << viewError;
  EXPECT_EQ(viewError, ownedError) << what;
  EXPECT_EQ(calls, ownedStatus == DecodeStatus::Ok ? 1 : 0) << what;
  if (ownedStatus == DecodeStatus::Ok) {
    EXPECT_TRUE(fuzz::sameMessage(viewed, owned)) << what;
  }
}

TEST(EventBatchView, ReadsWhatTheOwningDecoderReads) {
  const std::vector<Event> events = sampleEvents();
  const std::string payload = encodeEventsPayload(source(), 1234, "train.step", events);
  EventBatchDecoder decoder;
  const DecodeStatus status = decoder.decode("train.step", payload, [&](const EventBatchView& batch) {
    EXPECT_EQ(batch.kind(), MessageKind::Events);
    EXPECT_EQ(batch.source(), source());
    EXPECT_EQ(batch.sequence(), 1234u);
    EXPECT_EQ(batch.name(), "train.step");
    EXPECT_EQ(batch.topic(), "train.step");
    EXPECT_EQ(batch.payload().data(), payload.data()) << "borrowed, not copied";
    ASSERT_EQ(batch.size(), events.size());
    for (std::size_t e = 0; e < events.size(); ++e) {
      const EventView& event = batch[e];
      EXPECT_EQ(event.toEvent(), events[e]);
      EXPECT_EQ(event.fields().size(), 4u);
      const FieldView* tokens = event.find("tokens");
      ASSERT_NE(tokens, nullptr);
      EXPECT_EQ(std::get<int64_t>(tokens->value), 1000 + static_cast<int64_t>(e));
      const FieldView* phase = event.find("phase");
      ASSERT_NE(phase, nullptr);
      const std::string_view text = std::get<std::string_view>(phase->value);
      EXPECT_TRUE(text.data() >= payload.data() && text.data() + text.size() <= payload.data() + payload.size())
          << "the string lies in the payload";
      EXPECT_EQ(event.find("absent"), nullptr);
    }
  });
  EXPECT_EQ(status, DecodeStatus::Ok);
  expectAgreement("train.step", payload, "events with steps");
}

TEST(EventBatchView, ReadsHeartbeatsAndGoodbyes) {
  PublisherCounters counters;
  counters.timestamp = std::chrono::system_clock::time_point(std::chrono::seconds(5));
  counters.interval = std::chrono::milliseconds(1000);
  counters.published = 9;
  counters.dropped = 1;
  const std::string heartbeat =
      encodeHeartbeatPayload(MessageKind::Heartbeat, source(), 4, counters, "tcp://127.0.0.1:4000");
  EventBatchDecoder decoder;
  EXPECT_EQ(decoder.decode(kHeartbeatTopic, heartbeat,
                           [&](const EventBatchView& batch) {
                             EXPECT_EQ(batch.kind(), MessageKind::Heartbeat);
                             EXPECT_TRUE(batch.empty());
                             EXPECT_EQ(batch.history(), "tcp://127.0.0.1:4000");
                             EXPECT_EQ(batch.counters().published, 9u);
                           }),
            DecodeStatus::Ok);
  expectAgreement(kHeartbeatTopic, heartbeat, "heartbeat");
  expectAgreement(kHeartbeatTopic, encodeHeartbeatPayload(MessageKind::Goodbye, source(), 5, counters), "goodbye");
}

// Every truncation and every single-byte change of a valid payload: the same verdict from both.
TEST(EventBatchView, AgreesWithTheOwningDecoderOnCorruptBytes) {
  const std::string payload = encodeEventsPayload(source(), 7, "train.step", sampleEvents());
  for (std::size_t size = 0; size < payload.size(); ++size) {
    expectAgreement("train.step", std::string_view(payload).substr(0, size), "cut to " + std::to_string(size));
  }
  for (std::size_t at = 0; at < payload.size(); ++at) {
    for (const uint8_t value : {0x00, 0x01, 0x7f, 0x90, 0xa3, 0xc0, 0xc1, 0xc3, 0xca, 0xcb, 0xd9, 0xdf, 0xff}) {
      std::string changed = payload;
      changed[at] = static_cast<char>(value);
      expectAgreement("train.step", changed, "byte " + std::to_string(at) + " = " + std::to_string(value));
    }
  }
  expectAgreement("other.topic", payload, "wrong topic");
  expectAgreement("train.step", payload + "x", "a byte too many");
}

// An event that names a key twice is refused by both, with few keys and with many (the view
// compares few pairwise and sorts many).
TEST(EventBatchView, RefusesAKeyTwiceInOneEvent) {
  for (const uint32_t fields : {2u, 12u, 13u, 300u}) {
    std::string out;
    detail::MsgpackWriter writer(out);
    detail::writePayloadStart(writer, detail::kEventsPayloadEntries, MessageKind::Events, source(), 0);
    writer.str("name");
    writer.str("e");
    writer.str("events");
    writer.arrayHeader(1);
    writer.arrayHeader(2);
    writer.sint(1);
    writer.mapHeader(fields);
    for (uint32_t f = 0; f + 1 < fields; ++f) {
      writer.str("k" + std::to_string(f));
      writer.sint(f);
    }
    writer.str("k0");  // again
    writer.boolean(true);
    EventBatchDecoder decoder;
    std::string error;
    EXPECT_EQ(decoder.decode("e", out, [](const EventBatchView&) { FAIL() << "lent a refused message"; }, &error),
              DecodeStatus::Malformed)
        << fields;
    EXPECT_NE(error.find("duplicate data key"), std::string::npos) << error;
    expectAgreement("e", out, std::to_string(fields) + " fields");
  }
}

// One decoder reads message after message: nothing of one is left in the next.
TEST(EventBatchView, ADecoderReadsOneMessageAfterAnother) {
  const std::string first = encodeEventsPayload(source(), 0, "train.step", sampleEvents());
  std::vector<Event> second{Event{"b", std::chrono::system_clock::time_point(std::chrono::seconds(1)), {{"x", 1.0}}}};
  const std::string secondPayload = encodeEventsPayload(source(), 5, "b", second);
  EventBatchDecoder decoder;
  std::size_t events = 0;
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(decoder.decode("train.step", first, [&](const EventBatchView& batch) { events += batch.size(); }),
              DecodeStatus::Ok);
    EXPECT_EQ(decoder.decode("b", "\x81", [](const EventBatchView&) {}), DecodeStatus::Malformed);
    ASSERT_EQ(decoder.decode("b", secondPayload,
                             [&](const EventBatchView& batch) {
                               ASSERT_EQ(batch.size(), 1u);
                               EXPECT_EQ(batch[0].toEvent(), second[0]);
                               EXPECT_FALSE(batch[0].step());
                               events += batch.size();
                             }),
              DecodeStatus::Ok);
  }
  EXPECT_EQ(events, 3u * 6);
}

// What the Subscriber does with a poll's messages: hold each, then read them all. Later messages
// move the decoder's buffers, a refused one too (it reserves for its events before it breaks),
// and every view held before still reads what it held.
TEST(EventBatchView, HeldMessagesStayReadableWhateverIsHeldOrRefusedAfter) {
  const std::vector<Event> small = sampleEvents();
  const std::string first = encodeEventsPayload(source(), 0, "train.step", small);
  std::vector<Event> many(3000, small[0]);
  const std::string large = encodeEventsPayload(source(), 5, "train.step", many);
  const std::string broken = large.substr(0, large.size() - 7);  // refused after its events were reserved
  EventBatchDecoder decoder;
  ASSERT_EQ(decoder.hold("train.step", first), DecodeStatus::Ok);
  const EventBatchView& before = decoder.held(0);
  EXPECT_EQ(before.size(), small.size());
  EXPECT_EQ(decoder.hold("train.step", broken), DecodeStatus::Malformed);
  ASSERT_EQ(decoder.heldCount(), 1u) << "a refused message is not held";
  EXPECT_EQ(decoder.held(0)[2].toEvent(), small[2]);
  ASSERT_EQ(decoder.hold("train.step", large), DecodeStatus::Ok);
  EXPECT_EQ(decoder.hold("train.step", broken), DecodeStatus::Malformed);
  ASSERT_EQ(decoder.hold("train.step", first), DecodeStatus::Ok);
  ASSERT_EQ(decoder.heldCount(), 3u);
  for (std::size_t i = 0; i < small.size(); ++i) {
    EXPECT_EQ(decoder.held(0)[i].toEvent(), small[i]) << i;
    EXPECT_EQ(decoder.held(2)[i].toEvent(), small[i]) << i;
  }
  ASSERT_EQ(decoder.held(1).size(), many.size());
  EXPECT_EQ(decoder.held(1).sequence(), 5u);
  EXPECT_EQ(decoder.held(1)[2999].toEvent(), many[2999]);
  // decode() forgets what was held; hold() starts afresh after releaseHeld().
  decoder.releaseHeld();
  EXPECT_EQ(decoder.heldCount(), 0u);
  ASSERT_EQ(decoder.hold("train.step", first), DecodeStatus::Ok);
  EXPECT_EQ(decoder.held(0)[4].toEvent(), small[4]);
}

}  // namespace
}  // namespace livemon::transport
