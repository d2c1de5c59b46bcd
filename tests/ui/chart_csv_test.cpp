// A chart's data as CSV: a column per line, a row per time, only what is in view.
#include <gtest/gtest.h>

#include <QBuffer>
#include <QDateTime>

#include <livemon/ui/model/chart_csv.h>
#include <livemon/ui/model/series_store.h>

namespace livemon::ui {
namespace {

QStringList csvLines(const std::vector<CsvColumn>& columns, XRange x, TimeAxisMode mode) {
  QBuffer buffer;
  buffer.open(QIODevice::WriteOnly);
  EXPECT_TRUE(writeChartCsv(buffer, columns, x, mode));
  return QString::fromUtf8(buffer.data()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

TEST(ChartCsv, AColumnPerLineAndARowPerTimeWithEmptyCellsWhereALineHasNoValue) {
  SeriesStore mean;
  SeriesStore count;
  mean.append(1000.0, 0.5);
  mean.append(2000.0, 0.25);
  count.append(2000.0, 150.0);
  count.append(3000.0, 140.0);
  // Since the run start (at 0 ms): seconds.
  const PlotTransform seconds{0.0, 0.001};
  const QStringList lines = csvLines({{QStringLiteral("mean"), &mean, seconds}, {QStringLiteral("count"), &count, seconds}},
                                     XRange{0.0, 10.0}, TimeAxisMode::SinceRunStart);
  EXPECT_EQ(lines, (QStringList{QStringLiteral("seconds,mean,count"), QStringLiteral("1.000,0.5,"),
                                QStringLiteral("2.000,0.25,150"), QStringLiteral("3.000,,140")}));
}

TEST(ChartCsv, OnlyTheVisibleRangeIsWritten) {
  SeriesStore store;
  for (int i = 0; i < 100; ++i) store.append(1000.0 * i, i);
  const QStringList lines =
      csvLines({{QStringLiteral("value"), &store, PlotTransform{0.0, 0.001}}}, XRange{10.0, 19.5}, TimeAxisMode::SinceRunStart);
  ASSERT_EQ(lines.size(), 11);  // the header and 10..19
  EXPECT_EQ(lines[1], QStringLiteral("10.000,10"));
  EXPECT_EQ(lines.back(), QStringLiteral("19.000,19"));
}

TEST(ChartCsv, WallClockTimesAreIsoLocalTimesAndNamesAreQuotedWhereNeeded) {
  SeriesStore store;
  const double ms = 1'700'000'000'123.0;
  store.append(ms, 1e-12);
  const QStringList lines = csvLines({{QStringLiteral("mean · \"train\", r1"), &store, PlotTransform{}}},
                                     XRange{ms - 1000.0, ms + 1000.0}, TimeAxisMode::WallClock);
  ASSERT_EQ(lines.size(), 2);
  EXPECT_EQ(lines[0], QStringLiteral("time,\"mean · \"\"train\"\", r1\""));
  const QString time = lines[1].section(QLatin1Char(','), 0, 0);
  EXPECT_EQ(QDateTime::fromString(time, Qt::ISODateWithMs).toMSecsSinceEpoch(), static_cast<qint64>(ms));
  EXPECT_EQ(lines[1].section(QLatin1Char(','), 1).toDouble(), 1e-12);  // full precision
}

// A series name is a publisher's choice: one a spreadsheet would run as a formula is written as
// text.
TEST(ChartCsv, NamesASpreadsheetWouldRunAsFormulasAreWrittenAsText) {
  SeriesStore store;
  store.append(1000.0, -1.5);
  const QStringList lines =
      csvLines({{QStringLiteral("=HYPERLINK(\"x\")"), &store, PlotTransform{0.0, 0.001}},
                {QStringLiteral("@sum"), &store, PlotTransform{0.0, 0.001}},
                {QStringLiteral("train.loss"), &store, PlotTransform{0.0, 0.001}}},
               XRange{0.0, 10.0}, TimeAxisMode::SinceRunStart);
  ASSERT_EQ(lines.size(), 2);
  EXPECT_EQ(lines[0], QStringLiteral("seconds,\"'=HYPERLINK(\"\"x\"\")\",\"'@sum\",train.loss"));
  EXPECT_EQ(lines[1], QStringLiteral("1.000,-1.5,-1.5,-1.5"));  // numbers stay numbers
}

TEST(ChartCsv, OnTheStepAxisARowPerStepOfThePointsInTheTimeWindow) {
  SeriesStore mean;
  SeriesStore eval;
  for (int i = 0; i < 10; ++i) mean.append(1000.0 * i, i * 0.5, 100.0 * i);
  eval.append(4500.0, 0.75, 450.0);
  eval.append(5500.0, 0.8);  // no step: not written
  CsvColumn meanColumn{QStringLiteral("mean"), &mean, PlotTransform{}, XRange{3000.0, 6000.0}};
  CsvColumn evalColumn{QStringLiteral("accuracy"), &eval, PlotTransform{}, XRange{3000.0, 6000.0}};
  const QStringList lines = csvLines({meanColumn, evalColumn}, XRange{300.0, 600.0}, TimeAxisMode::Step);
  EXPECT_EQ(lines, (QStringList{QStringLiteral("step,mean,accuracy"), QStringLiteral("300,1.5,"), QStringLiteral("400,2,"),
                                QStringLiteral("450,,0.75"), QStringLiteral("500,2.5,"), QStringLiteral("600,3,")}));
}

TEST(ChartCsv, OldHistoryInBucketsIsWrittenToo) {
  SeriesStore::Limits limits;
  limits.recentCapacity = 8;
  limits.bucketCapacity = 100;
  limits.samplesPerBucket = 2;
  SeriesStore store(limits);
  for (int i = 0; i < 20; ++i) store.append(1000.0 * i, i);
  ASSERT_GT(store.bucketCount(), 0U);
  const QStringList lines =
      csvLines({{QStringLiteral("value"), &store, PlotTransform{0.0, 0.001}}}, XRange{0.0, 20.0}, TimeAxisMode::SinceRunStart);
  EXPECT_EQ(lines.size(), 1 + 20);  // buckets of two keep both samples
  EXPECT_EQ(lines[1], QStringLiteral("0.000,0"));
}

TEST(ChartCsv, ADeviceThatRefusesTheTextFails) {
  SeriesStore store;
  store.append(0.0, 1.0);
  QBuffer closed;  // not open: every write fails
  EXPECT_FALSE(writeChartCsv(closed, {{QStringLiteral("v"), &store, PlotTransform{}}}, XRange{0.0, 1.0},
                             TimeAxisMode::SinceRunStart));
}

}  // namespace
}  // namespace livemon::ui
