// The x range all charts share: live with a filling start, scrolling, all, fixed, paused.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include <livemon/ui/model/time_view.h>

namespace livemon::ui {
namespace {

TEST(TimeView, KeysRoundTrip) {
  for (TimeRange range : {TimeRange::LastMinute, TimeRange::Last5Minutes, TimeRange::Last30Minutes, TimeRange::All}) {
    EXPECT_EQ(timeRangeFromKey(timeRangeKey(range)), range);
  }
  for (TimeAxisMode mode : {TimeAxisMode::WallClock, TimeAxisMode::SinceRunStart, TimeAxisMode::Step}) {
    EXPECT_EQ(timeAxisModeFromKey(timeAxisModeKey(mode)), mode);
  }
  EXPECT_FALSE(timeRangeFromKey(QStringLiteral("2h")));
  EXPECT_FALSE(timeAxisModeFromKey(QString()));
}

TEST(TimeView, LiveRangeRunsFromTheFirstSampleToTheNewestThenScrollsWithTheNewest) {
  TimeView view;
  view.setMode(TimeAxisMode::SinceRunStart);
  view.setRange(TimeRange::LastMinute);
  // A run younger than the range fills the chart: it is not squeezed into its left part.
  EXPECT_EQ(view.visible(XRange{5.0, 20.0}), (XRange{5.0, 20.0}));
  EXPECT_EQ(view.visible(XRange{5.0, 65.0}), (XRange{5.0, 65.0}));
  EXPECT_EQ(view.visible(XRange{5.0, 300.0}), (XRange{240.0, 300.0}));
  // A single sample: a second wide, ending at it.
  EXPECT_EQ(view.visible(XRange{5.0, 5.0}), (XRange{4.0, 5.0}));
  view.setMode(TimeAxisMode::WallClock);  // milliseconds
  view.setRange(TimeRange::Last5Minutes);
  EXPECT_EQ(view.visible(XRange{1'000'000.0, 1'030'000.0}), (XRange{1'000'000.0, 1'030'000.0}));
  EXPECT_EQ(view.visible(XRange{0.0, 600'000.0}), (XRange{300'000.0, 600'000.0}));
  // No data yet: the whole range up to the edge.
  view.setMode(TimeAxisMode::SinceRunStart);
  view.setRange(TimeRange::LastMinute);
  EXPECT_EQ(view.visible(std::nullopt), (XRange{0.0, 60.0}));
}

TEST(TimeView, AllShowsEverything) {
  TimeView view;
  view.setMode(TimeAxisMode::SinceRunStart);
  view.setRange(TimeRange::All);
  EXPECT_EQ(view.visible(XRange{3.0, 5000.0}), (XRange{3.0, 5000.0}));
}

TEST(TimeView, AZoomIsFixedUntilFollowingLiveAgain) {
  TimeView view;
  view.setMode(TimeAxisMode::SinceRunStart);
  view.showFixed(XRange{10.0, 20.0});
  EXPECT_FALSE(view.followsLive());
  EXPECT_EQ(view.visible(XRange{0.0, 1000.0}), (XRange{10.0, 20.0}));
  view.showFixed(XRange{30.0, 30.0});  // empty: ignored
  EXPECT_EQ(view.visible(XRange{0.0, 1000.0}), (XRange{10.0, 20.0}));
  view.followLive();
  EXPECT_TRUE(view.followsLive());
  view.showFixed(XRange{10.0, 20.0});
  view.setRange(TimeRange::LastMinute);  // a new range follows live data again
  EXPECT_TRUE(view.followsLive());
}

TEST(TimeView, PausedKeepsTheEdgeWhereItWas) {
  TimeView view;
  view.setMode(TimeAxisMode::SinceRunStart);
  view.setRange(TimeRange::LastMinute);
  view.setPaused(true, 500.0);
  EXPECT_EQ(view.visible(XRange{0.0, 900.0}), (XRange{440.0, 500.0}));
  view.setPaused(false, std::nullopt);
  EXPECT_EQ(view.visible(XRange{0.0, 900.0}), (XRange{840.0, 900.0}));
}

// A range that follows live data moves in steps of a power of two near 1/64 of its width, not
// every GUI tick: each move makes every chart lay its axis labels out again.
TEST(SnapLiveEdge, MovesInStepsAndKeepsTheDataInView) {
  const double start = 1'700'000'000'000.0;  // wall clock ms
  const double width = 300'000.0;            // the last 5 minutes
  std::set<std::pair<double, double>> shown;
  for (int tick = 0; tick < 100; ++tick) {  // 4 s of 40 ms GUI ticks
    const double edge = start + 40.0 * tick;
    const XRange snapped = snapLiveEdge(XRange{edge - width, edge});
    EXPECT_LE(snapped.min, edge - width);
    EXPECT_GE(snapped.max, edge) << "the newest point stays in view";
    EXPECT_LT(snapped.max - edge, width / 32.0);
    EXPECT_LT(edge - width - snapped.min, width / 32.0);
    shown.emplace(snapped.min, snapped.max);
  }
  EXPECT_LE(shown.size(), 4U) << "about one move per 4 s, not one per tick";
  EXPECT_EQ(snapLiveEdge(XRange{5.0, 5.0}), (XRange{5.0, 5.0}));
  const XRange exact{0.0, 64.0};
  EXPECT_EQ(snapLiveEdge(exact), exact) << "a range on the grid stays as it is";
}

}  // namespace
}  // namespace livemon::ui
