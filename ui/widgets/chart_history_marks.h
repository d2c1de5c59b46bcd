#pragma once

#include <map>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>

#include <livemon/ui/data/history_note.h>
#include <livemon/ui/data/ingest_batch.h>

class QGraphicsLineItem;
class QGraphicsSimpleTextItem;

namespace livemon::ui {

class ChartGrid;
class Dashboard;
class StatChartView;

// GUI thread only.
// Where the received history begins, drawn on the charts. When an endpoint's history was cut (its
// source keeps only the newest part of the run: HistoryNote::marksBeginning), every chart with a
// line of a source first heard on that endpoint gets a dashed vertical line at the history's
// oldest event, labelled "history begins", with a tooltip saying why: left of it the run was not
// received, rather than quiet. Placed on every redraw (StatChartView::rendered) for the chart's
// axes: at that source's time (relative time differs per source), and on the Step axis at the
// lowest step the history's events stated (a history without steps is not marked there); hidden
// outside the plot area. A history received whole marks nothing: the lines start where the run did.
//
// Bounded: a mark per endpoint per chart, and the dashboard keeps a note per endpoint.
class ChartHistoryMarks : public QObject {
  Q_OBJECT

 public:
  // `dashboard` and `grid` must outlive it.
  ChartHistoryMarks(Dashboard& dashboard, ChartGrid& grid, QObject* parent = nullptr);

  // The marks' lines on `chart` that are shown now.
  std::vector<const QGraphicsLineItem*> visibleMarks(const StatChartView& chart) const;
  // The label beside a mark's line ("history begins", with its tooltip); nullptr for another item.
  const QGraphicsSimpleTextItem* labelOf(const QGraphicsLineItem* line) const;

 private:
  struct Mark {
    QGraphicsLineItem* line = nullptr;  // both owned by the chart's QChart
    QGraphicsSimpleTextItem* label = nullptr;
  };

  void watch(StatChartView* chart);
  void place(StatChartView* chart);
  // The first line on `chart` of a source first heard on `endpoint`.
  std::optional<SeriesId> lineOf(const StatChartView& chart, const QString& endpoint) const;

  Dashboard& dashboard_;
  ChartGrid& grid_;
  // By chart, a mark per endpoint whose history begins after the run did.
  std::map<const StatChartView*, std::map<QString, Mark>> marks_;
};

}  // namespace livemon::ui
