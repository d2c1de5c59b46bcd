// The Ranks view's model: the shared RankScorer fed from the registry's samples of one key,
// scored once per window on the injected clock, checked by QAbstractItemModelTester.
#include <livemon/ui/model/rank_scores_model.h>

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include <QAbstractItemModelTester>

#include <livemon/clock.h>
#include <livemon/ui/model/stat_registry.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::ModelTesterMessages;

constexpr double kT0 = 1'700'000'000'000.0;

class RankScoresModelTest : public ::testing::Test {
 protected:
  RankScoresModelTest() : tester_(&model_, QAbstractItemModelTester::FailureReportingMode::Warning) {}
  ~RankScoresModelTest() override { EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::text(); }

  // Ranks 0..ranks-1 of `run` send `key`; rank 2's value is `slow` times the others'.
  void window(int w, const std::string& run = "train", double slow = 2.0, const std::string& key = "train.compute_time_ms",
              int64_t ranks = 4) {
    IngestBatch batch;
    for (int64_t r = 0; r < ranks; ++r) {
      auto& ids = ids_[run];
      if (ids.size() <= static_cast<std::size_t>(r)) {
        const auto source = static_cast<SourceId>(nextSource_++);
        batch.sources.push_back(SourceDescriptor{source, test::makeSource(run, 10 * static_cast<int64_t>(ids_.size()) + r, r), "e"});
        const auto series = static_cast<SeriesId>(nextSeries_++);
        batch.series.push_back(SeriesDescriptor{series, source, key, "mean", SeriesKind::StatWindow});
        ids.push_back(series);
      }
      batch.samples.push_back(StatSample{ids[static_cast<std::size_t>(r)], kT0 + w * 1000.0, r == 2 ? 10.0 * slow : 10.0});
    }
    registry_.apply(batch);
    model_.observe(batch);
  }
  std::vector<RankFlagged> second() {
    clock_.advance(std::chrono::seconds(1));
    return model_.tick();
  }

  ModelTesterMessages messages_;
  ManualClock clock_;
  StatRegistry registry_;
  RankScoresModel model_{registry_, &clock_};
  QAbstractItemModelTester tester_;
  std::map<std::string, std::vector<SeriesId>> ids_;
  std::size_t nextSource_ = 0;
  std::size_t nextSeries_ = 0;
};

TEST_F(RankScoresModelTest, ScoresOncePerWindowAndFlagsAfterThreeWindowsOnce) {
  window(0);
  EXPECT_TRUE(model_.tick().empty());  // no window has passed
  EXPECT_EQ(model_.window(), nullptr);
  EXPECT_EQ(model_.rowCount(), 0);
  std::vector<RankFlagged> flagged;
  for (int w = 1; w <= 5; ++w) {
    const auto now = second();
    flagged.insert(flagged.end(), now.begin(), now.end());
    window(w);
  }
  ASSERT_EQ(flagged.size(), 1U);  // flagged in window 3 and after, raised once
  EXPECT_EQ(flagged[0].score.rank, 2);
  EXPECT_EQ(flagged[0].run, QStringLiteral("train"));
  ASSERT_TRUE(flagged[0].source);
  EXPECT_EQ(*flagged[0].source, 2U);
  EXPECT_EQ(model_.heatColumns().size(), 5U);
  EXPECT_EQ(model_.heatRanks(), (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_EQ(model_.rowCount(), 4);
  EXPECT_EQ(model_.index(0, RankScoresModel::RankColumn).data().toString(), QStringLiteral("2"));
  EXPECT_EQ(model_.index(0, RankScoresModel::ScoreColumn).data().toString(), QStringLiteral("0.5"));
  EXPECT_EQ(model_.index(0, RankScoresModel::FlagColumn).data().toString(), QStringLiteral("flagged"));
  EXPECT_TRUE(model_.isFlagged(2));
  EXPECT_FALSE(model_.isFlagged(0));
  EXPECT_EQ(model_.knownKeys(), QStringList{QStringLiteral("train.compute_time_ms.mean")});
}

TEST_F(RankScoresModelTest, AnotherKeyStartsAfreshAndRunsAreShownApart) {
  for (int w = 0; w < 4; ++w) {
    window(w, "a");
    window(w, "b", 1.0);
    second();
  }
  EXPECT_EQ(model_.runs(), (QStringList{QStringLiteral("a"), QStringLiteral("b")}));
  EXPECT_EQ(model_.shownRun(), QStringLiteral("a"));
  EXPECT_TRUE(model_.isFlagged(2));
  model_.setRun(QStringLiteral("b"));
  EXPECT_FALSE(model_.isFlagged(2));
  ASSERT_NE(model_.window(), nullptr);
  EXPECT_TRUE(model_.window()->flagged.empty());

  model_.setKey(QStringLiteral("train.loss.mean"));
  EXPECT_EQ(model_.window(), nullptr);
  EXPECT_TRUE(model_.heatColumns().empty());
  second();
  window(9, "b");
  second();
  EXPECT_EQ(model_.window(), nullptr);  // nothing sends the new key
  EXPECT_EQ(model_.rowCount(), 0);
  EXPECT_THROW(model_.setKey(QString()), std::invalid_argument);
}

// The heatmap's rows are the ranks of its columns, kept as columns come and go: a rank that stops
// stays a row while any column kept has it (stale, then forgotten), and goes with its last column.
TEST_F(RankScoresModelTest, TheHeatmapsRowsAreTheRanksOfItsColumnsAsTheyComeAndGo) {
  const auto ranksOfColumns = [this] {
    std::set<int64_t> ranks;
    for (const RankHeatColumn& column : model_.heatColumns()) {
      for (const auto& [rank, value] : column.values) ranks.insert(rank);
    }
    return std::vector<int64_t>(ranks.begin(), ranks.end());
  };
  int w = 0;
  for (; w < 5; ++w) {
    window(w);
    second();
  }
  EXPECT_EQ(model_.heatRanks(), (std::vector<int64_t>{0, 1, 2, 3}));
  bool rank3Left = false;
  for (; w < 5 + static_cast<int>(RankScoresModel::kHeatColumns) + 60; ++w) {  // rank 3 stops
    window(w, "train", 2.0, "train.compute_time_ms", 3);
    second();
    ASSERT_EQ(model_.heatRanks(), ranksOfColumns()) << "window " << w;
    if (model_.heatRanks().size() == 3) rank3Left = true;
  }
  EXPECT_TRUE(rank3Left);
  EXPECT_EQ(model_.heatColumns().size(), RankScoresModel::kHeatColumns);
  EXPECT_EQ(model_.heatRanks(), (std::vector<int64_t>{0, 1, 2}));
  model_.setKey(QStringLiteral("train.loss.mean"));
  EXPECT_TRUE(model_.heatRanks().empty());
}

}  // namespace
}  // namespace livemon::ui
