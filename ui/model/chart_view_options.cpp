#include <livemon/ui/model/chart_view_options.h>

#include <QSettings>
#include <QVariantMap>

#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {

namespace {
const QString kSmoothing = QStringLiteral("charts/smoothing");
const QString kLogAll = QStringLiteral("charts/logScaleAll");
const QString kLogPerChart = QStringLiteral("charts/logScale");
// Settings come from a file the user may edit: a per-chart map is kept within reason.
constexpr int kMaxPerChart = 10'000;
}  // namespace

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

void ChartViewOptions::restore(const QSettings& settings) {
  bool ok = false;
  const double weight = settings.value(kSmoothing, kDefaultSmoothing).toDouble(&ok);
  smoothing_ = ok ? clampSmoothing(weight) : kDefaultSmoothing;
  logAll_ = settings.value(kLogAll, false).toBool();
  logPerChart_.clear();
  const QVariantMap perChart = settings.value(kLogPerChart).toMap();
  for (auto it = perChart.begin(); it != perChart.end() && static_cast<int>(logPerChart_.size()) < kMaxPerChart; ++it) {
    if (it.value().toBool() != logAll_) logPerChart_[it.key()] = it.value().toBool();
  }
  bump();
}

void ChartViewOptions::save(QSettings& settings) const {
  settings.setValue(kSmoothing, smoothing_);
  settings.setValue(kLogAll, logAll_);
  QVariantMap perChart;
  for (const auto& [name, on] : logPerChart_) perChart.insert(name, on);
  settings.setValue(kLogPerChart, perChart);
}

}  // namespace livemon::ui
