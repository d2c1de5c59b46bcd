// The chart axes' arithmetic: round steps, label formats, wall-clock ticks at round local times,
// the padding above and below the data, and the tooltip's x.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <QDateTime>

#include <livemon/ui/model/chart_axes.h>

namespace livemon::ui {
namespace {

TEST(ChartAxes, NiceStepsAreOneTwoOrFiveTimesAPowerOfTenAtLeastTheRawStep) {
  EXPECT_DOUBLE_EQ(niceStep(0.7), 1.0);
  EXPECT_DOUBLE_EQ(niceStep(1.0), 1.0);
  EXPECT_DOUBLE_EQ(niceStep(1.3), 2.0);
  EXPECT_DOUBLE_EQ(niceStep(3.0), 5.0);
  EXPECT_DOUBLE_EQ(niceStep(7.5), 10.0);
  EXPECT_DOUBLE_EQ(niceStep(420.0), 500.0);
  EXPECT_DOUBLE_EQ(niceStep(0.0012), 0.002);
  // A span of nothing, a reversed one or one without a value still gets a usable step.
  EXPECT_DOUBLE_EQ(niceStep(0.0), 1.0);
  EXPECT_DOUBLE_EQ(niceStep(-5.0), 1.0);
  EXPECT_DOUBLE_EQ(niceStep(std::numeric_limits<double>::quiet_NaN()), 1.0);
  EXPECT_DOUBLE_EQ(niceStep(std::numeric_limits<double>::infinity()), 1.0);
}

TEST(ChartAxes, TickStepLeavesRoomPerTickAndAtLeastTwoTicks) {
  // 100 over 450 px at one tick per 45 px: ten ticks of 10.
  EXPECT_DOUBLE_EQ(tickStep(100.0, 450.0, 45.0), 10.0);
  // A tiny axis still gets two ticks: 100 / 2 = 50.
  EXPECT_DOUBLE_EQ(tickStep(100.0, 10.0, 45.0), 50.0);
}

TEST(ChartAxes, LabelFormatsShowTheDigitsTheStepNeedsAndNoMore) {
  EXPECT_EQ(labelFormatFor(10.0, 100.0), QStringLiteral("%.0f"));
  EXPECT_EQ(labelFormatFor(1.0, 100.0), QStringLiteral("%.0f"));
  EXPECT_EQ(labelFormatFor(0.5, 3.0), QStringLiteral("%.1f"));
  EXPECT_EQ(labelFormatFor(0.02, 3.0), QStringLiteral("%.2f"));
  EXPECT_EQ(labelFormatFor(0.001, 0.01), QStringLiteral("%.3f"));
  // Large values and tiny steps in the shortest form.
  EXPECT_EQ(labelFormatFor(100000.0, 2e6), QStringLiteral("%.3g"));
  EXPECT_EQ(labelFormatFor(1e-5, 1e-4), QStringLiteral("%.3g"));
}

TEST(ChartAxes, WallClockStepsLeaveAbout90PixelsPerLabelWithFormatsForTheSpan) {
  // Five minutes over 900 px: ten labels, so 30 s steps, with seconds.
  WallClockTicks ticks = wallClockTicks(300e3, 900.0);
  EXPECT_DOUBLE_EQ(ticks.stepMs, 30e3);
  EXPECT_EQ(ticks.format, QStringLiteral("HH:mm:ss"));
  // An hour over 360 px: four labels, so 15 min steps, without seconds.
  ticks = wallClockTicks(3600e3, 360.0);
  EXPECT_DOUBLE_EQ(ticks.stepMs, 900e3);
  EXPECT_EQ(ticks.format, QStringLiteral("HH:mm"));
  // A day and more: the date joins the time, or stands alone for steps of a day.
  ticks = wallClockTicks(30 * 3600e3, 900.0);
  EXPECT_DOUBLE_EQ(ticks.stepMs, 10800e3);
  EXPECT_EQ(ticks.format, QStringLiteral("MM-dd HH:mm"));
  ticks = wallClockTicks(10 * 86400e3, 900.0);
  EXPECT_DOUBLE_EQ(ticks.stepMs, 86400e3);
  EXPECT_EQ(ticks.format, QStringLiteral("MM-dd"));
  // Beyond the longest step: a week, however crowded.
  EXPECT_DOUBLE_EQ(wallClockTicks(1000 * 86400e3, 200.0).stepMs, 604800e3);
}

TEST(ChartAxes, WallClockTickMarksFallOnRoundLocalTimesInsideTheRange) {
  const double start = 1'700'000'012'345.0;  // not on a round second
  const XRange x{start, start + 300e3};
  const std::vector<WallClockTick> marks = wallClockTickMarks(x, 900.0);
  ASSERT_EQ(marks.size(), 10U);
  for (std::size_t i = 0; i < marks.size(); ++i) {
    const WallClockTick& mark = marks[i];
    EXPECT_GT(mark.ms, x.min);
    EXPECT_LE(mark.ms, x.max);
    if (i > 0) {
      EXPECT_DOUBLE_EQ(mark.ms - marks[i - 1].ms, 30e3);
    }
    const QDateTime local = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(mark.ms));
    const double localMs = mark.ms + 1000.0 * local.offsetFromUtc();
    EXPECT_DOUBLE_EQ(std::fmod(localMs, 30e3), 0.0) << mark.label.toStdString();
    EXPECT_EQ(mark.label, local.toString(QStringLiteral("HH:mm:ss")));
  }
  EXPECT_TRUE(wallClockTickMarks(XRange{start, start + 500.0}, 900.0).empty());
}

TEST(ChartAxes, PaddedYLeavesRoomAroundTheDataAndHandlesFlatAndMissingData) {
  EXPECT_EQ(paddedY(0.0, 100.0), (XRange{-8.0, 108.0}));
  EXPECT_EQ(paddedY(50.0, 50.0), (XRange{45.0, 55.0}));
  EXPECT_EQ(paddedY(-50.0, -50.0), (XRange{-55.0, -45.0}));
  EXPECT_EQ(paddedY(0.0, 0.0), (XRange{-1.0, 1.0}));
  EXPECT_EQ(paddedY(2.0, 1.0), (XRange{0.0, 1.0}));
  EXPECT_EQ(paddedY(std::numeric_limits<double>::quiet_NaN(), 1.0), (XRange{0.0, 1.0}));
}

TEST(ChartAxes, FormatsXAsLocalTimeOrSecondsSinceTheStart) {
  const double ms = 1'700'000'012'345.0;
  EXPECT_EQ(formatX(ms, TimeAxisMode::WallClock),
            QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(ms)).toString(QStringLiteral("HH:mm:ss.zzz")));
  EXPECT_TRUE(formatX(ms, TimeAxisMode::WallClock).endsWith(QStringLiteral(".345")));
  EXPECT_EQ(formatX(12.345, TimeAxisMode::SinceRunStart), QStringLiteral("12.35 s since start"));
}

