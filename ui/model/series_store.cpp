#include <livemon/ui/model/series_store.h>

#include <livemon/ui/model/median_spacing.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace livemon::ui {

SeriesStore::SeriesStore() : SeriesStore(Limits{}) {}

SeriesStore::SeriesStore(Limits limits)
    : limits_(limits), recent_(limits.recentCapacity + limits.samplesPerBucket), buckets_(limits.bucketCapacity + 1) {
  if (limits_.recentCapacity == 0) throw std::invalid_argument("SeriesStore: recentCapacity must be at least 1");
  if (limits_.bucketCapacity < 2) throw std::invalid_argument("SeriesStore: bucketCapacity must be at least 2");
  if (limits_.samplesPerBucket == 0) throw std::invalid_argument("SeriesStore: samplesPerBucket must be at least 1");
}

void SeriesStore::append(double x, double y, double step) {
  ++appended_;
  if (!std::isfinite(x) || !std::isfinite(y)) {
    ++nonFinite_;
    if (std::isfinite(x)) {
      noteNonFinite(Point{x, y, step});
      ++version_;
    }
    return;
  }
  noteFinite(Point{x, y, step});
  if (!recent_.empty() && x < recent_.back().x) {
    if (x < recent_.front().x) {
      ++lateDropped_;
      return;
    }
    const auto at = std::upper_bound(recent_.begin(), recent_.end(), x,
                                     [](double value, const Sample& s) { return value < s.x; });
    recent_.insert(static_cast<std::size_t>(at - recent_.begin()), Sample{x, y, step});
    // Checking its neighbours' steps is not worth it for a rare late sample: stepExtent() scans.
    if (hasStep(step)) stepsOrdered_ = false;
  } else if (recent_.empty() && !buckets_.empty() && x < buckets_.back().last.x) {
    ++lateDropped_;
    return;
  } else {
    recent_.push_back(Sample{x, y, step});
    if (hasStep(step)) {
      if (hasStep(lastStep_) && step < lastStep_) stepsOrdered_ = false;
      lastStep_ = step;
    }
  }
  if (hasStep(step)) ++stepped_;
  ++version_;
  if (recent_.size() >= limits_.recentCapacity + limits_.samplesPerBucket) foldOldestIntoBucket();
}

bool SeriesStore::amendLast(double y) {
  if (recent_.empty() || !std::isfinite(y)) return false;
  recent_.back().y = y;
  ++version_;
  return true;
}

void SeriesStore::noteNonFinite(const Point& sample) {
  if (!nonFiniteSpans_.empty()) {
    NonFiniteSpan& newest = nonFiniteSpans_.back();
    if (!newest.end && sample.x >= newest.first.x) {
      if (sample.x >= newest.last.x) newest.last = sample;
      newest.nan = newest.nan || std::isnan(sample.y);
      return;
    }
    // A late one, before the newest run ended: not worth reordering the runs for.
    if (newest.end && sample.x < newest.end->x) return;
  }
  nonFiniteSpans_.push_back(NonFiniteSpan{sample, sample, std::nullopt, std::isnan(sample.y)});
  if (nonFiniteSpans_.size() > kMaxNonFiniteSpans) nonFiniteSpans_.pop_front();
}

void SeriesStore::noteFinite(const Point& sample) {
  if (nonFiniteSpans_.empty()) return;
  NonFiniteSpan& newest = nonFiniteSpans_.back();
  if (!newest.end && sample.x > newest.last.x) newest.end = sample;
}

void SeriesStore::clear() noexcept {
  recent_.clear();
  buckets_.clear();
  nonFiniteSpans_.clear();
  stepped_ = 0;
  stepsOrdered_ = true;
  lastStep_ = kNoStep;
  ++version_;
}

void SeriesStore::foldOldestIntoBucket() {
  const std::size_t n = std::min(limits_.samplesPerBucket, recent_.size());
  Bucket bucket{};
  bucket.first = bucket.low = bucket.high = recent_.front();
  for (std::size_t i = 0; i < n; ++i) {
    const Sample& s = recent_[i];
    if (s.y < bucket.low.y) bucket.low = s;
    if (s.y > bucket.high.y) bucket.high = s;
    bucket.last = s;
  }
  bucket.count = n;
  recent_.popFront(n);
  buckets_.push_back(bucket);
  if (buckets_.size() > limits_.bucketCapacity) mergeOlderBuckets();
}

SeriesStore::Bucket SeriesStore::merged(const Bucket& a, const Bucket& b) noexcept {
  Bucket m{};
  m.first = a.first;
  m.last = b.last;
  m.low = b.low.y < a.low.y ? b.low : a.low;
  m.high = b.high.y > a.high.y ? b.high : a.high;
  m.count = a.count + b.count;
  return m;
}

