#include <livemon/aggregation.h>

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace livemon {
namespace {

TEST(AggregationTest, NamesMatchTheContract) {
  EXPECT_EQ(aggregationName(Aggregation::Value), "value");
  EXPECT_EQ(aggregationName(Aggregation::Mean), "mean");
  EXPECT_EQ(aggregationName(Aggregation::Count), "count");
  EXPECT_EQ(aggregationName(Aggregation::Sum), "sum");
  EXPECT_EQ(aggregationName(Aggregation::Max), "max");
  EXPECT_EQ(aggregationName(Aggregation::Min), "min");
  EXPECT_EQ(aggregationName(Aggregation::Stddev), "stddev");
  EXPECT_EQ(aggregationName(Aggregation::P50), "p50");
  EXPECT_EQ(aggregationName(Aggregation::P90), "p90");
  EXPECT_EQ(aggregationName(Aggregation::P99), "p99");
}

TEST(AggregationTest, EveryNameParsesBackAndIsUnique) {
  std::set<std::string> seen;
  for (Aggregation aggregation : kAllAggregations) {
    const auto name = aggregationName(aggregation);
    EXPECT_TRUE(seen.insert(std::string(name)).second) << name;
    EXPECT_EQ(aggregationFromName(name), aggregation);
  }
}

TEST(AggregationTest, UnknownValuesAndNamesAreRejected) {
  EXPECT_EQ(aggregationName(static_cast<Aggregation>(42)), "unknown");
  EXPECT_EQ(aggregationFromName("median"), std::nullopt);
  EXPECT_EQ(aggregationFromName(""), std::nullopt);
  EXPECT_EQ(aggregationFromName("MEAN"), std::nullopt);
}

TEST(AggregationTest, QuantilesAreTheP_Aggregations) {
  EXPECT_TRUE(isQuantile(Aggregation::P50));
  EXPECT_TRUE(isQuantile(Aggregation::P90));
  EXPECT_TRUE(isQuantile(Aggregation::P99));
  EXPECT_FALSE(isQuantile(Aggregation::Max));
  EXPECT_FALSE(isQuantile(Aggregation::Stddev));
}

}  // namespace
}  // namespace livemon