TEST(ChartAxes, ALineFlatButForRoundingNoiseIsPaddedLikeAFlatOne) {
  // A smoothed constant 3 can come out as 2.9999999999999996.
  const XRange range = paddedY(2.9999999999999996, 3.0);
  EXPECT_NEAR(range.min, 2.7, 1e-9);
  EXPECT_NEAR(range.max, 3.3, 1e-9);
}

TEST(ChartAxes, ALogAxisPadsInDecadesAndNeverReachesZero) {
  const XRange range = paddedLogY(1.0, 100.0);
  EXPECT_GT(range.min, 0.0);
  EXPECT_LT(range.min, 1.0);
  EXPECT_GT(range.max, 100.0);
  EXPECT_NEAR(std::log10(range.max / 100.0), std::log10(1.0 / range.min), 1e-12);  // as much room either side
  EXPECT_DOUBLE_EQ(paddedLogY(4.0, 4.0).min, 4.0 / 1.5);
  EXPECT_DOUBLE_EQ(paddedLogY(4.0, 4.0).max, 6.0);
  // Nothing positive to show still gives an axis a log scale can draw.
  for (const XRange bad : {paddedLogY(0.0, 5.0), paddedLogY(-3.0, -1.0), paddedLogY(2.0, 1.0),
                           paddedLogY(std::numeric_limits<double>::quiet_NaN(), 1.0)}) {
    EXPECT_DOUBLE_EQ(bad.min, 1.0);
    EXPECT_DOUBLE_EQ(bad.max, 10.0);
  }
}

TEST(ChartAxes, DurationsOfRangesAndWaitCountersAreInMilliseconds) {
  const QStringList waitCounter{QStringLiteral("count"), QStringLiteral("mean"), QStringLiteral("max"),
                                QStringLiteral("p50"), QStringLiteral("p99")};
  EXPECT_EQ(valueUnit(QStringLiteral("range/forward"), {QStringLiteral("mean")}), QStringLiteral("ms"));
  EXPECT_EQ(valueUnit(QStringLiteral("train.data_loading"), waitCounter), QStringLiteral("ms"));
  // In any order: the legend sorts them its own way.
  EXPECT_EQ(valueUnit(QStringLiteral("data_wait"), {QStringLiteral("p99"), QStringLiteral("max"), QStringLiteral("count"),
                                                    QStringLiteral("p50"), QStringLiteral("mean")}),
            QStringLiteral("ms"));
  // A user's Stat says nothing of its unit.
  EXPECT_TRUE(valueUnit(QStringLiteral("train.loss"), {QStringLiteral("mean"), QStringLiteral("min"),
                                                       QStringLiteral("max")}).isEmpty());
  EXPECT_TRUE(valueUnit(QStringLiteral("train.loss"), waitCounter.mid(0, 3)).isEmpty());
  EXPECT_TRUE(isCountAxis(QStringLiteral("count")));
  EXPECT_FALSE(isCountAxis(QStringLiteral("sum")));
}

}  // namespace
}  // namespace livemon::ui
