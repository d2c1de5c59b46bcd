#include <livemon/ui/ingest/sample_folder.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace livemon::ui {

namespace {

// An x whose slot number would not fit an int64 (or no number at all) is not folded.
constexpr double kMaxSlotIndex = 9.0e18;
constexpr int64_t kNoSlot = INT64_MIN;

}  // namespace

SampleFolder::SampleFolder(double slotMs) : slotMs_(slotMs) {
  if (!std::isfinite(slotMs) || !(slotMs > 0.0)) {
    throw std::invalid_argument("SampleFolder: slotMs must be finite and positive, not " + std::to_string(slotMs));
  }
}

int64_t SampleFolder::slotOf(double x) const noexcept {
  const double index = std::floor(x / slotMs_);
  if (!(std::fabs(index) < kMaxSlotIndex)) return kNoSlot;
  return static_cast<int64_t>(index);
}

void SampleFolder::take(Slot& slot, const StatSample& sample) {
  const double y = sample.y;
  const Point point{sample.x, y, sample.step, slot.count++, true};
  if (std::isnan(y)) {
    if (!slot.nan.set) slot.nan = point;
  } else if (std::isinf(y)) {
    Point& inf = y > 0 ? slot.posInf : slot.negInf;
    if (!inf.set) inf = point;
  } else {
    if (!slot.first.set) slot.first = point;
    // Strict: the first of equal extremes, so a flat run gives its first and last only.
    if (!slot.low.set || y < slot.low.y) slot.low = point;
    if (!slot.high.set || y > slot.high.y) slot.high = point;
    slot.last = point;
  }
}

void SampleFolder::writePoints(SeriesId series, const Slot& slot, std::vector<StatSample>& out) {
  std::array<const Point*, kMaxPointsPerSlot> points{};
  std::size_t n = 0;
  for (const Point* p : {&slot.first, &slot.low, &slot.high, &slot.last, &slot.nan, &slot.posInf, &slot.negInf}) {
    if (!p->set) continue;
    // The same sample may be first, lowest, highest and last at once: given once.
    const bool seen = std::any_of(points.begin(), points.begin() + static_cast<std::ptrdiff_t>(n),
                                  [p](const Point* q) { return q->order == p->order; });
    if (!seen) points[n++] = p;
  }
  // Insertion sort by arrival: seven at most.
  for (std::size_t i = 1; i < n; ++i) {
    for (std::size_t j = i; j > 0 && points[j - 1]->order > points[j]->order; --j) std::swap(points[j - 1], points[j]);
  }
  for (std::size_t i = 0; i < n; ++i) out.push_back(StatSample{series, points[i]->x, points[i]->y, points[i]->step});
}

std::size_t SampleFolder::fold(std::vector<StatSample>& samples, const std::unordered_set<SeriesId>& folded) {
  if (folded.empty() || samples.empty()) return 0;
  // Not kept between calls: it would hold on to the largest batch's memory.
  std::vector<StatSample> out;
  out.reserve(samples.size());
  open_.clear();
  openOrder_.clear();
  for (const StatSample& sample : samples) {
    const int64_t index = folded.count(sample.series) != 0 ? slotOf(sample.x) : kNoSlot;
    if (index == kNoSlot) {
      // Not folded: but a folded series' open slot goes first, so its points stay in order.
      if (const auto open = open_.find(sample.series); open != open_.end() && open->second.count > 0) {
        writePoints(sample.series, open->second, out);
        open->second = Slot{};
      }
      out.push_back(sample);
      continue;
    }
    auto [slot, inserted] = open_.try_emplace(sample.series);
    if (inserted) {
      openOrder_.push_back(sample.series);
    } else if (slot->second.count > 0 && slot->second.index != index) {
      writePoints(sample.series, slot->second, out);
      slot->second = Slot{};
    }
    slot->second.index = index;
    take(slot->second, sample);
  }
  for (SeriesId series : openOrder_) {
    const Slot& slot = open_.find(series)->second;
    if (slot.count > 0) writePoints(series, slot, out);
  }
  const std::size_t removed = samples.size() - out.size();
  foldedCount_ += removed;
  samples.swap(out);
  open_.clear();
  openOrder_.clear();
  return removed;
}

}  // namespace livemon::ui
