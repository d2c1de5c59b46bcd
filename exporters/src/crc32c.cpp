#include "crc32c.h"

#include <array>

namespace livemon::transport::detail {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // 0x1EDC6F41 bit-reversed

// table[b] is the CRC register after shifting byte b through an all-zero register.
constexpr std::array<uint32_t, 256> makeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint32_t reg = byte;
    for (int bit = 0; bit < 8; ++bit) reg = (reg & 1u) != 0 ? (reg >> 1) ^ kPolynomial : reg >> 1;
    table[byte] = reg;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = makeTable();

}  // namespace

uint32_t crc32c(std::string_view data, uint32_t crc) noexcept {
  uint32_t reg = ~crc;
  for (const char c : data) {
    reg = kTable[(reg ^ static_cast<uint8_t>(c)) & 0xFFu] ^ (reg >> 8);
  }
  return ~reg;
}

}  // namespace livemon::transport::detail
