#include <livemonctl/time_bound.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace livemon::livemonctl {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kStart = 1'763'830'800'000'000'000ULL;  // 2025-11-22T17:00:00Z

TEST(TimeBound, SecondsFromTheStart) {
  EXPECT_EQ(parseTimeBound("0", kStart), kStart);
  EXPECT_EQ(parseTimeBound("90", kStart), kStart + 90'000'000'000ULL);
  EXPECT_EQ(parseTimeBound("1.5", kStart), kStart + 1'500'000'000ULL);
  EXPECT_EQ(parseTimeBound("2e3", kStart), kStart + 2'000'000'000'000ULL);
  // Rounded to the nearest nanosecond, not cut: 0.000000007 * 1e9 is 6.9999... as a double.
  EXPECT_EQ(parseTimeBound("0.000000007", kStart), kStart + 7);
  EXPECT_EQ(parseTimeBound("1e-12", kStart), kStart);
}

TEST(TimeBound, AbsoluteUtcTimes) {
  EXPECT_EQ(parseTimeBound("2025-11-22T17:00:00Z", 0), kStart);
  EXPECT_EQ(parseTimeBound("2025-11-22T17:00:00.25Z", 0), kStart + 250'000'000ULL);
  EXPECT_EQ(parseTimeBound("2025-11-22T17:00:00.123456789Z", 0), kStart + 123'456'789ULL);
  EXPECT_EQ(parseTimeBound("2025-11-22T17:00:00.1234567891Z", 0), kStart + 123'456'789ULL);
  EXPECT_EQ(parseTimeBound("1970-01-01T00:00:00Z", kStart), 0u);
  EXPECT_EQ(parseTimeBound("2024-02-29T00:00:00Z", 0), 1'709'164'800'000'000'000ULL);  // a leap day
  // The start of the recording does not move an absolute time.
  EXPECT_EQ(parseTimeBound("2025-11-22T17:00:00Z", 12345), kStart);
}

TEST(TimeBound, TheLatestTimeARecordingCanHoldIsAccepted) {
  EXPECT_EQ(parseTimeBound("2554-07-21T23:34:33.709551615Z", 0), kLatestTimeBoundNs);
  EXPECT_EQ(parseTimeBound("2554-07-21T23:34:33Z", 0), 18'446'744'073'000'000'000ULL);
  EXPECT_EQ(parseTimeBound("18446744073", 0), 18'446'744'073'000'000'000ULL);
  EXPECT_EQ(parseTimeBound("1", kLatestTimeBoundNs - 1'000'000'000ULL), kLatestTimeBoundNs);
}

// Before: `--from 1e30` converted an out-of-range double to an integer (undefined behaviour; in
// practice it exported everything), and far-future dates wrapped around to the distant past.
TEST(TimeBound, TimesBeyondTheLatestAreRejectedNotWrapped) {
  const std::vector<std::pair<std::string, uint64_t>> cases = {
      {"1e30", kStart},
      {"1e30", 0},
      {"18446744074", 0},
      {"1.8446744073709552e10", 0},
      {"1.7e10", kStart},  // fits alone, not after the start
      {"1", kLatestTimeBoundNs},
      {"0.000000001", kLatestTimeBoundNs},
      {"2554-07-21T23:34:33.709551616Z", 0},
      {"2554-07-21T23:34:34Z", 0},
      {"2600-01-01T00:00:00Z", 0},
      {"9999-12-31T23:59:59.999999999Z", 0},
  };
  for (const auto& [text, start] : cases) {
    std::string error;
    EXPECT_EQ(parseTimeBound(text, start, &error), std::nullopt) << text << " from " << start;
    EXPECT_THAT(error, HasSubstr("after 2554-07-21T23:34:33.709551615Z")) << text;
  }
}

TEST(TimeBound, DatesOutsideTheCalendarAreRejectedNotNormalized) {
  for (const std::string& text : std::vector<std::string>{
           "2025-13-01T00:00:00Z", "2025-00-10T00:00:00Z", "2025-02-29T00:00:00Z", "2025-04-31T00:00:00Z",
           "2025-11-00T00:00:00Z", "2025-11-22T24:00:00Z", "2025-11-22T17:60:00Z", "2025-11-22T17:00:60Z",
           "1969-12-31T23:59:59Z", "2100-02-29T00:00:00Z"}) {
    std::string error;
    EXPECT_EQ(parseTimeBound(text, kStart, &error), std::nullopt) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
}

TEST(TimeBound, AnythingElseIsRejected) {
  for (const std::string& text : std::vector<std::string>{
           "", "-1", "-0.5", "nan", "inf", "-inf", "1e", "0x10", "1.5s", " 1", "1 ", "yesterday", "2025-11-22 17:00",
        "2025-11-22T17:00:00",  // no zone: ambiguous
        "2025-11-22T17:00:00+01:00", "2025-11-22T17:00:00.Z", "2025-11-22T17:00:00ZZ", "2025-11-22T17:00Z",
        "2025-1-22T17:00:00Z", "2025-11-2T17:00:00Z", "2025--1-22T17:00:00Z", "+2025-11-22T17:00:00Z",
        " 2025-11-22T17:00:00Z", "12025-11-22T17:00:00Z", "2025-11-22t17:00:00z", std::string("1\0", 2)}) {
    std::string error;
    EXPECT_EQ(parseTimeBound(text, kStart, &error), std::nullopt) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
}

TEST(TimeBound, LongNumbersAreReadExactly) {
  // A million zeros after the point, scaled back by an exponent of over a million: 10^4 seconds.
  const std::string tiny = "0." + std::string(1'000'000, '0') + "1";
  EXPECT_EQ(parseTimeBound(tiny + "e1000005", 0), 10'000'000'000'000ULL);
  EXPECT_EQ(parseTimeBound(tiny, kStart), kStart);
  EXPECT_EQ(parseTimeBound("1" + std::string(1'000'000, '0') + "e-1000000", 0), 1'000'000'000ULL);
  EXPECT_EQ(parseTimeBound("1e99999999999999999999", 0), std::nullopt);
  EXPECT_EQ(parseTimeBound("1e-99999999999999999999", kStart), kStart);
  EXPECT_EQ(parseTimeBound("0e99999999999999999999", kStart), kStart);
}

TEST(TimeBound, TheErrorIsOptional) {
  EXPECT_EQ(parseTimeBound("1e30", kStart), std::nullopt);
  EXPECT_EQ(parseTimeBound("soon", kStart), std::nullopt);
}

}  // namespace
}  // namespace livemon::livemonctl
