#include <livemon/step.h>

#include <atomic>
#include <limits>

namespace livemon {
namespace {

// "No step" is kept in-band, so that a step is one atomic word and setStep one store. The
// value is reserved: setStep(INT64_MIN) is read back as no step at all.
constexpr int64_t kNoStep = std::numeric_limits<int64_t>::min();

std::atomic<int64_t>& stepWord() noexcept {
  static std::atomic<int64_t> step{kNoStep};
  return step;
}

}  // namespace

void setStep(int64_t step) noexcept { stepWord().store(step, std::memory_order_relaxed); }

std::optional<int64_t> currentStep() noexcept {
  const int64_t step = stepWord().load(std::memory_order_relaxed);
  if (step == kNoStep) return std::nullopt;
  return step;
}

void clearStep() noexcept { stepWord().store(kNoStep, std::memory_order_relaxed); }

}  // namespace livemon
