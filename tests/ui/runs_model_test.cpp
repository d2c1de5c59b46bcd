// The Runs panel's model: a row per run with its config and summaries, sorted and filtered by
// them (RunsFilterModel, RunFilter), the run colours (RunDisplay); checked by
// QAbstractItemModelTester.
#include <livemon/ui/model/runs_model.h>

#include <gtest/gtest.h>

#include <map>
#include <string>

#include <QAbstractItemModelTester>

#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/run_filter.h>
#include <livemon/ui/model/run_palette.h>
#include <livemon/ui/model/stat_registry.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::ModelTesterMessages;

constexpr double kT0 = 1'700'000'000'000.0;

class RunsModelTest : public ::testing::Test {
 protected:
  RunsModelTest()
      : tester_(&model_, QAbstractItemModelTester::FailureReportingMode::Warning),
        proxyTester_(&proxy_, QAbstractItemModelTester::FailureReportingMode::Warning) {}
  ~RunsModelTest() override { EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::text(); }

  // A run of one source with `config`, whose "loss" (mean and max) takes `losses` at steps 0, 10, 20...
  void addRun(const std::string& run, RunConfig config, const std::vector<double>& losses) {
    IngestBatch batch;
    const auto source = static_cast<SourceId>(nextSource_++);
    batch.sources.push_back(SourceDescriptor{source, test::makeSource(run, 100 + source, std::nullopt, kT0), "e"});
    const auto mean = static_cast<SeriesId>(nextSeries_++);
    const auto max = static_cast<SeriesId>(nextSeries_++);
    batch.series.push_back(SeriesDescriptor{mean, source, "loss", "mean", SeriesKind::StatWindow});
    batch.series.push_back(SeriesDescriptor{max, source, "loss", "max", SeriesKind::StatWindow});
    batch.configs.push_back(RunConfigNote{source, 1, std::move(config)});
    for (std::size_t i = 0; i < losses.size(); ++i) {
      const double step = 10.0 * static_cast<double>(i);
      batch.samples.push_back(StatSample{mean, kT0 + 1000.0 * static_cast<double>(i + 1), losses[i], step});
      batch.samples.push_back(StatSample{max, kT0 + 1000.0 * static_cast<double>(i + 1), 100.0, step});
    }
    registry_.apply(batch);
    model_.apply(batch);
    model_.addSeries({mean, max});
  }
  void refresh() {
    model_.refresh([](const SourceEntry&) { return RunState::Live; });
  }
  // The runs the proxy shows, in its order.
  std::vector<QString> shown() const {
    std::vector<QString> names;
    for (int row = 0; row < proxy_.rowCount(); ++row) names.push_back(proxy_.index(row, 0).data().toString());
    return names;
  }

  ModelTesterMessages messages_;
  StatRegistry registry_;
  RunDisplay display_;
  RunsModel model_{registry_, display_};
  RunsFilterModel proxy_{model_};
  QAbstractItemModelTester tester_;
  QAbstractItemModelTester proxyTester_;
  std::size_t nextSource_ = 0;
  std::size_t nextSeries_ = 0;
};

TEST_F(RunsModelTest, ARowPerRunWithItsConfigAsColumnsBlankWhereARunLacksAKey) {
  addRun("lr-1e-3", {{"lr", 1e-3}, {"optimizer", std::string("adam")}}, {2.0, 1.0});
  addRun("lr-1e-2", {{"lr", 1e-2}, {"batch", int64_t{64}}}, {3.0});
  // A second source of a run (another rank, a restart) is the same row.
  IngestBatch more;
  more.sources.push_back(SourceDescriptor{static_cast<SourceId>(nextSource_++), test::makeSource("lr-1e-3", 999), "e"});
  registry_.apply(more);
  model_.apply(more);
  ASSERT_EQ(model_.rowCount(), 2);
  EXPECT_EQ(model_.runName(0), "lr-1e-3");
  const int lr = model_.columnOf("lr");
  const int batch = model_.columnOf("batch");
  const int optimizer = model_.columnOf("optimizer");
  ASSERT_GE(lr, RunsModel::kFixedColumns);
  EXPECT_EQ(model_.headerData(lr, Qt::Horizontal).toString(), "lr");
  EXPECT_EQ(model_.index(0, lr).data().toString(), "0.001");
  EXPECT_EQ(model_.index(0, optimizer).data().toString(), "adam");
  EXPECT_EQ(model_.index(0, batch).data().toString(), "");
  EXPECT_EQ(model_.index(1, batch).data().toString(), "64");
  EXPECT_EQ(model_.index(1, optimizer).data().toString(), "");
  // Each run has a colour of the palette, and a box that shows or hides it.
  EXPECT_EQ(model_.index(0, 0).data(Qt::DecorationRole).value<QColor>(), runPaletteColour(display_.colourIndex("lr-1e-3")));
  EXPECT_NE(display_.colourIndex("lr-1e-3"), display_.colourIndex("lr-1e-2"));
  EXPECT_EQ(model_.index(0, 0).data(Qt::CheckStateRole).toInt(), Qt::Checked);
  EXPECT_TRUE(model_.setData(model_.index(0, 0), Qt::Unchecked, Qt::CheckStateRole));
  EXPECT_FALSE(display_.isShown("lr-1e-3"));
  EXPECT_EQ(model_.index(0, 0).data(Qt::CheckStateRole).toInt(), Qt::Unchecked);
}

