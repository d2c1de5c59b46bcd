#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>

#include <livemon/ui/data/ingest_batch.h>

class QGraphicsPolygonItem;
class QGraphicsRectItem;

namespace livemon::ui {

class ChartGrid;
class Dashboard;
class StatChartView;
struct AlertEntry;

// GUI thread only.
// Alerts drawn on the charts, following the chart's axes on every redraw
// (StatChartView::rendered); marks outside the visible range are hidden.
//
// An alert about a value (nan, threshold) puts a triangle on the chart that shows its key
// ("train.loss.mean" marks chart "train.loss"; an event's field "eval.accuracy" marks that chart),
// at the alert's time and value on the line of the alert's source (its tip on the value), filled
// in that line's colour and edged red: with two runs on one chart, run A's NaN marks only run A's
// line, where run A's time axis puts it (relative time differs per run). A value the axis cannot
// show stands on an edge: above its range (or +Inf) a triangle pointing up at the top edge, below
// it (or -Inf, or <= 0 on a log axis) one pointing down at the bottom edge, NaN one hanging from
// the top edge; the tooltip (the alert's text, value, time and step) says where and why. An alert
// whose source the dashboard could not name is placed on the chart's first line.
//
// An alert about a whole source (silent, loss) marks every chart that has a line of that source:
// silence as a band over the quiet time ending at the alert, loss as a thin line at its time, both
// with a tooltip naming the rule.
//
// On the Step axis a mark stands at the step of the alert's event, and is left out when it stated
// none.
//
// Bounded: the newest kMaxMarkersPerChart value alerts per chart, the newest kMaxSourceAlerts
// source alerts, and at most kMaxMarkersPerChart of those drawn on one chart.
class ChartAlertMarkers : public QObject {
  Q_OBJECT

 public:
  static constexpr std::size_t kMaxMarkersPerChart = 200;
  static constexpr std::size_t kMaxSourceAlerts = 500;

  // `dashboard` and `grid` must outlive it.
  ChartAlertMarkers(Dashboard& dashboard, ChartGrid& grid, QObject* parent = nullptr);

  // The chart of a value alert's key; nullptr for an alert about a whole source, or a key with no
  // chart.
  StatChartView* chartOf(const AlertEntry& alert) const;
  // The value alerts' triangles on `chart` that are shown now (inside its plot area).
  std::vector<const QGraphicsPolygonItem*> visibleMarkers(const StatChartView& chart) const;
  // The silence bands and loss lines on `chart` that are shown now.
  std::vector<const QGraphicsRectItem*> visibleSourceMarks(const StatChartView& chart) const;

 private:
  struct Mark {
    double timeMs = 0.0;
    double value = 0.0;  // a value alert's value
    std::optional<double> step;  // the step of the alert's event, for the Step axis
    std::optional<SourceId> source;
    QString aggregation;  // the line a value alert is about, when its key names one
    double quietMs = 0.0;  // silence: how long the source had been quiet
    bool silence = false;
    QString tooltip;
  };
  struct ChartItems {
    std::vector<QGraphicsPolygonItem*> markers;  // owned by the chart's QChart
    std::vector<QGraphicsRectItem*> spans;
  };

  void alertRaised(const AlertEntry& alert);
  void valueAlert(const AlertEntry& alert);
  void sourceAlert(const AlertEntry& alert);
  void watch(StatChartView* chart);
  // Places the chart's marks for its current axes.
  void place(StatChartView* chart);
  void placeValueMarks(StatChartView* chart, const std::deque<Mark>& marks, ChartItems& items);
  void placeSourceMarks(StatChartView* chart, ChartItems& items);
  // The line of the chart a mark belongs to: its source's (of its aggregation when it names one),
  // or the chart's first for a mark without a source; none when its source has no line here.
  std::optional<SeriesId> lineFor(const StatChartView& chart, const Mark& mark) const;

  Dashboard& dashboard_;
  ChartGrid& grid_;
  // Value alerts by chart name, oldest first.
  std::map<QString, std::deque<Mark>> valueMarks_;
  // Silence and loss alerts, oldest first.
  std::deque<Mark> sourceMarks_;
  std::map<const StatChartView*, ChartItems> items_;
};

}  // namespace livemon::ui
