// Rank groups: the median and the min–max band across a run's ranks, derived into the registry,
// for ranks that join late, leave, restart, or are alone.
#include <livemon/ui/model/rank_groups.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include <livemon/ui/model/stat_registry.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr double kT0 = 1'700'000'000'000.0;

TEST(RankCrossSection, MedianAndExtremesWithTheirRanks) {
  const auto odd = rankCrossSection({{0, 10.0}, {1, 30.0}, {2, 20.0}});
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->median, 20.0);
  EXPECT_EQ(odd->low, 10.0);
  EXPECT_EQ(odd->lowRank, 0);
  EXPECT_EQ(odd->high, 30.0);
  EXPECT_EQ(odd->highRank, 1);
  EXPECT_EQ(odd->ranks, 3U);

  const auto even = rankCrossSection({{5, 4.0}, {3, 1.0}, {9, 2.0}, {1, 8.0}});
  ASSERT_TRUE(even);
  EXPECT_EQ(even->median, 3.0);  // between 2 and 4
  EXPECT_EQ(even->lowRank, 3);
  EXPECT_EQ(even->highRank, 1);
}

TEST(RankCrossSection, TiesGoToTheLowestRankAndNonFiniteValuesTakeNoPart) {
  const auto ties = rankCrossSection({{4, 1.0}, {2, 1.0}, {7, 1.0}});
  ASSERT_TRUE(ties);
  EXPECT_EQ(ties->lowRank, 2);
  EXPECT_EQ(ties->highRank, 2);
  const auto partly = rankCrossSection({{0, std::nan("")}, {1, 5.0}, {2, std::numeric_limits<double>::infinity()}});
  ASSERT_TRUE(partly);
  EXPECT_EQ(partly->ranks, 1U);
  EXPECT_EQ(partly->median, 5.0);
  EXPECT_FALSE(rankCrossSection({{0, std::nan("")}}));
  EXPECT_FALSE(rankCrossSection({}));
}

// Builds batches the way the ingest does: dense source and series ids, descriptors before samples.
class RankGroupsTest : public ::testing::Test {
 protected:
  SourceId addSource(IngestBatch& batch, const std::string& run, int64_t pid, std::optional<int64_t> rank) {
    const auto id = static_cast<SourceId>(nextSource_++);
    batch.sources.push_back(SourceDescriptor{id, test::makeSource(run, pid, rank), "tcp://127.0.0.1:5555"});
    return id;
  }
  SeriesId addSeries(IngestBatch& batch, SourceId source, const std::string& stat = "loss",
                     const std::string& aggregation = "mean") {
    const auto id = static_cast<SeriesId>(nextSeries_++);
    batch.series.push_back(SeriesDescriptor{id, source, stat, aggregation, SeriesKind::StatWindow});
    return id;
  }
  RankGroupUpdate apply(const IngestBatch& batch) { return groups_.apply(batch, registry_.apply(batch)); }

  // The group's three lines of (stat, aggregation): median, low, high.
  struct Lines {
    const SeriesEntry* median = nullptr;
    const SeriesEntry* low = nullptr;
    const SeriesEntry* high = nullptr;
  };
  Lines linesOf(const RankGroupUpdate& update) const {
    Lines lines;
    for (SeriesId id : update.chartSeries) {
      const SeriesEntry* entry = registry_.series(id);
      if (entry == nullptr) continue;
      if (entry->role == SeriesRole::RankMedian) lines.median = entry;
      if (entry->role == SeriesRole::RankLow) lines.low = entry;
      if (entry->role == SeriesRole::RankHigh) lines.high = entry;
    }
    return lines;
  }

  StatRegistry registry_;
  RankGroups groups_{registry_};
  std::size_t nextSource_ = 0;
  std::size_t nextSeries_ = 0;
};

