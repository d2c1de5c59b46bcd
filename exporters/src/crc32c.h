#pragma once

#include <cstdint>
#include <string_view>

// CRC-32C (Castagnoli), the checksum of TFRecord files. Only exporters/src includes this header.
namespace livemon::transport::detail {

// CRC-32C of `data` continued from `crc` (0 to start): reflected polynomial 0x82F63B78, initial
// value and final XOR 0xFFFFFFFF. crc32c("123456789") is 0xE3069283.
uint32_t crc32c(std::string_view data, uint32_t crc = 0) noexcept;

// TFRecord's masking of a stored CRC, so that a CRC of data that contains CRCs stays strong:
// rotate right by 15 bits, add 0xa282ead8.
constexpr uint32_t maskCrc32c(uint32_t crc) noexcept { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace livemon::transport::detail
