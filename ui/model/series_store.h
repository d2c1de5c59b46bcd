#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <utility>

#include <QList>
#include <QPointF>

#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/model/column_decimator.h>
#include <livemon/ui/model/lazy_deque.h>
#include <livemon/ui/model/point_ring.h>

namespace livemon::ui {

// GUI thread only.
// The samples of one chart series, in bounded memory: the newest samples at full resolution, older
// ones folded into min/max buckets that keep each stretch's first, lowest, highest and last
// sample. When the buckets run out, the older half of them is merged pairwise, so resolution
// fades with age while the whole run stays viewable (time range "all") and no extreme is lost.
// Each sample keeps its step (or kNoStep), for the charts' Step axis (StepPoints).
class SeriesStore {
 public:
  // Thread-safety: a plain value type.
  // A stored point: x (ms since the Unix epoch), value, and step (kNoStep when none).
  struct Point {
    double x;
    double y;
    double step;
  };

  // Thread-safety: a plain value type.
  // A run of non-finite values (NaN, ±Inf), which are not stored as points: the first and the
  // newest of them, and the first finite sample after them (none while the series is still
  // non-finite), so a chart can say where its line stops and why.
  struct NonFiniteSpan {
    Point first;
    Point last;
    std::optional<Point> end;
    bool nan = false;  // any NaN in the run (otherwise infinities only)
  };
  // The newest runs kept: a series that flips between NaN and numbers forever stays bounded.
  static constexpr std::size_t kMaxNonFiniteSpans = 64;

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
  // otherwise. Non-finite values are not plotted and are counted. `step` is the sample's step
  // (kNoStep: none).
  void append(double x, double y, double step = kNoStep);
  // Gives the newest full-resolution sample the value `y`, keeping its x and step (a derived line
  // refining its newest point as more of what it is made from arrives). Returns false, changing
  // nothing, when there is no such sample or `y` is not finite.
  bool amendLast(double y);
  // Forgets every sample (a replay seeking elsewhere); version() still changes.
  void clear() noexcept;

  // Writes the points to draw for [xMin, xMax] (store units) on a chart `columns` pixels wide
  // (see ColumnDecimator), ignoring samples after `cutoff` (a paused view). `line` is cleared
  // first; so are `lower` and `upper` when given.
  DecimationSummary decimate(double xMin, double xMax, int columns, PlotTransform transform, QList<QPointF>& line,
                             QList<QPointF>* lower = nullptr, QList<QPointF>* upper = nullptr,
                             double cutoff = std::numeric_limits<double>::infinity()) const;

  // Calls visit(x, y, adjacent) for the stored points in x order, starting `before` points ahead of
  // the first point at or after xMin, until it returns false: full-resolution samples, and for each
  // bucket its first, lowest, highest and last sample. `adjacent` says no stored sample lies
  // between the point and the one visited before it (false inside a bucket and for the first).
  template <typename Visit>
  void visitFrom(double xMin, std::size_t before, Visit&& visit) const {
    visitPointsFrom(xMin, before, [&visit](const Point& p, bool adjacent) { return visit(p.x, p.y, adjacent); });
  }
  // The same with each point's step: visit(const Point&, adjacent).
  template <typename Visit>
  void visitPointsFrom(double xMin, std::size_t before, Visit&& visit) const;
  // The median spacing in x of the newest full-resolution samples (up to 64 of them); 0 with
  // fewer than two. A series' usual interval, for telling a stall from its ordinary rhythm.
  double typicalInterval() const;

  // Changes whenever the stored data changes.
  uint64_t version() const noexcept { return version_; }
  bool empty() const noexcept { return recent_.empty() && buckets_.empty(); }
  std::optional<double> firstX() const noexcept;
  std::optional<double> lastX() const noexcept;
  std::optional<double> lastY() const noexcept;

  // Samples kept that carry a step (counted as appended; a clear() restarts it).
  uint64_t steppedCount() const noexcept { return stepped_; }
  bool hasSteps() const noexcept { return stepped_ > 0; }
  // The steps the Step axis shows for the samples timed in [tMin, tMax] (see StepPoints): from
  // the lowest step among them to the newest one's; std::nullopt when none carries a step.
  // Cheap (a search at each end) while steps never went down; a scan of the window otherwise.
  std::optional<std::pair<double, double>> stepExtent(double tMin, double tMax) const;

