// Fuzzes decodeMessage, the reader of everything a subscriber receives from the network.
// Input: see wireDecoderInput in fuzz_support.h.
// Properties beyond "no crash, no undefined behaviour, no leak": a failure says what broke; a
// message that decodes is one whole MessagePack value to an independent reader (msgpack-cxx), and
// encodes again to a payload that decodes to the same message.
#include <cstring>
#include <new>
#include <stdexcept>

#include <msgpack.hpp>

#include <livemon/transport/wire_format.h>

#include "fuzz_support.h"

namespace {

using namespace livemon;
using namespace livemon::transport;

// Event equality where a NaN equals the same NaN: payloads carry any double bit pattern.
bool sameValue(const DataValue& a, const DataValue& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    return std::memcmp(x, &y, sizeof y) == 0;
  }
  return a == b;
}

bool sameEvents(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].timestamp != b[i].timestamp || a[i].step != b[i].step ||
        a[i].data.size() != b[i].data.size()) {
      return false;
    }
    for (const auto& [key, value] : a[i].data) {
      const auto other = b[i].data.find(key);
      if (other == b[i].data.end() || !sameValue(value, other->second)) return false;
    }
  }
  return true;
}

bool sameMessage(const WireMessage& a, const WireMessage& b) {
  if (a.kind != b.kind || a.source != b.source || a.sequence != b.sequence) return false;
  if (a.kind == MessageKind::Events) return a.name == b.name && sameEvents(a.events, b.events);
  return a.counters.timestamp == b.counters.timestamp && a.counters.interval == b.counters.interval &&
         a.counters.published == b.counters.published && a.counters.dropped == b.counters.dropped &&
         a.history == b.history;
}

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
