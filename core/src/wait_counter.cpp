#include <livemon/wait_counter.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string_view>

#include <livemon/stat.h>

namespace livemon {
namespace detail {

// Thread-safe: every member may be called from any thread. The totals and Stat of one key.
class WaitCounterState {
 public:
  WaitCounterState(const std::string& key, Clock& clock)
      : clock_(clock),
        stat_(key, {Aggregation::Count, Aggregation::Mean, Aggregation::Max, Aggregation::P50, Aggregation::P99},
              WaitCounter::kStatWindow, std::numeric_limits<int64_t>::max(), clock) {}

  void begin() noexcept { active_.fetch_add(1, std::memory_order_relaxed); }

  void finish(std::chrono::nanoseconds waited) noexcept {
    const int64_t ns = std::max<int64_t>(waited.count(), 0);
    active_.fetch_sub(1, std::memory_order_relaxed);
    calls_.fetch_add(1, std::memory_order_relaxed);
    totalNs_.fetch_add(ns, std::memory_order_relaxed);
    int64_t longest = maxNs_.load(std::memory_order_relaxed);
    while (ns > longest && !maxNs_.compare_exchange_weak(longest, ns, std::memory_order_relaxed)) {
    }
    stat_.add(static_cast<double>(ns) / 1e6);
  }

  WaitCounterTotals totals() const noexcept {
    return WaitCounterTotals{active_.load(std::memory_order_relaxed), calls_.load(std::memory_order_relaxed),
                             std::chrono::nanoseconds(totalNs_.load(std::memory_order_relaxed)),
                             std::chrono::nanoseconds(maxNs_.load(std::memory_order_relaxed))};
  }

  Clock& clock_;

 private:
  std::atomic<int64_t> active_{0};
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> totalNs_{0};
  std::atomic<int64_t> maxNs_{0};
  Stat stat_;
};

namespace {

// Thread-safe: stateFor() may be called from any thread (one mutex).
//
// Keys on the system clock keep their totals for the life of the process; keys on a test clock
// live while a counter or guard uses them, since their clock may go away.
class WaitCounterRegistry {
 public:
  static WaitCounterRegistry& instance() {
    static WaitCounterRegistry* registry = new WaitCounterRegistry;  // used during exit too
    return *registry;
  }

  std::shared_ptr<WaitCounterState> stateFor(const std::string& key, Clock& clock) {
    std::lock_guard lock(mutex_);
    Slot& slot = slots_[key];
    if (auto existing = slot.weak.lock()) return existing;
    auto state = std::make_shared<WaitCounterState>(key, clock);
    slot.weak = state;
    if (&clock == &systemClock()) slot.strong = state;
    return state;
  }

 private:
  struct Slot {
    std::shared_ptr<WaitCounterState> strong;
    std::weak_ptr<WaitCounterState> weak;
  };
  std::mutex mutex_;
  std::map<std::string, Slot, std::less<>> slots_;
};

bool disabledByEnvironment() {
  const char* value = std::getenv("LIVEMON_DISABLE_WAIT_COUNTERS");
  return value != nullptr && std::string_view(value) != "" && std::string_view(value) != "0";
}

}  // namespace
}  // namespace detail

WaitGuard::WaitGuard(std::shared_ptr<detail::WaitCounterState> state,
                     std::chrono::steady_clock::time_point start) noexcept
    : state_(std::move(state)), start_(start) {}

WaitGuard::WaitGuard(WaitGuard&& other) noexcept : state_(std::move(other.state_)), start_(other.start_) {}

WaitGuard& WaitGuard::operator=(WaitGuard&& other) noexcept {
  if (this != &other) {
    stop();
    state_ = std::move(other.state_);
    start_ = other.start_;
  }
  return *this;
}

WaitGuard::~WaitGuard() { stop(); }

void WaitGuard::stop() noexcept {
  if (!state_) return;
  state_->finish(state_->clock_.now() - start_);
  state_.reset();
}

WaitCounter::WaitCounter(std::string key) : WaitCounter(std::move(key), systemClock()) {}

WaitCounter::WaitCounter(std::string key, Clock& clock) : key_(std::move(key)) {
  if (key_.empty()) throw std::invalid_argument("WaitCounter: key must not be empty");
  if (!detail::disabledByEnvironment()) state_ = detail::WaitCounterRegistry::instance().stateFor(key_, clock);
}

WaitGuard WaitCounter::start() {
  if (!state_) return WaitGuard();
  state_->begin();
  return WaitGuard(state_, state_->clock_.now());
}

WaitCounterTotals WaitCounter::totals() const { return state_ ? state_->totals() : WaitCounterTotals{}; }

}  // namespace livemon
