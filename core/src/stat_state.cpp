#include "stat_state.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include <livemon/event_handler.h>
#include <livemon/step.h>

#include "window_scheduler.h"

namespace livemon::detail {
namespace {

std::vector<Aggregation> validated(const std::string& name, std::vector<Aggregation> aggregations,
                                   std::chrono::milliseconds windowSize, int64_t maxSamples) {
  if (name.empty()) throw std::invalid_argument("Stat: name must not be empty");
  const std::string where = "Stat '" + name + "': ";
  if (aggregations.empty()) throw std::invalid_argument(where + "aggregations must name at least one aggregation");
  if (windowSize < std::chrono::milliseconds(1)) {
    throw std::invalid_argument(where + "windowSize must be at least 1 ms, got " +
                                std::to_string(windowSize.count()) + " ms");
  }
  if (maxSamples < 1) {
    throw std::invalid_argument(where + "maxSamples must be at least 1, got " + std::to_string(maxSamples));
  }
  std::vector<Aggregation> unique;
  for (Aggregation aggregation : aggregations) {
    if (aggregationName(aggregation) == "unknown") {
      throw std::invalid_argument(where + "aggregations holds an unknown value " +
                                  std::to_string(static_cast<int>(aggregation)));
    }
    bool seen = false;
    for (Aggregation kept : unique) seen = seen || kept == aggregation;
    if (!seen) unique.push_back(aggregation);
  }
  return unique;
}

// The end of the window holding `now`: windows are [k * size, (k + 1) * size) in milliseconds
// since the clock's epoch, as in torch.monitor. std::nullopt when that end cannot be
// represented (windows of centuries): such windows close only on flush, cap or destruction.
std::optional<std::chrono::steady_clock::time_point> windowEnd(std::chrono::steady_clock::time_point now,
                                                               std::chrono::milliseconds size) {
  using std::chrono::milliseconds;
  using std::chrono::nanoseconds;
  const int64_t nowMs = std::chrono::duration_cast<milliseconds>(now.time_since_epoch()).count();
  const int64_t sizeMs = size.count();
  int64_t windowIndex = nowMs / sizeMs;
  if (nowMs < 0 && nowMs % sizeMs != 0) --windowIndex;  // floor, for clocks before their epoch
  constexpr int64_t kMaxMs = std::numeric_limits<nanoseconds::rep>::max() / 1'000'000;
  if (windowIndex + 1 > kMaxMs / sizeMs) return std::nullopt;
  const int64_t endMs = (windowIndex + 1) * sizeMs;
  return std::chrono::steady_clock::time_point(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      milliseconds(endMs)));
}

bool anyQuantile(const std::vector<Aggregation>& aggregations) {
  for (Aggregation aggregation : aggregations) {
    if (isQuantile(aggregation)) return true;
  }
  return false;
}

}  // namespace

StatState::StatState(std::string name, std::vector<Aggregation> aggregations, std::chrono::milliseconds windowSize,
                     int64_t maxSamples, Clock& clock)
    : name_(std::move(name)),
      aggregations_(validated(name_, std::move(aggregations), windowSize, maxSamples)),
      maxSamples_(maxSamples),
      clock_(clock),
      perThread_(maxSamples == std::numeric_limits<int64_t>::max()),
      slots_(anyQuantile(aggregations_)),
      windowMs_(windowSize.count()) {
  for (Aggregation aggregation : aggregations_) {
    keys_.push_back(name_ + "." + std::string(aggregationName(aggregation)));
    last_[aggregation] = 0.0;
    wantVariance_ = wantVariance_ || aggregation == Aggregation::Stddev;
    wantQuantiles_ = wantQuantiles_ || isQuantile(aggregation);
    wantLast_ = wantLast_ || aggregation == Aggregation::Value;
  }
  extras_ = wantVariance_ || wantQuantiles_ || wantLast_;
  if (wantQuantiles_) {
    sketch_ = std::make_unique<QuantileSketch>();
    spare_ = std::make_unique<QuantileSketch>();
  }
}

void StatState::addRest(StatSlot& slot, uint64_t seq, uint64_t epoch, bool first, double value) noexcept {
  StatSlotBuffer& buffer = slot.buffers[epoch & 1];
  StatAccumulator& w = buffer.values;
  if (first) w.shift = value;
  if (wantVariance_) {
    const double d = value - w.shift;
    w.shiftedSum += d;
    w.shiftedSquares += d * d;
  }
  if (wantQuantiles_) buffer.sketch->add(value);
  if (wantLast_) slots_.storeLast(epoch, value);
  endSlotAdd(slot, seq);
  // The thread's first sample of the window: the window may need its close scheduled.
  if (first && !armed_.load(std::memory_order_relaxed)) arm(epoch);
}

