#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include <QList>
#include <QPointF>

#include <livemon/ui/model/column_decimator.h>
#include <livemon/ui/model/time_view.h>

namespace livemon::ui {

class SeriesStore;

// GUI thread only. A value built per draw from a SeriesStore.
// One series as the Step axis draws it: the stored points timed inside a window (the time range),
// each at its step instead of its time. Points that state no step are left out: a made-up step
// would put them where they never were. A step lower than an earlier point's (a run resumed from
// a checkpoint retraces its steps) supersedes the earlier points at that step and after: the
// newest path to every step is drawn, so x never goes back. Consecutive points at one step (a
// step longer than a Stat window) all stay. Built per draw, in one pass over the
// window's points (bounded by the store's size).
//
// It offers what the line tracing reads from a SeriesStore (visitFrom, typicalInterval,
// decimate), with x the step, so lines, bands, smoothing, gaps and the CSV export work alike.
class StepPoints {
 public:
  StepPoints() = default;
  StepPoints(const SeriesStore& store, XRange window) { build(store, window); }

  // Replaces the points with `store`'s timed in [window.min, window.max] (ms since the Unix epoch).
  void build(const SeriesStore& store, XRange window);

  bool empty() const noexcept { return points_.empty(); }
  std::size_t size() const noexcept { return points_.size(); }
  // From the lowest step to the newest point's; meaningless when empty().
  XRange steps() const noexcept { return XRange{points_.front().step, points_.back().step}; }

  // As SeriesStore::visitFrom, x being the step.
  template <typename Visit>
  void visitFrom(double xMin, std::size_t before, Visit&& visit) const;
  // The median step spacing of the newest points (up to 64); 0 with fewer than two.
  double typicalInterval() const;
  // As SeriesStore::decimate, x being the step.
  DecimationSummary decimate(double xMin, double xMax, int columns, PlotTransform transform, QList<QPointF>& line,
                             QList<QPointF>* lower = nullptr, QList<QPointF>* upper = nullptr,
                             double cutoff = std::numeric_limits<double>::infinity()) const;

 private:
  struct Point {
    double step;
    double y;
    bool adjacent;  // as SeriesStore::visitFrom says of it
  };
  std::size_t firstAtOrAfter(double step) const;

  std::vector<Point> points_;
};

template <typename Visit>
void StepPoints::visitFrom(double xMin, std::size_t before, Visit&& visit) const {
  const std::size_t first = firstAtOrAfter(xMin);
  for (std::size_t i = first > before ? first - before : 0; i < points_.size(); ++i) {
    if (!visit(points_[i].step, points_[i].y, points_[i].adjacent)) return;
  }
}

}  // namespace livemon::ui
