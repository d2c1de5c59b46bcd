#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

// A MessagePack writer with the encoding rules of docs/wire-format.md: every integer, string,
// array and map header in its shortest form, and every double as float64 (0xcb), whatever its
// value, so 1.0 stays a double on the wire.
namespace livemon::transport::detail {

// Not thread-safe: one owner at a time. Where a MsgpackWriter appends: a std::string, which grows.
struct StringSink {
  StringSink(std::string& target) noexcept : out(target) {}  // NOLINT: implicit, so MsgpackWriter(string&)
  void put(char value) { out.push_back(value); }
  void append(const char* data, std::size_t size) { out.append(data, size); }
  std::string& out;
};

// Not thread-safe: one owner at a time. Where a RawMsgpackWriter writes: memory the caller made
// room in beforehand (RecordBuffer::reserve), through a cursor with no check per byte.
struct RawSink {
  void put(char value) noexcept { *cursor++ = value; }
  void append(const char* data, std::size_t size) noexcept {
    std::memcpy(cursor, data, size);
    cursor += size;
  }
  char* cursor;
};

// Not thread-safe: one owner at a time; writes to one Sink.
template <typename Sink>
class BasicMsgpackWriter {
 public:
  explicit BasicMsgpackWriter(Sink sink) noexcept : out_(sink) {}

  const Sink& sink() const noexcept { return out_; }

  void nil() { out_.put('\xc0'); }
  void boolean(bool value) { out_.put(value ? '\xc3' : '\xc2'); }

  void uint(uint64_t value) {
    if (value < 0x80) {
      byte(static_cast<uint8_t>(value));
    } else if (value <= 0xff) {
      byte(0xcc);
      byte(static_cast<uint8_t>(value));
    } else if (value <= 0xffff) {
      byte(0xcd);
      be16(static_cast<uint16_t>(value));
    } else if (value <= 0xffffffffU) {
      byte(0xce);
      be32(static_cast<uint32_t>(value));
    } else {
      byte(0xcf);
      be64(value);
    }
  }

  void sint(int64_t value) {
    if (value >= 0) {
      uint(static_cast<uint64_t>(value));
    } else if (value >= -32) {
      byte(static_cast<uint8_t>(value));  // negative fixint: 111xxxxx
    } else if (value >= INT8_MIN) {
      byte(0xd0);
      byte(static_cast<uint8_t>(value));
    } else if (value >= INT16_MIN) {
      byte(0xd1);
      be16(static_cast<uint16_t>(value));
    } else if (value >= INT32_MIN) {
      byte(0xd2);
      be32(static_cast<uint32_t>(value));
    } else {
      byte(0xd3);
      be64(static_cast<uint64_t>(value));
    }
  }

  void float64(double value) {
    byte(0xcb);
    be64(std::bit_cast<uint64_t>(value));
  }

  void str(std::string_view value) {
    const auto size = value.size();
    if (size < 32) {
      byte(static_cast<uint8_t>(0xa0 | size));
    } else if (size <= 0xff) {
      byte(0xd9);
      byte(static_cast<uint8_t>(size));
    } else if (size <= 0xffff) {
      byte(0xda);
      be16(static_cast<uint16_t>(size));
    } else {
      byte(0xdb);
      be32(static_cast<uint32_t>(size));
    }
    out_.append(value.data(), size);
  }

  void arrayHeader(uint32_t size) { containerHeader(size, 0x90, 0xdc, 0xdd); }
  void mapHeader(uint32_t size) { containerHeader(size, 0x80, 0xde, 0xdf); }

 private:
  void containerHeader(uint32_t size, uint8_t fix, uint8_t code16, uint8_t code32) {
    if (size < 16) {
      byte(static_cast<uint8_t>(fix | size));
    } else if (size <= 0xffff) {
      byte(code16);
      be16(static_cast<uint16_t>(size));
    } else {
      byte(code32);
      be32(size);
    }
  }

  void byte(uint8_t value) { out_.put(static_cast<char>(value)); }
  void be16(uint16_t value) {
    const char bytes[2] = {static_cast<char>(value >> 8), static_cast<char>(value)};
    out_.append(bytes, 2);
  }
  void be32(uint32_t value) {
    const char bytes[4] = {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
                           static_cast<char>(value >> 8), static_cast<char>(value)};
    out_.append(bytes, 4);
  }
  void be64(uint64_t value) {
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (56 - 8 * i));
    out_.append(bytes, 8);
  }

  Sink out_;
};

using MsgpackWriter = BasicMsgpackWriter<StringSink>;
using RawMsgpackWriter = BasicMsgpackWriter<RawSink>;

}  // namespace livemon::transport::detail
