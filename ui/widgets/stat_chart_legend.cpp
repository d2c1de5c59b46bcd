// StatChartView's lines as the legend names and colours them, and the legend itself: an entry per
// line drawn (or hidden by the user) and one per rank group's bands, a click toggling either.
// Ranks drawn over their group's band (picked, or flagged by the scorer) take colours no
// aggregation has and are named by rank: "mean · rank 7 (flagged)".
#include <algorithm>
#include <set>

#include <QtCharts/QLineSeries>

#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_band.h>
#include <livemon/ui/widgets/chart_legend.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

namespace {

bool isRank(const SourceEntry* source) { return source != nullptr && source->info && source->info->rank; }

}  // namespace

bool StatChartView::multiSource() const {
  for (const auto& line : lines_) {
    if (line->entry->source != lines_.front()->entry->source) return true;
  }
  return false;
}

std::optional<SourceId> StatChartView::soleRankGroup() const {
  std::optional<SourceId> group;
  for (const auto& line : lines_) {
    if (line->entry->role == SeriesRole::Plain) continue;
    if (group && *group != line->entry->source) return std::nullopt;
    group = line->entry->source;
  }
  if (!group) return std::nullopt;
  for (const auto& line : lines_) {
    if (line->entry->role == SeriesRole::Plain && !isRank(registry_.source(line->entry->source))) return std::nullopt;
  }
  return group;
}

std::vector<SourceId> StatChartView::ranksOverBands() const {
  const bool groups = std::any_of(lines_.begin(), lines_.end(), [](const auto& line) { return line->entry->role != SeriesRole::Plain; });
  std::vector<SourceId> ranks;
  if (!groups) return ranks;
  for (const auto& line : lines_) {
    const SourceId id = line->entry->source;
    if (line->entry->role == SeriesRole::Plain && isRank(registry_.source(id)) &&
        std::find(ranks.begin(), ranks.end(), id) == ranks.end()) {
      ranks.push_back(id);
    }
  }
  std::sort(ranks.begin(), ranks.end(), [this](SourceId a, SourceId b) {
    const bool flaggedA = flagged_.contains(a);
    return flaggedA != flagged_.contains(b) ? flaggedA : a < b;
  });
  return ranks;
}

QString StatChartView::lineName(const Line& line) const {
  return lineName(line, multiSource(), soleRankGroup().has_value());
}

QString StatChartView::lineName(const Line& line, bool several, bool oneGroup) const {
  QString name = line.entry->aggregation;
  if (line.entry->role == SeriesRole::RankLow) name += tr(" lowest rank");
  if (line.entry->role == SeriesRole::RankHigh) name += tr(" highest rank");
  if (line.onP99) name += tr(" (where ≠ p99)");
  if (!several) return name;
  // One group and its ranks: the group's lines are the chart's own, the ranks are named by rank.
  if (oneGroup && line.entry->role != SeriesRole::Plain) return name;
  const SourceEntry* source = registry_.source(line.entry->source);
  if (oneGroup && isRank(source)) {
    name += tr(" · rank %1").arg(*source->info->rank);
  } else {
    name += QStringLiteral(" · %1").arg(source != nullptr ? source->label : QStringLiteral("?"));
  }
  if (flagged_.contains(line.entry->source)) name += tr(" (flagged)");
  return name;
}