  // The runs of non-finite values, oldest first (the newest kMaxNonFiniteSpans).
  const std::deque<NonFiniteSpan>& nonFiniteSpans() const noexcept { return nonFiniteSpans_.items(); }

  uint64_t appendedCount() const noexcept { return appended_; }
  uint64_t nonFiniteCount() const noexcept { return nonFinite_; }
  uint64_t lateDroppedCount() const noexcept { return lateDropped_; }
  std::size_t recentSize() const noexcept { return recent_.size(); }
  std::size_t bucketCount() const noexcept { return buckets_.size(); }
  // The bytes the samples and buckets take (not counting container overhead).
  std::size_t storedBytes() const noexcept;
  // The bytes allocated for them: storedBytes() and the rings' room to grow into.
  std::size_t allocatedBytes() const noexcept;
  const Limits& limits() const noexcept { return limits_; }

 private:
  using Sample = Point;
  // A stretch [x0, x1] of samples reduced to its first, lowest, highest and last.
  struct Bucket {
    Point first, low, high, last;
    uint64_t count;
  };
  // The newest point timed at or before t that carries a step.
  std::optional<double> lastStepAtOrBefore(double t) const;

  // A non-finite sample starts or extends a run; a finite one ends the open run it follows.
  void noteNonFinite(const Point& sample);
  void noteFinite(const Point& sample);
  void foldOldestIntoBucket();
  void mergeOlderBuckets();
  static Bucket merged(const Bucket& a, const Bucket& b) noexcept;

  Limits limits_;
  PointRing<Sample> recent_;  // at most recentCapacity + samplesPerBucket
  PointRing<Bucket> buckets_;  // at most bucketCapacity + 1
  LazyDeque<NonFiniteSpan> nonFiniteSpans_;  // most series never hold a non-finite value
  uint64_t version_ = 0;
  uint64_t appended_ = 0;
  uint64_t nonFinite_ = 0;
  uint64_t lateDropped_ = 0;
  uint64_t stepped_ = 0;
  // Steps never went down in time order (since the last clear): stepExtent() can search.
  bool stepsOrdered_ = true;
  double lastStep_ = kNoStep;  // of the newest stepped sample appended in order
};

template <typename Visit>
void SeriesStore::visitPointsFrom(double xMin, std::size_t before, Visit&& visit) const {
  const auto firstRecent = std::lower_bound(recent_.begin(), recent_.end(), xMin,
                                            [](const Sample& s, double value) { return s.x < value; });
  auto recentIndex = static_cast<std::size_t>(firstRecent - recent_.begin());
  std::size_t bucketIndex = buckets_.size();
  // Buckets are left out only when the samples alone hold every point asked for.
  if (recentIndex >= before && (recentIndex > 0 || buckets_.empty() || buckets_.back().last.x < xMin)) {
    recentIndex -= before;
  } else {
    // Still short of `before`, or the buckets reach into [xMin, ...): go back into the buckets,
    // four points each.
    const std::size_t short_ = before > recentIndex ? before - recentIndex : 0;
    recentIndex = 0;
    if (recent_.empty() || recent_.front().x >= xMin) {
      const auto firstBucket = std::lower_bound(buckets_.begin(), buckets_.end(), xMin,
                                                [](const Bucket& b, double value) { return b.last.x < value; });
      bucketIndex = static_cast<std::size_t>(firstBucket - buckets_.begin());
    }
    const std::size_t back = (short_ + 3) / 4;
    bucketIndex = bucketIndex > back ? bucketIndex - back : 0;
  }
  bool first = true;
  for (std::size_t i = bucketIndex; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[i];
    if (!visit(b.first, !first)) return;
    first = false;
    if (b.count > 1) {
      const bool lowFirst = b.low.x <= b.high.x;
      if (!visit(lowFirst ? b.low : b.high, false) || !visit(lowFirst ? b.high : b.low, false) ||
          !visit(b.last, false)) {
        return;
      }
    }
  }
  // The samples continue where the last bucket visited ended.
  for (std::size_t i = recentIndex; i < recent_.size(); ++i) {
    if (!visit(recent_[i], !first)) return;
    first = false;
  }
}

}  // namespace livemon::ui
