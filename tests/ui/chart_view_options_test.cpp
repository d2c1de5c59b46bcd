// The charts' smoothing and log scale as the user chooses them and settings keep them.
#include <gtest/gtest.h>

#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>

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

TEST(ChartViewOptions, SettingsKeepTheChoices) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString path = dir.filePath(QStringLiteral("livemon.ini"));
  {
    ChartViewOptions options;
    options.setSmoothing(0.25);
    options.setLogScale(QStringLiteral("train.loss"), true);
    QSettings settings(path, QSettings::IniFormat);
    options.save(settings);
  }
  ChartViewOptions restored;
  QSignalSpy changed(&restored, &ChartViewOptions::changed);
  restored.restore(QSettings(path, QSettings::IniFormat));
  EXPECT_EQ(changed.count(), 1);
  EXPECT_DOUBLE_EQ(restored.smoothing(), 0.25);
  EXPECT_FALSE(restored.logScaleAll());
  EXPECT_TRUE(restored.logScale(QStringLiteral("train.loss")));
  EXPECT_FALSE(restored.logScale(QStringLiteral("train.lr")));
}

TEST(ChartViewOptions, BadSettingsGiveDefaultsOrTheNearestAllowedValue) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("livemon.ini"));
  {
    QSettings settings(path, QSettings::IniFormat);
    settings.setValue(QStringLiteral("charts/smoothing"), QStringLiteral("lots"));
  }
  ChartViewOptions options;
  options.restore(QSettings(path, QSettings::IniFormat));
  EXPECT_DOUBLE_EQ(options.smoothing(), kDefaultSmoothing);
  {
    QSettings settings(path, QSettings::IniFormat);
    settings.setValue(QStringLiteral("charts/smoothing"), 7.5);
  }
  options.restore(QSettings(path, QSettings::IniFormat));
  EXPECT_DOUBLE_EQ(options.smoothing(), kMaxSmoothing);
}

}  // namespace
}  // namespace livemon::ui
