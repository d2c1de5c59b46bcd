// Fuzzes EventBatchDecoder, the borrowed view a subscriber's consumers that keep no events decode
// with. Input: see wireDecoderInput in fuzz_support.h (a topic, then the payload).
// Properties beyond "no crash, no undefined behaviour, no leak": the view and decodeMessage give
// the same status and reason for the same bytes; a view is lent only for a message that decodes,
// once, and everything it lends lies inside the topic and payload frames; its owning copy is the
// message decodeMessage decoded. hold(), which the Subscriber uses to keep a poll's messages until
// its callbacks, holds up to eight inputs at a time: each message it holds reads back as
// decodeMessage decoded it, those held before it too, whatever moved the buffers since.
#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/wire_format.h>

#include <deque>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "wire_equality.h"

namespace {

using namespace livemon;
using namespace livemon::transport;

bool within(std::string_view part, std::string_view frame) {
  return part.empty() || (part.data() >= frame.data() && part.data() + part.size() <= frame.data() + frame.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  fuzz::InputReader input(data, size);
  const std::string_view topic = input.bytes(input.u16());
  const std::string_view payload = input.rest();

  static const WireLimits limits;
  static EventBatchDecoder decoder(limits);  // kept across inputs, as a subscriber keeps it
  WireMessage owned;
  std::string ownedError;
  const DecodeStatus ownedStatus = decodeMessage(topic, payload, limits, owned, &ownedError);

  std::string viewError;
  int calls = 0;
  const DecodeStatus viewStatus = decoder.decode(
      topic, payload,
      [&](const EventBatchView& batch) {
        ++calls;
        LIVEMON_FUZZ_CHECK(batch.kind() == owned.kind && batch.source() == owned.source &&
                           batch.sequence() == owned.sequence && batch.history() == owned.history);
        LIVEMON_FUZZ_CHECK(batch.name() == owned.name && within(batch.name(), payload));
        LIVEMON_FUZZ_CHECK(batch.size() == owned.events.size());
        for (std::size_t e = 0; e < batch.size(); ++e) {
          for (const FieldView& field : batch[e].fields()) {
            LIVEMON_FUZZ_CHECK(within(field.key, payload));
            if (const auto* text = std::get_if<std::string_view>(&field.value)) LIVEMON_FUZZ_CHECK(within(*text, payload));
          }
          LIVEMON_FUZZ_CHECK(fuzz::sameEvent(batch[e].toEvent(), owned.events[e]));
        }
      },
      &viewError);
  LIVEMON_FUZZ_CHECK(viewStatus == ownedStatus);
  LIVEMON_FUZZ_CHECK(viewError == ownedError);
  LIVEMON_FUZZ_CHECK(calls == (ownedStatus == DecodeStatus::Ok ? 1 : 0));

  // Held: the frames are copied, as the Subscriber copies them, to stay put until released.
  static EventBatchDecoder holder(limits);
  static std::deque<std::string> frames;       // topic, payload of each message held
  static std::vector<WireMessage> heldOwned;  // what decodeMessage made of each
  if (heldOwned.size() == 8) {
    holder.releaseHeld();
    frames.clear();
    heldOwned.clear();
  }
  const std::string& heldTopic = frames.emplace_back(topic);
  const std::string& heldPayload = frames.emplace_back(payload);
  std::string holdError;
  const DecodeStatus holdStatus = holder.hold(heldTopic, heldPayload, &holdError);
  LIVEMON_FUZZ_CHECK(holdStatus == ownedStatus && holdError == ownedError);
  if (holdStatus == DecodeStatus::Ok) heldOwned.push_back(owned);
  LIVEMON_FUZZ_CHECK(holder.heldCount() == heldOwned.size());
  for (std::size_t h = 0; h < heldOwned.size(); ++h) {
    const EventBatchView& batch = holder.held(h);
    const WireMessage& expected = heldOwned[h];
    LIVEMON_FUZZ_CHECK(batch.kind() == expected.kind && batch.sequence() == expected.sequence &&
                       batch.name() == expected.name && batch.size() == expected.events.size());
    for (std::size_t e = 0; e < batch.size(); ++e) LIVEMON_FUZZ_CHECK(fuzz::sameEvent(batch[e].toEvent(), expected.events[e]));
  }
  return 0;
}
