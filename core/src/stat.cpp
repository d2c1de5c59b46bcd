#include <livemon/stat.h>

#include <memory>
#include <utility>

#include <livemon/clock.h>

#include "stat_state.h"

namespace livemon {

Stat::Stat(std::string name, std::vector<Aggregation> aggregations, std::chrono::milliseconds windowSize,
           int64_t maxSamples)
    : Stat(std::move(name), std::move(aggregations), windowSize, maxSamples, systemClock()) {}

Stat::Stat(std::string name, std::vector<Aggregation> aggregations, std::chrono::milliseconds windowSize,
           int64_t maxSamples, Clock& clock)
    : state_(std::make_shared<detail::StatState>(std::move(name), std::move(aggregations), windowSize, maxSamples,
                                                 clock)) {}

Stat::~Stat() { state_->close(detail::StatState::CloseReason::Destroy); }

void Stat::add(double value) noexcept { state_->add(value); }
int64_t Stat::count() const { return state_->count(); }
std::map<Aggregation, double> Stat::get() const { return state_->get(); }
void Stat::flush() { state_->close(detail::StatState::CloseReason::Flush); }
const std::string& Stat::name() const noexcept { return state_->name_; }
const std::vector<Aggregation>& Stat::aggregations() const noexcept { return state_->aggregations_; }
std::chrono::milliseconds Stat::windowSize() const noexcept { return state_->windowSize(); }
int64_t Stat::maxSamples() const noexcept { return state_->maxSamples_; }
int64_t Stat::droppedCount() const noexcept { return state_->droppedCount(); }

}  // namespace livemon
