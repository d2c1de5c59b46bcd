#include <livemon/ui/data/ingest_limits.h>

#include <vector>

#include <QCoreApplication>
#include <QLocale>
#include <QStringList>

namespace livemon::ui {

namespace {

QString tr(const char* text) { return QCoreApplication::translate("livemon::ui::LimitReport", text); }

QString number(uint64_t value) { return QLocale().toString(static_cast<qulonglong>(value)); }

QString distinct(const LimitDrop& drop) {
  return drop.atLeast ? tr("over %1").arg(number(drop.distinct)) : number(drop.distinct);
}

// One reached limit: the status bar's clause and the tooltip's line.
struct Clause {
  QString brief;
  QString full;
};

std::vector<Clause> clauses(const LimitReport& report) {
  std::vector<Clause> result;
  const IngestLimits& limits = report.limits;
  const LimitDrops& drops = report.drops;
  if (drops.sources.any()) {
    result.push_back({tr("dropped %1 events of %2 new sources beyond the %3-source limit")
                          .arg(number(drops.sources.dropped), distinct(drops.sources), number(limits.maxSources)),
                      tr("%1 events of %2 new sources dropped: at most %3 sources (publishers, live and "
                         "replayed) at once")
                          .arg(number(drops.sources.dropped), distinct(drops.sources), number(limits.maxSources))});
  }
  if (drops.charts.any()) {
    result.push_back({tr("dropped %1 values of %2 new charts beyond the %3-chart limit")
                          .arg(number(drops.charts.dropped), distinct(drops.charts), number(limits.maxCharts)),
                      tr("%1 values of %2 new charts dropped: at most %3 charts (distinct Stat names and event fields)")
                          .arg(number(drops.charts.dropped), distinct(drops.charts), number(limits.maxCharts))});
  }
  if (drops.fieldCharts.any()) {
    result.push_back({tr("dropped %1 values of %2 new event-field charts beyond the %3-chart limit")
                          .arg(number(drops.fieldCharts.dropped), distinct(drops.fieldCharts), number(limits.maxFieldCharts)),
                      tr("%1 event field values of %2 new event fields dropped: at most %3 charts of event fields "
                         "(\"<event>.<field>\")")
                          .arg(number(drops.fieldCharts.dropped), distinct(drops.fieldCharts), number(limits.maxFieldCharts))});
  }
  if (drops.sourceSeries.any()) {
    result.push_back(
        {tr("dropped %1 values of %2 new lines beyond %3 lines per source")
             .arg(number(drops.sourceSeries.dropped), distinct(drops.sourceSeries), number(limits.maxSeriesPerSource)),
         tr("%1 values of %2 new lines dropped: at most %3 lines (Stat keys and event fields) per source")
             .arg(number(drops.sourceSeries.dropped), distinct(drops.sourceSeries), number(limits.maxSeriesPerSource))});
  }
  if (drops.series.any()) {
    const QString lineLimit = limits.maxRankedSeries > 0
                                  ? tr("the %1-line limit (%2 for ranks)").arg(number(limits.maxSeries), number(limits.maxRankedSeries))
                                  : tr("the %1-line limit").arg(number(limits.maxSeries));
    result.push_back({tr("dropped %1 values of %2 new lines beyond %3")
                          .arg(number(drops.series.dropped), distinct(drops.series), lineLimit),
                      (limits.maxRankedSeries > 0
                           ? tr("%1 values of %2 new lines dropped: at most %3 lines in all, and %4 of ranks")
                                 .arg(number(drops.series.dropped), distinct(drops.series), number(limits.maxSeries),
                                      number(limits.maxRankedSeries))
                           : tr("%1 values of %2 new lines dropped: at most %3 lines in all")
                                 .arg(number(drops.series.dropped), distinct(drops.series), number(limits.maxSeries)))});
  }
  if (drops.eventNames.any()) {
    result.push_back({tr("dropped %1 events of %2 new event names beyond the %3-name limit")
                          .arg(number(drops.eventNames.dropped), distinct(drops.eventNames), number(limits.maxEventNames)),
                      tr("%1 events of %2 new event names not logged: at most %3 distinct event names")
                          .arg(number(drops.eventNames.dropped), distinct(drops.eventNames), number(limits.maxEventNames))});
  }
  if (drops.logData.any()) {
    result.push_back({tr("cut %1 log rows to %2 bytes").arg(number(drops.logData.dropped), number(limits.maxLogDataBytes)),
                      tr("%1 events logged with their data cut: at most %2 bytes of data per log row")
                          .arg(number(drops.logData.dropped), number(limits.maxLogDataBytes))});
  }
  if (report.undrawnLines > 0) {
    result.push_back({tr("%1 lines not drawn beyond %2 per chart").arg(number(report.undrawnLines), number(report.maxLinesPerChart)),
                      tr("%1 lines not drawn: at most %2 lines on one chart (the first to arrive)")
                          .arg(number(report.undrawnLines), number(report.maxLinesPerChart))});
  }
  if (report.unlistedRanges > 0) {
    result.push_back({tr("%1 ranges not listed beyond %2 rows").arg(number(report.unlistedRanges), number(report.maxRangeRows)),
                      tr("%1 ranges not listed: at most %2 rows in the Ranges table (their charts still show them)")
                          .arg(number(report.unlistedRanges), number(report.maxRangeRows))});
  }
  return result;
}

}  // namespace

bool DistinctCounter::add(uint64_t hash) {
  if (seen_.contains(hash)) return false;
  if (seen_.size() >= capacity_) {
    saturated_ = true;
    return false;
  }
  seen_.insert(hash);
  return true;
}

QString limitSummary(const LimitReport& report) {
  const std::vector<Clause> reached = clauses(report);
  if (reached.empty()) return {};
  QString text = QStringLiteral("⚠ ") + reached.front().brief;
  if (reached.size() > 1) text += tr(" · +%1 more").arg(static_cast<qulonglong>(reached.size() - 1));
  return text;
}

QString limitDetails(const LimitReport& report) {
  const std::vector<Clause> reached = clauses(report);
  if (reached.empty()) return {};
  QStringList lines;
  lines << tr("The dashboard reached its limits:");
  for (const Clause& clause : reached) lines << QStringLiteral("• ") + clause.full;
  lines << QString()
        << tr("A publisher or a recording that keeps inventing names (sources, Stats, event names) would "
              "otherwise make the dashboard grow without end. Beyond a limit, what is new is dropped and "
              "counted here; everything already shown keeps updating. Closing a replayed recording gives "
              "back what it used.");
  return lines.join(QLatin1Char('\n'));
}

}  // namespace livemon::ui
