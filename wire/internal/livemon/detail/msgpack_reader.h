#pragma once

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <string>
#include <string_view>

#include <livemon/transport/wire_format.h>

// A strict MessagePack reader for untrusted input: every read checks the bytes that remain, and
// failures throw DecodeFailure with the byte offset where the input broke. Internal to livemon:
// the wire decoders and the Publisher (livemon::transport) include it.
namespace livemon::transport::detail {

// Thread-safety: a plain value type. What MsgpackReader throws: why and where the input broke.
struct DecodeFailure {
  DecodeStatus status;
  std::string message;
};

// Not thread-safe: one owner at a time; reads one buffer.
class MsgpackReader {
 public:
  enum class Type { Nil, Bool, Int, Float, Str, Bin, Array, Map, Ext };

  explicit MsgpackReader(std::string_view data) noexcept : data_(data) {}

  std::size_t position() const noexcept { return pos_; }
  bool atEnd() const noexcept { return pos_ == data_.size(); }

  Type peekType() const {
    const uint8_t b = peekByte();
    if (b <= 0x7f || b >= 0xe0) return Type::Int;
    if (b <= 0x8f) return Type::Map;
    if (b <= 0x9f) return Type::Array;
    if (b <= 0xbf) return Type::Str;
    switch (b) {
      case 0xc0: return Type::Nil;
      case 0xc2: case 0xc3: return Type::Bool;
      case 0xc4: case 0xc5: case 0xc6: return Type::Bin;
      case 0xc7: case 0xc8: case 0xc9: case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        return Type::Ext;
      case 0xca: case 0xcb: return Type::Float;
      case 0xcc: case 0xcd: case 0xce: case 0xcf: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
        return Type::Int;
      case 0xd9: case 0xda: case 0xdb: return Type::Str;
      case 0xdc: case 0xdd: return Type::Array;
      case 0xde: case 0xdf: return Type::Map;
      default: fail("byte 0xc1, which MessagePack never uses");
    }
  }

  // A map's entry count. Each entry takes at least two bytes, so a count the remaining bytes
  // cannot hold is malformed here, before anyone loops over it or reserves room for it.
  uint32_t mapHeader(const char* what) {
    const std::size_t start = pos_;
    const uint8_t b = takeByte(what);
    uint32_t n = 0;
    if ((b & 0xf0) == 0x80) {
      n = b & 0x0f;
    } else if (b == 0xde) {
      n = be16();
    } else if (b == 0xdf) {
      n = be32();
    } else {
      failAt(start, std::string(what) + " is not a map");
    }
    if (n > remaining() / 2) failAt(start, std::string(what) + " claims " + std::to_string(n) + " entries in " +
                                               std::to_string(remaining()) + " bytes");
    return n;
  }

  // An array's element count; each element takes at least one byte.
  uint32_t arrayHeader(const char* what) {
    const std::size_t start = pos_;
    const uint8_t b = takeByte(what);
    uint32_t n = 0;
    if ((b & 0xf0) == 0x90) {
      n = b & 0x0f;
    } else if (b == 0xdc) {
      n = be16();
    } else if (b == 0xdd) {
      n = be32();
    } else {
      failAt(start, std::string(what) + " is not an array");
    }
    if (n > remaining()) failAt(start, std::string(what) + " claims " + std::to_string(n) + " elements in " +
                                           std::to_string(remaining()) + " bytes");
    return n;
  }

  // A string's bytes, still in the input buffer. Longer than `maxBytes` throws TooLarge.
  std::string_view str(const char* what, std::size_t maxBytes) {
    const std::size_t start = pos_;
    const uint8_t b = takeByte(what);
    std::size_t size = 0;
    if ((b & 0xe0) == 0xa0) {
      size = b & 0x1f;
    } else if (b == 0xd9) {
      size = takeByte(what);
    } else if (b == 0xda) {
      size = be16();
    } else if (b == 0xdb) {
      size = be32();
    } else {
      failAt(start, std::string(what) + " is not a string");
    }
    if (size > maxBytes) {
      throw DecodeFailure{DecodeStatus::TooLarge, std::string(what) + " at byte " + std::to_string(start) +
                                                      " is " + std::to_string(size) + " bytes, limit " +
                                                      std::to_string(maxBytes)};
    }
    need(size, what);
    const std::string_view value = data_.substr(pos_, size);
    pos_ += size;
    return value;
  }

  // Any MessagePack integer that fits int64_t.
  int64_t int64(const char* what) {
    const std::size_t start = pos_;
    const uint8_t b = takeByte(what);
    if (b <= 0x7f) return b;
    if (b >= 0xe0) return static_cast<int8_t>(b);
    switch (b) {
      case 0xcc: return takeByte(what);
      case 0xcd: return be16();
      case 0xce: return be32();
      case 0xcf: {
        const uint64_t v = be64();
        if (v > static_cast<uint64_t>(INT64_MAX)) failAt(start, std::string(what) + " does not fit int64");
        return static_cast<int64_t>(v);
      }
      case 0xd0: return static_cast<int8_t>(takeByte(what));
      case 0xd1: return static_cast<int16_t>(be16());
      case 0xd2: return static_cast<int32_t>(be32());
      case 0xd3: return static_cast<int64_t>(be64());
      default: failAt(start, std::string(what) + " is not an integer");
    }
  }

  // Any non-negative MessagePack integer.
  uint64_t uint64(const char* what) {
    if (peekByte() == 0xcf) {
      ++pos_;
      return be64();
    }
    const std::size_t start = pos_;
    const int64_t v = int64(what);
    if (v < 0) failAt(start, std::string(what) + " is negative");
    return static_cast<uint64_t>(v);
  }

