// livemon._torch_ops: PyTorch's own operators as livemon ranges. A global RecordFunction observer
// in libtorch opens a livemon range when an operator (or a torch.profiler.record_function label)
// starts and closes it when it ends, so they reach the range/<name> Stats and livemon's traces.
// A second observer, on user scopes only, advances livemon's step when "Optimizer.step#..." ends
// (torch wraps every optimizer's step() in that label). Where libtorch has c10::monitor wait
// counters (torch 2.x), a wait counter backend turns torch's own waits into livemon WaitCounters.
//
// PyTorch has no stable C++ ABI, so this file is compiled against the torch that runs it: by
// livemon/torch_ops.py at first use (cached per torch build), or by CMake against libtorch-dev.
// One source for torch 1.13 and 2.x. It reaches livemon's core only through _livemon's capsule
// (range_api.h) and links only libc10 and libtorch_cpu, so it needs no livemon library to build.
// Loaded only by livemon.torch_bridge.install(): `import livemon` never needs it.
//
// The observers run on whichever thread runs an operator, with or without the GIL: they never
// touch Python, never throw, and allocate only a small context per timed call.
#include <pybind11/pybind11.h>

#include <ATen/record_function.h>

#if __has_include(<c10/util/WaitCounter.h>)
#include <c10/util/WaitCounter.h>
#define LIVEMON_HAS_C10_WAIT_COUNTERS 1
#else
#define LIVEMON_HAS_C10_WAIT_COUNTERS 0
#endif

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "range_api.h"

namespace py = pybind11;

namespace livemon::python {
namespace {

const RangeApi* g_api = nullptr;  // set once at import, before any observer is registered
std::atomic<uint64_t> g_timedCalls{0};
std::atomic<uint64_t> g_droppedCalls{0};  // no memory for the context
std::atomic<uint64_t> g_optimizerSteps{0};

// Interning takes a lock in livemon's core; operator names repeat, so each thread remembers the
// ids it got. Keyed by the name's address (an operator's name lives as long as the operator),
// checked against a copy because a record_function label's string may be freed and its address
// reused for another name. An open-addressed table of one cache line per name, so that a lookup
// costs one line and no division: a node-based map cost about 40 ns an operator call here, most
// of it waiting for memory. Bounded: when a name's probe run is full, it takes its first slot.
class NameIdCache {
 public:
  uint32_t idOf(const char* name) noexcept {
    if (!slots_) slots_.reset(new (std::nothrow) Entry[kSlots]);
    if (!slots_) return g_api->internRangeName(name, std::strlen(name));  // out of memory: not remembered
    const std::size_t home = slotOf(name);
    for (std::size_t probe = 0; probe < kProbes; ++probe) {
      Entry& entry = slots_[(home + probe) & (kSlots - 1)];
      if (entry.key == name && entry.holds(name)) return entry.id;
      if (entry.key == nullptr) return remember(entry, name);
    }
    return remember(slots_[home], name);
  }

 private:
  static constexpr std::size_t kSlots = 512;  // a power of two; 32 KiB per thread that runs operators
  static constexpr std::size_t kProbes = 8;
  static constexpr std::size_t kInline = 48;

  struct alignas(64) Entry {
    const char* key = nullptr;
    uint32_t id = 0;
    uint32_t size = 0;
    char inlineName[kInline] = {};       // the name, when it fits (nearly all operator names do)
    std::unique_ptr<char[]> longName;  // otherwise

    const char* copy() const noexcept { return longName ? longName.get() : inlineName; }
    bool holds(const char* name) const noexcept {
      return std::memcmp(copy(), name, size) == 0 && name[size] == '\0';
    }
  };

  static std::size_t slotOf(const char* name) noexcept {
    // Fibonacci hashing of the address; its low bits are alignment and carry no information.
    const uint64_t mixed = (reinterpret_cast<uintptr_t>(name) >> 3) * 0x9E3779B97F4A7C15ULL;
    return static_cast<std::size_t>(mixed >> (64 - 9));  // 9 bits: kSlots
  }

  static uint32_t remember(Entry& entry, const char* name) noexcept {
    const std::size_t size = std::strlen(name);
    const uint32_t id = g_api->internRangeName(name, size);
    if (size > UINT32_MAX) return id;  // only not remembered
    std::unique_ptr<char[]> longName;
    if (size >= kInline) {
      longName.reset(new (std::nothrow) char[size + 1]);
      if (!longName) return id;  // out of memory: the id is still right
      std::memcpy(longName.get(), name, size + 1);
    } else {
      std::memcpy(entry.inlineName, name, size + 1);
    }
    entry.key = name;
    entry.id = id;
    entry.size = static_cast<uint32_t>(size);
    entry.longName = std::move(longName);
    return id;
  }