TEST_F(RankGroupsTest, RanksOfARunAreChartedAsAMedianAndABandNotAsLinesOfTheirOwn) {
  IngestBatch batch;
  std::vector<SeriesId> ranks;
  for (int64_t r = 0; r < 4; ++r) ranks.push_back(addSeries(batch, addSource(batch, "train", 100 + r, r)));
  const SeriesId plain = addSeries(batch, addSource(batch, "eval", 200, std::nullopt));
  const double values[] = {1.0, 2.0, 3.0, 10.0};
  for (int64_t r = 0; r < 4; ++r) batch.samples.push_back(StatSample{ranks[static_cast<std::size_t>(r)], kT0 + static_cast<double>(r), values[r]});
  batch.samples.push_back(StatSample{plain, kT0, 42.0});
  const RankGroupUpdate update = apply(batch);

  // The group's three lines and the unranked source's own; no rank's own series.
  ASSERT_EQ(update.chartSeries.size(), 4U);
  EXPECT_NE(std::find(update.chartSeries.begin(), update.chartSeries.end(), plain), update.chartSeries.end());
  for (SeriesId id : ranks) {
    EXPECT_EQ(std::find(update.chartSeries.begin(), update.chartSeries.end(), id), update.chartSeries.end());
    EXPECT_TRUE(groups_.isGrouped(id));
  }
  EXPECT_FALSE(groups_.isGrouped(plain));
  EXPECT_TRUE(update.ranksChanged);
  const Lines lines = linesOf(update);
  ASSERT_NE(lines.median, nullptr);
  ASSERT_NE(lines.low, nullptr);
  ASSERT_NE(lines.high, nullptr);
  EXPECT_EQ(lines.median->stat, QStringLiteral("loss"));
  EXPECT_EQ(lines.median->aggregation, QStringLiteral("mean"));
  EXPECT_EQ(lines.low->median, lines.median->id);
  EXPECT_EQ(lines.high->median, lines.median->id);
  // One point at the newest value's time, from every rank's latest value.
  EXPECT_EQ(lines.median->store.lastX(), kT0 + 3.0);
  EXPECT_EQ(lines.median->store.lastY(), 2.5);
  EXPECT_EQ(lines.low->store.lastY(), 1.0);
  EXPECT_EQ(lines.high->store.lastY(), 10.0);
  EXPECT_EQ(lines.low->rankNear(kT0 + 3.0), 0);
  EXPECT_EQ(lines.high->rankNear(kT0 + 3.0), 3);
  const SourceEntry* group = registry_.source(lines.median->source);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->label, QStringLiteral("train ranks"));
  ASSERT_EQ(groups_.groups().size(), 1U);
  EXPECT_EQ(groups_.groups()[0].ranks, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(groups_.rankSeries(QStringLiteral("train"), 2), (std::vector<SeriesId>{ranks[2]}));
  EXPECT_TRUE(groups_.rankSeries(QStringLiteral("train"), 9).empty());
}

TEST_F(RankGroupsTest, OneRankAloneIsAGroupWhoseBandIsItsLine) {
  IngestBatch batch;
  const SeriesId only = addSeries(batch, addSource(batch, "solo", 1, 0));
  batch.samples = {{only, kT0, 5.0}, {only, kT0 + 1000, 6.0}};
  const RankGroupUpdate update = apply(batch);
  const Lines lines = linesOf(update);
  ASSERT_NE(lines.median, nullptr);
  EXPECT_EQ(lines.median->store.lastY(), 6.0);
  EXPECT_EQ(lines.low->store.lastY(), 6.0);
  EXPECT_EQ(lines.high->store.lastY(), 6.0);
  EXPECT_EQ(lines.high->rankNear(kT0 + 1000), 0);
}

TEST_F(RankGroupsTest, ARankJoiningLateWidensTheBandFromItsFirstValue) {
  IngestBatch first;
  const SeriesId r0 = addSeries(first, addSource(first, "train", 1, 0));
  const SeriesId r1 = addSeries(first, addSource(first, "train", 2, 1));
  first.samples = {{r0, kT0, 1.0}, {r1, kT0, 3.0}};
  const Lines lines = linesOf(apply(first));
  ASSERT_NE(lines.median, nullptr);
  EXPECT_EQ(lines.median->store.lastY(), 2.0);
  EXPECT_EQ(lines.high->store.lastY(), 3.0);

  IngestBatch late;
  const SeriesId r2 = addSeries(late, addSource(late, "train", 3, 2));
  late.samples = {{r0, kT0 + 1000, 1.0}, {r1, kT0 + 1000, 3.0}, {r2, kT0 + 1000, 9.0}};
  const RankGroupUpdate update = apply(late);
  EXPECT_TRUE(update.chartSeries.empty());  // the group's lines exist already
  EXPECT_TRUE(update.ranksChanged);
  EXPECT_EQ(lines.median->store.lastY(), 3.0);
  EXPECT_EQ(lines.high->store.lastY(), 9.0);
  EXPECT_EQ(lines.high->rankNear(kT0 + 1000), 2);
  // Before it joined the band was narrower, and it stays so in the store.
  std::vector<double> highs;
  lines.high->store.visitFrom(kT0 - 1, 0, [&](double, double y, bool) {
    highs.push_back(y);
    return true;
  });
  EXPECT_EQ(highs, (std::vector<double>{3.0, 9.0}));
}

