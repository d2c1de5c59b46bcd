#pragma once

#include <cstddef>
#include <vector>

#include <QString>
#include <QStringList>

#include <livemon/ui/model/line_trace.h>
#include <livemon/ui/model/time_view.h>

class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
QT_BEGIN_NAMESPACE
class QChart;
class QLineSeries;
QT_END_NAMESPACE

namespace livemon::ui {

// GUI thread only, as the chart it belongs to.
// Where a chart's lines are not numbers: a line stops at a NaN, and without a mark a reader takes
// it for a stall or the end of the run. A shaded band labelled "NaN" ("Inf" for infinities only)
// covers the plot from where a shown line became NaN to where it became finite again, or to its
// newest value while it still is; its tooltip names the lines and the span. Overlapping runs of
// several lines make one band. Bounded: the newest kMaxRegions bands.
class ChartNanRegions {
 public:
  static constexpr std::size_t kMaxRegions = 16;

  // Thread-safety: a plain value type.
  // One shown line's runs of non-finite values, and its name as in the legend.
  struct LineRuns {
    QString name;
    std::vector<NonFiniteStretch> runs;
  };

  explicit ChartNanRegions(QChart* chart);

  // The runs to mark, in the units of the `mode` axis (see nonFiniteStretches).
  void setRuns(const std::vector<LineRuns>& lines, TimeAxisMode mode);
  // Places the bands on the plot as laid out now, mapping x through `reference` (a series on the
  // chart's x axis; nullptr hides them all).
  void place(QLineSeries* reference);
  // The bands shown now (inside the plot), and their labels, in x order.
  std::vector<const QGraphicsRectItem*> visibleRegions() const;
  std::vector<const QGraphicsSimpleTextItem*> visibleLabels() const;

 private:
  // Thread-safety: a plain value type.
  struct Region {
    double from = 0.0;
    double to = 0.0;
    bool nan = false;
    bool open = false;
    QStringList lines;
  };
  QString tooltipFor(const Region& region) const;

  QChart* chart_;
  TimeAxisMode mode_ = TimeAxisMode::WallClock;
  std::vector<Region> regions_;
  std::vector<QGraphicsRectItem*> bands_;          // owned by the chart
  std::vector<QGraphicsSimpleTextItem*> labels_;   // owned by the chart
};

}  // namespace livemon::ui
