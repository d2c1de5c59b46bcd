#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>

#include <livemon/event.h>
#include <livemon/transport/event_batch_view.h>

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

// A sum over every field of an event, owning or borrowed, so that no decoder's work can be left
// out of a timing.
inline double touch(const Event& event) {
  double sum = 0;
  for (const auto& field : event.data) {
    sum += static_cast<double>(field.first.size());
    if (const double* value = std::get_if<double>(&field.second)) sum += *value;
  }
  return sum;
}
inline double touch(const transport::EventView& event) {
  double sum = 0;
  for (const transport::FieldView& field : event.fields()) {
    sum += static_cast<double>(field.key.size());
    if (const double* value = std::get_if<double>(&field.value)) sum += *value;
  }
  return sum;
}

}  // namespace livemon::bench
