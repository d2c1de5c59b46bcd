#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

// Only transport/src includes this header.
namespace livemon::transport::detail {

// A 64-bit hash of a message's payload bytes, to tell the same message again (one publisher
// reached over two endpoints, a history answer overlapping live delivery: the bytes as they were
// sent) from a different message claiming the same sequence numbers. Not cryptographic: a forger
// who knows a real message's bytes gains nothing by matching them, the events are the real ones.
// Eight bytes a step, a multiply-rotate mix per word and a murmur3 finalizer.
inline uint64_t payloadHash(std::string_view bytes) noexcept {
  constexpr uint64_t k1 = 0x9E3779B97F4A7C15ull;
  constexpr uint64_t k2 = 0xC2B2AE3D27D4EB4Full;
  uint64_t h = k1 ^ (bytes.size() * k2);
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  auto mix = [&](uint64_t word) {
    word *= k2;
    word = (word << 31) | (word >> 33);
    h ^= word * k1;
    h = ((h << 27) | (h >> 37)) * 5 + 0x52DCE729;
  };
  for (; left >= 8; p += 8, left -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    mix(word);
  }
  if (left > 0) {
    uint64_t word = 0;
    std::memcpy(&word, p, left);
    mix(word ^ (uint64_t{left} << 56));
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace livemon::transport::detail
