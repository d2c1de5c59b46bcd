// What the dashboard says when its limits are reached, and the bounded count of distinct refusals
// behind it.
#include <gtest/gtest.h>

#include <cstdint>

#include <QLocale>
#include <QString>

#include <livemon/ui/data/ingest_limits.h>

namespace livemon::ui {
namespace {

QString number(uint64_t value) { return QLocale().toString(static_cast<qulonglong>(value)); }

TEST(DistinctCounter, CountsEachValueOnceAndStopsRememberingAtItsCapacity) {
  DistinctCounter counter(4);
  EXPECT_TRUE(counter.add(1));
  EXPECT_FALSE(counter.add(1));
  EXPECT_TRUE(counter.add(2));
  EXPECT_FALSE(counter.add(2));
  EXPECT_EQ(counter.count(), 2U);
  EXPECT_FALSE(counter.saturated());

  EXPECT_TRUE(counter.add(3));
  EXPECT_TRUE(counter.add(4));
  // Full: a fifth value is not remembered, so the count becomes a lower bound.
  for (uint64_t value = 5; value < 100'000; ++value) EXPECT_FALSE(counter.add(value));
  EXPECT_EQ(counter.count(), 4U);
  EXPECT_TRUE(counter.saturated());
  EXPECT_FALSE(counter.add(3));  // still known
}

TEST(LimitReport, SaysNothingWhileNothingWasDropped) {
  LimitReport report;
  EXPECT_FALSE(report.any());
  EXPECT_TRUE(limitSummary(report).isEmpty());
  EXPECT_TRUE(limitDetails(report).isEmpty());
}

TEST(LimitReport, NamesTheLimitReachedWithWhatItDroppedAndHowManyNewOnes) {
  LimitReport report;
  report.drops.charts = LimitDrop{812, false, 1234};
  ASSERT_TRUE(report.any());
  EXPECT_EQ(limitSummary(report), QStringLiteral("⚠ dropped %1 values of 812 new charts beyond the %2-chart limit")
                                      .arg(number(1234), number(1024)));
  const QString details = limitDetails(report);
  EXPECT_TRUE(details.contains(QStringLiteral("812 new charts dropped: at most %1 charts").arg(number(1024)))) << details.toStdString();
  EXPECT_TRUE(details.contains(QLatin1String("everything already shown keeps updating"))) << details.toStdString();
}

TEST(LimitReport, NamesTheEventFieldChartLimit) {
  LimitReport report;
  report.drops.fieldCharts = LimitDrop{30, false, 90};
  ASSERT_TRUE(report.any());
  EXPECT_EQ(limitSummary(report), QStringLiteral("⚠ dropped 90 values of 30 new event-field charts beyond the 512-chart limit"));
  EXPECT_TRUE(limitDetails(report).contains(QLatin1String("at most 512 charts of event fields"))) << limitDetails(report).toStdString();
}

TEST(LimitReport, ShowsTheFirstLimitReachedAndCountsTheOthersTheTooltipListsEveryOne) {
  LimitReport report;
  report.drops.sources = LimitDrop{65536, true, 2'000'000};
  report.drops.eventNames = LimitDrop{3, false, 9};
  report.drops.logData = LimitDrop{0, false, 7};
  report.maxLinesPerChart = 256;
  report.undrawnLines = 40;
  report.maxRangeRows = 16384;
  report.unlistedRanges = 5;
  EXPECT_EQ(limitSummary(report),
            QStringLiteral("⚠ dropped %1 events of over %2 new sources beyond the %3-source limit · +4 more")
                .arg(number(2'000'000), number(65536), number(4096)));
  const QString details = limitDetails(report);
  EXPECT_TRUE(details.contains(QStringLiteral("9 events of 3 new event names not logged"))) << details.toStdString();
  EXPECT_TRUE(details.contains(QStringLiteral("7 events logged with their data cut: at most %1 bytes").arg(number(4096))))
      << details.toStdString();
  EXPECT_TRUE(details.contains(QStringLiteral("40 lines not drawn: at most 256 lines on one chart"))) << details.toStdString();
  EXPECT_TRUE(details.contains(QStringLiteral("5 ranges not listed: at most %1 rows").arg(number(16384)))) << details.toStdString();
  EXPECT_FALSE(details.contains(QLatin1String("new charts"))) << "only the limits reached";
}

}  // namespace
}  // namespace livemon::ui
