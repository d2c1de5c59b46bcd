// StatChartView's bands: a source's min–max band, and a rank group's band around its median line
// (whose edges the hover names by rank); and where a max line lies on its p99.
#include <algorithm>
#include <cmath>
#include <iterator>

#include <QtCharts/QLineSeries>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_band.h>
#include <livemon/ui/widgets/chart_tooltip.h>
#include <livemon/ui/widgets/chart_x_axis.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

bool StatChartView::isRankEdge(const Line& line) {
  return line.entry->role == SeriesRole::RankLow || line.entry->role == SeriesRole::RankHigh;
}

const StatChartView::Line* StatChartView::p99Under(const Line& max) const {
  if (max.entry->aggregation != QLatin1String("max")) return nullptr;
  // A band's edge breaking would break its band.
  for (const Band& band : bands_) {
    if (band.area != nullptr && band.max == &max) return nullptr;
  }
  for (const auto& line : lines_) {
    if (line->entry->aggregation == QLatin1String("p99") && line->entry->source == max.entry->source &&
        line->entry->role == max.entry->role) {
      return isShown(*line) ? line.get() : nullptr;
    }
  }
  return nullptr;
}

void StatChartView::pairBands() {
  for (const auto& line : lines_) {
    const SeriesRole role = line->entry->role;
    if (role == SeriesRole::RankLow || role == SeriesRole::RankHigh) {
      const Line* median = findLine(line->entry->median);
      if (median == nullptr) continue;  // the median comes with its edges; not drawn without it
      auto band = std::find_if(bands_.begin(), bands_.end(), [&](const Band& b) { return b.median == median; });
      if (band == bands_.end()) {
        bands_.push_back(Band{});
        band = std::prev(bands_.end());
        band->source = line->entry->source;
        band->median = median;
      }
      (role == SeriesRole::RankLow ? band->min : band->max) = line.get();
      continue;
    }
    // A publisher's own min and max: a group's median lines of min and max are not a band.
    if (role != SeriesRole::Plain) continue;
    const bool isMin = line->entry->aggregation == QLatin1String("min");
    const bool isMax = line->entry->aggregation == QLatin1String("max");
    if (!isMin && !isMax) continue;
    auto band = std::find_if(bands_.begin(), bands_.end(),
                             [&](const Band& b) { return b.median == nullptr && b.source == line->entry->source; });
    if (band == bands_.end()) {
      bands_.push_back(Band{});
      band = std::prev(bands_.end());
      band->source = line->entry->source;
    }
    (isMin ? band->min : band->max) = line.get();
  }
}

QAreaSeries* StatChartView::rankBand(SeriesId median) const {
  const ChartBand* band = rankBandStretches(median);
  return band != nullptr ? band->head() : nullptr;
}

const ChartBand* StatChartView::rankBandStretches(SeriesId median) const {
  for (const Band& band : bands_) {
    if (band.median != nullptr && band.median->id == median) return band.area.get();
  }
  return nullptr;
}

}  // namespace livemon::ui
