// Baselines beside a live run: File → Close baseline (an entry per baseline when several), and
// baselines that follow the live run's elapsed time, holding only the time range before their
// playhead as a replay does.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <QAction>
#include <QMenu>
#include <QSettings>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/runs_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/replay/replay_session.h>
#include <livemon/ui/widgets/baseline_menu.h>
#include <livemon/ui/widgets/main_window.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::kEvents;
using test::kT0Ms;
using test::ReplayTest;
using test::waitFor;

class BaselineTest : public ReplayTest {
 protected:
  static ReplaySession* openBaseline(Dashboard& dashboard, const QString& path) {
    ReplaySession* baseline = dashboard.replays().openRecording(path, ReplayMode::Baseline);
    EXPECT_TRUE(waitFor([&] { return baseline->isOpen() && !baseline->busy(); }));
    dashboard.refreshNow();
    return baseline;
  }

  static void settleBaselines(Dashboard& dashboard) {
    ASSERT_TRUE(waitFor([&] {
      for (ReplaySession* baseline : dashboard.replays().baselines()) {
        if (baseline->busy()) return false;
      }
      return true;
    }));
    dashboard.refreshNow();
  }

  // The labels of the dashboard's sources.
  static QStringList sourceLabels(const Dashboard& dashboard) {
    QStringList labels;
    for (SourceId id = 0; id < dashboard.registry().sourceIdEnd(); ++id) {
      if (const SourceEntry* source = dashboard.registry().source(id)) labels << source->label;
    }
    labels.sort();
    return labels;
  }

  // The baseline's loss line (the live run sends none).
  static const SeriesEntry* baselineLoss(const Dashboard& dashboard) {
    for (SeriesId id = 0; id < dashboard.registry().seriesIdEnd(); ++id) {
      const SeriesEntry* series = dashboard.registry().series(id);
      if (series == nullptr || series->stat != QLatin1String("loss")) continue;
      const SourceEntry* source = dashboard.registry().source(series->source);
      if (source != nullptr && source->endpoint.startsWith(QLatin1String("baseline: "))) return series;
    }
    return nullptr;
  }

  // A live run "live" that started `elapsed` before the test clock's now, with one window.
  void deliverLiveRun(Dashboard& dashboard, std::chrono::milliseconds elapsed) {
    const double nowMs = std::chrono::duration<double, std::milli>(clock_.wallNow().time_since_epoch()).count();
    std::vector<transport::ReceivedEvent> events{test::received(
        test::makeSource("live", 77, std::nullopt, nowMs - static_cast<double>(elapsed.count())),
        Event{std::string(kStatEventName), test::atMs(nowMs), {{"throughput.mean", 1.0}}})};
    dashboard.ingest().deliver(events);
    dashboard.refreshNow();
  }
};

TEST_F(BaselineTest, FileMenuClosesOneBaselineOrEachOfSeveral) {
  const QString other = dir_.filePath(QStringLiteral("other.mcap"));
  test::writeRecordingWithRanges(other.toStdString(), 4343);
  MainWindow window(options());
  Dashboard& dashboard = window.dashboard();
  auto* menu = window.findChild<BaselineMenu*>();
  ASSERT_NE(menu, nullptr);
  EXPECT_FALSE(menu->closeAction()->isVisible());
  EXPECT_FALSE(menu->closeMenu()->menuAction()->isVisible());

  ReplaySession* first = openBaseline(dashboard, recording_);
  EXPECT_TRUE(menu->closeAction()->isVisible());
  EXPECT_EQ(menu->closeAction()->text(), QStringLiteral("Close &baseline run.mcap"));
  EXPECT_FALSE(menu->closeMenu()->menuAction()->isVisible());
  openBaseline(dashboard, other);
  ASSERT_EQ(sourceLabels(dashboard).size(), 2);

  // Two: an entry each, named after its file.
  EXPECT_FALSE(menu->closeAction()->isVisible());
  ASSERT_TRUE(menu->closeMenu()->menuAction()->isVisible());
  const QList<QAction*> entries = menu->closeMenu()->actions();
  ASSERT_EQ(entries.size(), 2);
  EXPECT_EQ(entries[0]->text(), QStringLiteral("run.mcap"));
  EXPECT_EQ(entries[1]->text(), QStringLiteral("other.mcap"));
  entries[1]->trigger();
  dashboard.refreshNow();
  ASSERT_EQ(dashboard.replays().baselines(), std::vector<ReplaySession*>{first});
  // Its source is gone, with its series and log rows; the other baseline keeps all of its own.
  EXPECT_EQ(sourceLabels(dashboard), QStringList{QStringLiteral("baseline: train")});
  EXPECT_EQ(dashboard.eventLog().rowCount(), kEvents);
  for (SeriesId id = 0; id < dashboard.registry().seriesIdEnd(); ++id) {
    if (const SeriesEntry* series = dashboard.registry().series(id)) {
      EXPECT_NE(series->stat, QStringLiteral("accuracy"));
    }
  }

  // One left: the single entry closes it.
  ASSERT_TRUE(menu->closeAction()->isVisible());
  EXPECT_FALSE(menu->closeMenu()->menuAction()->isVisible());
  menu->closeAction()->trigger();
  dashboard.refreshNow();
  EXPECT_TRUE(dashboard.replays().baselines().empty());
  EXPECT_EQ(dashboard.registry().sourceCount(), 0U);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 0);
  EXPECT_FALSE(menu->closeAction()->isVisible());
  EXPECT_FALSE(menu->closeMenu()->menuAction()->isVisible());
}

