#include <livemon/ui/model/step_points.h>

#include <livemon/ui/model/median_spacing.h>

#include <algorithm>
#include <array>

#include <livemon/ui/model/series_store.h>

namespace livemon::ui {

void StepPoints::build(const SeriesStore& store, XRange window) {
  points_.clear();
  if (!store.hasSteps()) return;
  store.visitPointsFrom(window.min, 0, [&](const SeriesStore::Point& p, bool adjacent) {
    if (p.x > window.max) return false;
    if (hasStep(p.step)) points_.push_back(Point{p.step, p.y, adjacent});
    return true;
  });
  // Newest first: a point stays while every later point has a higher step, or it is one of a run
  // of points at the same step (several windows in one step). The point a resumed run came back
  // to is superseded: a higher step came between them.
  double lowestLater = std::numeric_limits<double>::infinity();
  std::size_t lastKept = points_.size();
  std::size_t kept = points_.size();
  for (std::size_t i = points_.size(); i-- > 0;) {
    const double step = points_[i].step;
    if (!(step < lowestLater || (step == lowestLater && lastKept == i + 1))) continue;
    lowestLater = step;
    lastKept = i;
    points_[--kept] = points_[i];
  }
  points_.erase(points_.begin(), points_.begin() + static_cast<std::ptrdiff_t>(kept));
}

std::size_t StepPoints::firstAtOrAfter(double step) const {
  const auto found = std::lower_bound(points_.begin(), points_.end(), step,
                                      [](const Point& p, double value) { return p.step < value; });
  return static_cast<std::size_t>(found - points_.begin());
}

double StepPoints::typicalInterval() const {
  return medianSpacing(points_, [](const Point& p) { return p.step; });
}

DecimationSummary StepPoints::decimate(double xMin, double xMax, int columns, PlotTransform transform,
                                       QList<QPointF>& line, QList<QPointF>* lower, QList<QPointF>* upper,
                                       double cutoff) const {
  ColumnDecimator decimator(xMin, xMax, columns, transform, line, lower, upper);
  // From the left neighbour of the range on.
  const std::size_t first = firstAtOrAfter(xMin);
  for (std::size_t i = first > 0 ? first - 1 : 0; i < points_.size(); ++i) {
    if (points_[i].step > cutoff || !decimator.add(points_[i].step, points_[i].y)) break;
  }
  return decimator.finish();
}

}  // namespace livemon::ui