void StatState::addSlow(double value) noexcept {
  if (perThread_ && slots_.makeMine(weak_from_this()) != nullptr) {
    add(value);  // now on the new slot
    return;
  }
  bool needArm = false;
  bool reachedCap = false;
  uint64_t epoch = 0;
  lock_.lock();
  if (capped_) [[unlikely]] {
    lock_.unlock();
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  StatAccumulator& w = open_;
  if (w.count == 0) {
    w.shift = value;
    needArm = true;
  }
  epoch = slots_.epoch().load(std::memory_order_relaxed);  // advanced only under lock_
  ++w.count;
  w.sum += value;
  w.min = value < w.min ? value : w.min;
  w.max = value > w.max ? value : w.max;
  if (wantVariance_) {
    const double d = value - w.shift;
    w.shiftedSum += d;
    w.shiftedSquares += d * d;
  }
  if (wantQuantiles_) sketch_->add(value);
  if (wantLast_) slots_.storeLast(epoch, value);
  if (w.count >= maxSamples_) [[unlikely]] {
    capped_ = true;
    reachedCap = true;
  }
  lock_.unlock();
  if (needArm && !armed_.load(std::memory_order_relaxed)) arm(epoch);
  if (reachedCap) [[unlikely]] close(CloseReason::Cap);
}

void StatState::arm(uint64_t epoch) noexcept {
  const auto end = windowEnd(clock_.now(), windowSize());
  {
    std::lock_guard lock(lock_);
    if (armed_.load(std::memory_order_relaxed) || slots_.epoch().load(std::memory_order_relaxed) != epoch) return;
    armed_.store(true, std::memory_order_relaxed);
    // A window too long to end on the clock closes only on flush or destruction.
    if (!end) return;
    armedDeadline_ = *end;
  }
  clock_.scheduler().schedule(weak_from_this(), *end);
}

void StatState::setWindowSize(std::chrono::milliseconds size) noexcept {
  {
    std::lock_guard lock(lock_);
    if (windowMs_.load(std::memory_order_relaxed) == size.count()) return;
    windowMs_.store(size.count(), std::memory_order_relaxed);
    // The close scheduled for the old window's end is ignored; the next add schedules its own.
    armed_.store(false, std::memory_order_relaxed);
    armedDeadline_ = {};
  }
  close(CloseReason::Flush);
}

int64_t StatState::count() const noexcept {
  int64_t locked = 0;
  uint64_t epoch = 0;
  {
    std::lock_guard lock(lock_);
    if (capped_) return 0;
    locked = open_.count;
    epoch = slots_.epoch().load(std::memory_order_relaxed);
  }
  return perThread_ ? locked + slots_.count(epoch) : locked;
}

std::map<Aggregation, double> StatState::get() const {
  std::lock_guard lock(resultMutex_);
  return last_;
}

void StatState::close(CloseReason reason, std::chrono::steady_clock::time_point deadline) noexcept {
  std::unique_lock closing(closeMutex_);
  StatAccumulator closed;
  uint64_t ended = 0;
  {
    std::lock_guard lock(lock_);
    if (reason == CloseReason::Scheduled && (!armed_.load(std::memory_order_relaxed) || deadline != armedDeadline_)) {
      return;
    }
    closed = open_;
    open_ = StatAccumulator{};
    if (wantQuantiles_) std::swap(sketch_, spare_);
    switch (reason) {
      case CloseReason::Scheduled:
        capped_ = false;
        armed_.store(false, std::memory_order_relaxed);
        break;
      case CloseReason::Flush:
        capped_ = false;
        break;
      case CloseReason::Cap:
      case CloseReason::Destroy:
        break;
    }
    ended = slots_.advanceEpoch();
  }
  if (perThread_) slots_.collect(ended, closed, spare_.get());
  if (closed.count == 0) {
    if (spare_) spare_->clear();
    return;
  }
  Event event;
  try {
    std::map<Aggregation, double> values = compute(closed, slots_.last(ended), spare_.get());
    if (spare_) spare_->clear();
    event.name = std::string(kStatEventName);
    event.timestamp = clock_.wallNow();
    // The step current when the window closes, as for any event logged now.
    event.step = currentStep();
    event.data.reserve(keys_.size());
    for (std::size_t i = 0; i < aggregations_.size(); ++i) {
      event.data.emplace(keys_[i], values[aggregations_[i]]);
    }
    std::lock_guard lock(resultMutex_);
    last_ = std::move(values);
  } catch (const std::bad_alloc&) {
    return;  // out of memory: this window is lost, the Stat goes on
  }
  closing.unlock();
  logEvent(std::move(event));
}

std::map<Aggregation, double> StatState::compute(const StatAccumulator& w, double last,
                                                 const QuantileSketch* sketch) const {
  const double n = static_cast<double>(w.count);
  const bool anyNumber = w.min <= w.max;  // false when every sample was NaN
  std::map<Aggregation, double> values;
  for (Aggregation aggregation : aggregations_) {
    double v = 0;
    switch (aggregation) {
      case Aggregation::Value: v = last; break;
      case Aggregation::Mean: v = w.sum / n; break;
      case Aggregation::Count: v = n; break;
      case Aggregation::Sum: v = w.sum; break;
      case Aggregation::Max: v = anyNumber ? w.max : std::nan(""); break;
      case Aggregation::Min: v = anyNumber ? w.min : std::nan(""); break;
      case Aggregation::Stddev: {
        const double mean = w.shiftedSum / n;
        v = std::sqrt(std::max(0.0, w.shiftedSquares / n - mean * mean));
        break;
      }
      case Aggregation::P50: v = sketch->quantile(0.50); break;
      case Aggregation::P90: v = sketch->quantile(0.90); break;
      case Aggregation::P99: v = sketch->quantile(0.99); break;
    }
    values[aggregation] = v;
  }
  return values;
}

}  // namespace livemon::detail
