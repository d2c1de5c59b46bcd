#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>

#include <QList>
#include <QPointF>

#include <livemon/ui/model/column_decimator.h>

namespace livemon::ui {

// Thread-compatible: owned and used by the GUI thread.
// The samples of one chart series, in bounded memory: the newest samples at full resolution, older
// ones folded into min/max buckets that keep each stretch's first, lowest, highest and last
// sample. When the buckets run out, the older half of them is merged pairwise, so resolution
// fades with age while the whole run stays viewable (time range "all") and no extreme is lost.
class SeriesStore {
 public:
  // Thread-safety: a plain value type.
  struct Limits {
    std::size_t recentCapacity = 2048;  // full-resolution samples kept
    std::size_t bucketCapacity = 1024;  // min/max buckets kept
    std::size_t samplesPerBucket = 8;   // samples folded into one new bucket
  };

  SeriesStore();
  // Throws std::invalid_argument naming the limit when one is zero.
  explicit SeriesStore(Limits limits);

  // x: milliseconds since the Unix epoch. Samples normally come in time order; a late one is
  // put in place if it is newer than the oldest full-resolution sample and dropped (counted)
  // otherwise. Non-finite values are not plotted and are counted.
  void append(double x, double y);
  // Forgets every sample (a replay seeking elsewhere); version() still changes.
  void clear() noexcept;

  // Writes the points to draw for [xMin, xMax] (store units) on a chart `columns` pixels wide
  // (see ColumnDecimator), ignoring samples after `cutoff` (a paused view). `line` is cleared
  // first; so are `lower` and `upper` when given.
  DecimationSummary decimate(double xMin, double xMax, int columns, PlotTransform transform, QList<QPointF>& line,
                             QList<QPointF>* lower = nullptr, QList<QPointF>* upper = nullptr,
                             double cutoff = std::numeric_limits<double>::infinity()) const;

  // Changes whenever the stored data changes.
  uint64_t version() const noexcept { return version_; }
  bool empty() const noexcept { return recent_.empty() && buckets_.empty(); }
  std::optional<double> firstX() const noexcept;
  std::optional<double> lastX() const noexcept;
  std::optional<double> lastY() const noexcept;

  uint64_t appendedCount() const noexcept { return appended_; }
  uint64_t nonFiniteCount() const noexcept { return nonFinite_; }
  uint64_t lateDroppedCount() const noexcept { return lateDropped_; }
  std::size_t recentSize() const noexcept { return recent_.size(); }
  std::size_t bucketCount() const noexcept { return buckets_.size(); }
  // The bytes the samples and buckets take (not counting container overhead).
  std::size_t storedBytes() const noexcept;
  const Limits& limits() const noexcept { return limits_; }

 private:
  struct Sample {
    double x;
    double y;
  };
  // A stretch [x0, x1] of samples reduced to its first, lowest, highest and last.
  struct Bucket {
    double x0, yFirst;
    double xLow, yLow;
    double xHigh, yHigh;
    double x1, yLast;
    uint64_t count;
  };

  void foldOldestIntoBucket();
  void mergeOlderBuckets();
  static Bucket merged(const Bucket& a, const Bucket& b) noexcept;

  Limits limits_;
  std::deque<Sample> recent_;
  std::deque<Bucket> buckets_;
  uint64_t version_ = 0;
  uint64_t appended_ = 0;
  uint64_t nonFinite_ = 0;
  uint64_t lateDropped_ = 0;
};

}  // namespace livemon::ui
