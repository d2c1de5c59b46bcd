// The charts' smoothing and log scale as the user chooses them (dashboard_settings_test: as
// settings keep them).
#include <gtest/gtest.h>

#include <QSignalSpy>

#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {
namespace {

TEST(ChartViewOptions, StartsAtTensorBoardsSmoothingWithoutLogScale) {
  ChartViewOptions options;
  EXPECT_DOUBLE_EQ(options.smoothing(), 0.6);
  EXPECT_FALSE(options.logScaleAll());
  EXPECT_FALSE(options.logScale(QStringLiteral("train.loss")));
}

TEST(ChartViewOptions, EveryChangeSignalsAndCountsAndANoOpDoesNot) {
  ChartViewOptions options;
  QSignalSpy changed(&options, &ChartViewOptions::changed);
  const unsigned start = options.version();
  options.setSmoothing(0.9);
  options.setSmoothing(0.9);
  EXPECT_EQ(changed.count(), 1);
  options.setSmoothing(3.0);  // clamped
  EXPECT_DOUBLE_EQ(options.smoothing(), kMaxSmoothing);
  options.setLogScale(QStringLiteral("train.loss"), true);
  options.setLogScale(QStringLiteral("train.loss"), true);
  EXPECT_EQ(changed.count(), 3);
  EXPECT_EQ(options.version(), start + 3);
}

TEST(ChartViewOptions, AChartsOwnChoiceWinsUntilAllChartsAreSet) {
  ChartViewOptions options;
  options.setLogScale(QStringLiteral("train.loss"), true);
  EXPECT_TRUE(options.logScale(QStringLiteral("train.loss")));
  EXPECT_FALSE(options.logScale(QStringLiteral("train.lr")));
  options.setLogScaleAll(true);
  EXPECT_TRUE(options.logScale(QStringLiteral("train.lr")));
  options.setLogScale(QStringLiteral("train.lr"), false);
  EXPECT_FALSE(options.logScale(QStringLiteral("train.lr")));
  // Switching all off forgets the charts' own choices: every chart is linear.
  options.setLogScaleAll(false);
  EXPECT_FALSE(options.logScale(QStringLiteral("train.loss")));
  EXPECT_FALSE(options.logScale(QStringLiteral("train.lr")));
}

}  // namespace
}  // namespace livemon::ui
