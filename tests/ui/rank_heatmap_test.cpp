// The Ranks view's heatmap at 1 024 ranks: a rank a row of a legible height, scrolled, with the
// flagged rank pinned at the top where it is seen without scrolling.
#include <livemon/ui/widgets/rank_heatmap.h>

#include <gtest/gtest.h>

#include <QScrollBar>
#include <QWheelEvent>

#include <livemon/clock.h>
#include <livemon/ui/model/rank_scores_model.h>
#include <livemon/ui/model/stat_registry.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr int kRanks = 1024;
constexpr int64_t kStraggler = 7;
constexpr double kT0 = 1'700'000'000'000.0;

class RankHeatmapTest : public ::testing::Test {
 protected:
  RankHeatmapTest() {
    IngestBatch batch;
    for (int r = 0; r < kRanks; ++r) {
      const auto id = static_cast<SourceId>(r);
      batch.sources.push_back(SourceDescriptor{id, test::makeSource("train", 1000 + r, r), "e"});
      batch.series.push_back(SeriesDescriptor{static_cast<SeriesId>(r), id, "train.compute_time_ms", "mean", SeriesKind::StatWindow});
    }
    registry_.apply(batch);
    model_.observe(batch);
    heatmap_.resize(700, 480);
    heatmap_.show();
  }

  // One window of every rank; rank 7 twice as slow when `straggling`.
  void window(int w, bool straggling = true) {
    IngestBatch batch;
    for (int r = 0; r < kRanks; ++r) {
      const double value = 100.0 * (1.0 + 0.01 * (r % 5)) * (straggling && r == kStraggler ? 2.0 : 1.0);
      batch.samples.push_back(StatSample{static_cast<SeriesId>(r), kT0 + w * 1000.0, value});
    }
    registry_.apply(batch);
    model_.observe(batch);
    clock_.advance(std::chrono::seconds(1));
    model_.tick();
  }

  // The middle of the first row under the pinned ones, and of the last row in view.
  QPoint firstScrolledRow() const {
    const int pinned = static_cast<int>(heatmap_.pinnedRanks().size());
    return {heatmap_.width() / 2, 4 + static_cast<int>(heatmap_.rowHeight() * (pinned + 0.5)) + (pinned > 0 ? 6 : 0)};
  }

  ManualClock clock_;
  StatRegistry registry_;
  RankScoresModel model_{registry_, &clock_};
  RankHeatmap heatmap_{model_};
};

TEST_F(RankHeatmapTest, TheFlaggedRankIsPinnedAtTheTopAndScrollingReachesTheLastRank) {
  for (int w = 0; w < 5; ++w) window(w);
  ASSERT_TRUE(model_.isFlagged(kStraggler));

  // Rows of a legible height, more than fit: a scroll bar.
  EXPECT_GE(heatmap_.rowHeight(), RankHeatmap::kMinRowHeight);
  EXPECT_TRUE(heatmap_.scrollBar().isVisible());
  EXPECT_GT(heatmap_.scrollBar().maximum(), 0);
  EXPECT_EQ(heatmap_.scrollBar().value(), 0);
  // The top row, without scrolling: the straggler, pinned; rank 0 below it.
  EXPECT_EQ(heatmap_.pinnedRanks(), (std::vector<int64_t>{kStraggler}));
  EXPECT_EQ(heatmap_.rankAt(QPoint(heatmap_.width() / 2, 4 + static_cast<int>(heatmap_.rowHeight() / 2))), kStraggler);
  EXPECT_EQ(heatmap_.rankAt(firstScrolledRow()), 0);

  // Scrolled to the end: rank 1023 is the last row; the straggler stays at the top.
  heatmap_.scrollBar().setValue(heatmap_.scrollBar().maximum());
  std::optional<int64_t> last;
  for (int y = 0; y < heatmap_.height(); ++y) {
    if (const auto rank = heatmap_.rankAt(QPoint(heatmap_.width() / 2, y))) last = rank;
  }
  EXPECT_EQ(last, kRanks - 1);
  EXPECT_EQ(heatmap_.rankAt(QPoint(heatmap_.width() / 2, 4 + static_cast<int>(heatmap_.rowHeight() / 2))), kStraggler);

  // The wheel scrolls back up.
  QWheelEvent wheel(QPointF(300, 200), heatmap_.mapToGlobal(QPointF(300, 200)), QPoint(), QPoint(0, 120 * 1000), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(&heatmap_, &wheel);
  EXPECT_EQ(heatmap_.scrollBar().value(), 0);
  EXPECT_EQ(heatmap_.rankAt(firstScrolledRow()), 0);

  // Painting a full view of 1 024 rows works, flagged and not.
  EXPECT_FALSE(heatmap_.grab().isNull());
}

TEST_F(RankHeatmapTest, NothingIsPinnedOnceNoRankIsFlaggedAndFewRanksNeedNoScrollBar) {
  for (int w = 0; w < 4; ++w) window(w);
  ASSERT_TRUE(model_.isFlagged(kStraggler));
  window(4, false);  // rank 7 catches up: no longer flagged
  EXPECT_FALSE(model_.isFlagged(kStraggler));
  EXPECT_TRUE(heatmap_.pinnedRanks().empty());
  EXPECT_EQ(heatmap_.rankAt(QPoint(heatmap_.width() / 2, 4 + static_cast<int>(heatmap_.rowHeight() / 2))), 0);
  // Off the rows: nothing.
  EXPECT_EQ(heatmap_.rankAt(QPoint(heatmap_.width() / 2, heatmap_.height() - 2)), std::nullopt);

  // Four ranks fit: no scroll bar, rows share the height.
  StatRegistry registry;
  RankScoresModel model{registry, &clock_};
  IngestBatch batch;
  for (int r = 0; r < 4; ++r) {
    batch.sources.push_back(SourceDescriptor{static_cast<SourceId>(r), test::makeSource("small", 10 + r, r), "e"});
    batch.series.push_back(SeriesDescriptor{static_cast<SeriesId>(r), static_cast<SourceId>(r), "train.compute_time_ms", "mean",
                                            SeriesKind::StatWindow});
    batch.samples.push_back(StatSample{static_cast<SeriesId>(r), kT0, 10.0});
  }
  registry.apply(batch);
  model.observe(batch);
  for (int second = 0; second < 2; ++second) {  // the first tick starts the windows
    clock_.advance(std::chrono::seconds(1));
    model.tick();
  }
  RankHeatmap small(model);
  small.resize(700, 480);
  small.show();
  EXPECT_FALSE(small.scrollBar().isVisible());
  EXPECT_GT(small.rowHeight(), 100.0);
  EXPECT_EQ(small.rankAt(QPoint(350, small.height() - 30)), 3);
}

}  // namespace
}  // namespace livemon::ui
