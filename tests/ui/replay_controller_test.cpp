// The ReplayController on its own, without a Dashboard or a window: which recording is on the
// timeline as files open, fail and close; the baselines as they come and go; and what it asks the
// pipeline to do (recordingCleared, recordingClosed), in order.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <QSignalSpy>
#include <QTemporaryDir>

#include <livemon/clock.h>
#include <livemon/ui/dashboard/dashboard_settings.h>
#include <livemon/ui/dashboard/replay_controller.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/stat_registry.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::kDeadline;
using test::kT0Ms;
using test::waitFor;

IngestWorker::Options noEndpoints() {
  IngestWorker::Options options;
  options.history = false;
  return options;
}

class ReplayControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    first_ = dir_.filePath(QStringLiteral("first.mcap"));
    second_ = dir_.filePath(QStringLiteral("second.mcap"));
    test::writeRecording(first_.toStdString(), 41);
    test::writeRecording(second_.toStdString(), 21);
    settings_ = std::make_unique<DashboardSettings>(dir_.filePath(QStringLiteral("livemon.ini")));
    ingest_ = std::make_unique<IngestWorker>(noEndpoints());
  }

  std::unique_ptr<ReplayController> controller(bool followLive = false) {
    ReplayControllerOptions options;
    options.clock = &clock_;
    options.logBackfill = 1000;
    options.baselinesFollowLive = followLive;
    auto made = std::make_unique<ReplayController>(*ingest_, registry_, *settings_, options);
    // What the controller asks of the pipeline, and what it tells the views, in order.
    QObject::connect(made.get(), &ReplayController::replayChanged, [this](ReplaySession* session) {
      said_.push_back(session != nullptr ? "shown " + name(session->endpointLabel()) : std::string("shown none"));
    });
    QObject::connect(made.get(), &ReplayController::recordingCleared,
                     [this](const QString& endpoint) { said_.push_back("cleared " + name(endpoint)); });
    QObject::connect(made.get(), &ReplayController::recordingClosed, [this](const QString& endpoint, ReplayMode mode) {
      said_.push_back(std::string(mode == ReplayMode::Replay ? "closed " : "closed baseline ") + name(endpoint));
    });
    return made;
  }

  // "first" or "second" for the recordings' endpoint labels (a baseline's too).
  std::string name(const QString& endpoint) const {
    if (endpoint.endsWith(first_)) return "first";
    if (endpoint.endsWith(second_)) return "second";
    return endpoint.toStdString();
  }

  static bool opened(ReplaySession* session) {
    return waitFor([session] { return session->isOpen() && !session->busy(); });
  }

  QTemporaryDir dir_;
  QString first_;
  QString second_;
  ManualClock clock_;
  std::unique_ptr<DashboardSettings> settings_;
  StatRegistry registry_;
  std::unique_ptr<IngestWorker> ingest_;
  std::vector<std::string> said_;
};

TEST_F(ReplayControllerTest, ARecordingGoesOnTheTimelineOnceItOpensAndReplacesTheOneBefore) {
  auto replays = controller();
  ReplaySession* first = replays->openRecording(first_);
  // Opening: nothing shown changes yet.
  EXPECT_EQ(replays->openingReplay(), first);
  EXPECT_EQ(replays->replay(), nullptr);
  ASSERT_TRUE(opened(first));
  EXPECT_EQ(replays->replay(), first);
  EXPECT_EQ(replays->openingReplay(), nullptr);
  EXPECT_EQ(said_, (std::vector<std::string>{"shown first", "cleared first"}));

  said_.clear();
  ReplaySession* second = replays->openRecording(second_);
  EXPECT_EQ(replays->replay(), first);
  ASSERT_TRUE(opened(second));
  EXPECT_EQ(replays->replay(), second);
  // The old one leaves (its session joined) before the new one is shown and cleared.
  EXPECT_EQ(said_, (std::vector<std::string>{"shown none", "closed first", "shown second", "cleared second"}));
  ASSERT_TRUE(replays->playheadMs().has_value());
  EXPECT_DOUBLE_EQ(*replays->playheadMs(), kT0Ms + 500.0 * 20);  // at its end

  said_.clear();
  replays->closeReplay();
  EXPECT_EQ(replays->replay(), nullptr);
  EXPECT_FALSE(replays->playheadMs().has_value());
  EXPECT_EQ(said_, (std::vector<std::string>{"shown none", "closed second"}));
  said_.clear();
  replays->closeReplay();  // nothing open: nothing to say
  EXPECT_TRUE(said_.empty());
}

TEST_F(ReplayControllerTest, ASeekAsksToClearWhatTheRecordingShowsAndAReadWindowIsToldLoaded) {
  auto replays = controller();
  QSignalSpy loaded(replays.get(), &ReplayController::windowLoaded);
  ReplaySession* session = replays->openRecording(first_);
  ASSERT_TRUE(opened(session));
  EXPECT_TRUE(waitFor([&] { return loaded.count() >= 1; }));
  said_.clear();
  session->seek(test::kT0Ns);
  EXPECT_EQ(said_, std::vector<std::string>{"cleared first"});
  ASSERT_TRUE(opened(session));
  EXPECT_TRUE(waitFor([&] { return loaded.count() >= 2; }));
}

