// RankScorer on synthetic inputs and a ManualClock: the median, scores and flags of a run's ranks,
// ranks that join late, leave (goodbye or silence) or restart, ties, zero and NaN values, one
// rank alone, several runs, and the caps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <livemon/rank_scores.h>

namespace livemon {
namespace {

using namespace std::chrono_literals;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

AlertSource rankSource(int64_t rank, std::string run = "job") {
  AlertSource source;
  source.run = std::move(run);
  source.host = "node" + std::to_string(rank / 8);
  source.pid = 1000 + rank;
  source.rank = rank;
  source.instanceId = 77 + static_cast<uint64_t>(rank);
  return source;
}

class RankScorerTest : public testing::Test {
 protected:
  RankScorer scorer(RankScorerOptions options = {}) {
    options.clock = &clock_;
    return RankScorer(std::move(options));
  }

  // One window: every rank in `values` reports, a second passes, the scorer evaluates.
  static std::vector<RankWindow> window(RankScorer& scorer, ManualClock& clock, const std::vector<double>& values) {
    for (std::size_t r = 0; r < values.size(); ++r) scorer.observeValue(rankSource(static_cast<int64_t>(r)), values[r]);
    clock.advance(1s);
    return scorer.evaluate();
  }
  std::vector<RankWindow> window(RankScorer& scorer, const std::vector<double>& values) {
    return window(scorer, clock_, values);
  }

  static const RankScore& of(const RankWindow& window, int64_t rank) {
    for (const RankScore& score : window.ranks) {
      if (score.rank == rank) return score;
    }
    throw std::runtime_error("no rank " + std::to_string(rank));
  }

