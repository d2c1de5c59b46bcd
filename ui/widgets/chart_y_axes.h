#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include <QString>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/model/time_view.h>

class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QCategoryAxis;
class QChart;
QT_END_NAMESPACE

namespace livemon::ui {

// GUI thread only, as the chart it belongs to.
// A chart's value axes: on the left the values, titled with their unit ("ms", "MiB"); on the
// right, when `count` shares the chart with other aggregations, an axis of its own titled "count",
// so 150 calls a second do not flatten 2 ms durations to a line at zero. Either linear or log
// (base 10); either way the labels are the ticks chartAxes chose (linearTicks, logTicks), on a
// category axis: Qt's own value axis cannot scale a label (MiB) and its log axis labels only the
// powers of ten. A log side keeps the QLogValueAxis the lines are drawn against, hidden, under a
// category axis over the same range in decades that shows the ticks.
class ChartYAxes {
 public:
  explicit ChartYAxes(QChart* chart);

  // Makes the axes match; returns whether it replaced any, which detaches every series from it:
  // the caller attaches them again (axisFor()).
  bool configure(bool countAxis, bool log, const QString& unit);

  // The axes the lines are drawn against.
  QAbstractAxis* values() const noexcept { return values_.scale; }
  // nullptr without a count axis.
  QAbstractAxis* counts() const noexcept { return counts_.scale; }
  QAbstractAxis* axisFor(bool count) const noexcept { return count && counts_.scale != nullptr ? counts_.scale : values_.scale; }
  bool isLog() const noexcept { return log_; }
  bool hasCountAxis() const noexcept { return counts_.scale != nullptr; }

  // Sets the ranges (padded already) and the ticks for a plot `heightPixels` high; returns whether
  // the labels changed (the chart's layout then has to make room for them).
  bool setRanges(XRange values, std::optional<XRange> counts, double heightPixels);
  // On a log axis, `values` values <= 0 in view were left out: a note in the plot's corner says
  // so (0 takes it away), so a line with holes is not mistaken for the data.
  void setLeftOut(std::size_t values);
  // On a linear axis, values far beyond the rest were left out of its range (fitExtent): the note
  // says how many and how far, so a line leaving the plot is not taken for the data's end.
  void setOffScale(const FittedExtent& fitted);
  QString note() const;
  // A badge in the chart's corner ("log", "linear") saying its scale is its own, not the
  // toolbar's; empty hides it.
  void setBadge(const QString& text);
  QString badge() const;

  XRange valueRange() const noexcept { return valueRange_; }
  std::optional<XRange> countRange() const noexcept { return countRange_; }

 private:
  // One side's axes: the lines' scale, and the labels (the scale itself on a linear side).
  struct Side {
    QAbstractAxis* scale = nullptr;
    QCategoryAxis* labels = nullptr;
  };
  Side make(bool log, Qt::Alignment side);
  void remove(Side& side);
  bool applyRange(const Side& side, XRange range, double heightPixels, const QString& unit, const QString& title);
  void showNote();

  QChart* chart_;
  QGraphicsSimpleTextItem* note_;
  QGraphicsRectItem* badge_;
  QGraphicsSimpleTextItem* badgeText_;
  QString leftOut_;
  QString offScale_;
  Side values_;
  Side counts_;
  bool log_ = false;
  QString unit_;
  XRange valueRange_{0.0, 1.0};
  std::optional<XRange> countRange_;
};

// Puts `ticks` on a category axis as labels at their values (on the `log` side, at their
// decades), changing its categories only when a tick comes, goes or is renamed: every change makes
// Qt lay out all its labels again. Returns whether it changed them.
bool setCategoryTicks(QCategoryAxis* axis, const std::vector<AxisTick>& ticks, bool log = false);

}  // namespace livemon::ui
