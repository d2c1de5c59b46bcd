// StatChartView and the runs: a hidden run's lines leave the chart, and with several runs shown
// each is drawn as one line (the Stat's main aggregation, with its rank band) in the run's colour.
#include <optional>
#include <set>
#include <utility>

#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/runs_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

void StatChartView::setRunDisplay(const RunDisplay* runs) {
  runs_.display = runs;
  styleLines();
  updateLegend();
  ++layoutVersion_;
}

void StatChartView::applyRuns() {
  const RunDisplay* display = runs_.display;
  runs_.version = display != nullptr ? display->version() : 0;
  const auto runOf = [this](const Line& line) -> std::optional<QString> {
    const SourceEntry* source = registry_.source(line.entry->source);
    if (source == nullptr || !source->info) return std::nullopt;
    return QString::fromStdString(source->info->run);
  };
  std::set<QString> shownRuns;
  std::optional<std::pair<int, QString>> main;
  for (const auto& line : lines_) {
    const std::optional<QString> run = runOf(*line);
    line->offRun = display != nullptr && run && !display->isShown(*run);
    if (line->offRun) continue;
    if (run) shownRuns.insert(*run);
    const std::pair<int, QString> candidate{mainAggregationRank(line->entry->aggregation), line->entry->aggregation};
    if (!main || candidate < *main) main = candidate;
  }
  runs_.several = display != nullptr && shownRuns.size() > 1;
  if (!runs_.several) return;
  for (const auto& line : lines_) {
    // A rank group's edges share their median's aggregation: its band stays.
    if (!line->offRun && line->entry->aggregation != main->second) line->offRun = true;
  }
}

}  // namespace livemon::ui
