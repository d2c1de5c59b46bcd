#pragma once

#include <cstddef>
#include <optional>

#include <QString>

#include <livemon/ui/model/time_view.h>

class QGraphicsSimpleTextItem;
QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QChart;
QT_END_NAMESPACE

namespace livemon::ui {

// GUI thread only, as the chart it belongs to.
// A chart's value axes: on the left the values, titled with their unit ("ms"); on the right,
// when `count` shares the chart with other aggregations, an axis of its own titled "count", so
// 150 calls a second do not flatten 2 ms durations to a line at zero. Either linear, with round
// steps, or log (base 10).
class ChartYAxes {
 public:
  explicit ChartYAxes(QChart* chart);

  // Makes the axes match; returns whether it replaced any, which detaches every series from it:
  // the caller attaches them again (axisFor()).
  bool configure(bool countAxis, bool log, const QString& unit);

  QAbstractAxis* values() const noexcept { return values_; }
  // nullptr without a count axis.
  QAbstractAxis* counts() const noexcept { return counts_; }
  QAbstractAxis* axisFor(bool count) const noexcept { return count && counts_ != nullptr ? counts_ : values_; }
  bool isLog() const noexcept { return log_; }
  bool hasCountAxis() const noexcept { return counts_ != nullptr; }

  // Sets the ranges (padded already) and the ticks for a plot `heightPixels` high.
  void setRanges(XRange values, std::optional<XRange> counts, double heightPixels);
  // On a log axis, `values` values <= 0 in view were left out: a note in the plot's corner says
  // so (0 takes it away), so a line with holes is not mistaken for the data.
  void setLeftOut(std::size_t values);
  QString note() const;

  XRange valueRange() const noexcept { return valueRange_; }
  std::optional<XRange> countRange() const noexcept { return countRange_; }

 private:
  QAbstractAxis* make(bool log, const QString& title, Qt::Alignment side);
  void applyRange(QAbstractAxis* axis, XRange range, double heightPixels);

  QChart* chart_;
  QGraphicsSimpleTextItem* note_;
  QAbstractAxis* values_ = nullptr;
  QAbstractAxis* counts_ = nullptr;
  bool log_ = false;
  QString unit_;
  XRange valueRange_{0.0, 1.0};
  std::optional<XRange> countRange_;
};

}  // namespace livemon::ui