TEST_F(BaselineTest, AFollowingBaselineShowsOnlyUpToTheLiveRunsElapsedTimeAndReadsOnlyItsRange) {
  DashboardOptions following = options();
  following.baselinesFollowLive = true;
  Dashboard dashboard(following);
  dashboard.replays().setTimeRange(TimeRange::LastMinute);
  deliverLiveRun(dashboard, 100s);
  ASSERT_EQ(dashboard.replays().liveElapsed(), std::chrono::nanoseconds(100s));

  ReplaySession* baseline = openBaseline(dashboard, recording_);
  // At 100 s into its run, with the minute before: windows 80..200 (one every 500 ms).
  const SeriesEntry* loss = baselineLoss(dashboard);
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->store.firstX(), kT0Ms + 40'000.0);
  EXPECT_EQ(loss->store.lastX(), kT0Ms + 100'000.0);
  EXPECT_EQ(baseline->messagesRead(), 121U);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 1 + 121);

  // The live run ages: the baseline follows, reading only what it passes.
  clock_.advance(10s);
  dashboard.refreshNow();
  settleBaselines(dashboard);
  EXPECT_EQ(loss->store.lastX(), kT0Ms + 110'000.0);
  EXPECT_EQ(baseline->messagesRead(), 121U + 20U);

  // Not following: up to its end.
  dashboard.replays().setBaselinesFollowLive(false);
  settleBaselines(dashboard);
  EXPECT_EQ(loss->store.lastX(), kT0Ms + 500.0 * (kEvents - 1));
  EXPECT_EQ(baseline->messagesRead(), 121U + 20U + 140U);
  EXPECT_FALSE(dashboard.settings().baselinesFollowLive());

  // Following again moves it back: a seek, which shows the minute before the playhead only.
  dashboard.replays().setBaselinesFollowLive(true);
  settleBaselines(dashboard);
  EXPECT_EQ(loss->store.firstX(), kT0Ms + 50'000.0);
  EXPECT_EQ(loss->store.lastX(), kT0Ms + 110'000.0);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 1 + 121);
}

TEST_F(BaselineTest, WithoutALiveRunAFollowingBaselineShowsUpToItsEnd) {
  DashboardOptions following = options();
  following.baselinesFollowLive = true;
  Dashboard dashboard(following);
  dashboard.replays().setTimeRange(TimeRange::LastMinute);
  EXPECT_EQ(dashboard.replays().liveElapsed(), std::nullopt);
  ReplaySession* baseline = openBaseline(dashboard, recording_);
  EXPECT_EQ(dashboard.replays().liveElapsed(), std::nullopt);  // a baseline's run is not live
  const SeriesEntry* loss = baselineLoss(dashboard);
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->store.lastX(), kT0Ms + 500.0 * (kEvents - 1));
  EXPECT_EQ(loss->store.firstX(), kT0Ms + 500.0 * (kEvents - 1) - 60'000.0);
  EXPECT_EQ(baseline->messagesRead(), 121U);
}

// The Runs panel's rows: a baseline's run is "recorded", a live one "live"; closed, its row goes.
TEST_F(BaselineTest, ARecordedRunAndALiveOneAreRowsOfTheRunsPanelWithTheirStates) {
  Dashboard dashboard(options());
  dashboard.start();
  deliverLiveRun(dashboard, 10s);
  ReplaySession* baseline = openBaseline(dashboard, recording_);
  RunsModel& runs = dashboard.runs();
  dashboard.updateStatus();
  ASSERT_EQ(runs.rowCount(), 2);
  std::map<QString, QString> states;
  for (int row = 0; row < runs.rowCount(); ++row) states[runs.runName(row)] = runs.value(row, QStringLiteral("state")).toString();
  EXPECT_EQ(states, (std::map<QString, QString>{{QStringLiteral("live"), QStringLiteral("live")},
                                                {QStringLiteral("baseline: train"), QStringLiteral("recorded")}}));
  dashboard.replays().closeBaseline(baseline);
  ASSERT_TRUE(waitFor([&] { return runs.rowCount() == 1; }));
  EXPECT_EQ(runs.runName(0), QStringLiteral("live"));
}

}  // namespace
}  // namespace livemon::ui
