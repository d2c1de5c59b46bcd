// The AlertCentre on its own, without an ingest thread or a window: every alert raised is listed
// once and counted unseen before the views are told, the rule engine's and RankScorer's alerts
// name their sources as the registry labels them, and the user's rules are checked, kept once each
// and saved for the next session.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <QSignalSpy>
#include <QTemporaryDir>

#include <livemon/alert_rules.h>
#include <livemon/rank_scores.h>
#include <livemon/ui/dashboard/alert_centre.h>
#include <livemon/ui/dashboard/dashboard_settings.h>
#include <livemon/ui/model/stat_registry.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

class AlertCentreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    settings_ = std::make_unique<DashboardSettings>(dir_.filePath(QStringLiteral("livemon.ini")));
    // One source the registry knows: id 0, run "train".
    IngestBatch batch;
    batch.sources.push_back(SourceDescriptor{0, test::makeSource("train", 4242), "tcp://127.0.0.1:5555"});
    registry_.apply(batch);
  }

  static AlertEntry entryAt(double timeMs) {
    AlertEntry entry;
    entry.timeMs = timeMs;
    entry.rule = QStringLiteral("nan");
    return entry;
  }

  static Alert ruleAlert(std::string rule, double value) {
    Alert alert;
    alert.time = test::atMs(1'700'000'000'000.0);
    alert.source = SourceInfo{"refused", "host", 9, std::nullopt, 1, {}, {}, {}};
    alert.kind = AlertRuleKind::Threshold;
    alert.rule = std::move(rule);
    alert.key = "train.loss.mean";
    alert.value = value;
    alert.message = "train.loss.mean is above 10";
    alert.step = 120;
    return alert;
  }

  QTemporaryDir dir_;
  std::unique_ptr<DashboardSettings> settings_;
  StatRegistry registry_;
};

TEST_F(AlertCentreTest, EveryAlertRaisedIsListedAndCountedUnseenBeforeTheViewsAreTold) {
  AlertCentre centre(registry_, *settings_);
  int listedWhenTold = -1;
  QObject::connect(&centre, &AlertCentre::alertRaised, [&] { listedWhenTold = centre.alerts().rowCount(); });
  QSignalSpy raised(&centre, &AlertCentre::alertRaised);
  for (int i = 0; i < 5; ++i) centre.raise(entryAt(1000.0 * i));
  EXPECT_EQ(raised.count(), 5);
  EXPECT_EQ(listedWhenTold, 5);
  EXPECT_EQ(centre.alerts().rowCount(), 5);
  EXPECT_EQ(centre.alerts().unseen(), 5U);
  centre.alerts().markSeen();
  centre.raise(entryAt(9000.0));
  EXPECT_EQ(centre.alerts().unseen(), 1U);
  EXPECT_EQ(centre.alerts().entry(5)->timeMs, 9000.0);
}

TEST_F(AlertCentreTest, TheRuleEnginesAlertsNameTheirSourceAsTheRegistryLabelsIt) {
  AlertCentre centre(registry_, *settings_);
  QSignalSpy raised(&centre, &AlertCentre::alertRaised);
  // One from a source the registry holds, one from a source the limits refused (no id).
  const std::vector<StagedAlert> staged{StagedAlert{ruleAlert("train.loss.mean > 10", 12.5), SourceId{0}},
                                        StagedAlert{ruleAlert("train.loss.mean > 10", 13.0), std::nullopt}};
  centre.raiseStaged(staged);
  ASSERT_EQ(raised.count(), 2);
  ASSERT_EQ(centre.alerts().rowCount(), 2);
  const AlertEntry& known = *centre.alerts().entry(0);
  EXPECT_EQ(known.source, registry_.source(0)->label);
  ASSERT_TRUE(known.sourceId.has_value());
  EXPECT_EQ(*known.sourceId, 0U);
  EXPECT_EQ(known.kind, QStringLiteral("threshold"));
  EXPECT_EQ(known.rule, QStringLiteral("train.loss.mean > 10"));
  EXPECT_EQ(known.key, QStringLiteral("train.loss.mean"));
  EXPECT_EQ(known.value, 12.5);
  EXPECT_EQ(known.timeMs, 1'700'000'000'000.0);
  EXPECT_EQ(known.step, 120);
  const AlertEntry& refused = *centre.alerts().entry(1);
  EXPECT_EQ(refused.source, QStringLiteral("refused@host:9"));
  EXPECT_FALSE(refused.sourceId.has_value());
}

