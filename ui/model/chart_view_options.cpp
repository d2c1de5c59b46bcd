#include <livemon/ui/model/chart_view_options.h>

namespace livemon::ui {

ChartViewOptions::ChartViewOptions(QObject* parent) : QObject(parent), smoothing_(kDefaultSmoothing) {}

void ChartViewOptions::bump() {
  ++version_;
  emit changed();
}

void ChartViewOptions::setSmoothing(double weight) {
  const double clamped = clampSmoothing(weight);
  if (clamped == smoothing_) return;
  smoothing_ = clamped;
  bump();
}

void ChartViewOptions::setLogScaleAll(bool on) {
  if (on == logAll_ && logPerChart_.empty()) return;
  logAll_ = on;
  logPerChart_.clear();
  bump();
}

bool ChartViewOptions::logScale(const QString& statName) const {
  const auto own = logPerChart_.find(statName);
  return own != logPerChart_.end() ? own->second : logAll_;
}

void ChartViewOptions::setLogScale(const QString& statName, bool on) {
  if (logScale(statName) == on) return;
  if (on == logAll_) {
    logPerChart_.erase(statName);
  } else {
    logPerChart_[statName] = on;
  }
  bump();
}

ChartViewState ChartViewOptions::state() const { return ChartViewState{smoothing_, logAll_, logPerChart_}; }

void ChartViewOptions::restore(const ChartViewState& state) {
  smoothing_ = clampSmoothing(state.smoothing);
  logAll_ = state.logScaleAll;
  logPerChart_.clear();
  for (const auto& [name, on] : state.logScale) {
    if (on != logAll_) logPerChart_[name] = on;
  }
  bump();
}

}  // namespace livemon::ui