TEST_F(ReplayControllerTest, ARefusedFileIsReportedAndChangesNothing) {
  auto replays = controller();
  ReplaySession* shown = replays->openRecording(first_);
  ASSERT_TRUE(opened(shown));
  said_.clear();
  const QString garbage = dir_.filePath(QStringLiteral("notes.mcap"));
  std::ofstream(garbage.toStdString()) << "not a recording";
  QSignalSpy reported(replays.get(), &ReplayController::errorReported);
  ReplaySession* refused = replays->openRecording(garbage);
  ASSERT_TRUE(reported.wait(static_cast<int>(kDeadline.count())));
  EXPECT_EQ(reported.at(0).at(0).toString(), QStringLiteral("Cannot open the recording"));
  EXPECT_EQ(replays->replay(), shown);
  EXPECT_EQ(replays->openingReplay(), nullptr);
  EXPECT_TRUE(said_.empty());
  // The refused session stays valid for whoever holds it until the next open.
  EXPECT_FALSE(refused->isOpen());

  // A refused baseline leaves the list it joined.
  QSignalSpy baselines(replays.get(), &ReplayController::baselinesChanged);
  replays->openRecording(garbage, ReplayMode::Baseline);
  EXPECT_EQ(replays->baselines().size(), 1U);
  ASSERT_TRUE(waitFor([&] { return replays->baselines().empty(); }));
  EXPECT_EQ(baselines.count(), 2);
  EXPECT_EQ(replays->replay(), shown);
}

TEST_F(ReplayControllerTest, BaselinesComeAndGoBesideTheTimelineAndFollowingIsSaved) {
  auto replays = controller();
  QSignalSpy changed(replays.get(), &ReplayController::baselinesChanged);
  ReplaySession* a = replays->openRecording(first_, ReplayMode::Baseline);
  ReplaySession* b = replays->openRecording(second_, ReplayMode::Baseline);
  EXPECT_EQ(changed.count(), 2);
  EXPECT_EQ(replays->baselines(), (std::vector<ReplaySession*>{a, b}));
  EXPECT_EQ(replays->replay(), nullptr);  // not on the timeline
  ASSERT_TRUE(opened(a));
  ASSERT_TRUE(opened(b));
  EXPECT_EQ(a->endpointLabel(), QStringLiteral("baseline: %1").arg(first_));

  said_.clear();
  replays->closeBaseline(a);
  EXPECT_EQ(said_, std::vector<std::string>{"closed baseline first"});
  EXPECT_EQ(replays->baselines(), std::vector<ReplaySession*>{b});
  EXPECT_EQ(changed.count(), 3);
  replays->closeBaseline(a);  // no longer one of them: ignored
  EXPECT_EQ(changed.count(), 3);

  EXPECT_FALSE(replays->baselinesFollowLive());
  replays->setBaselinesFollowLive(true);
  EXPECT_TRUE(replays->baselinesFollowLive());
  EXPECT_TRUE(settings_->baselinesFollowLive());
}

TEST_F(ReplayControllerTest, TheLiveRunsElapsedTimeIsTheNewestLiveSourcesAgeOnTheClock) {
  auto replays = controller();
  EXPECT_FALSE(replays->liveElapsed().has_value());
  const double nowMs = std::chrono::duration<double, std::milli>(clock_.wallNow().time_since_epoch()).count();
  IngestBatch batch;
  batch.sources.push_back(SourceDescriptor{0, test::makeSource("old", 1, std::nullopt, nowMs - 60'000), "tcp://a"});
  batch.sources.push_back(SourceDescriptor{1, test::makeSource("new", 2, std::nullopt, nowMs - 10'000), "tcp://b"});
  registry_.apply(batch);
  ASSERT_TRUE(replays->liveElapsed().has_value());
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(*replays->liveElapsed()).count(), 10'000);
  clock_.advance(std::chrono::seconds(5));
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(*replays->liveElapsed()).count(), 15'000);
}

TEST_F(ReplayControllerTest, TheChartsTimeRangeIsEachRecordingsWindow) {
  auto replays = controller();
  ReplaySession* replay = replays->openRecording(first_);
  ReplaySession* baseline = replays->openRecording(second_, ReplayMode::Baseline);
  EXPECT_FALSE(replay->window().has_value()) << "the whole run by default";
  replays->setTimeRange(TimeRange::LastMinute);
  EXPECT_EQ(replay->window(), std::chrono::nanoseconds(std::chrono::minutes(1)));
  EXPECT_EQ(baseline->window(), std::chrono::nanoseconds(std::chrono::minutes(1)));
  replays->setTimeRange(TimeRange::Last5Minutes);
  EXPECT_EQ(replay->window(), std::chrono::nanoseconds(std::chrono::minutes(5)));
  // A recording opened later reads the range set before.
  ReplaySession* later = replays->openRecording(second_, ReplayMode::Baseline);
  EXPECT_EQ(later->window(), std::chrono::nanoseconds(std::chrono::minutes(5)));
}

}  // namespace
}  // namespace livemon::ui
