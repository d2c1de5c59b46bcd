#include <livemon/ui/model/stat_registry.h>

#include <algorithm>
#include <chrono>
#include <iterator>
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

std::optional<int64_t> SeriesEntry::rankNear(double x) const {
  if (ranks.empty()) return std::nullopt;
  auto at = std::lower_bound(ranks.begin(), ranks.end(), x, [](const RankAtX& r, double value) { return r.x < value; });
  if (at == ranks.end() || (at != ranks.begin() && x - std::prev(at)->x < at->x - x)) at = std::prev(at);
  return at->rank;
}

StatRegistry::StatRegistry(SeriesStore::Limits limits) : limits_(limits) {}

template <typename Visit>
void StatRegistry::forEachSeries(Visit&& visit) const {
  for (const auto& series : series_) {
    if (series != nullptr) visit(*series);
  }
  for (const auto& series : derivedSeries_) {
    if (series != nullptr) visit(*series);
  }
}

const SourceEntry* StatRegistry::source(SourceId id) const {
  if (id >= kFirstDerivedSource) {
    const std::size_t index = id - kFirstDerivedSource;
    return index < derivedSources_.size() ? derivedSources_[index].get() : nullptr;
  }
  return id < sources_.size() ? sources_[id].get() : nullptr;
}

const SeriesEntry* StatRegistry::series(SeriesId id) const {
  if (id >= kFirstDerivedSeries) {
    const std::size_t index = id - kFirstDerivedSeries;
    return index < derivedSeries_.size() ? derivedSeries_[index].get() : nullptr;
  }
  return id < series_.size() ? series_[id].get() : nullptr;
}

SeriesEntry* StatRegistry::derivedSeries(SeriesId id) {
  return isDerived(id) ? const_cast<SeriesEntry*>(series(id)) : nullptr;
}

SourceId StatRegistry::addDerivedSource(std::shared_ptr<const transport::SourceInfo> info, const QString& label,
                                        const QString& description, const QString& endpoint) {
  auto entry = std::make_unique<SourceEntry>();
  entry->id = kFirstDerivedSource + static_cast<SourceId>(derivedSources_.size());
  entry->info = std::move(info);
  entry->label = label;
  entry->description = description;
  entry->endpoint = endpoint;
  if (entry->info->startTime.time_since_epoch().count() != 0) {
    entry->startMs = std::chrono::duration<double, std::milli>(entry->info->startTime.time_since_epoch()).count();
  }
  derivedSources_.push_back(std::move(entry));
  return derivedSources_.back()->id;
}

SeriesEntry* StatRegistry::addDerivedSeries(SourceId source, const QString& stat, const QString& aggregation,
                                            SeriesKind kind, SeriesRole role) {
  if (source < kFirstDerivedSource || this->source(source) == nullptr) return nullptr;
  auto entry = std::make_unique<SeriesEntry>();
  entry->id = kFirstDerivedSeries + static_cast<SeriesId>(derivedSeries_.size());
  entry->source = source;
  entry->stat = stat;
  entry->aggregation = aggregation;
  entry->kind = kind;
  entry->role = role;
  entry->store = SeriesStore(limits_);
  derivedSeries_.push_back(std::move(entry));
  return derivedSeries_.back().get();
}

void StatRegistry::noteDerivedSample(const SeriesEntry& series, double x) {
  const SourceEntry* owner = source(series.source);
  widen(wallExtent_, x);
  widen(runExtent_, (x - (owner != nullptr && owner->startMs ? *owner->startMs : x)) / 1000.0);
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
  forEachSeries([&](const SeriesEntry& series) {
    if (const auto extent = series.store.stepExtent(window.min, window.max)) {
      widen(steps, extent->first);
      widen(steps, extent->second);
    }
  });
  return steps;
}

std::size_t StatRegistry::storedBytes() const {
  std::size_t bytes = 0;
  forEachSeries([&bytes](const SeriesEntry& series) { bytes += series.store.storedBytes(); });
  return bytes;
}

std::size_t StatRegistry::sourceCount() const noexcept {
  return sources_.size() - static_cast<std::size_t>(std::count(sources_.begin(), sources_.end(), nullptr));
}

std::size_t StatRegistry::seriesCount() const noexcept {
  return series_.size() - static_cast<std::size_t>(std::count(series_.begin(), series_.end(), nullptr));
}

void StatRegistry::clearSamples(const std::function<bool(const SourceEntry&)>& which) {
  for (auto* series : {&series_, &derivedSeries_}) {
    for (auto& entry : *series) {
      const SourceEntry* owner = entry != nullptr ? source(entry->source) : nullptr;
      if (owner != nullptr && which(*owner)) entry->store.clear();
    }
  }
  recomputeExtents();
}

RegistryRemoval StatRegistry::removeSources(const std::function<bool(const SourceEntry&)>& which) {
  RegistryRemoval removal;
  for (auto* sources : {&sources_, &derivedSources_}) {
    for (auto& source : *sources) {
      if (source == nullptr || !which(*source)) continue;
      removal.sources.push_back(source->id);
      source.reset();
    }
  }
  if (removal.empty()) return removal;
  for (auto* series : {&series_, &derivedSeries_}) {
    for (auto& entry : *series) {
      if (entry == nullptr || source(entry->source) != nullptr) continue;
      removal.series.push_back(entry->id);
      entry.reset();
    }
  }
  removal.labelsChanged = relabel();
  recomputeExtents();
  return removal;
}

void StatRegistry::recomputeExtents() {
  wallExtent_.reset();
  runExtent_.reset();
  forEachSeries([this](const SeriesEntry& series) {
    const std::optional<double> first = series.store.firstX();
    const std::optional<double> last = series.store.lastX();
    if (!first || !last) return;
    widen(wallExtent_, *first);
    widen(wallExtent_, *last);
    const SourceEntry* owner = source(series.source);
    const double start = owner != nullptr && owner->startMs ? *owner->startMs : *first;
    widen(runExtent_, (*first - start) / 1000.0);
    widen(runExtent_, (*last - start) / 1000.0);
  });
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

SeriesStore::Limits StatRegistry::rankedLimitsFor(SeriesStore::Limits limits, std::optional<int64_t> worldSize) {
  if (!worldSize || *worldSize <= kRankedLimitsWorld) return limits;
  const auto share = [&](std::size_t capacity) {
    const auto scaled = static_cast<std::size_t>(static_cast<double>(capacity) * kRankedLimitsWorld / static_cast<double>(*worldSize));
    return std::max(std::min(capacity, kMinRankedPoints), scaled);
  };
  limits.recentCapacity = share(limits.recentCapacity);
  limits.bucketCapacity = share(limits.bucketCapacity);
  return limits;
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
    const SourceEntry* owner = source(descriptor.source);
    const bool ranked = owner != nullptr && owner->info && owner->info->rank;
    entry->store = SeriesStore(ranked && rankedLimits_ ? rankedLimitsFor(*rankedLimits_, owner->info->worldSize) : limits_);
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
