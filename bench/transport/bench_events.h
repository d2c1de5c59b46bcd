#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <livemon/event.h>

namespace livemon::bench {

// The event the transport benchmarks publish: a training step's six fields, one of every value
// type, so encoding costs what a typical event costs.
inline Event sixFieldEvent() {
  return Event{"train.step",
               std::chrono::system_clock::now(),
               {{"loss", 0.4321},
                {"lr", 3e-4},
                {"grad_norm", 1.25},
                {"step", int64_t{123456}},
                {"phase", std::string("train")},
                {"finite", true}}};
}

}  // namespace livemon::bench
