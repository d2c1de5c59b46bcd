#include <livemon/ui/model/timeline_marks.h>

#include <algorithm>
#include <limits>
#include <map>

#include <livemon/ui/model/alert_list_model.h>
#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

TimelineMarks timelineMarks(const StatRegistry& registry, const std::function<bool(const SourceEntry&)>& which,
                            const AlertListModel* alerts) {
  TimelineMarks result;
  std::map<double, QString> events;  // an event's fields share its time: one mark per event
  // Where lines became NaN or infinite: what the nan rule alerts on, which a replay does not run
  // (each seek would raise its alerts again). The lines of one time share a mark.
  std::map<double, QStringList> nonFinite;
  const SeriesEntry* mostStepped = nullptr;
  for (SeriesId id = 0; id < registry.seriesIdEnd(); ++id) {
    const SeriesEntry* series = registry.series(id);
    if (series == nullptr) continue;
    const SourceEntry* source = registry.source(series->source);
    if (source == nullptr || !which(*source)) continue;
    if (series->kind == SeriesKind::EventField) {
      const qsizetype dot = series->stat.lastIndexOf(QLatin1Char('.'));
      const QString event = dot > 0 ? series->stat.left(dot) : series->stat;
      series->store.visitPointsFrom(-std::numeric_limits<double>::infinity(), 0,
                                    [&events, &event](const SeriesStore::Point& point, bool) {
                                      events.try_emplace(point.x, event);
                                      return true;
                                    });
    }
    for (const SeriesStore::NonFiniteSpan& span : series->store.nonFiniteSpans()) {
      const QString key = series->aggregation.isEmpty() ? series->stat : series->stat + QLatin1Char('.') + series->aggregation;
      nonFinite[span.first.x].append(key + (span.nan ? QStringLiteral(" NaN") : QStringLiteral(" infinite")));
    }
    if (series->store.hasSteps() && (mostStepped == nullptr || series->store.steppedCount() > mostStepped->store.steppedCount())) {
      mostStepped = series;
    }
  }
  for (const auto& [ms, event] : events) result.marks.push_back(TimelineMark{ms, event, false});
  for (const auto& [ms, keys] : nonFinite) result.marks.push_back(TimelineMark{ms, keys.join(QStringLiteral(", ")), true});
  if (mostStepped != nullptr) {
    mostStepped->store.visitPointsFrom(-std::numeric_limits<double>::infinity(), 0,
                                       [&result](const SeriesStore::Point& point, bool) {
                                         if (hasStep(point.step)) result.steps.emplace_back(point.x, point.step);
                                         return true;
                                       });
  }
  // Bucketed points come as first, lowest, highest, last: not always in time order.
  std::stable_sort(result.steps.begin(), result.steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (int row = 0; alerts != nullptr && row < alerts->rowCount(); ++row) {
    const AlertEntry* alert = alerts->entry(row);
    const SourceEntry* source = alert != nullptr && alert->sourceId ? registry.source(*alert->sourceId) : nullptr;
    if (source == nullptr || !which(*source)) continue;
    result.marks.push_back(TimelineMark{alert->timeMs, alert->message, true});
  }
  std::stable_sort(result.marks.begin(), result.marks.end(),
                   [](const TimelineMark& a, const TimelineMark& b) { return a.ms < b.ms; });
  return result;
}

double stepAt(const std::vector<std::pair<double, double>>& steps, double ms) {
  if (steps.empty()) return std::numeric_limits<double>::quiet_NaN();
  auto after = std::upper_bound(steps.begin(), steps.end(), ms, [](double t, const auto& step) { return t < step.first; });
  return after == steps.begin() ? after->second : std::prev(after)->second;
}

}  // namespace livemon::ui
