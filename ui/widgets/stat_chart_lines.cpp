// StatChartView's lines as others see them: a series' line, smoothed line, band and shown points,
// showing and hiding a line (its band and legend entry with it), and the lines' values for the
// CSV export.
#include <algorithm>

#include <QFontMetrics>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_band.h>
#include <livemon/ui/widgets/chart_step_note.h>
#include <livemon/ui/widgets/chart_trace.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

std::vector<SeriesId> StatChartView::seriesIds() const {
  std::vector<SeriesId> ids;
  for (const auto& line : lines_) ids.push_back(line->id);
  for (SeriesId id : pendingSeries_) ids.push_back(id);
  return ids;
}

const StatChartView::Line* StatChartView::findLine(SeriesId id) const {
  const auto found = std::find_if(lines_.begin(), lines_.end(), [id](const auto& line) { return line->id == id; });
  return found != lines_.end() ? found->get() : nullptr;
}

QLineSeries* StatChartView::line(SeriesId id) const { return findLine(id) ? findLine(id)->raw->head() : nullptr; }
QLineSeries* StatChartView::smoothedLine(SeriesId id) const { return findLine(id) ? findLine(id)->smooth->head() : nullptr; }
const ChartTrace* StatChartView::trace(SeriesId id) const { return findLine(id) ? findLine(id)->raw.get() : nullptr; }
const ChartTrace* StatChartView::smoothedTrace(SeriesId id) const {
  return findLine(id) ? findLine(id)->smooth.get() : nullptr;
}

const QList<QPointF>& StatChartView::shownPoints(const Line& line) const {
  return smoothing_ > 0.0 ? line.trace.smoothed.points : line.trace.raw.points;
}

QLineSeries* StatChartView::line(const QString& aggregation, SourceId source) const {
  for (const auto& line : lines_) {
    if (line->entry->aggregation == aggregation && line->entry->source == source) return line->series();
  }
  return nullptr;
}

const ChartBand* StatChartView::bandStretches(SourceId source) const {
  for (const Band& band : bands_) {
    if (band.source == source) return band.area.get();
  }
  return nullptr;
}

QString StatChartView::stepNote() const { return stepNote_->text(); }

QAreaSeries* StatChartView::band(SourceId source) const {
  for (const Band& band : bands_) {
    if (band.source == source) return band.area != nullptr ? band.area->head() : nullptr;
  }
  return nullptr;
}

XRange StatChartView::xRange() const { return shownX_; }

XRange StatChartView::yRange() const { return shownY_; }

void StatChartView::fitTitle(int width) {
  const QString title = QFontMetrics(chart()->titleFont()).elidedText(statName_, Qt::ElideMiddle, std::max(0, width));
  chart()->setTitle(title);
  chart()->setToolTip(title != statName_ ? statName_ : QString());
}

bool StatChartView::isEventChart() const {
  return !lines_.empty() &&
         std::all_of(lines_.begin(), lines_.end(), [](const auto& line) { return line->entry->kind == SeriesKind::EventField; });
}

double StatChartView::effectiveSmoothing() const {
  return options_ != nullptr && !isEventChart() ? options_->smoothing() : 0.0;
}

bool StatChartView::isSeriesVisible(SeriesId id) const { return findLine(id) != nullptr && !findLine(id)->hidden; }

void StatChartView::setSeriesVisible(SeriesId id, bool visible) {
  for (const auto& line : lines_) {
    // A rank group's edges come and go with their median line.
    const bool edgeOf = isRankEdge(*line) && line->entry->median == id;
    if ((line->id != id && !edgeOf) || line->hidden == !visible) continue;
    line->hidden = !visible;
    line->raw->setVisible(isShown(*line) && !edgeOf);
    line->smooth->setVisible(isShown(*line) && smoothing_ > 0.0 && !edgeOf);
    for (const Band& band : bands_) {
      if (band.area != nullptr && (band.min == line.get() || band.max == line.get())) {
        band.area->setVisible(isShown(*band.min) && isShown(*band.max) && band.shaded);
      }
    }
    // Its legend entry stays, dimmed, so it can be clicked back.
    updateLegend();
    ++layoutVersion_;
  }
}

std::vector<CsvColumn> StatChartView::csvColumns() const {
  std::vector<CsvColumn> columns;
  for (const auto& line : lines_) {
    if (isShown(*line)) {
      columns.push_back(
          CsvColumn{lineName(*line), &line->entry->store, registry_.transform(*line->entry, mode_), shownWindow_});
    }
  }
  return columns;
}

}  // namespace livemon::ui