// Its value is what the rank measured (a time), not its score; the text names both, against the
// median of the ranks.
TEST_F(AlertCentreTest, AFlaggedRankIsAStragglerAlertNamingWhatItMeasuredAndItsScore) {
  AlertCentre centre(registry_, *settings_);
  RankScorerOptions scoring;
  scoring.key = "train.step_time_ms.mean";
  RankFlagged known;
  known.run = QStringLiteral("train");
  known.score.rank = 0;
  known.score.value = 180.0;
  known.score.score = 0.45;
  known.source = SourceId{0};
  known.timeMs = 5000.0;
  known.median = 81.0;
  known.scored = 64;
  RankFlagged unknown = known;
  unknown.score.rank = 3;
  unknown.source.reset();
  centre.raiseFlaggedRanks({known, unknown}, scoring);
  ASSERT_EQ(centre.alerts().rowCount(), 2);
  const AlertEntry& first = *centre.alerts().entry(0);
  EXPECT_EQ(first.kind, QStringLiteral("straggler"));
  EXPECT_EQ(first.source, registry_.source(0)->label);
  EXPECT_EQ(first.key, QStringLiteral("train.step_time_ms.mean"));
  EXPECT_EQ(first.rule, QStringLiteral("train.step_time_ms.mean score < %1 for %2 windows")
                            .arg(scoring.threshold)
                            .arg(scoring.windows));
  EXPECT_EQ(first.value, 180.0);
  EXPECT_EQ(centre.alerts().index(0, AlertListModel::ValueColumn).data().toString(),
            QStringLiteral("rank 0: train.step_time_ms mean 180 ms, 2.22× the median of 64 ranks (score 0.45)"));
  EXPECT_EQ(first.timeMs, 5000.0);
  EXPECT_TRUE(first.message.contains(QStringLiteral("Rank 0 of run train is a straggler"))) << first.message.toStdString();
  // A rank whose source the registry does not know is named by its run and rank.
  EXPECT_EQ(centre.alerts().entry(1)->source, QStringLiteral("train r3"));
}

TEST_F(AlertCentreTest, RulesAreCheckedKeptOnceEachAndSavedForTheNextSession) {
  {
    AlertCentre centre(registry_, *settings_);
    QSignalSpy changed(&centre, &AlertCentre::rulesChanged);
    QString error;
    EXPECT_FALSE(centre.addRule(QStringLiteral("train.v >> 3"), &error));
    EXPECT_TRUE(error.contains(QStringLiteral("train.v >> 3"))) << error.toStdString();
    EXPECT_EQ(changed.count(), 0);
    EXPECT_TRUE(centre.addRule(QStringLiteral("  train.v > 10 for 2 ")));  // kept trimmed
    EXPECT_TRUE(centre.addRule(QStringLiteral("eval.v < 0.5")));
    EXPECT_TRUE(centre.addRule(QStringLiteral("eval.v < 0.5")));  // already there: not twice
    EXPECT_EQ(changed.count(), 2);
    EXPECT_EQ(centre.rules(), (QStringList{QStringLiteral("train.v > 10 for 2"), QStringLiteral("eval.v < 0.5")}));
    EXPECT_EQ(centre.engineRules().size(), 2U);
    EXPECT_TRUE(centre.removeRule(QStringLiteral("eval.v < 0.5")));
    EXPECT_FALSE(centre.removeRule(QStringLiteral("eval.v < 0.5")));
    EXPECT_EQ(changed.count(), 3);
    EXPECT_EQ(settings_->alertRules(), QStringList{QStringLiteral("train.v > 10 for 2")});
  }
  // Restored; what a hand edit broke or repeated is left out.
  settings_->setAlertRules({QStringLiteral("train.v > 10 for 2"), QStringLiteral("not a rule"),
                            QStringLiteral("train.v > 10 for 2"), QStringLiteral("nan")});
  AlertCentre restored(registry_, *settings_);
  EXPECT_EQ(restored.rules(), (QStringList{QStringLiteral("train.v > 10 for 2"), QStringLiteral("nan")}));
  const std::vector<AlertRule> engine = restored.engineRules();
  ASSERT_EQ(engine.size(), 2U);
  EXPECT_EQ(engine[1].kind, AlertRuleKind::NotFinite);
}

}  // namespace
}  // namespace livemon::ui