  ManualClock clock_;
};

TEST_F(RankScorerTest, ScoresAgainstTheMedianAndFlagsAfterConsecutiveLowWindows) {
  RankScorer ranks = scorer();
  const std::vector<double> values{10, 11, 9, 20, 10};  // rank 3 twice as slow
  auto windows = window(ranks, values);
  ASSERT_EQ(windows.size(), 1u);
  const RankWindow& first = windows[0];
  EXPECT_EQ(first.run, "job");
  EXPECT_EQ(first.time, clock_.wallNow());
  EXPECT_DOUBLE_EQ(first.median, 10.0);
  EXPECT_EQ(first.scored, 5u);
  ASSERT_EQ(first.ranks.size(), 5u);
  // Worst first; the two ranks at the median keep rank order.
  EXPECT_EQ(first.ranks[0].rank, 3);
  EXPECT_DOUBLE_EQ(first.ranks[0].score, 0.5);
  EXPECT_EQ(first.ranks[1].rank, 1);
  EXPECT_DOUBLE_EQ(first.ranks[1].score, 10.0 / 11.0);
  EXPECT_EQ(first.ranks[2].rank, 0);
  EXPECT_EQ(first.ranks[3].rank, 4);
  EXPECT_EQ(first.ranks[4].rank, 2);
  EXPECT_EQ(of(first, 3).host, "node0");
  EXPECT_EQ(of(first, 3).pid, 1003);
  EXPECT_EQ(of(first, 3).below, 1u);
  EXPECT_FALSE(of(first, 3).flagged);
  EXPECT_TRUE(first.flagged.empty());

  EXPECT_TRUE(window(ranks, values)[0].flagged.empty());
  windows = window(ranks, values);
  EXPECT_EQ(windows[0].flagged, std::vector<int64_t>{3});
  EXPECT_TRUE(of(windows[0], 3).flagged);
  EXPECT_FALSE(of(windows[0], 1).flagged);

  // One window at the median clears the flag; it takes three low ones again to return.
  windows = window(ranks, {10, 11, 9, 10, 10});
  EXPECT_TRUE(windows[0].flagged.empty());
  EXPECT_EQ(of(windows[0], 3).below, 0u);
  window(ranks, values);
  window(ranks, values);
  EXPECT_EQ(window(ranks, values)[0].flagged, std::vector<int64_t>{3});
}

TEST_F(RankScorerTest, ThresholdAndWindowsAreOptionsAndAScoreAtTheThresholdIsNotBelowIt) {
  RankScorerOptions options;
  options.threshold = 0.5;
  options.windows = 1;
  RankScorer ranks = scorer(options);
  // Rank 3 exactly at 0.5: not below.
  EXPECT_TRUE(window(ranks, {10, 10, 10, 20})[0].flagged.empty());
  EXPECT_EQ(window(ranks, {10, 10, 10, 21})[0].flagged, std::vector<int64_t>{3});
}

TEST_F(RankScorerTest, AHigherIsFasterKeyScoresValueOverMedian) {
  RankScorerOptions options;
  options.direction = RankScoreDirection::HigherIsFaster;
  options.windows = 1;
  RankScorer ranks = scorer(options);
  const auto windows = window(ranks, {100, 100, 40, 100});
  EXPECT_DOUBLE_EQ(of(windows[0], 2).score, 0.4);
  EXPECT_EQ(windows[0].flagged, std::vector<int64_t>{2});
}

TEST_F(RankScorerTest, TiesScoreOneAndTheMedianOfAnEvenCountIsTheMiddlesMean) {
  RankScorer ranks = scorer();
  auto windows = window(ranks, {5, 5, 5, 5});
  for (const RankScore& score : windows[0].ranks) EXPECT_DOUBLE_EQ(score.score, 1.0);
  EXPECT_EQ(windows[0].ranks[0].rank, 0);  // equal scores in rank order
  EXPECT_EQ(windows[0].ranks[3].rank, 3);
  windows = window(ranks, {4, 8, 6, 2});
  EXPECT_DOUBLE_EQ(windows[0].median, 5.0);
  EXPECT_DOUBLE_EQ(of(windows[0], 1).score, 5.0 / 8.0);
}

TEST_F(RankScorerTest, OneRankAloneIsTypicalAndNeverFlagged) {
  RankScorerOptions options;
  options.windows = 1;
  RankScorer ranks = scorer(options);
  for (int i = 0; i < 5; ++i) {
    const auto windows = window(ranks, {1000.0 * (i + 1)});
    ASSERT_EQ(windows[0].ranks.size(), 1u);
    EXPECT_DOUBLE_EQ(windows[0].ranks[0].score, 1.0);
    EXPECT_TRUE(windows[0].flagged.empty());
  }
}

TEST_F(RankScorerTest, NaNAndNegativeValuesAreListedUnscoredAndLeaveTheMedianAlone) {
  RankScorerOptions options;
  options.windows = 2;
  RankScorer ranks = scorer(options);
  window(ranks, {10, 10, 30, 10});
  auto windows = window(ranks, {10, kNaN, 30, -1});
  const RankWindow& w = windows[0];
  EXPECT_DOUBLE_EQ(w.median, 20.0);  // of 10 and 30
  EXPECT_EQ(w.scored, 2u);
  EXPECT_TRUE(std::isnan(of(w, 1).value));
  EXPECT_TRUE(std::isnan(of(w, 1).score));
  EXPECT_DOUBLE_EQ(of(w, 3).value, -1.0);
  EXPECT_TRUE(std::isnan(of(w, 3).score));
  EXPECT_FALSE(of(w, 1).stale);
  // Unscored ranks come last, in rank order.
  EXPECT_EQ(w.ranks[2].rank, 1);
  EXPECT_EQ(w.ranks[3].rank, 3);
  EXPECT_EQ(w.flagged, std::vector<int64_t>{2});

  // An unscored window ends a run of low scores.
  windows = window(ranks, {10, 10, kNaN, 10});
  EXPECT_TRUE(windows[0].flagged.empty());
  EXPECT_EQ(of(windows[0], 2).below, 0u);
  EXPECT_TRUE(window(ranks, {10, 10, 30, 10})[0].flagged.empty());

  // Nobody scorable: no median, no score, no flag.
  windows = window(ranks, {kNaN, kNaN, kNaN, kNaN});
  EXPECT_TRUE(std::isnan(windows[0].median));
  EXPECT_EQ(windows[0].scored, 0u);
}

TEST_F(RankScorerTest, AZeroValueIsInfinitelyFastAndZeroAgainstAZeroMedianIsTypical) {
  RankScorerOptions options;
  options.windows = 1;
  RankScorer ranks = scorer(options);
  auto windows = window(ranks, {0, 10, 10});
  EXPECT_TRUE(std::isinf(of(windows[0], 0).score));
  EXPECT_EQ(windows[0].ranks.back().rank, 0);
  EXPECT_TRUE(windows[0].flagged.empty());
  windows = window(ranks, {0, 0, 0, 4});
  EXPECT_DOUBLE_EQ(windows[0].median, 0.0);
  EXPECT_DOUBLE_EQ(of(windows[0], 0).score, 1.0);
  EXPECT_DOUBLE_EQ(of(windows[0], 3).score, 0.0);
  EXPECT_EQ(windows[0].flagged, std::vector<int64_t>{3});
}

TEST_F(RankScorerTest, ARankThatJoinsLateIsScoredFromItsFirstValue) {
  RankScorerOptions options;
  options.windows = 2;
  RankScorer ranks = scorer(options);
  EXPECT_EQ(window(ranks, {10, 10, 10})[0].ranks.size(), 3u);
  auto windows = window(ranks, {10, 10, 10, 25});
  ASSERT_EQ(windows[0].ranks.size(), 4u);
  EXPECT_DOUBLE_EQ(of(windows[0], 3).score, 0.4);
  EXPECT_EQ(of(windows[0], 3).below, 1u);
  EXPECT_EQ(window(ranks, {10, 10, 10, 25})[0].flagged, std::vector<int64_t>{3});
}

TEST_F(RankScorerTest, ASilentRankGoesStaleThenIsForgottenAndAGoodbyeRemovesItAtOnce) {
  RankScorerOptions options;
  options.windows = 1;
  options.staleAfter = 2500ms;
  options.forgetAfter = 4500ms;
  RankScorer ranks = scorer(options);
  window(ranks, {10, 10, 10, 40});
  // Rank 3 stops sending; the others go on.
  auto windows = window(ranks, {10, 10, 10});
  EXPECT_FALSE(of(windows[0], 3).stale);  // 2 s old
  EXPECT_EQ(windows[0].flagged, std::vector<int64_t>{3});
  windows = window(ranks, {10, 10, 12});
  const RankScore& stale = of(windows[0], 3);
  EXPECT_TRUE(stale.stale);  // 3 s old
  EXPECT_TRUE(std::isnan(stale.score));
  EXPECT_FALSE(stale.flagged);
  EXPECT_DOUBLE_EQ(stale.value, 40.0);
  EXPECT_EQ(windows[0].scored, 3u);
  EXPECT_DOUBLE_EQ(windows[0].median, 10.0);  // without the stale 40
  EXPECT_TRUE(windows[0].flagged.empty());
  window(ranks, {10, 10, 10});
  windows = window(ranks, {10, 10, 10});  // 5 s old
  EXPECT_EQ(windows[0].ranks.size(), 3u);
  EXPECT_EQ(ranks.stats().forgotten, 1u);
  EXPECT_EQ(ranks.stats().ranks, 3u);

  ranks.observeGoodbye(rankSource(1));
  windows = window(ranks, {10});
  ASSERT_EQ(windows[0].ranks.size(), 2u);  // ranks 0 and 2 (2 is still fresh)
  EXPECT_EQ(windows[0].ranks[0].rank, 0);
  EXPECT_EQ(windows[0].ranks[1].rank, 2);
  EXPECT_EQ(ranks.stats().forgotten, 2u);

  // Everyone silent long enough: the run is gone.
  clock_.advance(10s);
  EXPECT_TRUE(ranks.evaluate().empty());
  EXPECT_EQ(ranks.stats().runs, 0u);
}

TEST_F(RankScorerTest, ARestartedRankStartsUnflaggedAndAnOldInstancesGoodbyeIsIgnored) {
  RankScorerOptions options;
  options.windows = 2;
  RankScorer ranks = scorer(options);
  window(ranks, {10, 10, 30});
  EXPECT_EQ(window(ranks, {10, 10, 30})[0].flagged, std::vector<int64_t>{2});
  AlertSource restarted = rankSource(2);
  restarted.instanceId = 999;
  restarted.pid = 4242;
  ranks.observeValue(rankSource(0), 10);
  ranks.observeValue(rankSource(1), 10);
  ranks.observeValue(restarted, 30);
  clock_.advance(1s);
  auto windows = ranks.evaluate();
  EXPECT_EQ(of(windows[0], 2).pid, 4242);
  EXPECT_EQ(of(windows[0], 2).below, 1u);
  EXPECT_TRUE(windows[0].flagged.empty());
  ranks.observeGoodbye(rankSource(2));  // the instance before the restart
  clock_.advance(1s);
  EXPECT_EQ(ranks.evaluate()[0].ranks.size(), 3u);
}

TEST_F(RankScorerTest, RunsAreScoredApartAndUnrankedSourcesIgnored) {
  RankScorerOptions options;
  options.windows = 1;
  RankScorer ranks = scorer(options);
  for (int64_t r = 0; r < 3; ++r) {
    ranks.observeValue(rankSource(r, "b"), r == 1 ? 50.0 : 10.0);
    ranks.observeValue(rankSource(r, "a"), 100.0);
  }
  AlertSource unranked = rankSource(0, "a");
  unranked.rank.reset();
  ranks.observeValue(unranked, 1e9);
  clock_.advance(1s);
  const auto windows = ranks.evaluate();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].run, "a");
  EXPECT_EQ(windows[0].ranks.size(), 3u);
  EXPECT_TRUE(windows[0].flagged.empty());
  EXPECT_EQ(windows[1].run, "b");
  EXPECT_EQ(windows[1].flagged, std::vector<int64_t>{1});
}

