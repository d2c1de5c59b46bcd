#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>

class QGraphicsPolygonItem;

namespace livemon::ui {

class ChartGrid;
class Dashboard;
class StatChartView;
struct AlertEntry;

// Thread-compatible: a QObject of the GUI thread.
// A red triangle on a chart's top edge at the time of each alert about one of its keys (a nan or
// threshold alert on "train.loss.mean" marks chart "train.loss"; one on an event's field
// "eval.accuracy" marks that chart). Markers follow the chart's axes on every redraw
// (StatChartView::rendered); those outside the visible range are hidden. On the Step axis a marker
// stands at the step of the alert's event, and is left out when it stated none. The newest
// kMaxMarkersPerChart alerts per chart are kept.
class ChartAlertMarkers : public QObject {
  Q_OBJECT

 public:
  static constexpr std::size_t kMaxMarkersPerChart = 200;

  // `dashboard` and `grid` must outlive it.
  ChartAlertMarkers(Dashboard& dashboard, ChartGrid& grid, QObject* parent = nullptr);

  // The markers on `chart` that are shown now (inside its plot area).
  std::vector<const QGraphicsPolygonItem*> visibleMarkers(const StatChartView& chart) const;

 private:
  void alertRaised(const AlertEntry& alert);
  void watch(StatChartView* chart);
  // Places the chart's markers for its current axes.
  void place(StatChartView* chart);

  Dashboard& dashboard_;
  ChartGrid& grid_;
  // Where an alert happened: its time (ms since the Unix epoch) and its event's step, if any.
  struct Mark {
    double timeMs = 0.0;
    std::optional<double> step;
  };
  // Alerts by chart name, oldest first.
  std::map<QString, std::deque<Mark>> times_;
  // The items drawn on each chart (owned by its QChart).
  std::map<const StatChartView*, std::vector<QGraphicsPolygonItem*>> items_;
};

}  // namespace livemon::ui
