#pragma once

// The MCAP container's byte-level pieces: record opcodes, little-endian encoding and the CRC-32
// used by the format (the zlib/ISO-HDLC one). Facts from the MCAP specification, version 0.

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

namespace livemon::transport::mcap {

inline constexpr std::string_view kMagic{"\x89MCAP0\r\n", 8};

enum class Opcode : uint8_t {
  Header = 0x01,
  Footer = 0x02,
  Schema = 0x03,
  Channel = 0x04,
  Message = 0x05,
  Chunk = 0x06,
  MessageIndex = 0x07,
  ChunkIndex = 0x08,
  Attachment = 0x09,
  AttachmentIndex = 0x0A,
  Statistics = 0x0B,
  Metadata = 0x0C,
  MetadataIndex = 0x0D,
  SummaryOffset = 0x0E,
  DataEnd = 0x0F,
};

// opcode (1 byte) + content length (8 bytes)
inline constexpr std::size_t kRecordPrefix = 9;
// Footer content: summary_start, summary_offset_start, summary_crc
inline constexpr std::size_t kFooterContent = 8 + 8 + 4;

// CRC-32 (polynomial 0xEDB88320, reflected), continued from `crc` (0 to start): zlib's, some
// 8 times faster on a chunk than a byte-at-a-time table (docs/benchmarks.md, "Recordings").
inline uint32_t crc32(std::string_view bytes, uint32_t crc = 0) noexcept {
  return static_cast<uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// Not thread-safe: one owner at a time; appends to one string. Writes little-endian fields.
class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) : out_(out) {}

  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u16(uint16_t v) { little(v); }
  void u32(uint32_t v) { little(v); }
  void u64(uint64_t v) { little(v); }
  void raw(std::string_view bytes) { out_.append(bytes); }
  void string(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    raw(s);
  }
  void stringMap(const std::map<std::string, std::string>& m) {
    std::string body;
    ByteWriter inner(body);
    for (const auto& [key, value] : m) {
      inner.string(key);
      inner.string(value);
    }
    string(body);  // a map is prefixed with its byte length, like a string
  }
  // Starts a record; returns the position to pass to endRecord once its content is written.
  std::size_t beginRecord(Opcode op) {
    u8(static_cast<uint8_t>(op));
    const std::size_t at = out_.size();
    u64(0);
    return at;
  }
  void endRecord(std::size_t lengthAt) {
    const uint64_t length = out_.size() - lengthAt - 8;
    for (int i = 0; i < 8; ++i) out_[lengthAt + static_cast<std::size_t>(i)] = static_cast<char>(length >> (8 * i));
  }
  std::size_t size() const noexcept { return out_.size(); }

 private:
  template <typename T>
  void little(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
  }
  std::string& out_;
};

// Thread-safety: a plain value type. A malformed field, found `offset` bytes into the file.
struct ParseError {
  uint64_t offset;
  std::string what;
};

// Not thread-safe: one owner at a time; reads one span.
//
// Reads little-endian fields from a span of the file, checking every bound. `base` is the span's
// offset in the file, for error messages.
class ByteReader {
 public:
  ByteReader(std::string_view bytes, uint64_t base) : bytes_(bytes), base_(base) {}

  uint8_t u8() { return static_cast<uint8_t>(take(1)[0]); }
  uint16_t u16() { return little<uint16_t>(); }
  uint32_t u32() { return little<uint32_t>(); }
  uint64_t u64() { return little<uint64_t>(); }
  std::string_view string(std::string_view what) {
    const uint32_t length = u32();
    if (length > remaining()) fail(std::string(what) + " claims " + std::to_string(length) + " bytes, only " +
                                   std::to_string(remaining()) + " remain");
    return take(length);
  }
  std::string_view bytes(std::size_t n, std::string_view what) {
    if (n > remaining()) fail(std::string(what) + " claims " + std::to_string(n) + " bytes, only " +
                              std::to_string(remaining()) + " remain");
    return take(n);
  }
  std::string_view rest() { return take(remaining()); }
  std::size_t remaining() const noexcept { return bytes_.size() - at_; }
  uint64_t offset() const noexcept { return base_ + at_; }
  [[noreturn]] void fail(std::string what) const { throw ParseError{offset(), std::move(what)}; }

 private:
  std::string_view take(std::size_t n) {
    if (n > remaining()) fail("field needs " + std::to_string(n) + " bytes, only " + std::to_string(remaining()) + " remain");
    std::string_view out = bytes_.substr(at_, n);
    at_ += n;
    return out;
  }
  template <typename T>
  T little() {
    const std::string_view b = take(sizeof(T));
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(static_cast<T>(static_cast<unsigned char>(b[i])) << (8 * i));
    return v;
  }

  std::string_view bytes_;
  uint64_t base_;
  std::size_t at_ = 0;
};

}  // namespace livemon::transport::mcap