void StatChartView::styleLines() {
  applyRuns();
  const bool several = multiSource();
  // Colour tells sources apart where several share the chart; but a single rank group keeps its
  // aggregations' colours when ranks are drawn over it, so its bands stay told apart, and the
  // ranks take colours none of them has.
  const std::optional<SourceId> oneGroup = soleRankGroup();
  const std::vector<SourceId> ranks = ranksOverBands();
  const auto colourIndex = [&](SourceId id) -> std::optional<unsigned> {
    const SourceEntry* source = registry_.source(id);
    if (!several || source == nullptr || oneGroup == id) return std::nullopt;
    return std::optional<unsigned>(source->id);
  };
  // Several runs: each in its run's colour (RunDisplay), so a run reads alike on every chart.
  const auto runColour = [&](SourceId id) -> std::optional<QColor> {
    const SourceEntry* source = registry_.source(id);
    if (!runs_.several || source == nullptr || !source->info) return std::nullopt;
    return themedLine(runs_.display->colour(QString::fromStdString(source->info->run)));
  };
  for (const auto& line : lines_) {
    const SourceId source = line->entry->source;
    const auto rank = std::find(ranks.begin(), ranks.end(), source);
    const QString name = lineName(*line, several, oneGroup.has_value());
    if (rank != ranks.end()) {
      line->pen = linePenIn(line->entry->aggregation, rankColour(static_cast<unsigned>(rank - ranks.begin())));
      if (flagged_.contains(source)) line->pen.setWidthF(line->pen.widthF() + 0.5);
    } else if (const std::optional<QColor> run = runColour(source)) {
      line->pen = linePenIn(line->entry->aggregation, run);
    } else {
      line->pen = linePen(line->entry->aggregation, colourIndex(source));
    }
    line->raw->setPen(smoothing_ > 0.0 ? rawLinePen(line->pen) : line->pen);
    line->raw->setPointMarkers(line->entry->kind == SeriesKind::EventField);
    line->raw->setName(name);
    line->smooth->setName(name);
    // A rank group's edges are drawn as its band only.
    line->raw->setVisible(isShown(*line) && !isRankEdge(*line));
    line->smooth->setPen(line->pen);
    line->smooth->setVisible(isShown(*line) && smoothing_ > 0.0 && !isRankEdge(*line));
  }
  for (const Band& band : bands_) {
    if (band.area == nullptr) continue;
    band.area->setBrush(band.median != nullptr ? rankBandFill(band.median->pen.color()) : bandFill(colourIndex(band.source)));
    band.area->setVisible(isShown(*band.min) && isShown(*band.max) && band.shaded);
  }
}

// The chart's own lines first, then its rank groups' bands, then the ranks drawn over them.
void StatChartView::updateLegend() {
  std::vector<LegendEntry> entries;
  const std::vector<SourceId> ranks = ranksOverBands();
  const bool several = multiSource();
  const bool oneGroup = soleRankGroup().has_value();
  const auto addLines = [&](bool overBands) {
    for (const auto& line : lines_) {
      if (isRankEdge(*line) || line->offRun) continue;  // drawn as its median's band; or not for the runs
      if ((std::find(ranks.begin(), ranks.end(), line->entry->source) != ranks.end()) != overBands) continue;
      // A line with nothing in view (a max on its p99 throughout, a rank that has not sent this
      // Stat yet) is not listed; one the user hid is, dimmed, to be clicked back.
      const bool drawn = !line->trace.raw.points.isEmpty() || !line->trace.smoothed.points.isEmpty();
      if (!line->hidden && !drawn) continue;
      entries.push_back(LegendEntry{lineName(*line, several, oneGroup), line->pen, QBrush(), line->hidden, static_cast<int64_t>(line->id)});
    }
  };
  addLines(false);
  std::set<SourceId> groups;
  for (const Band& band : bands_) {
    if (band.median == nullptr || band.area == nullptr || band.median->offRun || !groups.insert(band.source).second) continue;
    const std::size_t count = band.median->entry->rankCount;
    QString label = count == 1 ? tr("min–max over 1 rank") : tr("min–max over %1 ranks").arg(count);
    const SourceEntry* source = registry_.source(band.source);
    if (several && !oneGroup && source != nullptr) label += QStringLiteral(" · %1").arg(source->label);
    QColor fill(colours::text());
    fill.setAlpha(90);
    entries.push_back(LegendEntry{label, QPen(Qt::NoPen), QBrush(fill), !band.shaded, -1 - static_cast<int64_t>(band.source)});
  }
  addLines(true);
  legend_->setEntries(std::move(entries));
}

void StatChartView::legendClicked(int64_t key) {
  if (key >= 0) {
    const auto id = static_cast<SeriesId>(key);
    setSeriesVisible(id, !isSeriesVisible(id));
    return;
  }
  const auto group = static_cast<SourceId>(-1 - key);
  bool shaded = true;
  for (const Band& band : bands_) {
    if (band.median != nullptr && band.source == group) shaded = !band.shaded;
  }
  for (Band& band : bands_) {
    if (band.median != nullptr && band.source == group) band.shaded = shaded;
  }
  styleLines();
  updateLegend();
  ++layoutVersion_;
}

void StatChartView::setFlaggedSources(std::set<SourceId> sources) {
  if (sources == flagged_) return;
  flagged_ = std::move(sources);
  refreshSeriesNames();
}

void StatChartView::refreshSeriesNames() {
  styleLines();
  updateLegend();
  ++layoutVersion_;
}

}  // namespace livemon::ui
