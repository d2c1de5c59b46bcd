// 1 024 ranks × 20 Stats through the dashboard's ingest path (converter, registry, rank groups),
// the ranks closing their windows over a few hundred milliseconds and arriving in the GUI's 33 ms
// batches, as `livemonctl demo --ranks 1024` through a relay does: nothing is forgotten, and a
// group's median line and band are drawn unbroken, as they are at 64 ranks.
#include <livemon/ui/model/rank_groups.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/line_trace.h>
#include <livemon/ui/model/stat_registry.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr double kT0 = 1'700'000'000'000.0;
constexpr double kWindowMs = 1000.0;
constexpr double kBatchMs = 33.0;
constexpr int kStats = 20;
constexpr int kWindows = 12;

class RankGroupsScaleTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    for (int r = 0; r < ranks(); ++r) {
      auto info = std::make_shared<transport::SourceInfo>(*test::makeSource("train", 1000 + r, r));
      info->worldSize = ranks();
      sources_.push_back(std::move(info));
    }
  }
  int ranks() const { return GetParam(); }

  // The ranks close their windows 0.3 ms apart, in no rank order (sending 1 024 ranks' windows
  // takes a while): 64 ranks within one batch, 1 024 over 300 ms, each batch bringing a slice.
  double closeOffset(int r) const { return 0.3 * static_cast<double>((r * 7) % ranks()); }

  void deliverWindows() {
    for (int w = 0; w < kWindows; ++w) {
      const double start = kT0 + w * kWindowMs;
      for (double slice = 0.0; slice < 0.3 * ranks(); slice += kBatchMs) {
        IngestBatch batch;
        for (int r = 0; r < ranks(); ++r) {
          const double offset = closeOffset(r);
          if (offset < slice || offset >= slice + kBatchMs) continue;
          Event event{std::string(kStatEventName), test::atMs(start + offset), {}};
          for (int s = 0; s < kStats; ++s) {
            const std::string stat = "train.stat" + std::to_string(s);
            const double value = 10.0 + s + 0.01 * r + 0.1 * w;
            event.data[stat + ".mean"] = value;
            event.data[stat + ".min"] = value - 1.0;
            event.data[stat + ".max"] = value + 1.0;
          }
          auto received = test::received(sources_[static_cast<std::size_t>(r)], std::move(event));
          converter_.convert(received, batch);
        }
        converter_.finish(batch);
        const RankGroupUpdate update = groups_.apply(batch, registry_.apply(batch));
        for (SeriesId id : update.chartSeries) {
          const SeriesEntry* entry = registry_.series(id);
          if (entry != nullptr && entry->role == SeriesRole::RankMedian) medians_.push_back(entry);
        }
      }
    }
  }

  std::vector<std::shared_ptr<const transport::SourceInfo>> sources_;
  EventConverter converter_;
  StatRegistry registry_;
  RankGroups groups_{registry_};
  std::vector<const SeriesEntry*> medians_;  // the group's median lines
};

TEST_P(RankGroupsScaleTest, NothingIsForgottenAndTheMedianLineHasNoGaps) {
  deliverWindows();
  EXPECT_FALSE(converter_.drops().any());
  EXPECT_EQ(converter_.sourceCount(), static_cast<std::size_t>(ranks()));
  const std::vector<RankGroupInfo> groups = groups_.groups();
  ASSERT_EQ(groups.size(), 1U);
  EXPECT_EQ(groups.front().ranks.size(), static_cast<std::size_t>(ranks()));

  const std::vector<const SeriesEntry*>& lines = medians_;
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kStats * 3));
  for (const SeriesEntry* median : lines) {
    ASSERT_TRUE(median->store.firstX() && median->store.lastX());
    TraceRequest request;
    request.xMin = *median->store.firstX();
    request.xMax = *median->store.lastX();
    request.columns = 800;
    TraceResult traced;
    traceSeries(median->store, request, traced);
    EXPECT_TRUE(traced.raw.breaks.empty()) << median->stat.toStdString() << "." << median->aggregation.toStdString()
                                           << " breaks into " << traced.raw.breaks.size() + 1 << " stretches";
    EXPECT_EQ(median->rankCount, static_cast<std::size_t>(ranks()));
  }
}

// A rank's own series (drawn only when picked) keeps fewer points in a larger run, so that 1 024
// ranks hold what 64 do (kept at 64 + 64 points each they took about 0.5 GiB); the group's lines
// keep the full limits.
TEST_P(RankGroupsScaleTest, ARanksOwnSeriesKeepsItsShareOfWhat64RanksKeep) {
  registry_.setRankedLimits(SeriesStore::Limits{64, 64, 8});
  deliverWindows();
  const std::size_t share = ranks() <= 64 ? 64 : 8;  // 64 × 64 / 1 024 = 4, at least 8
  std::size_t rankSeries = 0;
  for (SeriesId id = 0; id < registry_.seriesIdEnd(); ++id) {
    const SeriesEntry* entry = registry_.series(id);
    if (entry == nullptr) continue;
    ++rankSeries;
    EXPECT_EQ(entry->store.limits().recentCapacity, share);
    EXPECT_EQ(entry->store.limits().bucketCapacity, share);
    EXPECT_EQ(entry->store.limits().samplesPerBucket, 8U);
    EXPECT_LT(entry->store.recentSize(), share + 8);  // folded into a bucket 8 at a time
  }
  EXPECT_EQ(rankSeries, static_cast<std::size_t>(ranks() * kStats * 3));
  for (const SeriesEntry* median : medians_) EXPECT_EQ(median->store.limits().recentCapacity, SeriesStore::Limits{}.recentCapacity);
}

TEST(RankedLimitsTest, ScaleWithTheWorldSizeAboveSixtyFourRanks) {
  const SeriesStore::Limits limits{64, 64, 8};
  EXPECT_EQ(StatRegistry::rankedLimitsFor(limits, std::nullopt).recentCapacity, 64U);
  EXPECT_EQ(StatRegistry::rankedLimitsFor(limits, 8).bucketCapacity, 64U);
  EXPECT_EQ(StatRegistry::rankedLimitsFor(limits, 64).recentCapacity, 64U);
  EXPECT_EQ(StatRegistry::rankedLimitsFor(limits, 128).recentCapacity, 32U);
  EXPECT_EQ(StatRegistry::rankedLimitsFor(limits, 128).bucketCapacity, 32U);
  EXPECT_EQ(StatRegistry::rankedLimitsFor(limits, 4096).recentCapacity, 8U);
  EXPECT_EQ(StatRegistry::rankedLimitsFor(limits, 4096).samplesPerBucket, 8U);
  // Limits already under the floor stay as they are.
  EXPECT_EQ(StatRegistry::rankedLimitsFor(SeriesStore::Limits{4, 2, 8}, 1024).recentCapacity, 4U);
  EXPECT_EQ(StatRegistry::rankedLimitsFor(SeriesStore::Limits{4, 2, 8}, 1024).bucketCapacity, 2U);
}

// 64 ranks, the reference the issue compares with, and 1 024.
INSTANTIATE_TEST_SUITE_P(Ranks, RankGroupsScaleTest, ::testing::Values(64, 1024));

}  // namespace
}  // namespace livemon::ui
