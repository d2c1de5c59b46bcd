#include <livemon/ui/model/stat_registry.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

namespace livemon::ui {

namespace {

void widen(std::optional<XRange>& extent, double x) {
  if (!extent) {
    extent = XRange{x, x};
  } else {
    extent->min = std::min(extent->min, x);
    extent->max = std::max(extent->max, x);
  }
}

QString baseLabel(const transport::SourceInfo& info) {
  QString label = info.run.empty() ? QStringLiteral("pid %1").arg(info.pid) : QString::fromStdString(info.run);
  if (info.rank) label += QStringLiteral(" r%1").arg(*info.rank);
  return label;
}

}  // namespace

StatRegistry::StatRegistry(SeriesStore::Limits limits) : limits_(limits) {}

const SourceEntry* StatRegistry::source(SourceId id) const {
  return id < sources_.size() ? sources_[id].get() : nullptr;
}

const SeriesEntry* StatRegistry::series(SeriesId id) const {
  return id < series_.size() ? series_[id].get() : nullptr;
}

PlotTransform StatRegistry::transform(const SeriesEntry& series, TimeAxisMode mode) const {
  if (mode != TimeAxisMode::SinceRunStart) return PlotTransform{0.0, 1.0};
  const SourceEntry* owner = source(series.source);
  const double start = owner != nullptr && owner->startMs ? *owner->startMs : series.store.firstX().value_or(0.0);
  return PlotTransform{start, 0.001};
}

std::optional<XRange> StatRegistry::extent(TimeAxisMode mode) const {
  switch (mode) {
    case TimeAxisMode::WallClock:
      return wallExtent_;
    case TimeAxisMode::SinceRunStart:
      return runExtent_;
    case TimeAxisMode::Step:
      break;
  }
  return stepExtent(XRange{-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()});
}

std::optional<XRange> StatRegistry::stepExtent(XRange window) const {
  std::optional<XRange> steps;
  for (const auto& series : series_) {
    if (series == nullptr) continue;
    if (const auto extent = series->store.stepExtent(window.min, window.max)) {
      widen(steps, extent->first);
      widen(steps, extent->second);
    }
  }
  return steps;
}

std::size_t StatRegistry::storedBytes() const {
  std::size_t bytes = 0;
  for (const auto& series : series_) bytes += series->store.storedBytes();
  return bytes;
}

std::size_t StatRegistry::sourceCount() const noexcept {
  return sources_.size() - static_cast<std::size_t>(std::count(sources_.begin(), sources_.end(), nullptr));
}

std::size_t StatRegistry::seriesCount() const noexcept {
  return series_.size() - static_cast<std::size_t>(std::count(series_.begin(), series_.end(), nullptr));
}

void StatRegistry::clearSamples(const std::function<bool(const SourceEntry&)>& which) {
  for (const auto& series : series_) {
    if (series == nullptr) continue;
    const SourceEntry* owner = source(series->source);
    if (owner != nullptr && which(*owner)) series->store.clear();
  }
  recomputeExtents();
}

RegistryRemoval StatRegistry::removeSources(const std::function<bool(const SourceEntry&)>& which) {
  RegistryRemoval removal;
  for (auto& source : sources_) {
    if (source == nullptr || !which(*source)) continue;
    removal.sources.push_back(source->id);
    source.reset();
  }
  if (removal.empty()) return removal;
  for (auto& series : series_) {
    if (series == nullptr || source(series->source) != nullptr) continue;
    removal.series.push_back(series->id);
    series.reset();
  }
  removal.labelsChanged = relabel();
  recomputeExtents();
  return removal;
}

void StatRegistry::recomputeExtents() {
  wallExtent_.reset();
  runExtent_.reset();
  for (const auto& series : series_) {
    if (series == nullptr) continue;
    const std::optional<double> first = series->store.firstX();
    const std::optional<double> last = series->store.lastX();
    if (!first || !last) continue;
    widen(wallExtent_, *first);
    widen(wallExtent_, *last);
    const SourceEntry* owner = source(series->source);
    const double start = owner != nullptr && owner->startMs ? *owner->startMs : *first;
    widen(runExtent_, (*first - start) / 1000.0);
    widen(runExtent_, (*last - start) / 1000.0);
  }
}

// Short labels name the run, then the rank; where two sources would still look alike the pid is
// added, and then a counter (a publisher restarted with the same pid).
bool StatRegistry::relabel() {
  std::vector<SourceEntry*> present;
  for (const auto& source : sources_) {
    if (source != nullptr) present.push_back(source.get());
  }
  std::map<QString, int> baseCount;
  for (const SourceEntry* source : present) ++baseCount[baseLabel(*source->info)];
  std::map<QString, int> withPidCount;
  std::vector<QString> labels;
  labels.reserve(present.size());
  for (const SourceEntry* source : present) {
    QString label = baseLabel(*source->info);
    if (baseCount[label] > 1) label += QStringLiteral(":%1").arg(source->info->pid);
    labels.push_back(label);
    ++withPidCount[label];
  }
  bool changed = false;
  std::map<QString, int> seen;
  for (std::size_t i = 0; i < present.size(); ++i) {
    QString label = labels[i];
    if (withPidCount[label] > 1) label += QStringLiteral(" #%1").arg(++seen[labels[i]]);
    if (present[i]->label != label) {
      if (!present[i]->label.isEmpty()) changed = true;
      present[i]->label = label;
    }
  }
  return changed;
}

RegistryChanges StatRegistry::apply(const IngestBatch& batch) {
  RegistryChanges changes;
  for (const SourceDescriptor& descriptor : batch.sources) {
    if (descriptor.id != sources_.size()) continue;  // ids are dense and arrive in order
    auto entry = std::make_unique<SourceEntry>();
    entry->id = descriptor.id;
    entry->info = descriptor.info;
    entry->description = QString::fromStdString(transport::describe(*descriptor.info));
    entry->endpoint = QString::fromStdString(descriptor.endpoint);
    if (descriptor.info->startTime.time_since_epoch().count() != 0) {
      entry->startMs =
          std::chrono::duration<double, std::milli>(descriptor.info->startTime.time_since_epoch()).count();
    }
    sources_.push_back(std::move(entry));
    changes.newSources.push_back(descriptor.id);
  }
  if (!changes.newSources.empty()) changes.labelsChanged = relabel();

  for (const SeriesDescriptor& descriptor : batch.series) {
    if (descriptor.id != series_.size()) continue;
    // A removed source's series, converted before it was removed: its id stays taken.
    if (descriptor.source < sources_.size() && sources_[descriptor.source] == nullptr) {
      series_.push_back(nullptr);
      continue;
    }
    auto entry = std::make_unique<SeriesEntry>();
    entry->id = descriptor.id;
    entry->source = descriptor.source;
    entry->stat = QString::fromStdString(descriptor.stat);
    entry->aggregation = QString::fromStdString(descriptor.aggregation);
    entry->kind = descriptor.kind;
    entry->store = SeriesStore(limits_);
    series_.push_back(std::move(entry));
    changes.newSeries.push_back(descriptor.id);
  }

  for (const StatSample& sample : batch.samples) {
    if (sample.series >= series_.size() || series_[sample.series] == nullptr) continue;
    SeriesEntry& series = *series_[sample.series];
    SourceEntry* owner = series.source < sources_.size() ? sources_[series.source].get() : nullptr;
    // A source that did not say when it started counts from its first sample.
    if (owner != nullptr && !owner->startMs) owner->startMs = sample.x;
    series.store.append(sample.x, sample.y, sample.step);
    widen(wallExtent_, sample.x);
    const double start = owner != nullptr ? *owner->startMs : sample.x;
    widen(runExtent_, (sample.x - start) / 1000.0);
    ++changes.samples;
  }
  return changes;
}

}  // namespace livemon::ui
