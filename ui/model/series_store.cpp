#include <livemon/ui/model/series_store.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace livemon::ui {

SeriesStore::SeriesStore() : SeriesStore(Limits{}) {}

SeriesStore::SeriesStore(Limits limits) : limits_(limits) {
  if (limits_.recentCapacity == 0) throw std::invalid_argument("SeriesStore: recentCapacity must be at least 1");
  if (limits_.bucketCapacity < 2) throw std::invalid_argument("SeriesStore: bucketCapacity must be at least 2");
  if (limits_.samplesPerBucket == 0) throw std::invalid_argument("SeriesStore: samplesPerBucket must be at least 1");
}

void SeriesStore::append(double x, double y) {
  ++appended_;
  if (!std::isfinite(x) || !std::isfinite(y)) {
    ++nonFinite_;
    return;
  }
  if (!recent_.empty() && x < recent_.back().x) {
    if (x < recent_.front().x) {
      ++lateDropped_;
      return;
    }
    const auto at = std::upper_bound(recent_.begin(), recent_.end(), x,
                                     [](double value, const Sample& s) { return value < s.x; });
    recent_.insert(at, Sample{x, y});
  } else if (recent_.empty() && !buckets_.empty() && x < buckets_.back().x1) {
    ++lateDropped_;
    return;
  } else {
    recent_.push_back(Sample{x, y});
  }
  ++version_;
  if (recent_.size() >= limits_.recentCapacity + limits_.samplesPerBucket) foldOldestIntoBucket();
}

void SeriesStore::clear() noexcept {
  recent_.clear();
  buckets_.clear();
  ++version_;
}

void SeriesStore::foldOldestIntoBucket() {
  const std::size_t n = std::min(limits_.samplesPerBucket, recent_.size());
  Bucket bucket{};
  bucket.x0 = recent_.front().x;
  bucket.yFirst = recent_.front().y;
  bucket.xLow = bucket.xHigh = bucket.x0;
  bucket.yLow = bucket.yHigh = bucket.yFirst;
  for (std::size_t i = 0; i < n; ++i) {
    const Sample& s = recent_[i];
    if (s.y < bucket.yLow) {
      bucket.yLow = s.y;
      bucket.xLow = s.x;
    }
    if (s.y > bucket.yHigh) {
      bucket.yHigh = s.y;
      bucket.xHigh = s.x;
    }
    bucket.x1 = s.x;
    bucket.yLast = s.y;
  }
  bucket.count = n;
  recent_.erase(recent_.begin(), recent_.begin() + static_cast<std::ptrdiff_t>(n));
  buckets_.push_back(bucket);
  if (buckets_.size() > limits_.bucketCapacity) mergeOlderBuckets();
}

SeriesStore::Bucket SeriesStore::merged(const Bucket& a, const Bucket& b) noexcept {
  Bucket m{};
  m.x0 = a.x0;
  m.yFirst = a.yFirst;
  m.x1 = b.x1;
  m.yLast = b.yLast;
  if (b.yLow < a.yLow) {
    m.xLow = b.xLow;
    m.yLow = b.yLow;
  } else {
    m.xLow = a.xLow;
    m.yLow = a.yLow;
  }
  if (b.yHigh > a.yHigh) {
    m.xHigh = b.xHigh;
    m.yHigh = b.yHigh;
  } else {
    m.xHigh = a.xHigh;
    m.yHigh = a.yHigh;
  }
  m.count = a.count + b.count;
  return m;
}

// Halves the older half of the buckets: recent history keeps its resolution, old history
// coarsens geometrically, and the count drops to about three quarters of the capacity.
void SeriesStore::mergeOlderBuckets() {
  const std::size_t olderHalf = (buckets_.size() / 2) & ~std::size_t{1};
  std::deque<Bucket> rebuilt;
  for (std::size_t i = 0; i < olderHalf; i += 2) rebuilt.push_back(merged(buckets_[i], buckets_[i + 1]));
  for (std::size_t i = olderHalf; i < buckets_.size(); ++i) rebuilt.push_back(buckets_[i]);
  buckets_.swap(rebuilt);
}

DecimationSummary SeriesStore::decimate(double xMin, double xMax, int columns, PlotTransform transform,
                                        QList<QPointF>& line, QList<QPointF>* lower, QList<QPointF>* upper,
                                        double cutoff) const {
  line.clear();
  if (lower != nullptr) lower->clear();
  if (upper != nullptr) upper->clear();
  ColumnDecimator decimator(xMin, xMax, columns, transform, line, lower, upper);
  // Feeds one point; false once nothing later can matter.
  const auto add = [&decimator, cutoff](double x, double y) { return x <= cutoff && decimator.add(x, y); };

  // Buckets: start at the last one ending before xMin (it supplies the left neighbour).
  auto bucket = std::lower_bound(buckets_.begin(), buckets_.end(), xMin,
                                 [](const Bucket& b, double value) { return b.x1 < value; });
  if (bucket != buckets_.begin()) --bucket;
  bool more = true;
  for (; more && bucket != buckets_.end(); ++bucket) {
    const Bucket& b = *bucket;
    more = add(b.x0, b.yFirst);
    if (!more) break;
    if (b.count > 1) {
      const bool lowFirst = b.xLow <= b.xHigh;
      more = add(lowFirst ? b.xLow : b.xHigh, lowFirst ? b.yLow : b.yHigh) &&
             add(lowFirst ? b.xHigh : b.xLow, lowFirst ? b.yHigh : b.yLow) && add(b.x1, b.yLast);
    }
  }

  if (more) {
    auto sample = std::lower_bound(recent_.begin(), recent_.end(), xMin,
                                   [](const Sample& s, double value) { return s.x < value; });
    if (sample != recent_.begin()) --sample;
    for (; sample != recent_.end(); ++sample) {
      if (!add(sample->x, sample->y)) break;
    }
  }
  return decimator.finish();
}

double SeriesStore::typicalInterval() const {
  constexpr std::size_t kNewest = 64;
  const std::size_t n = std::min(kNewest, recent_.size());
  if (n < 2) return 0.0;
  std::array<double, kNewest> spacing{};
  const std::size_t from = recent_.size() - n;
  for (std::size_t i = 1; i < n; ++i) spacing[i - 1] = recent_[from + i].x - recent_[from + i - 1].x;
  const auto middle = spacing.begin() + static_cast<std::ptrdiff_t>((n - 1) / 2);
  std::nth_element(spacing.begin(), middle, spacing.begin() + static_cast<std::ptrdiff_t>(n - 1));
  return *middle;
}

std::optional<double> SeriesStore::firstX() const noexcept {
  if (!buckets_.empty()) return buckets_.front().x0;
  if (!recent_.empty()) return recent_.front().x;
  return std::nullopt;
}

std::optional<double> SeriesStore::lastX() const noexcept {
  if (!recent_.empty()) return recent_.back().x;
  if (!buckets_.empty()) return buckets_.back().x1;
  return std::nullopt;
}

std::optional<double> SeriesStore::lastY() const noexcept {
  if (!recent_.empty()) return recent_.back().y;
  if (!buckets_.empty()) return buckets_.back().yLast;
  return std::nullopt;
}

std::size_t SeriesStore::storedBytes() const noexcept {
  return recent_.size() * sizeof(Sample) + buckets_.size() * sizeof(Bucket);
}

}  // namespace livemon::ui
