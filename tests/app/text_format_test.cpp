// Numbers, sizes and times as the livemonctl commands print them.
#include <livemonctl/text_format.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace livemon::livemonctl {
namespace {

TEST(TextFormat, SizesInBinaryUnits) {
  EXPECT_EQ(humanBytes(0), "0 B");
  EXPECT_EQ(humanBytes(1023), "1023 B");
  EXPECT_EQ(humanBytes(1536), "1.5 KiB");
  EXPECT_EQ(humanBytes(12'897'485), "12.3 MiB");
  EXPECT_EQ(humanBytes(UINT64_MAX), "17179869184.00 GiB");
}

TEST(TextFormat, DoublesReadBackExactly) {
  EXPECT_EQ(shortestDouble(0.05), "0.05");
  EXPECT_EQ(shortestDouble(60.0), "60");
  EXPECT_EQ(exactDouble(60.0), "60.0") << "still reads as a double";
  EXPECT_EQ(exactDouble(1e300), "1e+300");
  EXPECT_EQ(exactDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(fixedDecimals(3.14159, 3), "3.142");
  EXPECT_EQ(compressionRatio(100, 0), 0.0) << "nothing compressed: no division by zero";
  EXPECT_EQ(compressionRatio(100, 40), 2.5);
}

TEST(TextFormat, IdsAndTimes) {
  EXPECT_EQ(hex16(0xabc), "0000000000000abc");
  EXPECT_EQ(hex16(UINT64_MAX), "ffffffffffffffff");
  EXPECT_EQ(utcText(1'763'830'800'123'456'789ULL), "2025-11-22 17:00:00.123 UTC");
  EXPECT_EQ(utcText(0), "1970-01-01 00:00:00.000 UTC");
}

}  // namespace
}  // namespace livemon::livemonctl
