// Stat::add and logEvent, side by side with a reference implementation of torch.monitor's
// Stat::add algorithm, in the same run. Results: docs/benchmarks.md.
//
//   build/bench/stat_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/step.h>

#include <benchmark/benchmark.h>

#include "stat_bench_samples.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

namespace {

using namespace std::chrono_literals;
using livemon::Aggregation;

// torch.monitor's Stat::add, as its algorithm is described: one std::mutex per add and three
// steady_clock reads (the current window id, "was this window logged" before and after), then
// the sum/min/max/count updates. Logging is reduced to copying the values out.
class TorchReferenceStat {
 public:
  TorchReferenceStat(std::chrono::milliseconds windowSize, int64_t maxSamples)
      : windowSize_(windowSize), maxSamples_(maxSamples) {}

  void add(double value) {
    std::lock_guard guard(mutex_);
    maybeLogLocked();
    if (alreadyLogged()) return;
    value_ = value;
    sum_ += value;
    max_ = std::max(max_, value);
    min_ = std::min(min_, value);
    count_ += 1;
    if (count_ >= maxSamples_) logLocked();
  }

  double lastMean() const { return lastMean_; }

 private:
  uint64_t currentWindowId() const {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now().time_since_epoch());
    return static_cast<uint64_t>(now / windowSize_) + 1;
  }
  bool alreadyLogged() const { return lastLoggedWindowId_ == currentWindowId(); }
  void maybeLogLocked() {
    const uint64_t windowId = currentWindowId();
    const bool logged = alreadyLogged();
    if (windowId_ != windowId && !logged) logLocked();
    windowId_ = windowId;
  }
  void logLocked() {
    lastLoggedWindowId_ = windowId_;
    if (count_ > 0) lastMean_ = sum_ / static_cast<double>(count_);
    sum_ = 0;
    count_ = 0;
    max_ = std::numeric_limits<double>::lowest();
    min_ = std::numeric_limits<double>::max();
  }

  const std::chrono::milliseconds windowSize_;
  const int64_t maxSamples_;
  std::mutex mutex_;
  uint64_t windowId_ = 0;
  uint64_t lastLoggedWindowId_ = 0;
  double value_ = 0;
  double sum_ = 0;
  double max_ = std::numeric_limits<double>::lowest();
  double min_ = std::numeric_limits<double>::max();
  int64_t count_ = 0;
  double lastMean_ = 0;
};

const std::vector<Aggregation> kBasic = {Aggregation::Mean, Aggregation::Count, Aggregation::Sum, Aggregation::Max,
                                         Aggregation::Min};
const std::vector<Aggregation> kWithQuantiles = {Aggregation::Mean, Aggregation::Count, Aggregation::Sum,
                                                 Aggregation::Max,  Aggregation::Min,   Aggregation::P50,
                                                 Aggregation::P90,  Aggregation::P99};
constexpr int64_t kNoCap = std::numeric_limits<int64_t>::max();

using livemon::bench::addLoop;

void BM_Reference_Add_Basic(benchmark::State& state) {
  static TorchReferenceStat* stat = nullptr;
  if (state.thread_index() == 0) stat = new TorchReferenceStat(1s, kNoCap);
  // Google Benchmark starts every thread's loop together, after this setup.
  addLoop(state, *stat);
  if (state.thread_index() == 0) {
    benchmark::DoNotOptimize(stat->lastMean());
  }
}

void BM_Livemon_Add_Basic(benchmark::State& state) {
  static livemon::Stat* stat = nullptr;
  if (state.thread_index() == 0) stat = new livemon::Stat("bench.basic", kBasic, 1s);
  addLoop(state, *stat);
}

void BM_Livemon_Add_Quantiles(benchmark::State& state) {
  static livemon::Stat* stat = nullptr;
  if (state.thread_index() == 0) stat = new livemon::Stat("bench.quantiles", kWithQuantiles, 1s);
  addLoop(state, *stat);
}

