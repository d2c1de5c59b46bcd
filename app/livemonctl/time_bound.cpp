#include <livemonctl/time_bound.h>

#include <algorithm>
#include <chrono>
#include <string_view>

namespace livemon::livemonctl {

namespace {

constexpr std::string_view kLatestTimeBoundText = "2554-07-21T23:34:33.709551615Z";

std::string afterTheLatest() {
  return "is after " + std::string(kLatestTimeBoundText) + ", the latest time a recording can hold";
}

bool isDigit(char c) noexcept { return c >= '0' && c <= '9'; }

// `digits` (no leading zeros) times 10^exponent, rounded to the nearest integer; std::nullopt
// when that does not fit in 64 bits.
std::optional<uint64_t> scaledDecimal(std::string_view digits, int64_t exponent) {
  std::string_view whole = digits;
  bool roundUp = false;
  if (exponent < 0) {
    const auto dropped = static_cast<uint64_t>(-exponent);
    if (dropped > digits.size()) return 0;  // below one half
    whole = digits.substr(0, digits.size() - dropped);
    roundUp = digits[whole.size()] >= '5';
    exponent = 0;
  }
  // A value of more than 20 digits cannot fit; checked before the loop so its work stays bounded.
  if (whole.size() + static_cast<uint64_t>(exponent) > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : whole) {
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, c - '0', &value)) return std::nullopt;
  }
  for (int64_t i = 0; i < exponent; ++i) {
    if (__builtin_mul_overflow(value, 10, &value)) return std::nullopt;
  }
  if (roundUp && __builtin_add_overflow(value, 1, &value)) return std::nullopt;
  return value;
}

// A non-negative decimal number of seconds ("90", "1.5", "2e3") in nanoseconds, computed
// exactly in decimal (a double would lose nanoseconds beyond 2^53). `fits` is false when it is a
// number but more than 64 bits of nanoseconds.
std::optional<uint64_t> parseSeconds(std::string_view text, bool& fits) {
  fits = true;
  std::size_t at = 0;
  std::string digits;  // significant digits, without leading zeros
  int64_t exponent = 9;  // nanoseconds per second
  bool anyDigit = false;
  for (; at < text.size() && isDigit(text[at]); ++at) {
    anyDigit = true;
    if (!digits.empty() || text[at] != '0') digits += text[at];
  }
  if (at < text.size() && text[at] == '.') {
    for (++at; at < text.size() && isDigit(text[at]); ++at) {
      anyDigit = true;
      if (!digits.empty() || text[at] != '0') digits += text[at];
      --exponent;
    }
  }
  if (!anyDigit) return std::nullopt;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    bool negative = false;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) negative = text[at++] == '-';
    if (at == text.size()) return std::nullopt;
    int64_t written = 0;
    for (; at < text.size() && isDigit(text[at]); ++at) {
      // Saturates where the value is zero or out of range whatever the digits (there are fewer
      // than 10^17 of them).
      written = std::min<int64_t>(written * 10 + (text[at] - '0'), 100'000'000'000'000'000);
    }
    if (at != text.size()) return std::nullopt;
    exponent += negative ? -written : written;
  }
  if (at != text.size()) return std::nullopt;
  // Trailing zeros only scale: keep the digits short.
  while (!digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++exponent;
  }
  if (digits.empty()) return 0;
  const auto value = scaledDecimal(digits, exponent);
  fits = value.has_value();
  return value;
}

// `count` digits at text[at], as a number; std::nullopt unless they are all digits.
std::optional<unsigned> fixedDigits(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  unsigned value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (!isDigit(text[i])) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return value;
}

}  // namespace

std::optional<uint64_t> parseTimeBound(const std::string& text, uint64_t startNs, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<uint64_t> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  const std::string_view form = "is neither seconds from the start nor a UTC time like 2026-11-22T18:00:00Z";
  if (text.empty()) return fail(std::string(form));

  // Seconds from the start.
  bool fits = true;
  if (const auto seconds = parseSeconds(text, fits)) {
    uint64_t bound = 0;
    if (__builtin_add_overflow(startNs, *seconds, &bound)) {
      return fail("seconds from the start of the recording " + afterTheLatest());
    }
    return bound;
  }
  if (!fits) return fail("seconds from the start of the recording " + afterTheLatest());
  if (text[0] == '-' && text.size() > 1 && (isDigit(text[1]) || text[1] == '.')) {
    return fail("is negative: seconds from the start must be 0 or more");
  }

  // YYYY-MM-DDTHH:MM:SS[.fraction]Z, each field exactly that many digits.
  const std::string_view s = text;
  const auto year = fixedDigits(s, 0, 4);
  const auto month = fixedDigits(s, 5, 2);
  const auto day = fixedDigits(s, 8, 2);
  const auto hour = fixedDigits(s, 11, 2);
  const auto minute = fixedDigits(s, 14, 2);
  const auto second = fixedDigits(s, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || s[4] != '-' || s[7] != '-' || s[10] != 'T' ||
      s[13] != ':' || s[16] != ':') {
    return fail(std::string(form));
  }
  std::size_t at = 19;
  uint64_t fractionNs = 0;
  if (at < s.size() && s[at] == '.') {
    const std::size_t first = ++at;
    uint64_t scale = 100'000'000;
    for (; at < s.size() && isDigit(s[at]); ++at) {
      fractionNs += static_cast<uint64_t>(s[at] - '0') * scale;
      scale /= 10;
    }
    if (at == first) return fail(std::string(form));
  }
  if (at + 1 != s.size() || s[at] != 'Z') return fail(std::string(form));

  const std::chrono::year_month_day date{std::chrono::year{static_cast<int>(*year)}, std::chrono::month{*month},
                                         std::chrono::day{*day}};
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 59) {
    return fail("is not a valid date and time");
  }
  if (*year < 1970) return fail("is before 1970-01-01T00:00:00Z, where recording times begin");
  const auto days = static_cast<uint64_t>(std::chrono::sys_days(date).time_since_epoch().count());
  const uint64_t seconds = days * 86'400 + *hour * 3'600ULL + *minute * 60ULL + *second;
  uint64_t bound = 0;
  if (__builtin_mul_overflow(seconds, 1'000'000'000ULL, &bound) || __builtin_add_overflow(bound, fractionNs, &bound)) {
    return fail(afterTheLatest());
  }
  return bound;
}

}  // namespace livemon::livemonctl
