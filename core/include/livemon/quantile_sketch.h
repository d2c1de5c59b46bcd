#pragma once

#include <cstdint>
#include <vector>

namespace livemon {

// Not thread-safe: one owner at a time; one thread at a time uses a sketch (a Stat's is guarded by
// the Stat's lock).
//
// A mergeable quantile sketch with a fixed relative error.
//
// Each finite non-zero value falls in a bucket given by its sign, binary exponent and the top
// kSubBucketBits bits of its mantissa, so every bucket spans at most a factor 1 + 2^-7. A
// quantile is answered with the point of its bucket that is closest, relatively, to every value
// in it, so the answer is within kRelativeError (0.39 %) of the exact sample quantile: the value
// of rank ceil(q * n) among the n samples. Zeros are counted exactly; NaN is ignored; ±infinity
// is kept as such. Two sketches merge by adding bucket counts, with no loss.
//
// The bound holds while the magnitudes in one sketch span at most kMaxBuckets buckets (64
// binary orders of magnitude); beyond that the smallest magnitudes are merged into one bucket,
// which loosens only the lowest quantiles.
class QuantileSketch {
 public:
  static constexpr int kSubBucketBits = 7;
  static constexpr double kRelativeError = 1.0 / ((1 << (kSubBucketBits + 1)) + 1);
  static constexpr int32_t kMaxBuckets = 64 << kSubBucketBits;

  void add(double value) noexcept;
  // Values of rank ceil(q * count()), q clamped to [0, 1]; NaN when empty.
  double quantile(double q) const noexcept;
  void merge(const QuantileSketch& other);
  // Forgets every value but keeps the allocated range, so the next window costs no allocation.
  void clear() noexcept;

  int64_t count() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }

 private:
  // Not thread-safe: part of its sketch. Bucket counts for keys [offset_, offset_ + counts.size());
  // a key orders magnitudes.
  struct Store {
    int64_t offset = 0;
    std::vector<int64_t> counts;
    int64_t total = 0;

    void add(int64_t key, int64_t n);
    void clear() noexcept;
    void grow(int64_t key);
  };

  static double representative(int64_t key) noexcept;

  Store positive_;
  Store negative_;  // by magnitude
  int64_t zeros_ = 0;
  int64_t positiveInfinities_ = 0;
  int64_t negativeInfinities_ = 0;
  int64_t count_ = 0;
  double min_ = 0;
  double max_ = 0;
};

}  // namespace livemon
