#include <livemon/ui/model/column_decimator.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace livemon::ui {

ColumnDecimator::ColumnDecimator(double xMin, double xMax, int columns, PlotTransform transform,
                                 QList<QPointF>& line, QList<QPointF>* lower, QList<QPointF>* upper)
    : xMin_(xMin),
      xMax_(std::max(xMin, xMax)),
      columns_(std::max(1, columns)),
      columnsPerUnit_(xMax > xMin ? columns_ / (xMax - xMin) : 0.0),
      transform_(transform),
      line_(line),
      lower_(lower),
      upper_(upper) {
  line_.clear();
  if (lower_ != nullptr) lower_->clear();
  if (upper_ != nullptr) upper_->clear();
}

int ColumnDecimator::columnOf(double x) const noexcept {
  const double column = (x - xMin_) * columnsPerUnit_;
  return std::clamp(static_cast<int>(column), 0, columns_ - 1);
}

void ColumnDecimator::emitPoint(const Sample& sample, bool toLower, bool toUpper) {
  const QPointF point(transform_.apply(sample.x), sample.y);
  line_.append(point);
  if (lower_ != nullptr && toLower) lower_->append(point);
  if (upper_ != nullptr && toUpper) upper_->append(point);
}

void ColumnDecimator::emitPendingLeftNeighbour() {
  if (!hasLeftNeighbour_) return;
  hasLeftNeighbour_ = false;
  emitPoint(leftNeighbour_, true, true);
}

void ColumnDecimator::flushColumn() {
  if (column_ < 0) return;
  // Up to four distinct samples, written in the order they came (which is x order).
  std::array<const Sample*, 4> kept{&first_, &min_, &max_, &last_};
  std::sort(kept.begin(), kept.end(), [](const Sample* a, const Sample* b) { return a->order < b->order; });
  uint64_t previous = UINT64_MAX;
  for (const Sample* sample : kept) {
    if (sample->order == previous) continue;
    previous = sample->order;
    emitPoint(*sample, sample->order == min_.order, sample->order == max_.order);
  }
  column_ = -1;
}

bool ColumnDecimator::add(double x, double y) {
  if (done_) return false;
  if (!std::isfinite(y) || std::isnan(x)) return true;
  const Sample sample{x, y, nextOrder_++};
  if (x < xMin_) {
    leftNeighbour_ = sample;
    hasLeftNeighbour_ = true;
    return true;
  }
  if (x > xMax_) {
    flushColumn();
    emitPendingLeftNeighbour();
    emitPoint(sample, true, true);
    done_ = true;
    return false;
  }
  emitPendingLeftNeighbour();
  ++summary_.pointsInRange;
  summary_.yMin = std::min(summary_.yMin, y);
  summary_.yMax = std::max(summary_.yMax, y);
  const int column = columnOf(x);
  if (column != column_) {
    flushColumn();
    column_ = column;
    first_ = min_ = max_ = last_ = sample;
    return true;
  }
  if (y < min_.y) min_ = sample;
  if (y > max_.y) max_ = sample;
  last_ = sample;
  return true;
}

DecimationSummary ColumnDecimator::finish() {
  flushColumn();
  done_ = true;
  return summary_;
}

}  // namespace livemon::ui
