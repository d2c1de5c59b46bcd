// The chart axes' arithmetic: round steps, label formats, wall-clock ticks at round local times,
// the padding above and below the data, and the tooltip's x.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

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

// The labels of `ticks`, lowest first.
QStringList labelsOf(const AxisTicks& ticks) {
  QStringList labels;
  for (const AxisTick& tick : ticks.ticks) labels << tick.label;
  return labels;
}

// At least four labels, each different.
void expectFourDifferent(const AxisTicks& ticks, const char* what) {
  const QStringList labels = labelsOf(ticks);
  EXPECT_GE(labels.size(), 4) << what << ": " << labels.join(QStringLiteral(" | ")).toStdString();
  QStringList unique = labels;
  unique.removeDuplicates();
  EXPECT_EQ(unique.size(), labels.size()) << what << ": " << labels.join(QStringLiteral(" | ")).toStdString();
}

TEST(ChartAxes, UnitsComeFromTheStatsName) {
  EXPECT_EQ(valueUnit(QStringLiteral("system.rss_bytes"), {QStringLiteral("value")}), QStringLiteral("B"));
  EXPECT_EQ(valueUnit(QStringLiteral("system.cpu_percent"), {QStringLiteral("mean")}), QStringLiteral("%"));
  EXPECT_EQ(valueUnit(QStringLiteral("train.step_time_ms"), {QStringLiteral("p50")}), QStringLiteral("ms"));
  EXPECT_EQ(valueUnit(QStringLiteral("eval.duration_s"), {QStringLiteral("value")}), QStringLiteral("s"));
  EXPECT_EQ(valueUnit(QStringLiteral("train.samples_per_s"), {QStringLiteral("mean")}), QStringLiteral("samples/s"));
  EXPECT_EQ(valueUnit(QStringLiteral("system.memory_gb"), {QStringLiteral("value")}), QStringLiteral("GB"));
  EXPECT_TRUE(valueUnit(QStringLiteral("train.loss"), {QStringLiteral("mean")}).isEmpty());
}

