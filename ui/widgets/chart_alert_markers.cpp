#include <livemon/ui/widgets/chart_alert_markers.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include <QBrush>
#include <QColor>
#include <QGraphicsPolygonItem>
#include <QGraphicsRectItem>
#include <QPen>
#include <QPolygonF>
#include <QStringList>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/alert_list_model.h>
#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

namespace {

constexpr double kMarkerHalfWidth = 5.0;
constexpr double kMarkerHeight = 9.0;
constexpr double kMinSpanWidth = 2.0;  // a loss, or a silence shorter than a pixel, stays visible

// "Alert from train: loss.mean is NaN (rule: nan)".
QString tooltipFor(const AlertEntry& alert) {
  QString text = alert.source.isEmpty() ? QObject::tr("Alert") : QObject::tr("Alert from %1").arg(alert.source);
  if (!alert.message.isEmpty()) text += QStringLiteral(": ") + alert.message;
  if (!alert.rule.isEmpty()) text += QObject::tr(" (rule: %1)").arg(alert.rule);
  return text;
}

// A value alert's line under its text: "value 8 · at 12:00:04.000 · step 40".
QString valueDetails(const AlertEntry& alert) {
  QString text = QObject::tr("value %1 · at %2").arg(AlertListModel::formatValue(alert.value),
                                                     formatX(alert.timeMs, TimeAxisMode::WallClock));
  if (alert.step) text += QObject::tr(" · step %1").arg(*alert.step);
  return text;
}

// The charts a value alert's key may be on, with the aggregation each reads from it: an event
// field's chart is its key; a Stat line's, the key up to its last dot (the rest names the
// aggregation).
std::vector<std::pair<QString, QString>> chartNames(const QString& key) {
  const int dot = key.lastIndexOf(u'.');
  std::vector<std::pair<QString, QString>> names{{key, QString()}};
  if (dot > 0) names.emplace_back(key.left(dot), key.mid(dot + 1));
  return names;
}

bool isSourceAlert(const AlertEntry& alert) {
  // Silence names no value, and a loss names a topic or the publisher's queue, never a chart.
  return alert.kind == QLatin1String("silent") || alert.kind == QLatin1String("loss");
}

// Where a value stands against a line's y axis.
enum class Placement { Value, Above, Below, NotANumber };

Placement placementOf(double value, QLineSeries& line) {
  if (std::isnan(value)) return Placement::NotANumber;
  for (const QAbstractAxis* axis : line.attachedAxes()) {
    if (axis->orientation() != Qt::Vertical) continue;
    double min = 0.0;
    double max = 0.0;
    if (const auto* linear = qobject_cast<const QValueAxis*>(axis)) {
      min = linear->min();
      max = linear->max();
    } else if (const auto* log = qobject_cast<const QLogValueAxis*>(axis)) {
      min = log->min();
      max = log->max();
    } else {
      continue;
    }
    if (value > max) return Placement::Above;
    if (value < min) return Placement::Below;
    return Placement::Value;
  }
  return Placement::NotANumber;  // no axis to place it on: as for NaN, the top edge
}

// The triangle for a placement, its tip at (0, 0) where it points at the value or off the plot.
QPolygonF markerShape(Placement placement) {
  const double w = kMarkerHalfWidth;
  const double h = kMarkerHeight;
  switch (placement) {
    case Placement::Above:
      return QPolygonF{QPointF(-w, h), QPointF(w, h), QPointF(0.0, 0.0)};
    case Placement::NotANumber:
      return QPolygonF{QPointF(-w, 0.0), QPointF(w, 0.0), QPointF(0.0, h)};
    case Placement::Value:
    case Placement::Below:
      break;
  }
  return QPolygonF{QPointF(-w, -h), QPointF(w, -h), QPointF(0.0, 0.0)};
}

QString placementNote(Placement placement) {
  switch (placement) {
    case Placement::Above:
      return QObject::tr("above the axis: shown at its top edge");
    case Placement::Below:
      return QObject::tr("below the axis: shown at its bottom edge");
    case Placement::NotANumber:
      return QObject::tr("not a number: shown at the top edge");
    case Placement::Value:
      break;
  }
  return {};
}

}  // namespace

ChartAlertMarkers::ChartAlertMarkers(Dashboard& dashboard, ChartGrid& grid, QObject* parent)
    : QObject(parent), dashboard_(dashboard), grid_(grid) {
  connect(&grid_, &ChartGrid::chartCreated, this, &ChartAlertMarkers::watch);
  connect(&dashboard_.alertCentre(), &AlertCentre::alertRaised, this, &ChartAlertMarkers::alertRaised);
}

