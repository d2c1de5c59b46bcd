#pragma once

#include <cstdint>
#include <string>

// Numbers, sizes and times as the livemonctl commands print them.
// Thread-safe: pure functions.
namespace livemon::livemonctl {

// "512 B", "1.5 KiB", "12.3 MiB", "1.25 GiB".
std::string humanBytes(uint64_t bytes);
// `value` with `decimals` digits after the point: "3.142".
std::string fixedDecimals(double value, int decimals);
// Shortest text that reads back as `value`: "0.05", "60".
std::string shortestDouble(double value);
// The same, with ".0" added to a finite integral value so it still reads as a double: "60.0".
std::string exactDouble(double value);
// 16 lower-case hex digits, as instance ids are shown (JSON numbers would lose 64-bit ids).
std::string hex16(uint64_t value);
// Nanoseconds since the Unix epoch as "2026-11-22 18:00:00.123 UTC".
std::string utcText(uint64_t ns);
// uncompressed / compressed, or 0 when nothing was compressed.
double compressionRatio(uint64_t uncompressed, uint64_t compressed);

}  // namespace livemon::livemonctl
