// Fuzzes decodeMessage, the reader of everything a subscriber receives from the network.
// Input: see wireDecoderInput in fuzz_support.h.
// Properties beyond "no crash, no undefined behaviour, no leak": a failure says what broke; a
// message that decodes is one whole MessagePack value to an independent reader (msgpack-cxx), and
// encodes again to a payload that decodes to the same message.
#include <new>
#include <stdexcept>

#include <msgpack.hpp>

#include <livemon/transport/wire_format.h>

#include "fuzz_support.h"
#include "wire_equality.h"

namespace {

using namespace livemon;
using namespace livemon::transport;
using livemon::fuzz::sameMessage;

// True when msgpack-cxx reads `payload` as exactly one value. Its limits only keep it from
// allocating for counts no payload of this size can hold (every element takes a byte).
bool oneMsgpackValue(std::string_view payload) {
  const std::size_t most = payload.size();
  const msgpack::unpack_limit limit(most, most, most, most, most, 64);
  std::size_t offset = 0;
  try {
    const msgpack::object_handle handle = msgpack::unpack(payload.data(), payload.size(), offset, nullptr, nullptr, limit);
  } catch (const msgpack::unpack_error&) {
    return false;
  } catch (const std::bad_alloc&) {
    return false;
  }
  return offset == payload.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  fuzz::InputReader input(data, size);
  const std::string_view topic = input.bytes(input.u16());
  const std::string_view payload = input.rest();

  static const WireLimits limits;
  WireMessage message;
  std::string error;
  const DecodeStatus status = decodeMessage(topic, payload, limits, message, &error);
  if (status != DecodeStatus::Ok) {
    LIVEMON_FUZZ_CHECK(!error.empty());
    LIVEMON_FUZZ_CHECK(!decodeStatusName(status).empty());
    return 0;
  }

  LIVEMON_FUZZ_CHECK(oneMsgpackValue(payload));

  // Re-encoding writes every double as float64, so a payload of many float32 values grows; past
  // the limit the encoder refuses, which is right.
  std::string again;
  try {
    again = message.kind == MessageKind::Events
                ? encodeEventsPayload(message.source, message.sequence, message.name, message.events, limits)
                : encodeHeartbeatPayload(message.kind, message.source, message.sequence, message.counters,
                                         message.history);
  } catch (const std::invalid_argument&) {
    LIVEMON_FUZZ_CHECK(payload.size() > limits.maxPayloadBytes / 2);
    return 0;
  }
  WireMessage decodedAgain;
  const std::string_view topicAgain = message.kind == MessageKind::Events ? std::string_view(message.name) : kHeartbeatTopic;
  const DecodeStatus statusAgain = decodeMessage(topicAgain, again, limits, decodedAgain, &error);
  // The re-encoding is the shortest form, so the decoded size per payload byte
  // (WireLimits::decodedBytesPerPayloadByte) may go over where the original, longer, stayed under.
  if (statusAgain == DecodeStatus::TooLarge && again.size() < payload.size() &&
      error.find("decoded size") != std::string::npos) {
    return 0;
  }
  LIVEMON_FUZZ_CHECK(statusAgain == DecodeStatus::Ok);
  LIVEMON_FUZZ_CHECK(sameMessage(message, decodedAgain));
  return 0;
}
