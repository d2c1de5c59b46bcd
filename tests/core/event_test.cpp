#include <livemon/event.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace livemon {
namespace {

using namespace std::chrono_literals;

Event sample() {
  return Event{"train.step", std::chrono::system_clock::time_point(1'700'000'000s),
               {{"loss", 0.25}, {"step", int64_t{7}}, {"phase", std::string("train")}, {"ok", true}}};
}

TEST(EventTest, DataValueLiteralsPickTheNaturalType) {
  DataValue fromCString = "text";
  DataValue fromInt = 2;
  DataValue fromDouble = 2.0;
  DataValue fromBool = true;
  EXPECT_TRUE(std::holds_alternative<std::string>(fromCString));
  EXPECT_TRUE(std::holds_alternative<int64_t>(fromInt));
  EXPECT_TRUE(std::holds_alternative<double>(fromDouble));
  EXPECT_TRUE(std::holds_alternative<bool>(fromBool));
}

TEST(EventTest, EqualEventsCompareEqual) {
  EXPECT_EQ(sample(), sample());
}

TEST(EventTest, AnyDifferenceMakesEventsUnequal) {
  Event other = sample();
  other.name = "train.other";
  EXPECT_NE(sample(), other);

  other = sample();
  other.timestamp += 1ns;
  EXPECT_NE(sample(), other);

  other = sample();
  other.data["loss"] = 0.5;
  EXPECT_NE(sample(), other);

  other = sample();
  other.data.erase("ok");
  EXPECT_NE(sample(), other);
}

TEST(EventTest, ValuesCompareWithTheirTypes) {
  Event a = sample();
  Event b = sample();
  a.data["x"] = 1.0;
  b.data["x"] = int64_t{1};
  EXPECT_NE(a, b);
}

TEST(EventTest, PrintsReadablyWithDoublesKeptApart) {
  Event e{"e", std::chrono::system_clock::time_point(1s),
          {{"d", 1.0}, {"i", int64_t{1}}, {"s", std::string("x")}, {"b", false},
           {"nan", std::numeric_limits<double>::quiet_NaN()}}};
  EXPECT_EQ(toString(e),
            "Event{name=\"e\", timestamp_ns=1000000000, data={b: false, d: 1.0, i: 1, nan: nan, s: \"x\"}}");
}

TEST(EventTest, StatEventNamesAreTheContractOnes) {
  EXPECT_EQ(kStatEventName, "livemon.Stat");
  EXPECT_EQ(kTorchStatEventName, "torch.monitor.Stat");
}

}  // namespace
}  // namespace livemon