TEST_F(RankGroupsTest, ARankThatLeavesDropsOutOnceStale) {
  IngestBatch batch;
  const SeriesId r0 = addSeries(batch, addSource(batch, "train", 1, 0));
  const SeriesId r1 = addSeries(batch, addSource(batch, "train", 2, 1));
  const SeriesId gone = addSeries(batch, addSource(batch, "train", 3, 2));
  batch.samples = {{r0, kT0, 1.0}, {r1, kT0, 2.0}, {gone, kT0, 50.0}};
  const Lines lines = linesOf(apply(batch));
  ASSERT_NE(lines.high, nullptr);
  EXPECT_EQ(lines.high->store.lastY(), 50.0);

  // Rank 2 says nothing more; within staleAfter (3 s, three of the ranks' 1 s intervals) its
  // last value still counts...
  IngestBatch soon;
  soon.samples = {{r0, kT0 + 1000, 1.0}, {r1, kT0 + 1000, 2.0}, {r0, kT0 + 2000, 1.0}, {r1, kT0 + 2000, 2.0}};
  apply(soon);
  EXPECT_EQ(lines.high->store.lastY(), 50.0);
  // ...after it, the band is the remaining ranks'.
  IngestBatch later;
  later.samples = {{r0, kT0 + 4000, 1.0}, {r1, kT0 + 4000, 2.0}};
  apply(later);
  EXPECT_EQ(lines.high->store.lastY(), 2.0);
  EXPECT_EQ(lines.median->store.lastY(), 1.5);
  EXPECT_EQ(lines.high->rankNear(kT0 + 4000), 1);
}

TEST_F(RankGroupsTest, ARestartedRankReplacesItsPredecessorAndLateSamplesChangeNothing) {
  IngestBatch batch;
  const SeriesId r0 = addSeries(batch, addSource(batch, "train", 1, 0));
  const SeriesId old1 = addSeries(batch, addSource(batch, "train", 2, 1));
  batch.samples = {{r0, kT0, 1.0}, {old1, kT0, 100.0}};
  const Lines lines = linesOf(apply(batch));
  ASSERT_NE(lines.high, nullptr);

  IngestBatch restart;
  const SeriesId new1 = addSeries(restart, addSource(restart, "train", 3, 1));
  restart.samples = {{r0, kT0 + 1000, 1.0}, {new1, kT0 + 1000, 3.0}, {r0, kT0 + 500, 77.0}};
  apply(restart);
  EXPECT_FALSE(groups_.isGrouped(old1));
  EXPECT_TRUE(groups_.isGrouped(new1));
  EXPECT_EQ(lines.high->store.lastY(), 3.0);
  EXPECT_EQ(lines.low->store.lastY(), 1.0);
  EXPECT_EQ(groups_.groups()[0].ranks, (std::vector<int64_t>{0, 1}));
}

TEST_F(RankGroupsTest, RunsAndEndpointsAreGroupsApartAndGroupingOffChartsEverySeries) {
  IngestBatch batch;
  addSeries(batch, addSource(batch, "a", 1, 0));
  addSeries(batch, addSource(batch, "b", 2, 0));
  apply(batch);
  EXPECT_EQ(groups_.groups().size(), 2U);

  StatRegistry registry;
  RankGroupsOptions off;
  off.enabled = false;
  RankGroups ungrouped(registry, off);
  const RankGroupUpdate update = ungrouped.apply(batch, registry.apply(batch));
  EXPECT_EQ(update.chartSeries, (std::vector<SeriesId>{0, 1}));
  EXPECT_TRUE(ungrouped.groups().empty());
}

TEST_F(RankGroupsTest, ASeekClearsTheGroupAndRemovalForgetsIt) {
  IngestBatch batch;
  const SeriesId r0 = addSeries(batch, addSource(batch, "train", 1, 0));
  batch.samples = {{r0, kT0 + 5000, 1.0}};
  const Lines lines = linesOf(apply(batch));
  ASSERT_NE(lines.median, nullptr);
  const QString endpoint = QStringLiteral("tcp://127.0.0.1:5555");
  registry_.clearSamples([&](const SourceEntry& s) { return s.endpoint == endpoint; });
  groups_.clearSamples(endpoint);
  EXPECT_TRUE(lines.median->store.empty());
  IngestBatch earlier;  // after seeking back
  earlier.samples = {{r0, kT0, 4.0}};
  apply(earlier);
  EXPECT_EQ(lines.median->store.lastY(), 4.0);

  const RegistryRemoval removal = registry_.removeSources([&](const SourceEntry& s) { return s.endpoint == endpoint; });
  EXPECT_EQ(removal.sources.size(), 2U);  // the rank and its group
  EXPECT_EQ(removal.series.size(), 4U);
  groups_.removed(removal);
  EXPECT_TRUE(groups_.groups().empty());
  EXPECT_FALSE(groups_.isGrouped(r0));
}

