// StatChartView's hover text: the marks under the cursor (alerts, NaN regions) and every line's
// value, each source's taken from one window so that a mean is never read beside another
// window's min.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <QGraphicsItem>
#include <QStringList>
#include <QtCharts/QLineSeries>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/model/line_trace.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_tooltip.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

namespace {

constexpr int kMaxMarksShown = 4;

// The tooltips of the marks drawn on the chart under a viewport position (alert markers, silence
// bands, NaN regions), topmost first, as rich text; the series and axes have none.
QString marksAt(const QGraphicsView& view, QPoint viewportPos) {
  QStringList texts;
  int more = 0;
  for (const QGraphicsItem* item : view.items(viewportPos)) {
    const QString text = item->toolTip();
    if (text.isEmpty()) continue;
    const QString html = text.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br/>"));
    if (texts.contains(html)) continue;
    if (texts.size() < kMaxMarksShown) {
      texts << html;
    } else {
      ++more;
    }
  }
  if (more > 0) texts << QObject::tr("… and %1 more here").arg(more);
  return texts.join(QStringLiteral("<hr/>"));
}

}  // namespace

QString StatChartView::tooltipAt(QPoint viewportPos) const {
  const std::optional<QPointF> value = valueAt(viewportPos);
  if (!value) return {};
  const QString marks = marksAt(*this, viewportPos);
  const double x = value->x();
  const double span = shownX_.max - shownX_.min;
  const double tolerance = span * 0.05;
  // Lines of one source hold points of the same windows; decimated, within one pixel column.
  const double sameWindow = lastKey_ && lastKey_->columns > 0 ? span / lastKey_->columns : tolerance * 0.1;
  const auto pointsOf = [this](const Line& line) -> const QList<QPointF>& {
    return isRankEdge(line) ? line.trace.raw.points : shownPoints(line);  // an edge is drawn raw (its band)
  };
  // Each source's window: its point nearest the cursor, on whichever of its lines.
  std::map<SourceId, double> anchors;
  for (const auto& line : lines_) {
    if (!isShown(*line)) continue;
    const std::optional<QPointF> near = nearestPoint(pointsOf(*line), x, tolerance);
    if (!near) continue;
    const auto [anchor, added] = anchors.try_emplace(line->entry->source, near->x());
    if (!added && std::abs(near->x() - x) < std::abs(anchor->second - x)) anchor->second = near->x();
  }
  std::vector<TooltipRow> rows;
  for (const auto& line : lines_) {
    if (!isShown(*line)) continue;
    const auto found = anchors.find(line->entry->source);
    const double anchor = found != anchors.end() ? found->second : x;
    std::optional<QPointF> at = nearestPoint(pointsOf(*line), anchor, sameWindow);
    // A max left out where it equals its p99 has the p99's value there.
    const Line* p99 = p99Under(*line);
    if (p99 != nullptr) {
      const std::optional<QPointF> under = nearestPoint(shownPoints(*p99), anchor, sameWindow);
      if (under && (!at || std::abs(under->x() - anchor) < std::abs(at->x() - anchor))) at = under;
    }
    if (!at) {
      // No value in that window: it may have been NaN there, which the line cannot draw.
      const PlotTransform transform = registry_.transform(*line->entry, mode_);
      for (const NonFiniteStretch& run :
           nonFiniteStretches(line->entry->store, mode_, transform, shownWindow_, std::numeric_limits<double>::infinity())) {
        if (run.from <= anchor && anchor <= run.to) {
          const double shown = run.nan ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
          rows.push_back(TooltipRow{line->pen.color().name(), lineName(*line), shown, std::nullopt});
          break;
        }
      }
      continue;
    }
    TooltipRow row{line->pen.color().name(), lineName(*line), at->y(), std::nullopt};
    const bool edge = isRankEdge(*line);
    if (edge && mode_ != TimeAxisMode::Step) {
      // Back from chart units to the store's ms, to find which rank was at the edge there.
      const PlotTransform transform = registry_.transform(*line->entry, mode_);
      if (const auto rank = line->entry->rankNear(at->x() / transform.scale + transform.offset)) {
        row.name += QStringLiteral(": r%1").arg(*rank);
      }
    }
    if (!edge && smoothing_ > 0.0) {
      std::optional<QPointF> raw = nearestPoint(line->trace.raw.points, at->x(), 0.0);
      if (!raw && p99 != nullptr) raw = nearestPoint(p99->trace.raw.points, at->x(), 0.0);
      if (raw) row.raw = raw->y();
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return marks;
  std::vector<std::pair<SourceId, QColor>> sources;
  for (const auto& line : lines_) {
    if (!isShown(*line)) continue;
    const SourceId source = line->entry->source;
    if (std::none_of(sources.begin(), sources.end(), [source](const auto& s) { return s.first == source; })) {
      // A run's colour where several runs are shown, as its lines are drawn.
      sources.emplace_back(source, runs_.several ? line->pen.color() : sourceColour(source));
    }
  }
  // With one source the header gives the window's x, where its values are from.
  const double shownX = anchors.size() == 1 ? anchors.begin()->second : x;
  const QString values = tooltipHtml(statName_, formatX(shownX, mode_), rows, sourcesHtml(registry_, sources));
  return marks.isEmpty() ? values : marks + QStringLiteral("<hr/>") + values;
}

}  // namespace livemon::ui