TEST_F(RunsModelTest, ANewerConfigReplacesTheRunsAndAnOlderOneIsIgnored) {
  addRun("a", {{"lr", 0.1}}, {1.0});
  IngestBatch batch;
  batch.configs.push_back(RunConfigNote{0, 5, {{"lr", 0.2}}});
  batch.configs.push_back(RunConfigNote{0, 3, {{"lr", 0.3}}});
  model_.apply(batch);
  EXPECT_EQ(model_.value(0, "lr").toDouble(), 0.2);
}

TEST_F(RunsModelTest, SummariesTakeTheMainAggregationAndTheStepAtTheBest) {
  addRun("a", {}, {3.0, 1.0, 2.0});
  model_.setSummaryKeys({"loss"});
  refresh();
  EXPECT_EQ(model_.value(0, "loss.last").toDouble(), 2.0);
  EXPECT_EQ(model_.value(0, "loss.min").toDouble(), 1.0);
  EXPECT_EQ(model_.value(0, "loss.max").toDouble(), 3.0);  // the mean's, not the max line's 100
  EXPECT_EQ(model_.value(0, "loss.best_step").toDouble(), 10.0);
  model_.setBest(RunsModel::Best::Max);
  EXPECT_EQ(model_.value(0, "loss.best_step").toDouble(), 0.0);
  EXPECT_EQ(model_.value(0, "step").toDouble(), 20.0);
  EXPECT_EQ(model_.value(0, "duration").toDouble(), 3000.0);
  EXPECT_EQ(model_.value(0, "state").toString(), "live");
  EXPECT_EQ(model_.availableKeys(), QStringList{"loss"});
}

TEST_F(RunsModelTest, SortsNumbersAsNumbersWithBlanksLast) {
  addRun("a", {{"lr", 3e-4}}, {1.0});
  addRun("b", {{"lr", 1e-2}}, {0.5});
  addRun("c", {{"lr", 2e-3}}, {2.0});
  addRun("d", {}, {4.0});
  proxy_.sort(model_.columnOf("lr"), Qt::AscendingOrder);
  EXPECT_EQ(shown(), (std::vector<QString>{"a", "c", "b", "d"}));  // as text 0.0003, 0.002, 0.01 would too; 1e-2 would not
  proxy_.sort(model_.columnOf("lr"), Qt::DescendingOrder);
  EXPECT_EQ(shown(), (std::vector<QString>{"b", "c", "a", "d"}));
  model_.setSummaryKeys({"loss"});
  refresh();
  proxy_.sort(model_.columnOf("loss.min"), Qt::AscendingOrder);
  EXPECT_EQ(shown(), (std::vector<QString>{"b", "a", "c", "d"}));
}

