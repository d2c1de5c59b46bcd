// A large window applied over several refreshes: each refresh applies a piece of at most its
// quota, and more pieces only within its time budget; nothing is lost or reordered, and a rank
// group's point is made once, from all of the window's ranks.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <QTemporaryDir>

#include <livemon/clock.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/stat_registry.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr double kT0Ms = 1'700'000'000'000.0;
constexpr int kRanks = 32;
constexpr int kStats = 4;

// One window of every rank: kStats Stats (one aggregation each) and a log row per rank.
void deliverWindow(Dashboard& dashboard, int window, int slowRank = -1) {
  std::vector<transport::ReceivedEvent> events;
  for (int rank = 0; rank < kRanks; ++rank) {
    Event event{std::string(kStatEventName), test::atMs(kT0Ms + 1000.0 * window), {}};
    for (int stat = 0; stat < kStats; ++stat) {
      event.data["stat" + std::to_string(stat) + ".mean"] = rank == slowRank ? 100.0 : 1.0 + window;
    }
    events.push_back(test::received(test::makeSource("train", 1000 + rank, rank, kT0Ms), std::move(event)));
  }
  dashboard.ingest().deliver(events);
}

class DashboardPiecesTest : public ::testing::Test {
 protected:
  DashboardOptions options() {
    DashboardOptions result;
    result.exactEndpoints = true;  // only what the test feeds
    result.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
    return result;
  }
  // The rank groups' median lines (derived series, numbered from kFirstDerivedSeries).
  static std::vector<const SeriesEntry*> medians(const Dashboard& dashboard) {
    std::vector<const SeriesEntry*> result;
    const StatRegistry& registry = dashboard.registry();
    for (SeriesId id = StatRegistry::kFirstDerivedSeries; registry.series(id) != nullptr; ++id) {
      if (registry.series(id)->role == SeriesRole::RankMedian) result.push_back(registry.series(id));
    }
    return result;
  }

  QTemporaryDir dir_;
};

TEST_F(DashboardPiecesTest, AWindowOverTheQuotaIsAppliedOverSeveralRefreshesAndItsGroupPointMadeOnce) {
  ASSERT_TRUE(dir_.isValid());
  DashboardOptions onePiece = options();
  onePiece.refreshBudget.time = std::chrono::microseconds{0};  // a piece per refresh
  Dashboard dashboard(onePiece);
  dashboard.start();
  deliverWindow(dashboard, 0);
  constexpr int kRows = kRanks * kStats + kRanks;  // samples and log rows: 160

  dashboard.refreshUpTo(64);
  const int firstRows = dashboard.eventLog().rowCount();
  EXPECT_GT(firstRows, 0);
  EXPECT_LT(firstRows, kRanks);  // not all of it
  for (const SeriesEntry* median : medians(dashboard)) EXPECT_TRUE(median->store.empty());

  for (int i = 0; i < 4 && dashboard.eventLog().rowCount() < kRanks; ++i) dashboard.refreshUpTo(64);
  EXPECT_EQ(dashboard.eventLog().rowCount(), kRanks);
  const std::vector<const SeriesEntry*> lines = medians(dashboard);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kStats));
  for (const SeriesEntry* median : lines) {
    // One point, from every rank.
    EXPECT_EQ(median->store.appendedCount(), 1U);
    EXPECT_EQ(median->store.lastY(), 1.0);
  }
  static_assert(kRows > 64);

  // The second window, with rank 5 slow: once it is all in, the band's top is rank 5.
  deliverWindow(dashboard, 1, 5);
  for (int i = 0; i < 8; ++i) dashboard.refreshUpTo(64);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 2 * kRanks);
  for (const SeriesEntry* median : medians(dashboard)) {
    EXPECT_EQ(median->store.appendedCount(), 2U);
    EXPECT_EQ(median->store.lastY(), 2.0);
  }
}

TEST_F(DashboardPiecesTest, ABacklogDrainsAsFastAsItsTimeBudgetAllowsAndRefreshNowAppliesEverything) {
  ASSERT_TRUE(dir_.isValid());
  ManualClock frozen;  // never moves: the budget is never spent
  DashboardOptions timed = options();
  timed.refreshBudget.clock = &frozen;
  Dashboard dashboard(timed);
  dashboard.start();
  constexpr int kWindows = 20;  // 3 200 rows: 200 pieces of 16
  for (int w = 0; w < kWindows; ++w) deliverWindow(dashboard, w);
  dashboard.refreshUpTo(16);
  EXPECT_EQ(dashboard.eventLog().rowCount(), kWindows * kRanks);
  for (const SeriesEntry* median : medians(dashboard)) EXPECT_EQ(median->store.lastY(), static_cast<double>(kWindows));

  deliverWindow(dashboard, kWindows);
  dashboard.refreshNow();
  EXPECT_EQ(dashboard.eventLog().rowCount(), (kWindows + 1) * kRanks);
}

}  // namespace
}  // namespace livemon::ui