TEST(ChartAxes, BytesScaleInBinaryStepsAndMillisecondsBecomeSeconds) {
  EXPECT_EQ(axisScale(QStringLiteral("B"), 900.0).unit, QStringLiteral("B"));
  EXPECT_EQ(axisScale(QStringLiteral("B"), 1.75e7).unit, QStringLiteral("MiB"));
  EXPECT_DOUBLE_EQ(axisScale(QStringLiteral("B"), 1.75e7).factor, 1024.0 * 1024.0);
  EXPECT_EQ(axisScale(QStringLiteral("B"), 3e9).unit, QStringLiteral("GiB"));
  EXPECT_EQ(axisScale(QStringLiteral("B"), 2048.0).unit, QStringLiteral("KiB"));
  EXPECT_EQ(axisScale(QStringLiteral("ms"), 950.0).unit, QStringLiteral("ms"));
  EXPECT_EQ(axisScale(QStringLiteral("ms"), 45'000.0).unit, QStringLiteral("s"));
  EXPECT_DOUBLE_EQ(axisScale(QStringLiteral("ms"), 45'000.0).factor, 1000.0);
  EXPECT_EQ(axisScale(QStringLiteral("%"), 80.0).unit, QStringLiteral("%"));

  // 0 to 1.75e7 bytes: round MiB, not 1.75e+07.
  const AxisTicks bytes = linearTicks(XRange{0.0, 1.75e7}, 160.0, QStringLiteral("B"));
  EXPECT_EQ(bytes.title, QStringLiteral("MiB"));
  expectFourDifferent(bytes, "bytes");
  EXPECT_EQ(labelsOf(bytes).front(), QStringLiteral("0"));
  for (const AxisTick& tick : bytes.ticks) {
    EXPECT_FALSE(tick.label.contains(QLatin1Char('e'))) << tick.label.toStdString();
    EXPECT_DOUBLE_EQ(std::fmod(tick.value, 1024.0 * 1024.0), 0.0) << "whole MiB";
  }
  // Durations past 10 s in seconds.
  EXPECT_EQ(linearTicks(XRange{0.0, 60'000.0}, 160.0, QStringLiteral("ms")).title, QStringLiteral("s"));
  EXPECT_EQ(labelsOf(linearTicks(XRange{0.0, 60'000.0}, 160.0, QStringLiteral("ms"))).back(), QStringLiteral("60"));
}

TEST(ChartAxes, LinearTicksAreFourOrMoreDifferentLabelsInOneNotation) {
  // samples_per_s showed "700" alone.
  const AxisTicks rate = linearTicks(XRange{650.0, 750.0}, 150.0, {});
  expectFourDifferent(rate, "650-750");
  EXPECT_TRUE(labelsOf(rate).contains(QStringLiteral("700")));
  // train.lr showed 0.000294 twice: the labels carry the digits the step needs.
  const AxisTicks lr = linearTicks(XRange{0.0002936, 0.0002944}, 150.0, {});
  expectFourDifferent(lr, "lr");
  for (const QString& label : labelsOf(lr)) EXPECT_TRUE(label.endsWith(QLatin1String("e-4"))) << label.toStdString();
  expectFourDifferent(linearTicks(XRange{0.000292, 0.000296}, 150.0, {}), "lr wider");
  // Not 5e-05 beside 0.0001.
  const QStringList small = labelsOf(linearTicks(XRange{0.0, 0.0001}, 150.0, {}));
  EXPECT_EQ(small, (QStringList{QStringLiteral("0"), QStringLiteral("0.00002"), QStringLiteral("0.00004"),
                                QStringLiteral("0.00006"), QStringLiteral("0.00008"), QStringLiteral("0.00010")}));
  // Steps finer than a millionth: the same power of ten on every label.
  const QStringList tiny = labelsOf(linearTicks(XRange{2.9e-7, 2.96e-7}, 150.0, {}));
  ASSERT_GE(tiny.size(), 4);
  for (const QString& label : tiny) EXPECT_TRUE(label.endsWith(QLatin1String("e-7"))) << label.toStdString();
  // Large counts in thousands, millions, billions.
  const AxisTicks tokens = linearTicks(XRange{0.0, 3.2e9}, 150.0, {});
  expectFourDifferent(tokens, "tokens");
  EXPECT_TRUE(labelsOf(tokens).contains(QStringLiteral("3G"))) << labelsOf(tokens).join(QLatin1Char(' ')).toStdString();
  EXPECT_EQ(labelsOf(linearTicks(XRange{-1.0, 1.0}, 150.0, {})).at(2), QStringLiteral("0")) << "no -0";
  // A tall axis gets more ticks, never closer than 20 pixels.
  const AxisTicks tall = linearTicks(XRange{0.0, 100.0}, 900.0, {});
  EXPECT_GE(tall.ticks.size(), 10U);
  EXPECT_LE(tall.ticks.size(), 900U / 20U + 1U);
  // 1 to 18 over 147 pixels: 5 gives three ticks and 2 nine, cut to "..." by Qt; 2.5 gives seven.
  const QStringList norm = labelsOf(linearTicks(XRange{1.0, 18.3}, 147.5, {}));
  EXPECT_EQ(norm, (QStringList{QStringLiteral("2.5"), QStringLiteral("5.0"), QStringLiteral("7.5"), QStringLiteral("10.0"),
                               QStringLiteral("12.5"), QStringLiteral("15.0"), QStringLiteral("17.5")}));
  EXPECT_EQ(labelsOf(linearTicks(XRange{0.0, 110.0}, 147.5, {})).at(1), QStringLiteral("20")) << "2 where it fits";
  EXPECT_TRUE(linearTicks(XRange{1.0, 1.0}, 150.0, {}).ticks.empty());
}

TEST(ChartAxes, LogTicksUnderADecadeAreStillFourAndOverDecadesAreRound) {
  // 0.5 to 1.5: "1" alone before.
  const AxisTicks narrow = logTicks(XRange{0.5, 1.5}, 150.0, {});
  expectFourDifferent(narrow, "0.5-1.5");
  for (const QString& label : labelsOf(narrow)) EXPECT_LE(label.size(), 4) << label.toStdString();
  // A decade or so: 1, 2 and 5 (or finer) between the powers of ten.
  const AxisTicks decade = logTicks(XRange{0.3, 4.0}, 150.0, {});
  expectFourDifferent(decade, "0.3-4");
  EXPECT_TRUE(labelsOf(decade).contains(QStringLiteral("1")));
  EXPECT_TRUE(labelsOf(decade).contains(QStringLiteral("2")));
  // Many decades: powers of ten only, every other one when crowded.
  const AxisTicks many = logTicks(XRange{1e-3, 1e5}, 150.0, {});
  expectFourDifferent(many, "1e-3..1e5");
  for (const AxisTick& tick : many.ticks) {
    const double decades = std::log10(tick.value);
    EXPECT_NEAR(decades, std::round(decades), 1e-9) << tick.label.toStdString();
  }
  EXPECT_TRUE(labelsOf(many).contains(QStringLiteral("100k")) || labelsOf(many).contains(QStringLiteral("10k")))
      << labelsOf(many).join(QLatin1Char(' ')).toStdString();
  // Tiny values in one notation.
  const AxisTicks lr = logTicks(XRange{1e-6, 1e-3}, 150.0, {});
  expectFourDifferent(lr, "1e-6..1e-3");
  for (const QString& label : labelsOf(lr)) EXPECT_TRUE(label.contains(QLatin1String("e-"))) << label.toStdString();
  // Nothing positive: no ticks rather than a log of zero.
  EXPECT_TRUE(logTicks(XRange{0.0, 1.0}, 150.0, {}).ticks.empty());
}

TEST(ChartAxes, ValuesInNotesAreShortAndCarryThousands) {
  EXPECT_EQ(formatValue(1.5), QStringLiteral("1.5"));
  EXPECT_EQ(formatValue(12345.0), QStringLiteral("12.35k"));
  EXPECT_EQ(formatValue(3.2e9), QStringLiteral("3.2G"));
  EXPECT_EQ(formatValue(-2e6), QStringLiteral("-2M"));
}

TEST(ChartAxes, AFewValuesOrdersOfMagnitudeBeyondTheRestAreLeftOutOfTheFit) {
  // A loss from 2.3 to 0.5, then diverged.
  std::vector<double> values;
  for (int i = 0; i < 400; ++i) values.push_back(2.3 - 1.8 * i / 400.0);
  for (double diverged : {1e4, 1e5, 1e6}) values.push_back(diverged);
  FittedExtent fitted = fitExtent(values);
  EXPECT_NEAR(fitted.low, 0.5045, 1e-9);
  EXPECT_DOUBLE_EQ(fitted.high, 2.3);
  EXPECT_EQ(fitted.above, 3U);
  EXPECT_DOUBLE_EQ(fitted.highest, 1e6);
  EXPECT_EQ(fitted.below, 0U);

  // And the same far below.
  values.assign(100, 1.0);
  for (int i = 0; i < 100; ++i) values[static_cast<std::size_t>(i)] = 1.0 + 0.01 * i;
  values.push_back(-500.0);
  fitted = fitExtent(values);
  EXPECT_EQ(fitted.below, 1U);
  EXPECT_DOUBLE_EQ(fitted.lowest, -500.0);
  EXPECT_DOUBLE_EQ(fitted.low, 1.0);

  // A loss that starts at 10 and soon falls to 0.5 keeps its start.
  values.clear();
  for (int i = 0; i < 200; ++i) values.push_back(i < 8 ? 10.0 - i : 0.5 + 0.001 * i);
  EXPECT_DOUBLE_EQ(fitExtent(values).high, 10.0);
  // A step time with spikes of four times its usual value keeps them: they are not orders of magnitude.
  values.clear();
  for (int i = 0; i < 200; ++i) values.push_back(i % 50 == 0 ? 400.0 : 100.0 + i % 7);
  fitted = fitExtent(values);
  EXPECT_DOUBLE_EQ(fitted.high, 400.0);
  EXPECT_EQ(fitted.above, 0U);
  // A constant keeps its one spike; so do a few values.
  values.assign(100, 0.0);
  values[50] = 99.0;
  EXPECT_DOUBLE_EQ(fitExtent(values).high, 99.0);
  values = {1.0, 2.0, 1e9};
  EXPECT_DOUBLE_EQ(fitExtent(values).high, 1e9);
  values.clear();
  EXPECT_GT(fitExtent(values).low, fitExtent(values).high);
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

namespace livemon::ui {
namespace {

// A constant smoothed one ulp off is a flat line: on a log axis too it is padded like one, and no
// range, however narrow against its magnitude, asks for more ticks than the axis has room for
// (a span of 1e-16 around 10 once asked for a tick every 1e-17: the dashboard hung, its memory
// growing by the gigabyte).
TEST(ChartAxes, ANarrowRangeFarFromZeroGivesAFewTicksOnEveryScale) {
  const double constant = 10.0;
  const double ulpAbove = std::nextafter(constant, 20.0);
  const XRange padded = paddedLogY(constant, ulpAbove);
  EXPECT_LT(padded.min, constant / 1.4);
  EXPECT_GT(padded.max, constant * 1.4);
  for (const XRange range : {XRange{constant, ulpAbove}, XRange{1e15, 1e15 + 1.0}, XRange{1e20, 1e20 * (1 + 1e-15)},
                             XRange{2.5e-5, std::nextafter(2.5e-5, 1.0)}, XRange{-1e18, std::nextafter(-1e18, 0.0)}}) {
    const AxisTicks linear = linearTicks(range, 300.0, QString());
    EXPECT_LE(linear.ticks.size(), 15U) << range.min;
    if (range.min > 0.0) {
      const AxisTicks log = logTicks(range, 300.0, QString());
      EXPECT_LE(log.ticks.size(), 15U) << range.min;
    }
  }
}

}  // namespace
}  // namespace livemon::ui
