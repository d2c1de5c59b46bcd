#pragma once

#include <cstdint>
#include <optional>

// The training step a job is on, so events and Stat windows can be plotted by step.
namespace livemon {

// Thread-safe: all three may be called from any thread, also from inside an event handler.
//
// The step is process-wide (one value for every thread), and there is none until the first
// setStep. An event that states no step of its own belongs to the step current when it is
// logged; a Stat window gets the step current when the window closes (so a window that
// spans steps 100 to 163 carries 163, or whatever step is current when it closes on time
// after the job stopped calling setStep). setStep is one relaxed atomic store: cheap enough
// to call every step. Steps need not grow; any int64 value is kept as given except INT64_MIN,
// which means "no step".
void setStep(int64_t step) noexcept;

// The step set last, or none when setStep was never called (or since clearStep).
std::optional<int64_t> currentStep() noexcept;

// Back to "no step": later events carry none until the next setStep.
void clearStep() noexcept;

}  // namespace livemon