void ChartAlertMarkers::alertRaised(const AlertEntry& alert) {
  if (isSourceAlert(alert)) {
    sourceAlert(alert);
  } else if (!alert.key.isEmpty()) {
    valueAlert(alert);
  }
}

namespace {

std::optional<double> stepOf(const AlertEntry& alert) {
  if (!alert.step) return std::nullopt;
  return static_cast<double>(*alert.step);
}

}  // namespace

StatChartView* ChartAlertMarkers::chartOf(const AlertEntry& alert) const {
  if (isSourceAlert(alert) || alert.key.isEmpty()) return nullptr;
  for (const auto& [name, aggregation] : chartNames(alert.key)) {
    if (StatChartView* chart = grid_.chart(name)) return chart;
  }
  return nullptr;
}

void ChartAlertMarkers::valueAlert(const AlertEntry& alert) {
  // Whichever is not a chart yet is kept under both names, as only one of them can ever be one.
  std::vector<std::pair<QString, QString>> names = chartNames(alert.key);
  const auto charted =
      std::find_if(names.begin(), names.end(), [this](const auto& name) { return grid_.chart(name.first) != nullptr; });
  if (charted != names.end()) names = {*charted};
  for (const auto& [name, aggregation] : names) {
    std::deque<Mark>& marks = valueMarks_[name];
    marks.push_back(Mark{alert.timeMs, alert.value, stepOf(alert), alert.sourceId, aggregation, 0.0, false,
                         tooltipFor(alert) + QLatin1Char('\n') + valueDetails(alert)});
    if (marks.size() > kMaxMarkersPerChart) marks.pop_front();
    if (StatChartView* chart = grid_.chart(name)) place(chart);
  }
}

void ChartAlertMarkers::sourceAlert(const AlertEntry& alert) {
  if (!alert.sourceId) return;  // a source the dashboard refused has no line anywhere
  const bool silence = alert.kind == QLatin1String("silent");
  // For silence the value is the seconds quiet; the band ends when the alert was raised.
  const double quietMs = silence && alert.value > 0.0 ? alert.value * 1000.0 : 0.0;
  sourceMarks_.push_back(
      Mark{alert.timeMs, alert.value, stepOf(alert), alert.sourceId, QString(), quietMs, silence, tooltipFor(alert)});
  if (sourceMarks_.size() > kMaxSourceAlerts) sourceMarks_.pop_front();
  for (StatChartView* chart : grid_.charts()) place(chart);
}

void ChartAlertMarkers::watch(StatChartView* chart) {
  connect(chart, &StatChartView::rendered, this, [this, chart] { place(chart); });
  connect(chart, &QObject::destroyed, this, [this, chart] { items_.erase(chart); });
}

void ChartAlertMarkers::place(StatChartView* chart) {
  const auto marks = valueMarks_.find(chart->statName());
  if (marks == valueMarks_.end() && sourceMarks_.empty() && !items_.contains(chart)) return;
  ChartItems& items = items_[chart];
  if (marks != valueMarks_.end()) placeValueMarks(chart, marks->second, items);
  placeSourceMarks(chart, items);
}

std::optional<SeriesId> ChartAlertMarkers::lineFor(const StatChartView& chart, const Mark& mark) const {
  const std::vector<SeriesId> ids = chart.seriesIds();
  if (!mark.source) return ids.empty() ? std::nullopt : std::optional<SeriesId>(ids.front());
  std::optional<SeriesId> any;
  for (SeriesId id : ids) {
    const SeriesEntry* entry = dashboard_.registry().series(id);
    if (entry == nullptr || entry->source != *mark.source || chart.line(id) == nullptr) continue;
    if (entry->aggregation == mark.aggregation) return id;
    if (!any) any = id;
  }
  return any;
}

