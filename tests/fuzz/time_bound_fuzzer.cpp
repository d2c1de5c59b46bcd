// Fuzzes parseTimeBound, which reads `livemonctl export --from/--to`.
// Input: see timeBoundInput in fuzz_support.h.
// Properties beyond "no crash, no undefined behaviour": a rejection says why; seconds from the
// start never wrap (the bound is the start plus what the same text means from the epoch); an
// absolute time does not depend on the start and names exactly the calendar fields written;
// seconds agree with the C++ library's reading of the same number.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

#include <livemonctl/time_bound.h>

#include "fuzz_support.h"

namespace {

using livemon::livemonctl::kLatestTimeBoundNs;
using livemon::livemonctl::parseTimeBound;

// The calendar fields of `ns` as "YYYY-MM-DDTHH:MM:SS".
std::string calendarText(uint64_t ns) {
  const auto seconds = static_cast<time_t>(ns / 1'000'000'000ULL);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec);
  return text;
}

void checkAbsolute(const std::string& text, uint64_t ns) {
  LIVEMON_FUZZ_CHECK(text.size() >= 20 && text.back() == 'Z');
  LIVEMON_FUZZ_CHECK(text.compare(0, 19, calendarText(ns)) == 0);
  // The fraction's first nine digits are the nanoseconds.
  uint64_t fraction = 0;
  std::size_t digits = 0;
  for (std::size_t at = 20; at + 1 < text.size() && digits < 9; ++at, ++digits) fraction = fraction * 10 + (text[at] - '0');
  for (; digits < 9; ++digits) fraction *= 10;
  LIVEMON_FUZZ_CHECK(ns % 1'000'000'000ULL == fraction);
}

void checkSeconds(const std::string& text, std::optional<uint64_t> fromEpoch) {
  if (text.empty() || text[0] == '-') return;
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec == std::errc::result_out_of_range) {
    // Too large for a double, or too small: then either rejected or zero.
    LIVEMON_FUZZ_CHECK(!fromEpoch || *fromEpoch == 0);
    return;
  }
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds)) return;
  const double ns = seconds * 1e9;
  const double latest = static_cast<double>(kLatestTimeBoundNs);
  if (ns < latest * (1 - 1e-12)) {
    LIVEMON_FUZZ_CHECK(fromEpoch.has_value());
  } else if (ns > latest * (1 + 1e-12)) {
    LIVEMON_FUZZ_CHECK(!fromEpoch.has_value());
  }
  if (fromEpoch) LIVEMON_FUZZ_CHECK(std::fabs(static_cast<double>(*fromEpoch) - ns) <= 1 + ns * 1e-15);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  livemon::fuzz::InputReader input(data, size);
  const uint64_t start = input.u64();
  const std::string text(input.rest());

  std::string error;
  const auto bound = parseTimeBound(text, start, &error);
  LIVEMON_FUZZ_CHECK(bound.has_value() == error.empty());
  const auto fromEpoch = parseTimeBound(text, 0);
  // The epoch is the earliest start, so it accepts whatever any start does.
  if (bound) LIVEMON_FUZZ_CHECK(fromEpoch.has_value());
  if (!fromEpoch) {
    checkSeconds(text, fromEpoch);
    return 0;
  }

  const bool absolute = text.find('T') != std::string::npos;
  if (absolute) {
    LIVEMON_FUZZ_CHECK(bound == fromEpoch);
    checkAbsolute(text, *fromEpoch);
    return 0;
  }
  if (bound) {
    LIVEMON_FUZZ_CHECK(*bound >= start && *bound - start == *fromEpoch);
  } else {
    LIVEMON_FUZZ_CHECK(*fromEpoch > kLatestTimeBoundNs - start);
  }
  checkSeconds(text, fromEpoch);
  return 0;
}
