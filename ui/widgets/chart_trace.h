#pragma once

#include <vector>

#include <QList>
#include <QPen>
#include <QPointF>
#include <QString>

QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QChart;
class QLineSeries;
QT_END_NAMESPACE

namespace livemon::ui {

// GUI thread only, as the chart it draws on.
// One drawn line that breaks where its data does (a stall, a value a log axis cannot show): a
// QLineSeries per unbroken stretch, as QLineSeries cannot leave a gap. The first series is the
// line's face (legend entry, tooltip colour); the others have no legend entry. Series are made as
// stretches need them and kept for the next draw; the chart owns them (it deletes them with
// itself), and destroy() takes them off it for good.
class ChartTrace {
 public:
  explicit ChartTrace(QChart* chart);
  ChartTrace(const ChartTrace&) = delete;
  ChartTrace& operator=(const ChartTrace&) = delete;

  QLineSeries* head() const noexcept { return series_.front(); }
  const std::vector<QLineSeries*>& series() const noexcept { return series_; }
  // Stretches drawn by the last setPoints().
  int stretchCount() const noexcept { return stretches_; }

  // Puts every series on the chart (again, after takeOff()), attached to `x` and `y`, in order.
  void putOn(QAbstractAxis* x, QAbstractAxis* y);
  // Takes every series off the chart, keeping them.
  void takeOff();
  // The chart's axes changed (the old ones removed, which detached the series): attach the new.
  void attach(QAbstractAxis* x, QAbstractAxis* y);
  void attachX(QAbstractAxis* x);
  void attachY(QAbstractAxis* y);
  // Takes the series off the chart and deletes them; the trace is unusable after.
  void destroy();

  void setPen(const QPen& pen);
  void setName(const QString& name);
  void setVisible(bool visible);
  // Draws a marker at every point (a sparse line: one point per eval), on every stretch.
  void setPointMarkers(bool on);
  bool pointMarkers() const noexcept { return markers_; }
  bool isVisible() const noexcept { return visible_; }
  // Hands each stretch of `points` (a new one starts at every index of `breaks`) to a series with
  // one replace(); series left over are emptied. `plotWidth` is the plot's width in pixels: a
  // stretch with more than one point per kRoundSpacing pixels of it is drawn with bevelled joins
  // and flat caps (see densePen()); 0 keeps the pen as set.
  void setPoints(const QList<QPointF>& points, const std::vector<qsizetype>& breaks, int plotWidth = 0);
  void clear() { setPoints({}, {}); }
  // Empties every series, keeping the stretch count, pens and markers for the next setPoints().
  void empty();
  // Round joins and caps make Qt's stroker add an arc at every point of a line, in working out its
  // shape and again in painting it: for a 2-pixel line of 1 800 points about 3x the cost of the
  // shape and 6x the paint of bevelled joins (docs/benchmarks.md, issue 32 goal 5). Where points lie
  // closer than this many pixels apart, such an arc is under a pixel wide and cannot be seen.
  static constexpr int kRoundSpacing = 4;
  // `pen` with bevelled joins and flat caps: how a dense stretch is drawn.
  static QPen densePen(const QPen& pen);

 private:
  QLineSeries* addSeries();
  void hideLegendEntry(QLineSeries* series);
  QPen penFor(qsizetype points) const;
  void replaceStretch(QLineSeries* series, const QList<QPointF>& points);

  QChart* chart_;
  std::vector<QLineSeries*> series_;
  QAbstractAxis* x_ = nullptr;
  QAbstractAxis* y_ = nullptr;
  bool onChart_ = false;
  bool visible_ = true;
  bool markers_ = false;
  int stretches_ = 0;
  int plotWidth_ = 0;  // of the last setPoints()
  QPen pen_;
};

}  // namespace livemon::ui
