#include <livemon/quantile_sketch.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <new>

namespace livemon {
namespace {

constexpr int kKeyShift = 52 - QuantileSketch::kSubBucketBits;
constexpr uint64_t kSignBit = uint64_t{1} << 63;
constexpr uint64_t kInfinityBits = 0x7FF0000000000000ULL;
constexpr int64_t kGrowthSlack = 64;  // spare buckets added on the side that grows

}  // namespace

void QuantileSketch::Store::add(int64_t key, int64_t n) {
  int64_t index = key - offset;
  if (index < 0 || index >= static_cast<int64_t>(counts.size())) {
    grow(key);
    index = std::clamp<int64_t>(key - offset, 0, static_cast<int64_t>(counts.size()) - 1);
  }
  counts[static_cast<std::size_t>(index)] += n;
  total += n;
}

void QuantileSketch::Store::grow(int64_t key) {
  const auto size = static_cast<int64_t>(counts.size());
  int64_t low = offset;
  int64_t high = offset + size - 1;
  if (size == 0) {
    low = key - kGrowthSlack;
    high = key + kGrowthSlack;
  } else if (key < offset) {
    low = key;
    low -= std::clamp<int64_t>(kMaxBuckets - (high - low + 1), 0, kGrowthSlack);
  } else {
    high = key;
    high += std::clamp<int64_t>(kMaxBuckets - (high - low + 1), 0, kGrowthSlack);
  }
  low = std::max<int64_t>(low, 0);
  // Too wide: keep the largest magnitudes, which carry the upper quantiles a training dashboard
  // watches; smaller keys land in the lowest bucket.
  if (high - low + 1 > kMaxBuckets) low = high - kMaxBuckets + 1;
  std::vector<int64_t> grown(static_cast<std::size_t>(high - low + 1), 0);
  for (int64_t i = 0; i < size; ++i) {
    const int64_t target = std::max(offset + i, low);
    grown[static_cast<std::size_t>(target - low)] += counts[static_cast<std::size_t>(i)];
  }
  counts = std::move(grown);
  offset = low;
}

void QuantileSketch::Store::clear() noexcept {
  std::fill(counts.begin(), counts.end(), 0);
  total = 0;
}

void QuantileSketch::add(double value) noexcept {
  if (std::isnan(value)) return;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  ++count_;
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const uint64_t magnitude = bits & ~kSignBit;
  if (magnitude == 0) {
    ++zeros_;
    return;
  }
  if (magnitude >= kInfinityBits) {
    ++((bits & kSignBit) ? negativeInfinities_ : positiveInfinities_);
    return;
  }
  const auto key = static_cast<int64_t>(magnitude >> kKeyShift);
  try {
    ((bits & kSignBit) ? negative_ : positive_).add(key, 1);
  } catch (const std::bad_alloc&) {
    --count_;  // could not make room: the sample is not counted
  }
}

double QuantileSketch::representative(int64_t key) noexcept {
  const double low = std::bit_cast<double>(static_cast<uint64_t>(key) << kKeyShift);
  const double high = std::bit_cast<double>(static_cast<uint64_t>(key + 1) << kKeyShift);
  if (std::isinf(high)) return low;
  if (low == 0) return high / 2;
  // The point with the same relative distance to both ends of [low, high): 2*low*high/(low+high),
  // written so that it cannot overflow near the largest doubles.
  const double ratio = high / low;
  return low * (2 * ratio / (1 + ratio));
}

double QuantileSketch::quantile(double q) const noexcept {
  if (count_ == 0) return std::numeric_limits<double>::quiet_NaN();
  q = std::isnan(q) ? 0.5 : std::clamp(q, 0.0, 1.0);
  int64_t rank = static_cast<int64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<int64_t>(rank, 1, count_);
  if (rank == 1) return min_;  // the extremes are known exactly
  if (rank == count_) return max_;
  double answer = 0;
  auto found = [&](int64_t n) {
    rank -= n;
    return rank <= 0;
  };
  if (found(negativeInfinities_)) {
    answer = -std::numeric_limits<double>::infinity();
  } else {
    bool done = false;
    for (std::size_t i = negative_.counts.size(); i-- > 0 && !done;) {
      if (found(negative_.counts[i])) {
        answer = -representative(negative_.offset + static_cast<int64_t>(i));
        done = true;
      }
    }
    if (!done && found(zeros_)) {
      answer = 0;
      done = true;
    }
    for (std::size_t i = 0; i < positive_.counts.size() && !done; ++i) {
      if (found(positive_.counts[i])) {
        answer = representative(positive_.offset + static_cast<int64_t>(i));
        done = true;
      }
    }
    if (!done) answer = std::numeric_limits<double>::infinity();
  }
  // The exact extremes are known; never answer outside them.
  return std::clamp(answer, min_, max_);
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.count_ == 0) return;
  auto mergeStore = [](Store& into, const Store& from) {
    for (std::size_t i = 0; i < from.counts.size(); ++i) {
      if (from.counts[i] != 0) into.add(from.offset + static_cast<int64_t>(i), from.counts[i]);
    }
  };
  mergeStore(positive_, other.positive_);
  mergeStore(negative_, other.negative_);
  zeros_ += other.zeros_;
  positiveInfinities_ += other.positiveInfinities_;
  negativeInfinities_ += other.negativeInfinities_;
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
}

void QuantileSketch::clear() noexcept {
  positive_.clear();
  negative_.clear();
  zeros_ = 0;
  positiveInfinities_ = 0;
  negativeInfinities_ = 0;
  count_ = 0;
  min_ = max_ = 0;
}

}  // namespace livemon
