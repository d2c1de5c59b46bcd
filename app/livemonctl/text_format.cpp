#include <livemonctl/text_format.h>

#include <time.h>

#include <charconv>
#include <cstdio>

#include <livemon/detail/json_writer.h>

namespace livemon::livemonctl {

std::string humanBytes(uint64_t bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else if (bytes < 1024ULL * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024 * 1024));
  } else {
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  }
  return text;
}

std::string fixedDecimals(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string shortestDouble(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string exactDouble(double value) {
  std::string text;
  detail::appendExactDouble(text, value);
  return text;
}

std::string hex16(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

std::string utcText(uint64_t ns) {
  const auto seconds = static_cast<time_t>(ns / 1'000'000'000ULL);
  tm parts{};
  gmtime_r(&seconds, &parts);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02d %02d:%02d:%02d.%03d UTC", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<int>((ns / 1'000'000ULL) % 1000));
  return text;
}

double compressionRatio(uint64_t uncompressed, uint64_t compressed) {
  return compressed == 0 ? 0.0 : static_cast<double>(uncompressed) / static_cast<double>(compressed);
}

}  // namespace livemon::livemonctl
