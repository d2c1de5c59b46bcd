#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

// What the fuzz targets and the seed generator share: the layouts of the targets' inputs (so the
// seeds are written exactly as the targets read them), a stream that discards its output, and
// the check that turns a broken property into a crash libFuzzer reports.
namespace livemon::fuzz {

// A broken property: prints it and aborts, which libFuzzer reports with the input.
[[noreturn]] inline void fail(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", file, line, what);
  std::fflush(stderr);
  std::abort();
}

// Not thread-safe. Reads an input front to back. Reading past the end gives what is left (bytes)
// or zeros (numbers), so every input means something.
class InputReader {
 public:
  InputReader(const uint8_t* data, std::size_t size) : data_(reinterpret_cast<const char*>(data), size) {}
  explicit InputReader(std::string_view data) : data_(data) {}

  bool empty() const noexcept { return data_.empty(); }
  std::size_t remaining() const noexcept { return data_.size(); }

  uint8_t u8() noexcept {
    if (data_.empty()) return 0;
    const auto value = static_cast<uint8_t>(data_.front());
    data_.remove_prefix(1);
    return value;
  }
  // Little-endian.
  uint16_t u16() noexcept { return static_cast<uint16_t>(u8() | (u8() << 8)); }
  uint64_t u64() noexcept {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= uint64_t{u8()} << (8 * i);
    return value;
  }
  std::string_view bytes(std::size_t count) noexcept {
    const std::string_view taken = data_.substr(0, count);
    data_.remove_prefix(taken.size());
    return taken;
  }
  std::string_view rest() noexcept { return bytes(data_.size()); }

 private:
  std::string_view data_;
};

inline void appendU16(std::string& out, std::size_t value) {
  out += static_cast<char>(value & 0xff);
  out += static_cast<char>((value >> 8) & 0xff);
}

inline void appendU64(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

// wire_decoder input: topic length (u16), topic, then the payload up to the end.
inline std::string wireDecoderInput(std::string_view topic, std::string_view payload) {
  std::string out;
  appendU16(out, topic.size());
  out.append(topic);
  out.append(payload);
  return out;
}

// subscriber input: messages one after another, each
//   control (u8): bits 0-1: the number of frames - 1;
//                 bit 2: send the previous message again (no frames follow);
//                 bits 3-7: advance the clock by this many seconds first;
//   then each frame: length (u16), bytes.
// A livemon message has two frames, topic and payload.
inline constexpr uint8_t kSubscriberRepeat = 0x04;

inline void appendSubscriberMessage(std::string& out, const std::vector<std::string_view>& frames,
                                    unsigned advanceSeconds = 0) {
  out += static_cast<char>(((frames.size() - 1) & 3) | ((advanceSeconds & 0x1f) << 3));
  for (std::string_view frame : frames) {
    appendU16(out, frame.size());
    out.append(frame);
  }
}

inline void appendSubscriberRepeat(std::string& out, unsigned advanceSeconds = 0) {
  out += static_cast<char>(kSubscriberRepeat | ((advanceSeconds & 0x1f) << 3));
}

// history_exchange input: a byte choosing the end (even: a HistoryServer, odd: a HistoryFetch),
// then messages, each
//   control (u8): bits 0-1: the number of frames - 1;
//     server: bits 2-5: which of ten readers sends it (modulo 10); kHistoryExchangeAdvance: the
//       clock moves 40 s first; kHistoryExchangeTake: then that reader takes what waits for it;
//     reader: kHistoryExchangeLive: a live message (topic, payload) on the endpoint instead of a
//       message of the answer; kHistoryExchangeWait: then the clock moves 500 ms × bits 4-7;
//   then each frame: length (u16), bytes.
inline constexpr uint8_t kHistoryExchangeAdvance = 0x40;
inline constexpr uint8_t kHistoryExchangeTake = 0x80;
inline constexpr uint8_t kHistoryExchangeLive = 0x04;
inline constexpr uint8_t kHistoryExchangeWait = 0x08;

inline void appendHistoryExchangeMessage(std::string& out, uint8_t flags, const std::vector<std::string_view>& frames) {
  out += static_cast<char>(((frames.size() - 1) & 3) | flags);
  for (std::string_view frame : frames) {
    appendU16(out, frame.size());
    out.append(frame);
  }
}

// time_bound input: the recording's start (u64, nanoseconds since the epoch), then the text.
inline std::string timeBoundInput(uint64_t startNs, std::string_view text) {
  std::string out;
  appendU64(out, startNs);
  out.append(text);
  return out;
}

// The recording target reads its input as a whole MCAP file: no layout of its own.

// Not thread-safe. Accepts and discards everything, so the code that formats output runs in full
// (an ostream without a buffer would skip it).
class NullBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize count) override { return count; }
};

}  // namespace livemon::fuzz

#define LIVEMON_FUZZ_CHECK(condition) \
  ((condition) ? static_cast<void>(0) : ::livemon::fuzz::fail(#condition, __FILE__, __LINE__))