  static_assert((kSlots & (kSlots - 1)) == 0 && kSlots == std::size_t{1} << 9);
  std::unique_ptr<Entry[]> slots_;  // made at the thread's first operator call
};

thread_local NameIdCache t_nameIds;

struct OpRange final : at::ObserverContext {
  uint32_t mode = 0;
  uint32_t nameId = 0;
  int64_t start = 0;
};

std::unique_ptr<at::ObserverContext> onOpStart(const at::RecordFunction& fn) {
  const uint32_t mode = g_api->rangeMode->load(std::memory_order_relaxed);
  if (mode == 0) return nullptr;  // no range Stats and no trace: nothing to time
  std::unique_ptr<OpRange> range(new (std::nothrow) OpRange);
  if (!range) {
    g_droppedCalls.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  range->mode = mode;
  range->nameId = t_nameIds.idOf(fn.name());
  g_timedCalls.fetch_add(1, std::memory_order_relaxed);
  range->start = g_api->beginRange();
  return range;
}

void onOpEnd(const at::RecordFunction&, at::ObserverContext* context) {
  if (context == nullptr) return;
  const auto* range = static_cast<const OpRange*>(context);
  g_api->endRange(range->nameId, range->mode, range->start);
}

constexpr char kOptimizerStep[] = "Optimizer.step#";

bool isOptimizerStep(const at::RecordFunction& fn) noexcept {
  return std::strncmp(fn.name(), kOptimizerStep, sizeof kOptimizerStep - 1) == 0;
}

// An optimizer's step() that calls its base class's step() (both wrapped by torch) nests two
// Optimizer.step# ranges: only the outermost one ends a training step.
thread_local int t_optimizerStepDepth = 0;

std::unique_ptr<at::ObserverContext> onUserScopeStart(const at::RecordFunction& fn) {
  if (isOptimizerStep(fn)) ++t_optimizerStepDepth;
  return nullptr;
}

void onUserScopeEnd(const at::RecordFunction& fn, at::ObserverContext*) {
  // A step that began before the observer was installed has no depth: it counts as outermost.
  if (!isOptimizerStep(fn) || (t_optimizerStepDepth > 0 && --t_optimizerStepDepth > 0)) return;
  g_api->advanceStep();
  g_optimizerSteps.fetch_add(1, std::memory_order_relaxed);
}

// Registration happens under the GIL (these are Python calls), which serialises it.
std::optional<at::CallbackHandle> g_opsHandle;
std::optional<at::CallbackHandle> g_stepsHandle;

void installOps(int64_t sample) {
  if (sample < 1) throw py::value_error("ops_sample must be at least 1, got " + std::to_string(sample));
  if (g_opsHandle) at::removeCallback(*g_opsHandle);
  g_opsHandle.reset();
  // libtorch samples start and end together; 1/N on average, drawn without a shared counter.
  // Two scopes: operators (and the autograd engine's "evaluate_function: <node>" labels) and
  // record_function labels. Not BACKWARD_FUNCTION, which names each autograd node a second time,
  // nor the TorchScript, mobile and static-runtime scopes an eager training job never enters:
  // libtorch copies a callback into every scope it watches each time a thread's state is set,
  // twice per autograd node, so each extra scope costs the backward pass.
  g_opsHandle = at::addGlobalCallback(at::RecordFunctionCallback(&onOpStart, &onOpEnd)
                                          .scopes({at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE})
                                          .samplingProb(1.0 / static_cast<double>(sample)));
}

bool uninstallOps() {
  if (!g_opsHandle) return false;
  at::removeCallback(*g_opsHandle);
  g_opsHandle.reset();
  return true;
}

void installSteps() {
  if (g_stepsHandle) return;
  g_stepsHandle = at::addGlobalCallback(
      at::RecordFunctionCallback(&onUserScopeStart, &onUserScopeEnd).scopes({at::RecordScope::USER_SCOPE}));
}

bool uninstallSteps() {
  if (!g_stepsHandle) return false;
  at::removeCallback(*g_stepsHandle);
  g_stepsHandle.reset();
  return true;
}

#if LIVEMON_HAS_C10_WAIT_COUNTERS
// torch's wait counters (c10::monitor) hand every wait of a key to each registered backend; a
// key's backends are made when torch first uses that key and live as long as the process, and a
// backend factory cannot be unregistered. So the factory is registered once, and installing or
// uninstalling only flips this flag: keys first used while it is off never reach livemon, and
// backends made earlier stop recording.
std::atomic<bool> g_waitCountersOn{false};
std::atomic<uint64_t> g_torchWaits{0};
bool g_waitCounterFactoryRegistered = false;  // under the GIL

// Thread-safe: torch calls start() and stop() from any thread, concurrently.
//
// One torch wait counter key, recorded into the livemon WaitCounter of the same key (its totals
// and its Stat). Waits are timed by livemon's clock, a few nanoseconds from torch's.
class LivemonWaitBackend final : public c10::monitor::detail::WaitCounterBackendIf {
 public:
  explicit LivemonWaitBackend(void* counter) noexcept : counter_(counter) {}
  ~LivemonWaitBackend() override { g_api->closeWaitCounter(counter_); }
  LivemonWaitBackend(const LivemonWaitBackend&) = delete;
  LivemonWaitBackend& operator=(const LivemonWaitBackend&) = delete;

  intptr_t start(std::chrono::steady_clock::time_point) noexcept override {
    if (!g_waitCountersOn.load(std::memory_order_relaxed)) return 0;
    return reinterpret_cast<intptr_t>(g_api->startWait(counter_));
  }

  void stop(std::chrono::steady_clock::time_point, intptr_t wait) noexcept override {
    if (wait == 0) return;  // started while off, or out of memory
    g_api->stopWait(reinterpret_cast<void*>(wait));
    g_torchWaits.fetch_add(1, std::memory_order_relaxed);
  }

 private:
  void* counter_;
};

class LivemonWaitBackendFactory final : public c10::monitor::detail::WaitCounterBackendFactoryIf {
 public:
  std::unique_ptr<c10::monitor::detail::WaitCounterBackendIf> create(std::string_view key) noexcept override {
    if (!g_waitCountersOn.load(std::memory_order_relaxed)) return nullptr;
    void* counter = g_api->openWaitCounter(key.data(), key.size());
    if (counter == nullptr) return nullptr;  // LIVEMON_DISABLE_WAIT_COUNTERS=1: torch skips this backend
    std::unique_ptr<LivemonWaitBackend> backend(new (std::nothrow) LivemonWaitBackend(counter));
    if (!backend) g_api->closeWaitCounter(counter);
    return backend;
  }
};

bool installWaitCounters() {
  if (!g_waitCounterFactoryRegistered) {
    c10::monitor::detail::registerWaitCounterBackend(std::make_unique<LivemonWaitBackendFactory>());
    g_waitCounterFactoryRegistered = true;
  }
  g_waitCountersOn.store(true, std::memory_order_relaxed);
  return true;
}

bool uninstallWaitCounters() { return g_waitCountersOn.exchange(false, std::memory_order_relaxed); }
bool waitCountersInstalled() { return g_waitCountersOn.load(std::memory_order_relaxed); }
uint64_t torchWaitCount() { return g_torchWaits.load(std::memory_order_relaxed); }
#else
// libtorch 1.13 has no c10::monitor wait counters.
bool installWaitCounters() { return false; }
bool uninstallWaitCounters() { return false; }
bool waitCountersInstalled() { return false; }
uint64_t torchWaitCount() { return 0; }
#endif

const RangeApi* loadRangeApi() {
  py::module_ livemon = py::module_::import("livemon._livemon");
  void* pointer = PyCapsule_GetPointer(livemon.attr("_range_api").ptr(), kRangeApiCapsuleName);
  if (pointer == nullptr) throw py::error_already_set();
  const auto* api = static_cast<const RangeApi*>(pointer);
  if (api->version != kRangeApiVersion) {
    throw py::import_error("livemon._torch_ops was built for another livemon._livemon (range API " +
                           std::to_string(kRangeApiVersion) + ", found " + std::to_string(api->version) + ")");
  }
  return api;
}

}  // namespace
}  // namespace livemon::python

PYBIND11_MODULE(_torch_ops, m) {
  using namespace livemon::python;
  m.doc() = "PyTorch's RecordFunction observers for livemon (use livemon.torch_bridge.install).";
  g_api = loadRangeApi();
  m.def("install_ops", &installOps, py::arg("sample") = 1,
        "Times every operator call (one in `sample` on average) as a livemon range; replaces an earlier one.");
  m.def("uninstall_ops", &uninstallOps, "Removes the operator observer. False if there was none.");
  m.def("install_steps", &installSteps, "Advances livemon's step when an optimizer's step() returns.");
  m.def("uninstall_steps", &uninstallSteps, "Removes the optimizer step observer. False if there was none.");
  m.def("ops_installed", [] { return g_opsHandle.has_value(); });
  m.def("steps_installed", [] { return g_stepsHandle.has_value(); });
  m.def("timed_call_count", [] { return g_timedCalls.load(std::memory_order_relaxed); },
        "Operator calls timed so far (sampled calls while range Stats or a trace were on).");
  m.def("dropped_call_count", [] { return g_droppedCalls.load(std::memory_order_relaxed); },
        "Operator calls not timed for lack of memory.");
  m.def("optimizer_step_count", [] { return g_optimizerSteps.load(std::memory_order_relaxed); },
        "optimizer.step() calls seen by the step observer.");
  m.attr("wait_counters_supported") = py::bool_(LIVEMON_HAS_C10_WAIT_COUNTERS != 0);
  m.def("install_wait_counters", &installWaitCounters,
        "Records the waits of torch's c10::monitor wait counters first used from now on into livemon "
        "WaitCounters of the same keys. False when this libtorch has none (torch 1.13).");
  m.def("uninstall_wait_counters", &uninstallWaitCounters,
        "Stops recording torch's waits. False if they were not being recorded.");
  m.def("wait_counters_installed", &waitCountersInstalled);
  m.def("torch_wait_count", &torchWaitCount, "Waits of torch's wait counters recorded so far.");
}
