// The toolbar's smoothing slider and log-scale switch, and the settings that keep them.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QSlider>
#include <QTemporaryDir>

#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/chart_view_controls.h>
#include <livemon/ui/widgets/main_window.h>

namespace livemon::ui {
namespace {

TEST(ChartViewControls, TheSliderAndSwitchFollowTheOptionsBothWays) {
  ChartViewOptions options;
  ChartViewControls controls(options);
  EXPECT_EQ(controls.smoothingSlider()->value(), 60);  // TensorBoard's default
  EXPECT_EQ(controls.smoothingSlider()->maximum(), 99);
  controls.smoothingSlider()->setValue(85);
  EXPECT_DOUBLE_EQ(options.smoothing(), 0.85);
  controls.logScaleBox()->setChecked(true);
  EXPECT_TRUE(options.logScaleAll());
  options.setSmoothing(0.2);
  options.setLogScaleAll(false);
  EXPECT_EQ(controls.smoothingSlider()->value(), 20);
  EXPECT_FALSE(controls.logScaleBox()->isChecked());
}

TEST(ChartViewControls, TheWindowKeepsSmoothingAndLogScaleInItsSettings) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  DashboardOptions options;
  options.endpoints = {"tcp://127.0.0.1:5609"};
  options.settingsFile = dir.filePath(QStringLiteral("livemon.ini"));
  {
    MainWindow window(options);
    EXPECT_DOUBLE_EQ(window.chartGrid().viewOptions().smoothing(), 0.6);
    window.chartGrid().viewOptions().setSmoothing(0.9);
    window.chartGrid().viewOptions().setLogScaleAll(true);
    window.chartGrid().viewOptions().setLogScale(QStringLiteral("train.lr"), false);
    window.saveSettings();
  }
  MainWindow restored(options);
  EXPECT_DOUBLE_EQ(restored.chartGrid().viewOptions().smoothing(), 0.9);
  EXPECT_TRUE(restored.chartGrid().viewOptions().logScaleAll());
  EXPECT_FALSE(restored.chartGrid().viewOptions().logScale(QStringLiteral("train.lr")));
  EXPECT_TRUE(restored.chartGrid().viewOptions().logScale(QStringLiteral("train.loss")));
}

}  // namespace
}  // namespace livemon::ui
