#include <livemon/ui/widgets/chart_alert_markers.h>

#include <QBrush>
#include <QColor>
#include <QGraphicsPolygonItem>
#include <QPen>
#include <QPolygonF>
#include <QStringList>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

namespace {

constexpr double kMarkerHalfWidth = 5.0;
constexpr double kMarkerHeight = 9.0;

}  // namespace

ChartAlertMarkers::ChartAlertMarkers(Dashboard& dashboard, ChartGrid& grid, QObject* parent)
    : QObject(parent), dashboard_(dashboard), grid_(grid) {
  connect(&grid_, &ChartGrid::chartCreated, this, &ChartAlertMarkers::watch);
  connect(&dashboard_, &Dashboard::alertRaised, this, &ChartAlertMarkers::alertRaised);
}

void ChartAlertMarkers::alertRaised(const AlertEntry& alert) {
  if (alert.key.isEmpty()) return;  // silence and publisher drops name no value
  // An event field's chart is its key; a Stat line's, the key up to its last dot. Whichever is
  // not a chart yet is kept under both names, as only one of them can ever be one.
  const int dot = alert.key.lastIndexOf(u'.');
  QStringList names{alert.key};
  if (dot > 0) names << alert.key.left(dot);
  for (const QString& name : names) {
    if (grid_.chart(name) != nullptr) names = QStringList{name};
  }
  for (const QString& name : names) {
    std::deque<Mark>& times = times_[name];
    times.push_back(Mark{alert.timeMs, alert.step ? std::optional<double>(static_cast<double>(*alert.step)) : std::nullopt});
    if (times.size() > kMaxMarkersPerChart) times.pop_front();
    if (StatChartView* chart = grid_.chart(name)) place(chart);
  }
}

void ChartAlertMarkers::watch(StatChartView* chart) {
  connect(chart, &StatChartView::rendered, this, [this, chart] { place(chart); });
  connect(chart, &QObject::destroyed, this, [this, chart] { items_.erase(chart); });
}

void ChartAlertMarkers::place(StatChartView* chart) {
  const auto times = times_.find(chart->statName());
  if (times == times_.end()) return;
  std::vector<QGraphicsPolygonItem*>& items = items_[chart];
  QChart* plot = chart->chart();
  const std::vector<SeriesId> ids = chart->seriesIds();
  const SeriesEntry* entry = ids.empty() ? nullptr : dashboard_.registry().series(ids.front());
  QLineSeries* line = ids.empty() ? nullptr : chart->line(ids.front());
  while (items.size() < times->second.size()) {
    auto* item = new QGraphicsPolygonItem(plot);
    item->setPolygon(QPolygonF{QPointF(-kMarkerHalfWidth, 0.0), QPointF(kMarkerHalfWidth, 0.0), QPointF(0.0, kMarkerHeight)});
    item->setBrush(QColor(colours::kBad));
    item->setPen(QPen(Qt::NoPen));
    item->setZValue(10.0);
    item->setToolTip(tr("Alert"));
    items.push_back(item);
  }
  const QRectF area = plot->plotArea();
  const TimeAxisMode mode = grid_.timeView().mode();
  std::size_t i = 0;
  for (const Mark& mark : times->second) {
    QGraphicsPolygonItem* item = items[i++];
    // On the Step axis an alert whose event stated no step has no place.
    if (entry == nullptr || line == nullptr || (mode == TimeAxisMode::Step && !mark.step)) {
      item->hide();
      continue;
    }
    const PlotTransform transform = dashboard_.registry().transform(*entry, mode);
    const double x = mode == TimeAxisMode::Step ? *mark.step : transform.apply(mark.timeMs);
    const QPointF at = plot->mapToPosition(QPointF(x, 0.0), line);
    item->setPos(at.x(), area.top());
    item->setVisible(at.x() >= area.left() && at.x() <= area.right());
  }
}

std::vector<const QGraphicsPolygonItem*> ChartAlertMarkers::visibleMarkers(const StatChartView& chart) const {
  std::vector<const QGraphicsPolygonItem*> shown;
  if (const auto found = items_.find(&chart); found != items_.end()) {
    for (const QGraphicsPolygonItem* item : found->second) {
      if (item->isVisible()) shown.push_back(item);
    }
  }
  return shown;
}

}  // namespace livemon::ui