void ChartAlertMarkers::placeValueMarks(StatChartView* chart, const std::deque<Mark>& marks, ChartItems& items) {
  QChart* plot = chart->chart();
  while (items.markers.size() < marks.size()) {
    auto* item = new QGraphicsPolygonItem(plot);
    item->setZValue(10.0);
    items.markers.push_back(item);
  }
  const QRectF area = plot->plotArea();
  const TimeAxisMode mode = grid_.timeView().mode();
  std::size_t i = 0;
  for (const Mark& mark : marks) {
    QGraphicsPolygonItem* item = items.markers[i++];
    const std::optional<SeriesId> id = lineFor(*chart, mark);
    const SeriesEntry* entry = id ? dashboard_.registry().series(*id) : nullptr;
    QLineSeries* line = id ? chart->line(*id) : nullptr;
    if (entry == nullptr || line == nullptr || (mode == TimeAxisMode::Step && !mark.step)) {
      item->hide();
      continue;
    }
    // The source's colour tells the runs apart; the red edge says it is an alert.
    QColor fill = mark.source ? line->pen().color() : QColor(colours::bad());
    fill.setAlpha(255);
    item->setBrush(fill);
    item->setPen(mark.source ? QPen(QColor(colours::bad()), 1.5) : QPen(Qt::NoPen));
    const PlotTransform transform = dashboard_.registry().transform(*entry, mode);
    const double x = mode == TimeAxisMode::Step ? *mark.step : transform.apply(mark.timeMs);
    const Placement placement = placementOf(mark.value, *line);
    const QString note = placementNote(placement);
    item->setToolTip(note.isEmpty() ? mark.tooltip : mark.tooltip + QStringLiteral(" (") + note + QLatin1Char(')'));
    item->setPolygon(markerShape(placement));
    // y is read only for a value on the axis (1 elsewhere: a log axis has no 0).
    const QPointF at = plot->mapToPosition(QPointF(x, placement == Placement::Value ? mark.value : 1.0), line);
    const double y = placement == Placement::Value ? at.y() : placement == Placement::Below ? area.bottom() : area.top();
    item->setPos(at.x(), y);
    item->setVisible(at.x() >= area.left() && at.x() <= area.right());
  }
}

void ChartAlertMarkers::placeSourceMarks(StatChartView* chart, ChartItems& items) {
  // This chart's sources, each with a line to map its times (relative time differs per source).
  std::map<SourceId, SeriesId> sources;
  for (SeriesId id : chart->seriesIds()) {
    const SeriesEntry* entry = dashboard_.registry().series(id);
    if (entry != nullptr && chart->line(id) != nullptr) sources.emplace(entry->source, id);
  }
  std::vector<const Mark*> shown;
  for (auto mark = sourceMarks_.rbegin(); mark != sourceMarks_.rend() && shown.size() < kMaxMarkersPerChart; ++mark) {
    if (sources.contains(*mark->source)) shown.push_back(&*mark);
  }
  QChart* plot = chart->chart();
  while (items.spans.size() < shown.size()) {
    auto* item = new QGraphicsRectItem(plot);
    item->setPen(QPen(Qt::NoPen));
    item->setZValue(9.0);
    items.spans.push_back(item);
  }
  const QRectF area = plot->plotArea();
  const TimeAxisMode mode = grid_.timeView().mode();
  for (std::size_t i = 0; i < items.spans.size(); ++i) {
    QGraphicsRectItem* item = items.spans[i];
    if (i >= shown.size()) {
      item->hide();
      continue;
    }
    const Mark& mark = *shown[i];
    if (mode == TimeAxisMode::Step && !mark.step) {
      item->hide();
      continue;
    }
    const SeriesId id = sources.at(*mark.source);
    const PlotTransform transform = dashboard_.registry().transform(*dashboard_.registry().series(id), mode);
    QLineSeries* line = chart->line(id);
    // On the Step axis a silence has no width in steps: a thin line at the step it was raised.
    const double endX = mode == TimeAxisMode::Step ? *mark.step : transform.apply(mark.timeMs);
    const double startX = mode == TimeAxisMode::Step ? endX : transform.apply(mark.timeMs - mark.quietMs);
    const double end = plot->mapToPosition(QPointF(endX, 0.0), line).x();
    const double start = plot->mapToPosition(QPointF(startX, 0.0), line).x();
    const double from = std::min(start, end - kMinSpanWidth);
    const double left = std::max(from, area.left());
    const double right = std::min(end, area.right());
    QColor colour(colours::warn());
    colour.setAlpha(mark.silence ? 60 : 220);
    item->setBrush(colour);
    item->setToolTip(mark.tooltip);
    item->setRect(QRectF(left, area.top(), std::max(right - left, kMinSpanWidth), area.height()));
    item->setVisible(end >= area.left() && from <= area.right());
  }
}

std::vector<const QGraphicsPolygonItem*> ChartAlertMarkers::visibleMarkers(const StatChartView& chart) const {
  std::vector<const QGraphicsPolygonItem*> shown;
  if (const auto found = items_.find(&chart); found != items_.end()) {
    for (const QGraphicsPolygonItem* item : found->second.markers) {
      if (item->isVisible()) shown.push_back(item);
    }
  }
  return shown;
}

std::vector<const QGraphicsRectItem*> ChartAlertMarkers::visibleSourceMarks(const StatChartView& chart) const {
  std::vector<const QGraphicsRectItem*> shown;
  if (const auto found = items_.find(&chart); found != items_.end()) {
    for (const QGraphicsRectItem* item : found->second.spans) {
      if (item->isVisible()) shown.push_back(item);
    }
  }
  return shown;
}

}  // namespace livemon::ui