// With maxSamples the window needs one count across threads, so add takes the Stat's spin lock
// (the algorithm before per-thread slots). The cap is never reached here.
void BM_Livemon_Add_Capped(benchmark::State& state) {
  static livemon::Stat* stat = nullptr;
  if (state.thread_index() == 0) stat = new livemon::Stat("bench.capped", kBasic, 1s, int64_t{1} << 62);
  addLoop(state, *stat);
}

// The statics above are deliberately leaked: a Stat in use by a benchmark thread must outlive
// the run, and the window thread may still close one of their windows.
BENCHMARK(BM_Reference_Add_Basic)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_Livemon_Add_Basic)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_Livemon_Add_Quantiles)->Threads(1)->UseRealTime();
BENCHMARK(BM_Livemon_Add_Capped)->Threads(1)->Threads(2)->UseRealTime();

void BM_LogEvent(benchmark::State& state) {
  std::atomic<int64_t> seen{0};
  std::vector<livemon::EventHandlerHandle> handles;
  for (int64_t h = 0; h < state.range(0); ++h) {
    handles.push_back(livemon::registerEventHandler(
        [&seen](const livemon::Event&) { seen.fetch_add(1, std::memory_order_relaxed); }));
  }
  const livemon::Event event{"train.step",
                             std::chrono::system_clock::now(),
                             {{"loss", 0.25}, {"step", int64_t{7}}, {"lr", 3e-4}, {"phase", std::string("train")}}};
  for (auto _ : state) {
    livemon::logEvent(event);
  }
  for (const auto& handle : handles) livemon::unregisterEventHandler(handle);
  benchmark::DoNotOptimize(seen.load());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LogEvent)->Arg(0)->Arg(1)->Arg(4);

// What a current step (livemon::setStep) adds to logging a named event, with one handler. The
// reference is the same event with no step set (mode 0). Mode 1: a step is set and the event
// states none, so logEvent(const Event&) hands the handlers a stamped copy. Mode 2: a step is set
// and the event states its own in a "step" field, so it is passed on as it is. Mode 3: a step is
// set and the event is passed as an rvalue, stamped in place (its step is cleared each time so
// every call stamps; logEvent(Event&&) does not move from it).
// What a current step adds to logEvent. Arg: 0 no step set (the reference), 1 a step set and
// the event passed as const Event&, 2 the event states a "step" field, 3 passed as an rvalue,
// 4 the copy logEvent used to make to stamp a const Event& (the old algorithm, for comparison).
// Range(1) 1: the handler reads the step with statedStep, as one that passes it on must.
void BM_LogEvent_Step(benchmark::State& state) {
  std::atomic<int64_t> seen{0};
  const bool readStep = state.range(1) == 1;
  const livemon::EventHandlerHandle handle = livemon::registerEventHandler([&seen, readStep](const livemon::Event& e) {
    seen.fetch_add(readStep ? livemon::statedStep(e).value_or(0) : 1, std::memory_order_relaxed);
  });
  livemon::Event event{"train.step",
                       std::chrono::system_clock::now(),
                       {{"loss", 0.25}, {"lr", 3e-4}, {"grad_norm", 1.5}, {"phase", std::string("train")}}};
  if (state.range(0) == 2) event.data.emplace("step", int64_t{7});
  if (state.range(0) == 0) {
    livemon::clearStep();
  } else {
    livemon::setStep(7);
  }
  for (auto _ : state) {
    if (state.range(0) == 3) {
      livemon::logEvent(std::move(event));
    } else if (state.range(0) == 4) {
      livemon::Event stamped = event;
      stamped.step = 7;
      livemon::logEvent(std::move(stamped));
    } else {
      livemon::logEvent(event);
    }
  }
  livemon::clearStep();
  livemon::unregisterEventHandler(handle);
  benchmark::DoNotOptimize(seen.load());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LogEvent_Step)->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1}});

}  // namespace

BENCHMARK_MAIN();
