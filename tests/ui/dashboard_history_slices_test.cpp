// A late joiner's history applied in slices: with a real Publisher's history of a few thousand
// Stat windows, every refresh applies at most what its time budget allows (one piece, then more
// while an injected clock, which moves a millisecond each time it is read, says the budget is not
// spent), never a share of the backlog; at the end every window is in the log exactly once and in
// order, the history's row comes right after its last event, and live events after it. The refresh
// timer is kept from firing, so only the test's refreshes apply anything.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include <QTemporaryDir>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>
#include <livemon/ui/dashboard/dashboard.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;

// Thread-safe: every member may be called from any thread.
// A clock that moves on by `step` each time it is read: a refresh's time budget of N steps
// admits a known number of pieces, whatever the machine's speed.
class SteppingClock final : public Clock {
 public:
  explicit SteppingClock(std::chrono::nanoseconds step) : Clock(false), step_(step) {}
  std::chrono::steady_clock::time_point now() const noexcept override {
    return std::chrono::steady_clock::time_point{} + step_ * reads_.fetch_add(1, std::memory_order_relaxed);
  }
  std::chrono::system_clock::time_point wallNow() const noexcept override { return {}; }

 private:
  std::chrono::nanoseconds step_;
  mutable std::atomic<int64_t> reads_{0};
};

constexpr int kHistoryWindows = 3000;
constexpr int kLiveWindows = 5;
constexpr std::size_t kPieceRows = 64;
// A budget of 4 ms on a clock read once to set the deadline and once before each further piece.
constexpr std::size_t kPiecesPerRefresh = 4;

void logWindows(double t0, int first, int count) {
  for (int i = first; i < first + count; ++i) {
    Event window{std::string(kStatEventName), test::atMs(t0 + 10.0 * i), {{"loss.mean", 1.0 * i}}};
    window.step = i;
    logEvent(window);
  }
}

// Each log row: its step, or -1 for the history's own row.
std::vector<long long> loggedSteps(EventLogModel& log) {
  std::vector<long long> steps;
  for (int row = 0; row < log.rowCount(); ++row) {
    const QString name = log.data(log.index(row, EventLogModel::NameColumn)).toString();
    steps.push_back(name == QStringLiteral("livemon.history")
                        ? -1
                        : log.data(log.index(row, EventLogModel::StepColumn)).toString().toLongLong());
  }
  return steps;
}

TEST(DashboardHistorySlicesTest, AHistoryIsAppliedOverManyRefreshesEachWithinItsBudgetWholeAndInOrder) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  transport::PublisherOptions publishing;
  publishing.bind = {"tcp://127.0.0.1:*"};
  publishing.heartbeatInterval = 20ms;
  publishing.runName = "train";
  publishing.statName.clear();
  publishing.linger = 500ms;
  transport::Publisher publisher(publishing);
  const double t0 = 1'700'000'000'000.0;
  logWindows(t0, 0, kHistoryWindows);
  ASSERT_TRUE(test::waitFor([&] { return publisher.publishedCount() == kHistoryWindows; }));

  SteppingClock clock(1ms);
  DashboardOptions options;
  options.endpoints = publisher.endpoints();
  options.exactEndpoints = true;
  options.settingsFile = dir.filePath(QStringLiteral("livemon.ini"));
  options.history = true;
  options.refreshInterval = std::chrono::hours(1);  // only the test's refreshes
  options.refreshBudget = {kPieceRows, 4ms, &clock};
  Dashboard dashboard(options);
  dashboard.eventLog().setShowStatWindows(true);
  dashboard.start();
  // The whole history received before the first refresh: a backlog of 6 000 rows.
  ASSERT_TRUE(test::waitFor([&] { return dashboard.ingest().stats().historyEvents == kHistoryWindows; }));

  // A window is a sample and a log row, and a piece cuts both at the same fraction: a refresh
  // adds at most its pieces' share of the log rows.
  const int maxRowsPerRefresh = static_cast<int>(kPiecesPerRefresh * (kPieceRows / 2 + 1));
  int refreshes = 0;
  int previous = 0;
  std::size_t mostWaiting = 0;
  const auto done = [&] { return !dashboard.historyNotes().empty(); };
  ASSERT_TRUE(test::waitFor([&] {
    dashboard.refreshUpTo(kPieceRows);
    ++refreshes;
    const int rows = dashboard.eventLog().rowCount();
    EXPECT_LE(rows - previous, maxRowsPerRefresh) << "refresh " << refreshes;
    previous = rows;
    mostWaiting = std::max(mostWaiting, dashboard.waitingRows());
    return done();
  }));
  EXPECT_GE(refreshes, kHistoryWindows / maxRowsPerRefresh) << "applied in slices";
  EXPECT_GT(mostWaiting, 0U) << "the rest left for the next refreshes";
  ASSERT_EQ(dashboard.historyNotes().size(), 1U);
  EXPECT_EQ(dashboard.historyNotes().front().events, static_cast<uint64_t>(kHistoryWindows));

  logWindows(t0, kHistoryWindows, kLiveWindows);
  ASSERT_TRUE(test::waitFor([&] {
    dashboard.refreshUpTo(kPieceRows);
    return dashboard.eventLog().rowCount() == kHistoryWindows + 1 + kLiveWindows;
  }));
  std::vector<long long> expected;
  for (int i = 0; i < kHistoryWindows; ++i) expected.push_back(i);
  expected.push_back(-1);  // the history's row, after its events
  for (int i = kHistoryWindows; i < kHistoryWindows + kLiveWindows; ++i) expected.push_back(i);
  EXPECT_EQ(loggedSteps(dashboard.eventLog()), expected);
  EXPECT_EQ(dashboard.waitingRows(), 0U);
}

}  // namespace
}  // namespace livemon::ui
