#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include <QList>
#include <QPointF>

namespace livemon::ui {

// Thread-safety: a plain value type.
// Maps a store's x (milliseconds since the Unix epoch) to a chart's x: (x - offset) * scale.
struct PlotTransform {
  double offset = 0.0;
  double scale = 1.0;
  double apply(double x) const noexcept { return (x - offset) * scale; }
};

// Thread-safety: a plain value type.
// What a decimation saw inside the visible range: every point, not only the kept ones.
struct DecimationSummary {
  std::size_t pointsInRange = 0;
  double yMin = std::numeric_limits<double>::infinity();
  double yMax = -std::numeric_limits<double>::infinity();
  bool empty() const noexcept { return pointsInRange == 0; }
};

// Not thread-safe: one owner at a time.
// Reduces points sorted by x to what a chart `columns` pixels wide can show: per pixel column the
// first, the lowest, the highest and the last point, in x order. Every extreme survives, so a
// one-sample spike is drawn however many samples share its column, and the line enters and
// leaves each column where the data does. The nearest point left of the range and the nearest
// right of it are kept too, so lines run to the chart's edges.
//
// Optionally it also writes a band's edges: each column's lowest point to `lower`, highest to
// `upper`.
class ColumnDecimator {
 public:
  // [xMin, xMax] is the visible range in store units; points are written after `transform`
  // into `line` (and `lower`, `upper` when given), each cleared first.
  ColumnDecimator(double xMin, double xMax, int columns, PlotTransform transform, QList<QPointF>& line,
                  QList<QPointF>* lower = nullptr, QList<QPointF>* upper = nullptr);

  // Points must come in non-decreasing x; non-finite y values are skipped. Returns false once it
  // has taken the first point right of the range: later points cannot change the result.
  bool add(double x, double y);

  // Writes the last column; call once, after the last add().
  DecimationSummary finish();

 private:
  struct Sample {
    double x = 0.0;
    double y = 0.0;
    uint64_t order = 0;
  };

  int columnOf(double x) const noexcept;
  void emitPoint(const Sample& sample, bool toLower, bool toUpper);
  void emitPendingLeftNeighbour();
  void flushColumn();

  double xMin_;
  double xMax_;
  int columns_;
  double columnsPerUnit_;
  PlotTransform transform_;
  QList<QPointF>& line_;
  QList<QPointF>* lower_;
  QList<QPointF>* upper_;

  bool hasLeftNeighbour_ = false;
  Sample leftNeighbour_;
  bool done_ = false;
  int column_ = -1;
  Sample first_, min_, max_, last_;
  uint64_t nextOrder_ = 0;
  DecimationSummary summary_;
};

}  // namespace livemon::ui
