// Fuzzes the history protocol's decoders: the request a history socket receives from anyone who
// connects, and the end of an answer a subscriber receives. Input: one byte choosing the decoder,
// then the payload.
// Properties beyond "no crash, no undefined behaviour, no leak": a failure says what broke, a
// request holds at most kMaxHistoryFilters filters within the topic limit, and what decodes
// encodes again to a payload that decodes to the same value.
#include <livemon/transport/wire_format.h>

#include "fuzz_support.h"

namespace {

using namespace livemon::transport;

void request(std::string_view payload) {
  static const WireLimits limits;
  HistoryRequest decoded;
  std::string error;
  const DecodeStatus status = decodeHistoryRequest(payload, limits, decoded, &error);
  if (status != DecodeStatus::Ok) {
    LIVEMON_FUZZ_CHECK(!error.empty());
    return;
  }
  LIVEMON_FUZZ_CHECK(decoded.filters.size() <= kMaxHistoryFilters);
  for (const std::string& filter : decoded.filters) LIVEMON_FUZZ_CHECK(filter.size() <= limits.maxTopicBytes);
  HistoryRequest again;
  LIVEMON_FUZZ_CHECK(decodeHistoryRequest(encodeHistoryRequest(decoded), limits, again) == DecodeStatus::Ok);
  LIVEMON_FUZZ_CHECK(again.filters == decoded.filters);
}

void end(std::string_view payload) {
  HistoryEnd decoded;
  std::string error;
  const DecodeStatus status = decodeHistoryEnd(payload, decoded, &error);
  if (status != DecodeStatus::Ok) {
    LIVEMON_FUZZ_CHECK(!error.empty());
    return;
  }
  HistoryEnd again;
  LIVEMON_FUZZ_CHECK(decodeHistoryEnd(encodeHistoryEnd(decoded), again) == DecodeStatus::Ok);
  LIVEMON_FUZZ_CHECK(again.messages == decoded.messages && again.truncated == decoded.truncated &&
                     again.oldest == decoded.oldest && again.error == decoded.error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  livemon::fuzz::InputReader input(data, size);
  const uint8_t which = input.u8();
  const std::string_view payload = input.rest();
  if (which % 2 == 0) {
    request(payload);
  } else {
    end(payload);
  }
  return 0;
}
