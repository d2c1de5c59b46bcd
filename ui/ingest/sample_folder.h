#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <livemon/ui/data/ingest_batch.h>

namespace livemon::ui {

// Not thread-safe: one owner at a time (the EventConverter's, on the ingest thread).
// Thins the points of fast lines before the GUI thread pays for them. An event field logged by
// every step of a fast loop gives a line tens of thousands of points a second, far more than a
// chart has pixel columns; storing and redrawing them all made the GUI tick miss its frame. So
// the samples of the lines it is asked to fold are grouped, per line, into slots of `slotMs`
// milliseconds of x, and each slot's run of consecutive samples keeps only its first, lowest,
// highest and last finite value, plus the first NaN, the first +Inf and the first -Inf it holds,
// in the order they came, each with its own step. What a user sees survives: every extreme is drawn (the store and the
// ColumnDecimator keep the same shape for older data), the line enters and leaves each slot where
// the data does, and a NaN stays a NaN point for the markers and alerts that look for it. A slot
// gives at most 7 points, however many samples it held; other lines' samples pass untouched.
class SampleFolder {
 public:
  // A slot far narrower than a pixel column of any time range the dashboard offers.
  static constexpr double kDefaultSlotMs = 2.0;
  // Points a slot can give: first, lowest, highest, last, NaN, +Inf, -Inf.
  static constexpr std::size_t kMaxPointsPerSlot = 7;

  // Throws std::invalid_argument naming the value unless slotMs is finite and positive.
  explicit SampleFolder(double slotMs = kDefaultSlotMs);

  // Folds, in place, the samples of the series in `folded`; the others keep their place. Each
  // series' samples stay in their order; a slot ends where its series' x leaves it (or goes
  // back), and at the end of `samples`. Returns the samples folded away.
  std::size_t fold(std::vector<StatSample>& samples, const std::unordered_set<SeriesId>& folded);

  double slotMs() const noexcept { return slotMs_; }
  // Samples folded away since construction.
  uint64_t foldedCount() const noexcept { return foldedCount_; }

 private:
  // A sample and its position among its slot's samples, which orders the points a slot gives.
  struct Point {
    double x = 0.0;
    double y = 0.0;
    double step = kNoStep;
    uint64_t order = 0;
    bool set = false;
  };
  // The slot a series is in.
  struct Slot {
    int64_t index = 0;
    uint64_t count = 0;
    Point first, low, high, last, nan, posInf, negInf;
  };

  int64_t slotOf(double x) const noexcept;
  static void take(Slot& slot, const StatSample& sample);
  static void writePoints(SeriesId series, const Slot& slot, std::vector<StatSample>& out);

  double slotMs_;
  uint64_t foldedCount_ = 0;
  std::unordered_map<SeriesId, Slot> open_;  // scratch, empty between calls
  std::vector<SeriesId> openOrder_;          // open_'s keys, first opened first
};

}  // namespace livemon::ui