TEST_F(RankScorerTest, TakesTheKeyFromStatEventsAndFromOtherEventsFields) {
  RankScorerOptions options;
  options.key = "train.compute_time_ms.mean";
  RankScorer stats = scorer(options);
  Event stat{"livemon.Stat", clock_.wallNow(), {{"train.compute_time_ms.mean", 12.5}, {"train.loss.mean", 3.0}}};
  stats.observeEvent(rankSource(0), stat);
  stats.observeEvent(rankSource(1), Event{"livemon.Stat", clock_.wallNow(), {{"train.loss.mean", 3.0}}});
  stats.observeEvent(rankSource(2), Event{"other", clock_.wallNow(), {{"compute_time_ms.mean", 1.0}}});
  stats.observeEvent(rankSource(3), Event{"livemon.Stat", clock_.wallNow(), {{"train.compute_time_ms.mean", std::string("x")}}});
  auto windows = stats.evaluate();
  ASSERT_EQ(windows[0].ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(windows[0].ranks[0].value, 12.5);
  EXPECT_EQ(stats.stats().values, 1u);

  options.key = "step.busy_ms";
  RankScorer events = scorer(options);
  events.observeEvent(rankSource(0), Event{"step", clock_.wallNow(), {{"busy_ms", int64_t{7}}}});
  events.observeEvent(rankSource(1), Event{"stepper", clock_.wallNow(), {{"busy_ms", 1.0}}});
  events.observeEvent(rankSource(2), Event{"step.busy_ms", clock_.wallNow(), {{"busy_ms", 1.0}}});
  windows = events.evaluate();
  ASSERT_EQ(windows[0].ranks.size(), 1u);
  EXPECT_DOUBLE_EQ(windows[0].ranks[0].value, 7.0);
}

TEST_F(RankScorerTest, RunsAndRanksBeyondTheCapsAreRefusedAndCounted) {
  RankScorerOptions options;
  options.maxRuns = 2;
  options.maxRanks = 3;
  RankScorer ranks = scorer(options);
  ranks.observeValue(rankSource(0, "a"), 1);
  ranks.observeValue(rankSource(1, "a"), 1);
  ranks.observeValue(rankSource(0, "b"), 1);
  ranks.observeValue(rankSource(0, "c"), 1);  // a third run
  ranks.observeValue(rankSource(2, "a"), 1);  // a fourth rank
  ranks.observeValue(rankSource(1, "a"), 2);  // known: still taken
  EXPECT_EQ(ranks.stats().refused, 2u);
  EXPECT_EQ(ranks.stats().values, 4u);
  EXPECT_EQ(ranks.stats().runs, 2u);
  EXPECT_EQ(ranks.stats().ranks, 3u);
  // A goodbye makes room.
  ranks.observeGoodbye(rankSource(0, "b"));
  ranks.observeValue(rankSource(0, "c"), 1);
  EXPECT_EQ(ranks.stats().runs, 2u);
  EXPECT_EQ(ranks.evaluate().back().run, "c");
}

TEST_F(RankScorerTest, RefusesBadOptionsNamingThem) {
  const auto message = [&](RankScorerOptions options) {
    try {
      scorer(std::move(options));
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  RankScorerOptions options;
  options.key.clear();
  EXPECT_NE(message(options).find("key"), std::string::npos);
  for (double threshold : {0.0, -1.0, kNaN, std::numeric_limits<double>::infinity()}) {
    options = {};
    options.threshold = threshold;
    EXPECT_NE(message(options).find("threshold"), std::string::npos) << threshold;
  }
  options = {};
  options.windows = 0;
  EXPECT_NE(message(options).find("windows"), std::string::npos);
  options = {};
  options.staleAfter = 0ms;
  EXPECT_NE(message(options).find("staleAfter"), std::string::npos);
  options = {};
  options.forgetAfter = options.staleAfter - 1ms;
  EXPECT_NE(message(options).find("forgetAfter"), std::string::npos);
  options = {};
  options.maxRanks = 0;
  EXPECT_NE(message(options).find("maxRanks"), std::string::npos);
}

}  // namespace
}  // namespace livemon
