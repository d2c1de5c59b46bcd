#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

// Only transport/src includes this header.
namespace livemon::transport::detail {

// Thread-safety: a plain value type.
//
// The sequence numbers of one source's topic delivered so far, as a few disjoint ranges. A single
// "next expected" number would let one message silence the topic: anyone can send a source's
// (clear-text) identity with a number far ahead, and every real event after it would look like a
// duplicate. Here only numbers actually delivered are duplicates. A real stream keeps extending
// one range; a stray number opens another, and when there are too many the one extended longest
// ago is forgotten.
class SequenceRanges {
 public:
  // A jump beyond this (forward past the numbers delivered, or backward below them) is not taken
  // for lost events: no transport loses four billion events between two messages.
  static constexpr uint64_t kMaxPlausibleJump = uint64_t{1} << 32;
  static constexpr std::size_t kMaxRanges = 4;

  enum class Kind {
    First,      // nothing delivered yet: the numbering starts here
    Continues,  // follows on from (or overlaps) numbers delivered
    Gap,        // starts `missingFrom` - first numbers after the closest range below it
    Restart,    // too far from every number delivered to be believed: a new numbering
    Before,     // below all numbers delivered, not too far: late numbers (a second path, a late join)
  };
  // Thread-safety: a plain value type.
  struct Verdict {
    Kind kind = Kind::First;
    uint64_t missingFrom = 0;  // Gap: the first number that did not come
  };

  // Classifies the batch [first, end) against what was delivered; end > first.
  Verdict classify(uint64_t first, uint64_t end) const {
    if (size_ == 0) return {Kind::First, 0};
    const Range* below = nullptr;
    uint64_t lowest = UINT64_MAX;
    for (std::size_t i = 0; i < size_; ++i) {
      const Range& range = ranges_[i];
      if (range.begin <= first && first <= range.end) return {Kind::Continues, 0};
      if (range.end < first && (below == nullptr || range.end > below->end)) below = &range;
      lowest = std::min(lowest, range.begin);
    }
    if (below != nullptr) {
      if (first - below->end <= kMaxPlausibleJump) return {Kind::Gap, below->end};
      return {Kind::Restart, 0};
    }
    if (end < lowest && lowest - end > kMaxPlausibleJump) return {Kind::Restart, 0};
    return {Kind::Before, 0};
  }

  // Whether any number in [first, end) was delivered.
  bool overlaps(uint64_t first, uint64_t end) const {
    for (std::size_t i = 0; i < size_; ++i) {
      if (ranges_[i].begin < end && first < ranges_[i].end) return true;
    }
    return false;
  }
  bool contains(uint64_t sequence) const { return overlaps(sequence, sequence + 1); }

  // Records [first, end) as delivered (end > first).
  void add(uint64_t first, uint64_t end) {
    Range merged{first, end, ++tick_};
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const Range& range = ranges_[i];
      if (range.begin <= merged.end && merged.begin <= range.end) {
        merged.begin = std::min(merged.begin, range.begin);
        merged.end = std::max(merged.end, range.end);
      } else {
        ranges_[kept++] = range;
      }
    }
    if (kept == kMaxRanges) {
      auto oldest = std::min_element(ranges_.begin(), ranges_.end(),
                                     [](const Range& a, const Range& b) { return a.used < b.used; });
      *oldest = merged;
    } else {
      ranges_[kept++] = merged;
    }
    size_ = kept;
  }

 private:
  struct Range {
    uint64_t begin = 0;
    uint64_t end = 0;   // one past the last number
    uint64_t used = 0;  // when it was last extended
  };
  std::array<Range, kMaxRanges> ranges_{};
  std::size_t size_ = 0;
  uint64_t tick_ = 0;
};

}  // namespace livemon::transport::detail