  // float64 or float32.
  double float64(const char* what) {
    const std::size_t start = pos_;
    const uint8_t b = takeByte(what);
    if (b == 0xcb) return std::bit_cast<double>(be64());
    if (b == 0xca) return std::bit_cast<float>(be32());
    failAt(start, std::string(what) + " is not a float");
  }

  bool boolean(const char* what) {
    const std::size_t start = pos_;
    const uint8_t b = takeByte(what);
    if (b == 0xc2) return false;
    if (b == 0xc3) return true;
    failAt(start, std::string(what) + " is not a boolean");
  }

  // Skips one object of any type (an unknown key's value), nesting at most `depth` levels.
  void skip(int depth) {
    if (depth <= 0) fail("unknown value nests too deeply");
    const std::size_t start = pos_;
    switch (peekType()) {
      case Type::Nil: case Type::Bool: ++pos_; return;
      case Type::Int: int64orUint64(); return;
      case Type::Float: float64("value"); return;
      case Type::Str: str("string", data_.size()); return;
      case Type::Bin: {
        const uint8_t b = takeByte("bin");
        const std::size_t size = b == 0xc4 ? takeByte("bin") : b == 0xc5 ? be16() : be32();
        need(size, "bin");
        pos_ += size;
        return;
      }
      case Type::Ext: {
        const uint8_t b = takeByte("ext");
        std::size_t size = 0;
        switch (b) {
          case 0xd4: size = 1; break;
          case 0xd5: size = 2; break;
          case 0xd6: size = 4; break;
          case 0xd7: size = 8; break;
          case 0xd8: size = 16; break;
          case 0xc7: size = takeByte("ext"); break;
          case 0xc8: size = be16(); break;
          default: size = be32(); break;
        }
        need(1, "ext");
        ++pos_;  // the type byte
        need(size, "ext");
        pos_ += size;
        return;
      }
      case Type::Array: {
        const uint32_t n = arrayHeader("array");
        for (uint32_t i = 0; i < n; ++i) skip(depth - 1);
        return;
      }
      case Type::Map: {
        const uint32_t n = mapHeader("map");
        for (uint32_t i = 0; i < n; ++i) {
          skip(depth - 1);  // key
          skip(depth - 1);  // value
        }
        return;
      }
    }
    failAt(start, "unreadable value");
  }

  [[noreturn]] void fail(const std::string& message) const { failAt(pos_, message); }
  [[noreturn]] static void failAt(std::size_t position, const std::string& message) {
    throw DecodeFailure{DecodeStatus::Malformed, message + " (at byte " + std::to_string(position) + ")"};
  }

 private:
  void int64orUint64() {
    if (peekByte() == 0xcf) {
      ++pos_;
      be64();
    } else {
      int64("integer");
    }
  }

  uint8_t peekByte() const {
    if (pos_ >= data_.size()) failAt(pos_, "payload ends early");
    return static_cast<uint8_t>(data_[pos_]);
  }
  uint8_t takeByte(const char* what) {
    if (pos_ >= data_.size()) failAt(pos_, std::string("payload ends inside ") + what);
    return static_cast<uint8_t>(data_[pos_++]);
  }
  std::size_t remaining() const noexcept { return data_.size() - pos_; }
  void need(std::size_t n, const char* what) const {
    if (remaining() < n) failAt(pos_, std::string("payload ends inside ") + what);
  }
  uint64_t beN(int n) {
    need(static_cast<std::size_t>(n), "a number");
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(data_[pos_++]);
    return v;
  }
  uint16_t be16() { return static_cast<uint16_t>(beN(2)); }
  uint32_t be32() { return static_cast<uint32_t>(beN(4)); }
  uint64_t be64() { return beN(8); }

  std::string_view data_;
  std::size_t pos_ = 0;
};

// Reads the `entries` key/value pairs of a map whose header was read (every strict map of the
// wire format and the history protocol): each key a string of at most `maxKeyBytes` (`keyWhat`
// names it in errors, "key" or "\"src\" key"). For a key in `known`, onKnown(i) reads its value,
// i being the key's place in `known`; a known key that comes a second time is malformed:
// `duplicate <keyWhat> "<key>"`. The value of any other key (a later writer's) is skipped,
// nesting at most `skipDepth`. Returns the known keys seen, bit i for known[i].
template <typename OnKnown>
uint32_t readMapEntries(MsgpackReader& reader, uint32_t entries, std::initializer_list<std::string_view> known,
                        const char* keyWhat, std::size_t maxKeyBytes, int skipDepth, OnKnown&& onKnown) {
  uint32_t seen = 0;
  for (uint32_t i = 0; i < entries; ++i) {
    const std::string_view key = reader.str(keyWhat, maxKeyBytes);
    uint32_t index = 0;
    for (const std::string_view name : known) {
      if (name == key) break;
      ++index;
    }
    if (index == known.size()) {
      reader.skip(skipDepth);
      continue;
    }
    const uint32_t bit = uint32_t{1} << index;
    if (seen & bit) reader.fail("duplicate " + std::string(keyWhat) + " \"" + std::string(key) + "\"");
    seen |= bit;
    onKnown(index);
  }
  return seen;
}

// Runs `decode`, a decoder of untrusted bytes, and returns how it went: Ok, or the status of the
// DecodeFailure it threw (TooLarge when it ran out of memory), with what broke in `error` when
// that is given. The decoders' public face never throws for bad input.
template <typename Decode>
DecodeStatus decodeGuarded(std::string* error, Decode&& decode) {
  try {
    decode();
    return DecodeStatus::Ok;
  } catch (const DecodeFailure& failure) {
    if (error) *error = failure.message;
    return failure.status;
  } catch (const std::bad_alloc&) {
    if (error) *error = "out of memory while decoding";
    return DecodeStatus::TooLarge;
  }
}

}  // namespace livemon::transport::detail