TEST_F(RankGroupsTest, AWindowAppliedInPiecesMakesOnePointFromAllItsRanks) {
  IngestBatch first;
  std::vector<SeriesId> ranks;
  for (int64_t r = 0; r < 4; ++r) ranks.push_back(addSeries(first, addSource(first, "train", 100 + r, r)));
  // Window 1 from every rank.
  for (std::size_t r = 0; r < 4; ++r) first.samples.push_back(StatSample{ranks[r], kT0, 1.0});
  const Lines lines = linesOf(apply(first));
  ASSERT_NE(lines.median, nullptr);
  ASSERT_EQ(lines.median->store.appendedCount(), 1U);

  // Window 2 comes in two pieces (ranks 0–1, then 2–3): the pieces bring the ranks' values, the
  // point is made once, after the last, from all four new values.
  IngestBatch piece1;
  IngestBatch piece2;
  for (std::size_t r = 0; r < 4; ++r) (r < 2 ? piece1 : piece2).samples.push_back(StatSample{ranks[r], kT0 + 1000, 10.0 + static_cast<double>(r)});
  groups_.observe(piece1, registry_.apply(piece1));
  EXPECT_EQ(lines.median->store.appendedCount(), 1U);  // nothing yet from half a window
  groups_.observe(piece2, registry_.apply(piece2));
  groups_.addPoints();
  EXPECT_EQ(lines.median->store.appendedCount(), 2U);
  EXPECT_EQ(lines.median->store.lastY(), 11.5);
  EXPECT_EQ(lines.low->store.lastY(), 10.0);
  EXPECT_EQ(lines.high->store.lastY(), 13.0);
  groups_.addPoints();  // nothing new: no second point
  EXPECT_EQ(lines.median->store.appendedCount(), 2U);
}

TEST_F(RankGroupsTest, ARankRemovedFromTheMiddleLeavesTheOthersTracked) {
  IngestBatch batch;
  std::vector<SourceId> sources;
  std::vector<SeriesId> ranks;
  for (int64_t r = 0; r < 3; ++r) {
    sources.push_back(addSource(batch, "train", 100 + r, r));
    ranks.push_back(addSeries(batch, sources.back()));
  }
  for (std::size_t r = 0; r < 3; ++r) batch.samples.push_back(StatSample{ranks[r], kT0, static_cast<double>(r)});
  const Lines lines = linesOf(apply(batch));
  ASSERT_NE(lines.median, nullptr);

  const RegistryRemoval removal = registry_.removeSources([&](const SourceEntry& s) { return s.id == sources[1]; });
  groups_.removed(removal);
  EXPECT_FALSE(groups_.isGrouped(ranks[1]));
  EXPECT_TRUE(groups_.isGrouped(ranks[0]));
  EXPECT_TRUE(groups_.isGrouped(ranks[2]));
  // Rank 2 (the last member, moved into rank 1's place) still takes part, under its own rank.
  IngestBatch later;
  later.samples = {{ranks[0], kT0 + 1000, 4.0}, {ranks[2], kT0 + 1000, 8.0}};
  apply(later);
  EXPECT_EQ(lines.median->store.lastY(), 6.0);
  EXPECT_EQ(lines.high->rankNear(kT0 + 1000), 2);
  EXPECT_EQ(groups_.rankSeries(QStringLiteral("train"), 2), (std::vector<SeriesId>{ranks[2]}));
  EXPECT_TRUE(groups_.rankSeries(QStringLiteral("train"), 1).empty());
}

TEST(StatRegistryRankedLimits, ARankedSourcesSeriesTakeTheRankedLimitsOthersTheirOwn) {
  StatRegistry registry(SeriesStore::Limits{2048, 1024, 8});
  registry.setRankedLimits(SeriesStore::Limits{64, 32, 4});
  IngestBatch batch;
  batch.sources.push_back(SourceDescriptor{0, test::makeSource("train", 1, 3), "tcp://127.0.0.1:5555"});
  batch.sources.push_back(SourceDescriptor{1, test::makeSource("eval", 2, std::nullopt), "tcp://127.0.0.1:5555"});
  batch.series.push_back(SeriesDescriptor{0, 0, "loss", "mean", SeriesKind::StatWindow});
  batch.series.push_back(SeriesDescriptor{1, 1, "loss", "mean", SeriesKind::StatWindow});
  registry.apply(batch);
  EXPECT_EQ(registry.series(0)->store.limits().recentCapacity, 64U);
  EXPECT_EQ(registry.series(0)->store.limits().bucketCapacity, 32U);
  EXPECT_EQ(registry.series(1)->store.limits().recentCapacity, 2048U);
}

}  // namespace
}  // namespace livemon::ui
