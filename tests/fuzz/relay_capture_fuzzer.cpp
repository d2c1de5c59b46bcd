// Fuzzes what a relay decides about the frames it is sent, as pure functions of them: whether a
// message from a subscriber is a subscription to forward toward the publishers
// (detail::isSubscription), what the worker does with a message off the capture queue
// (detail::judgeCapture: skip it, or keep it for the history and the callbacks), and the byte
// window that bounds what a stalled subscriber holds (detail::ForwardWindow).
// Input: the window's length (u8) and budget (u16), then messages in the subscriber target's
// layout, whose control byte's bit 2 asks for decoding, bit 3 for small limits, and bits 4 to 7
// say how much the queues hold.
// Properties beyond "no crash, no undefined behaviour, no leak": only a single frame starting
// with 0 or 1 is a subscription; only a topic and a payload within the limits are kept, and with
// decoding exactly those the wire decoder accepts; every run of `length` admitted messages stays
// within the budget unless the queues held so little that the message fitted beside what they
// held, and a refused message would have broken both.
#include <deque>
#include <numeric>

#include <livemon/transport/wire_format.h>

#include "fuzz_support.h"
#include "relay_proxy.h"

namespace {

using namespace livemon::transport;
using livemon::fuzz::InputReader;

constexpr uint8_t kDecode = 0x04;
constexpr uint8_t kSmallLimits = 0x08;

// Not thread-safe: one per input. ForwardWindow beside a plain model of it.
struct WindowCheck {
  std::size_t length;
  std::size_t budget;
  detail::ForwardWindow window;
  std::deque<std::size_t> admitted;  // the last length - 1 admitted sizes

  WindowCheck(std::size_t l, std::size_t b) : length(l), budget(b), window(l, b) {}

  // `held`: what all queues hold; a run over the budget is refused only while they hold it.
  void offer(std::size_t size, std::size_t held) {
    const std::size_t before = std::accumulate(admitted.begin(), admitted.end(), std::size_t{0});
    const bool fits = size <= budget && (before + size <= budget || held + size <= budget);
    LIVEMON_FUZZ_CHECK(window.admit(size, held) == fits);
    if (!fits) return;
    admitted.push_back(size);
    if (admitted.size() > length - 1) admitted.pop_front();
    LIVEMON_FUZZ_CHECK(window.bytes() == std::accumulate(admitted.begin(), admitted.end(), std::size_t{0}));
  }
};

void judge(const std::vector<std::string_view>& frames, uint8_t control) {
  WireLimits limits;
  if ((control & kSmallLimits) != 0) {
    limits.maxTopicBytes = 16;
    limits.maxPayloadBytes = 256;
  }
  const bool decode = (control & kDecode) != 0;
  WireMessage scratch;
  const detail::CaptureVerdict verdict = detail::judgeCapture(frames, limits, decode, scratch);
  const bool withinLimits =
      frames.size() == 2 && frames[0].size() <= limits.maxTopicBytes && frames[1].size() <= limits.maxPayloadBytes;
  if (!decode) {
    LIVEMON_FUZZ_CHECK((verdict == detail::CaptureVerdict::Keep) == withinLimits);
  } else {
    WireMessage again;
    const bool decodes = withinLimits && decodeMessage(frames[0], frames[1], limits, again) == DecodeStatus::Ok;
    LIVEMON_FUZZ_CHECK((verdict == detail::CaptureVerdict::Keep) == decodes);
    if (decodes) LIVEMON_FUZZ_CHECK(scratch.sequence == again.sequence && scratch.events.size() == again.events.size());
  }
  // From a subscriber: a subscription is one frame, 0 or 1 first.
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const bool more = i + 1 < frames.size();
    const bool expected = !more && frames.size() == 1 && !frames[i].empty() && (frames[i][0] == 0 || frames[i][0] == 1);
    if (i == 0) LIVEMON_FUZZ_CHECK(detail::isSubscription(frames[i], more) == expected);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  InputReader input(data, size);
  const std::size_t length = 1 + input.u8() % 16;
  const std::size_t budget = input.u16();
  WindowCheck window(length, budget);
  std::vector<std::string_view> frames;
  while (!input.empty()) {
    const uint8_t control = input.u8();
    frames.clear();
    const std::size_t count = (control & 3) + 1;
    for (std::size_t i = 0; i < count; ++i) frames.push_back(input.bytes(input.u16()));
    judge(frames, control);
    std::size_t total = 0;
    for (std::string_view frame : frames) total += frame.size();
    // The control byte's high bits say how much of the budget the queues hold: 0 to 15 sixteenths.
    window.offer(total, budget * (control >> 4) / 16);
  }
  return 0;
}
