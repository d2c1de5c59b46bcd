// How the chart grid is arranged, without widgets: sections by name prefix in the order a user
// reads them, pinned charts first, collapsed sections, one chart filling the area, and the filter.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>


#include <livemon/ui/model/chart_sections.h>

namespace livemon::ui {
namespace {

// The charts the demo training job shows, in no particular order.
std::vector<QString> demoCharts() {
  return {QStringLiteral("livemon.publisher.published"), QStringLiteral("range/backward"), QStringLiteral("system.memory_gb"),
          QStringLiteral("train.data_loading"), QStringLiteral("train.grad_norm"), QStringLiteral("train.lr"),
          QStringLiteral("train.samples_per_s"), QStringLiteral("train.step_time_ms"), QStringLiteral("train.loss"),
          QStringLiteral("eval.accuracy"), QStringLiteral("eval.loss"), QStringLiteral("range/allreduce"),
          QStringLiteral("livemon.publisher.dropped"), QStringLiteral("alpha")};
}

std::vector<QString> sectionNames(const ChartArrangement& arrangement) {
  std::vector<QString> names;
  for (const ChartSection& section : arrangement.sections) names.push_back(section.title);
  return names;
}

TEST(ChartSections, AreNamePrefixesTheUsersFirstThenRangesThenSystemThenLivemonsOwn) {
  EXPECT_EQ(chartSection(QStringLiteral("train.loss")), QStringLiteral("train"));
  EXPECT_EQ(chartSection(QStringLiteral("train.step.loss")), QStringLiteral("train"));
  EXPECT_EQ(chartSection(QStringLiteral("range/data.load")), QStringLiteral("range/"));
  EXPECT_EQ(chartSection(QStringLiteral("loss")), QString());
  EXPECT_EQ(chartSection(QStringLiteral(".hidden")), QString());

  const ChartArrangement arrangement = arrangeCharts(demoCharts(), {});
  ASSERT_EQ(arrangement.mode, ChartArrangement::Mode::Grid);
  EXPECT_EQ(sectionNames(arrangement), (std::vector<QString>{QStringLiteral("train"), QStringLiteral("eval"), QStringLiteral("other"),
                                                             QStringLiteral("range/"), QStringLiteral("system"),
                                                             QStringLiteral("livemon")}));
  // The user's other sections come after train and eval, by name, before the unprefixed.
  std::vector<QString> sections{QStringLiteral("zeta"), QStringLiteral("livemon"), QStringLiteral(""), QStringLiteral("data"),
                                QStringLiteral("eval"), QStringLiteral("train"), QStringLiteral("system"), QStringLiteral("range/")};
  std::sort(sections.begin(), sections.end(), sectionLess);
  EXPECT_EQ(sections, (std::vector<QString>{QStringLiteral("train"), QStringLiteral("eval"), QStringLiteral("data"),
                                            QStringLiteral("zeta"), QStringLiteral(""), QStringLiteral("range/"),
                                            QStringLiteral("system"), QStringLiteral("livemon")}));
}

TEST(ChartSections, LossComesFirstThenAccuracyStepTimeThroughputAndTheLearningRate) {
  const ChartArrangement arrangement = arrangeCharts(demoCharts(), {});
  ASSERT_FALSE(arrangement.sections.empty());
  EXPECT_EQ(arrangement.sections[0].shown,
            (std::vector<QString>{QStringLiteral("train.loss"), QStringLiteral("train.step_time_ms"),
                                  QStringLiteral("train.samples_per_s"), QStringLiteral("train.lr"),
                                  QStringLiteral("train.data_loading"), QStringLiteral("train.grad_norm")}));
  EXPECT_EQ(arrangement.sections[1].shown, (std::vector<QString>{QStringLiteral("eval.loss"), QStringLiteral("eval.accuracy")}));
  EXPECT_EQ(arrangement.sections[3].shown, (std::vector<QString>{QStringLiteral("range/allreduce"), QStringLiteral("range/backward")}));
  // chartLess is the same order, so a sorted container can hold the charts.
  EXPECT_TRUE(chartLess(QStringLiteral("train.loss"), QStringLiteral("train.grad_norm")));
  EXPECT_FALSE(chartLess(QStringLiteral("train.loss"), QStringLiteral("train.loss")));
  EXPECT_TRUE(chartLess(QStringLiteral("system.memory_gb"), QStringLiteral("livemon.publisher.dropped")));
}

// Issue 30: a profiled operator named like a loss is a range like any other, in the range/
// section by its name, not put first as if it were the run's loss.
TEST(ChartSections, RangeChartsKeepToTheirSectionInNameOrderWhateverTheirNames) {
  const std::vector<QString> charts{QStringLiteral("range/aten::cross_entropy_loss"), QStringLiteral("range/aten::addmm"),
                                    QStringLiteral("range/train_step"), QStringLiteral("train.loss"),
                                    QStringLiteral("train.samples_per_s"), QStringLiteral("range/accuracy_eval")};
  const ChartArrangement arrangement = arrangeCharts(charts, {});
  ASSERT_EQ(arrangement.sections.size(), 2U);
  EXPECT_EQ(arrangement.sections[0].title, QStringLiteral("train"));
  EXPECT_EQ(arrangement.sections[0].shown, (std::vector<QString>{QStringLiteral("train.loss"), QStringLiteral("train.samples_per_s")}));
  EXPECT_EQ(arrangement.sections[1].title, QStringLiteral("range/"));
  EXPECT_EQ(arrangement.sections[1].shown,
            (std::vector<QString>{QStringLiteral("range/accuracy_eval"), QStringLiteral("range/aten::addmm"),
                                  QStringLiteral("range/aten::cross_entropy_loss"), QStringLiteral("range/train_step")}));
}

TEST(ChartSections, PinnedChartsLeadInASectionOfTheirOwnAndCollapsedSectionsShowNone) {
  ChartChoices choices;
  choices.pinned = {QStringLiteral("eval.accuracy"), QStringLiteral("system.memory_gb")};
  choices.collapsed = {QStringLiteral("range/")};
  const ChartArrangement arrangement = arrangeCharts(demoCharts(), choices);
  ASSERT_EQ(arrangement.mode, ChartArrangement::Mode::Grid);
  EXPECT_EQ(sectionNames(arrangement), (std::vector<QString>{QStringLiteral("pinned"), QStringLiteral("train"), QStringLiteral("eval"),
                                                             QStringLiteral("other"), QStringLiteral("range/"),
                                                             QStringLiteral("livemon")}))
      << "system's only chart is pinned";
  EXPECT_EQ(arrangement.sections[0].name, kPinnedSection);
  EXPECT_EQ(arrangement.sections[0].shown, (std::vector<QString>{QStringLiteral("eval.accuracy"), QStringLiteral("system.memory_gb")}));
  EXPECT_EQ(arrangement.sections[2].shown, (std::vector<QString>{QStringLiteral("eval.loss")}));
  const ChartSection& ranges = arrangement.sections[4];
  EXPECT_TRUE(ranges.collapsed);
  EXPECT_TRUE(ranges.shown.empty());
  EXPECT_EQ(ranges.charts, 2);
}

TEST(ChartSections, AnEnlargedChartOrTheOnlyOneThroughTheFilterFillsTheArea) {
  ChartChoices choices;
  choices.enlarged = QStringLiteral("train.loss");
  ChartArrangement arrangement = arrangeCharts(demoCharts(), choices);
  EXPECT_EQ(arrangement.mode, ChartArrangement::Mode::Single);
  EXPECT_EQ(arrangement.single, QStringLiteral("train.loss"));

  // Enlarged but filtered out, or gone: the grid again.
  choices.filter = ChartFilter(QStringLiteral("eval"));
  arrangement = arrangeCharts(demoCharts(), choices);
  EXPECT_EQ(arrangement.mode, ChartArrangement::Mode::Grid);
  EXPECT_EQ(sectionNames(arrangement), (std::vector<QString>{QStringLiteral("eval")}));

  choices = {};
  choices.filter = ChartFilter(QStringLiteral("step_time"));
  arrangement = arrangeCharts(demoCharts(), choices);
  EXPECT_EQ(arrangement.mode, ChartArrangement::Mode::Single);
  EXPECT_EQ(arrangement.single, QStringLiteral("train.step_time_ms"));

  // One chart in all and no filter: a grid of one (it is not the user's doing).
  EXPECT_EQ(arrangeCharts({QStringLiteral("loss")}, {}).mode, ChartArrangement::Mode::Grid);
}

TEST(ChartSections, TheFilterTakesAlternativesAndWildcardsAndSaysWhenNothingMatches) {
  ChartChoices choices;
  choices.filter = ChartFilter(QStringLiteral(" LOSS | acc* "));
  ChartArrangement arrangement = arrangeCharts(demoCharts(), choices);
  ASSERT_EQ(arrangement.mode, ChartArrangement::Mode::Grid);
  ASSERT_EQ(arrangement.sections.size(), 2U);
  EXPECT_EQ(arrangement.sections[0].shown, (std::vector<QString>{QStringLiteral("train.loss")}));
  EXPECT_EQ(arrangement.sections[1].shown, (std::vector<QString>{QStringLiteral("eval.loss"), QStringLiteral("eval.accuracy")}));

  EXPECT_TRUE(ChartFilter(QStringLiteral("?eta")).matches(QStringLiteral("zeta")));
  EXPECT_TRUE(ChartFilter(QStringLiteral("publisher.*")).matches(QStringLiteral("livemon.publisher.dropped")));
  EXPECT_FALSE(ChartFilter(QStringLiteral("publisher.*")).matches(QStringLiteral("train.loss")));
  EXPECT_TRUE(ChartFilter(QStringLiteral("|")).empty());
  EXPECT_TRUE(ChartFilter(QStringLiteral(" | ")).matches(QStringLiteral("anything")));
  EXPECT_FALSE(ChartFilter(QStringLiteral("a||b")).matches(QStringLiteral("c")));
  EXPECT_TRUE(ChartFilter(QStringLiteral("a||b")).matches(QStringLiteral("b")));
  // Regular-expression characters are plain text.
  EXPECT_TRUE(ChartFilter(QStringLiteral("range/data.load")).matches(QStringLiteral("range/data.load")));
  EXPECT_FALSE(ChartFilter(QStringLiteral("a.c")).matches(QStringLiteral("abc")));

  choices.filter = ChartFilter(QStringLiteral("nosuchchart|neither"));
  EXPECT_EQ(arrangeCharts(demoCharts(), choices).mode, ChartArrangement::Mode::NoMatch);
  EXPECT_EQ(arrangeCharts({}, choices).mode, ChartArrangement::Mode::Empty);
}

}  // namespace
}  // namespace livemon::ui
