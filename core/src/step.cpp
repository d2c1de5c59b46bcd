#include <livemon/step.h>

#include "step_word.h"

namespace livemon {

void setStep(int64_t step) noexcept { detail::stepWord.store(step, std::memory_order_relaxed); }

std::optional<int64_t> currentStep() noexcept {
  const int64_t step = detail::stepWord.load(std::memory_order_relaxed);
  if (step == detail::kNoStep) return std::nullopt;
  return step;
}

void clearStep() noexcept { detail::stepWord.store(detail::kNoStep, std::memory_order_relaxed); }

}  // namespace livemon