TEST_F(RunsModelTest, FiltersByConfigSummaryAndNameAllExpressionsHolding) {
  addRun("lr-3e-4", {{"lr", 3e-4}, {"optimizer", std::string("adam")}, {"batch", int64_t{64}}}, {1.0});
  addRun("lr-1e-2", {{"lr", 1e-2}, {"optimizer", std::string("sgd")}, {"batch", int64_t{32}}}, {0.5});
  addRun("lr-2e-3", {{"lr", 2e-3}, {"optimizer", std::string("Adam")}, {"batch", int64_t{64}}}, {2.0});
  model_.setSummaryKeys({"loss"});
  refresh();
  proxy_.sort(0, Qt::AscendingOrder);
  proxy_.setFilterText("lr>1e-3");
  EXPECT_EQ(shown(), (std::vector<QString>{"lr-1e-2", "lr-2e-3"}));
  proxy_.setFilterText("optimizer=adam");
  EXPECT_EQ(shown(), (std::vector<QString>{"lr-2e-3", "lr-3e-4"}));
  proxy_.setFilterText("batch!=64");
  EXPECT_EQ(shown(), (std::vector<QString>{"lr-1e-2"}));
  proxy_.setFilterText("optimizer=adam, lr>=1e-3");
  EXPECT_EQ(shown(), (std::vector<QString>{"lr-2e-3"}));
  proxy_.setFilterText("loss.min<1.5 3e");
  EXPECT_EQ(shown(), (std::vector<QString>{"lr-3e-4"}));
  EXPECT_TRUE(proxy_.errors().isEmpty());
  proxy_.setFilterText("");
  EXPECT_EQ(shown().size(), 3U);
}

TEST_F(RunsModelTest, ABadExpressionIsReportedNotIgnored) {
  addRun("a", {{"lr", 3e-4}, {"optimizer", std::string("adam")}}, {1.0});
  for (const QString& bad : {QStringLiteral("lr>"), QStringLiteral(">3"), QStringLiteral("optimizer>adam"), QStringLiteral("nosuch=1")}) {
    proxy_.setFilterText(bad);
    ASSERT_EQ(proxy_.errors().size(), 1) << bad.toStdString();
    EXPECT_TRUE(proxy_.errors().front().contains(bad)) << proxy_.errors().front().toStdString();
  }
  EXPECT_EQ(RunFilter("lr>1e-3 optimizer=adam").errors().size(), 0);
  EXPECT_EQ(RunFilter("lr>1e-3 optimizer=adam").terms().size(), 2U);
}

TEST_F(RunsModelTest, ARunLeavesWithItsLastSource) {
  addRun("a", {{"lr", 0.1}}, {1.0});
  addRun("b", {{"lr", 0.2}}, {1.0});
  model_.removeSources({0}, {0, 1});
  ASSERT_EQ(model_.rowCount(), 1);
  EXPECT_EQ(model_.runName(0), "b");
  EXPECT_FALSE(display_.isKnown("a"));
}

// A key only departed runs had leaves with them: no empty column stays behind, and no free one
// is kept from a later run's key.
TEST_F(RunsModelTest, AConfigKeyLeavesWithTheLastRunThatHadIt) {
  addRun("a", {{"lr", 0.1}, {"warmup", int64_t{100}}}, {1.0});
  addRun("b", {{"lr", 0.2}}, {1.0});
  ASSERT_GE(model_.columnOf("warmup"), 0);
  model_.removeSources({0}, {0, 1});
  ASSERT_EQ(model_.rowCount(), 1);
  EXPECT_EQ(model_.columnOf("warmup"), -1);
  EXPECT_EQ(model_.columnCount(), RunsModel::kFixedColumns + 1);
  EXPECT_EQ(model_.value(0, "lr").toDouble(), 0.2);
}

TEST_F(RunsModelTest, ConfigColumnsStopAtTheirLimitAndTheRestIsCounted) {
  RunConfig wide;
  for (int i = 0; i < RunsModel::kMaxConfigColumns + 44; ++i) wide.emplace("key" + std::to_string(1000 + i), int64_t{i});
  addRun("wide", wide, {1.0});
  EXPECT_EQ(model_.columnCount(), RunsModel::kFixedColumns + RunsModel::kMaxConfigColumns);
  EXPECT_EQ(model_.droppedConfigKeys(), 44U);
  EXPECT_EQ(model_.value(0, "key1000").toLongLong(), 0);
  EXPECT_FALSE(model_.value(0, "key1299").isValid());
}

TEST(RunDisplay, KeepsARunsColourAndGivesNewRunsFreeOnes) {
  RunDisplay earlier;
  earlier.assign("a");
  earlier.assign("b");
  EXPECT_EQ(earlier.colourIndex("a"), 0U);
  EXPECT_EQ(earlier.colourIndex("b"), 1U);
  RunDisplay later;
  later.restoreColours(earlier.colours());
  later.assign("b");
  later.assign("c");  // not a's either, though a is not here
  EXPECT_EQ(later.colourIndex("b"), 1U);
  EXPECT_EQ(later.colourIndex("c"), 2U);
  later.showOnly({"c"});
  EXPECT_FALSE(later.isShown("b"));
  EXPECT_EQ(later.shownCount(), 1U);
}

}  // namespace
}  // namespace livemon::ui