// Halves the older half of the buckets: recent history keeps its resolution, old history
// coarsens geometrically, and the count drops to about three quarters of the capacity.
void SeriesStore::mergeOlderBuckets() {
  const std::size_t olderHalf = (buckets_.size() / 2) & ~std::size_t{1};
  // In place: each write lands at or before what is still to be read.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < olderHalf; i += 2) buckets_[kept++] = merged(buckets_[i], buckets_[i + 1]);
  for (std::size_t i = olderHalf; i < buckets_.size(); ++i) buckets_[kept++] = buckets_[i];
  buckets_.truncate(kept);
}

DecimationSummary SeriesStore::decimate(double xMin, double xMax, int columns, PlotTransform transform,
                                        QList<QPointF>& line, QList<QPointF>* lower, QList<QPointF>* upper,
                                        double cutoff) const {
  ColumnDecimator decimator(xMin, xMax, columns, transform, line, lower, upper);
  // Feeds one point; false once nothing later can matter.
  const auto add = [&decimator, cutoff](double x, double y) { return x <= cutoff && decimator.add(x, y); };

  // Buckets: start at the last one ending before xMin (it supplies the left neighbour).
  auto bucket = std::lower_bound(buckets_.begin(), buckets_.end(), xMin,
                                 [](const Bucket& b, double value) { return b.last.x < value; });
  if (bucket != buckets_.begin()) --bucket;
  bool more = true;
  for (; more && bucket != buckets_.end(); ++bucket) {
    const Bucket& b = *bucket;
    more = add(b.first.x, b.first.y);
    if (!more) break;
    if (b.count > 1) {
      const Point& early = b.low.x <= b.high.x ? b.low : b.high;
      const Point& late = b.low.x <= b.high.x ? b.high : b.low;
      more = add(early.x, early.y) && add(late.x, late.y) && add(b.last.x, b.last.y);
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
  return medianSpacing(recent_, [](const Sample& p) { return p.x; });
}

std::optional<double> SeriesStore::firstX() const noexcept {
  if (!buckets_.empty()) return buckets_.front().first.x;
  if (!recent_.empty()) return recent_.front().x;
  return std::nullopt;
}

std::optional<double> SeriesStore::lastX() const noexcept {
  if (!recent_.empty()) return recent_.back().x;
  if (!buckets_.empty()) return buckets_.back().last.x;
  return std::nullopt;
}

std::optional<double> SeriesStore::lastY() const noexcept {
  if (!recent_.empty()) return recent_.back().y;
  if (!buckets_.empty()) return buckets_.back().last.y;
  return std::nullopt;
}

std::optional<double> SeriesStore::lastStepAtOrBefore(double t) const {
  auto sample = std::upper_bound(recent_.begin(), recent_.end(), t,
                                 [](double value, const Sample& s) { return value < s.x; });
  while (sample != recent_.begin()) {
    --sample;
    if (hasStep(sample->step)) return sample->step;
  }
  auto bucket = std::upper_bound(buckets_.begin(), buckets_.end(), t,
                                 [](double value, const Bucket& b) { return value < b.first.x; });
  while (bucket != buckets_.begin()) {
    --bucket;
    // Its points newest first; those after t are skipped.
    const bool lowFirst = bucket->low.x <= bucket->high.x;
    for (const Point* p : {&bucket->last, lowFirst ? &bucket->high : &bucket->low, lowFirst ? &bucket->low : &bucket->high,
                           &bucket->first}) {
      if (p->x <= t && hasStep(p->step)) return p->step;
    }
  }
  return std::nullopt;
}

std::optional<std::pair<double, double>> SeriesStore::stepExtent(double tMin, double tMax) const {
  if (stepped_ == 0 || !(tMin <= tMax)) return std::nullopt;
  const std::optional<double> newest = lastStepAtOrBefore(tMax);
  if (!newest) return std::nullopt;
  std::optional<double> lowest;
  // In order, the first stepped point of the window has the lowest step; otherwise every one is
  // looked at (a point a later lower step supersedes still holds no lower step than it).
  visitPointsFrom(tMin, 0, [&](const Point& p, bool) {
    if (p.x > tMax) return false;
    if (!hasStep(p.step)) return true;
    lowest = lowest ? std::min(*lowest, p.step) : p.step;
    return !stepsOrdered_;
  });
  if (!lowest) return std::nullopt;  // the newest stepped point lies before the window
  return std::pair{*lowest, *newest};
}

std::size_t SeriesStore::storedBytes() const noexcept {
  return recent_.size() * sizeof(Sample) + buckets_.size() * sizeof(Bucket) +
         nonFiniteSpans_.size() * sizeof(NonFiniteSpan);
}

std::size_t SeriesStore::allocatedBytes() const noexcept {
  return recent_.capacity() * sizeof(Sample) + buckets_.capacity() * sizeof(Bucket) +
         nonFiniteSpans_.size() * sizeof(NonFiniteSpan);
}

}  // namespace livemon::ui
