#include <livemon/ui/model/runs_model.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

QString runStateName(RunState state) {
  switch (state) {
    case RunState::Live: return QObject::tr("live");
    case RunState::Stopped: return QObject::tr("stopped answering");
    case RunState::Recorded: return QObject::tr("recorded");
    case RunState::Finished: return QObject::tr("finished");
  }
  return {};
}

int mainAggregationRank(const QString& aggregation) {
  static const QStringList preferred{QStringLiteral("value"), QStringLiteral("mean"), QStringLiteral("p50"),
                                     QStringLiteral("last")};
  const qsizetype at = preferred.indexOf(aggregation);
  return at >= 0 ? static_cast<int>(at) - static_cast<int>(preferred.size()) : 0;
}

RunsModel::RunsModel(const StatRegistry& registry, RunDisplay& display, QObject* parent)
    : QAbstractTableModel(parent), registry_(registry), display_(display) {
  // A run shown or hidden elsewhere (a selection, a chart) ticks its box here.
  connect(&display_, &RunDisplay::changed, this, [this] {
    if (!runs_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, 0), {Qt::CheckStateRole, Qt::DecorationRole});
  });
}

int RunsModel::rowOf(const QString& run) const {
  for (std::size_t row = 0; row < runs_.size(); ++row) {
    if (runs_[row].name == run) return static_cast<int>(row);
  }
  return -1;
}

int RunsModel::rowOfSource(SourceId source) const {
  for (std::size_t row = 0; row < runs_.size(); ++row) {
    const auto& sources = runs_[row].sources;
    if (std::find(sources.begin(), sources.end(), source) != sources.end()) return static_cast<int>(row);
  }
  return -1;
}

QStringList RunsModel::newConfigKeys(const RunConfig& config) {
  QStringList added;
  for (const auto& entry : config) {
    const QString key = QString::fromStdString(entry.first);
    if (configKeys_.contains(key) || added.contains(key)) continue;
    if (configKeys_.size() + added.size() >= kMaxConfigColumns) {
      ++droppedConfigKeys_;
      continue;
    }
    added << key;
  }
  return added;
}

void RunsModel::apply(const IngestBatch& batch) {
  for (const SourceDescriptor& source : batch.sources) {
    if (!source.info) continue;
    const QString name = QString::fromStdString(source.info->run);
    int row = rowOf(name);
    if (row < 0) {
      row = rowCount();
      beginInsertRows({}, row, row);
      Run run;
      run.name = name;
      run.summaries.resize(static_cast<std::size_t>(summaryKeys_.size()));
      runs_.push_back(std::move(run));
      display_.assign(name);
      endInsertRows();
    }
    Run& run = runs_[static_cast<std::size_t>(row)];
    run.sources.push_back(source.id);
    const double startMs = std::chrono::duration<double, std::milli>(source.info->startTime.time_since_epoch()).count();
    if (!run.startMs || startMs < *run.startMs) run.startMs = startMs;
  }
  for (const RunConfigNote& note : batch.configs) {
    const int row = rowOfSource(note.source);
    if (row < 0 || note.timeNs < runs_[static_cast<std::size_t>(row)].configNs) continue;
    const QStringList added = newConfigKeys(note.config);
    // New columns, in key order: a reset, as a new run's config comes seldom.
    if (!added.isEmpty()) beginResetModel();
    configKeys_ << added;
    configKeys_.sort();
    runs_[static_cast<std::size_t>(row)].config = note.config;
    runs_[static_cast<std::size_t>(row)].configNs = note.timeNs;
    if (!added.isEmpty()) {
      endResetModel();
    } else {
      emit dataChanged(index(row, 0), index(row, columnCount() - 1));
    }
  }
}

void RunsModel::addSeries(const std::vector<SeriesId>& series) {
  for (SeriesId id : series) {
    const SeriesEntry* entry = registry_.series(id);
    if (entry == nullptr) continue;
    const SourceEntry* source = registry_.source(entry->source);
    if (source == nullptr || !source->info) continue;
    const int row = rowOf(QString::fromStdString(source->info->run));
    if (row >= 0) runs_[static_cast<std::size_t>(row)].series.push_back(id);
  }
}

void RunsModel::removeSources(const std::vector<SourceId>& sources, const std::vector<SeriesId>& series) {
  const std::set<SourceId> gone(sources.begin(), sources.end());
  const std::set<SeriesId> goneSeries(series.begin(), series.end());
  for (int row = rowCount() - 1; row >= 0; --row) {
    Run& run = runs_[static_cast<std::size_t>(row)];
    std::erase_if(run.sources, [&](SourceId id) { return gone.contains(id); });
    std::erase_if(run.series, [&](SeriesId id) { return goneSeries.contains(id); });
    if (!run.sources.empty()) continue;
    beginRemoveRows({}, row, row);
    const QString name = run.name;
    runs_.erase(runs_.begin() + row);
    endRemoveRows();
    display_.remove(name);
  }
  dropUnusedConfigKeys();
}

void RunsModel::dropUnusedConfigKeys() {
  QStringList used;
  for (const QString& key : configKeys_) {
    const std::string name = key.toStdString();
    if (std::any_of(runs_.begin(), runs_.end(), [&](const Run& run) { return run.config.contains(name); })) used << key;
  }
  if (used.size() == configKeys_.size()) return;
  // Columns of keys that only runs now gone had: a reset, as for new ones.
  beginResetModel();
  configKeys_ = used;
  endResetModel();
}

void RunsModel::summarise(Run& run) const {
  run.endMs.reset();
  run.lastStep.reset();
  std::fill(run.summaries.begin(), run.summaries.end(), std::nullopt);
  // Per summary key, the run's main aggregation: the best by rank, then by name.
  std::vector<std::optional<std::pair<int, QString>>> chosen(run.summaries.size());
  for (SeriesId id : run.series) {
    const SeriesEntry* entry = registry_.series(id);
    if (entry == nullptr) continue;
    if (const auto last = entry->store.lastX(); last && (!run.endMs || *last > *run.endMs)) run.endMs = last;
    if (const auto steps = entry->store.stepExtent(-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity());
        steps && (!run.lastStep || steps->second > *run.lastStep)) {
      run.lastStep = steps->second;
    }
    const qsizetype key = summaryKeys_.indexOf(entry->stat);
    if (key < 0 || entry->role == SeriesRole::RankLow || entry->role == SeriesRole::RankHigh) continue;
    const std::pair<int, QString> candidate{mainAggregationRank(entry->aggregation), entry->aggregation};
    auto& best = chosen[static_cast<std::size_t>(key)];
    if (!best || candidate < *best) best = candidate;
  }
  for (std::size_t key = 0; key < run.summaries.size(); ++key) {
    std::optional<RunKeySummary>& summary = run.summaries[key];
    double lastX = -std::numeric_limits<double>::infinity();
    for (SeriesId id : run.series) {
      const SeriesEntry* entry = registry_.series(id);
      if (entry == nullptr || !chosen[key] || entry->stat != summaryKeys_[static_cast<qsizetype>(key)] ||
          entry->aggregation != chosen[key]->second || entry->role == SeriesRole::RankLow ||
          entry->role == SeriesRole::RankHigh) {
        continue;
      }
      entry->store.visitPointsFrom(-std::numeric_limits<double>::infinity(), 0, [&](const SeriesStore::Point& p, bool) {
        if (!summary) summary = RunKeySummary{};
        const auto step = hasStep(p.step) ? std::optional<double>(p.step) : std::nullopt;
        if (p.y < summary->min) {
          summary->min = p.y;
          summary->minStep = step;
        }
        if (p.y > summary->max) {
          summary->max = p.y;
          summary->maxStep = step;
        }
        if (p.x >= lastX) {
          lastX = p.x;
          summary->last = p.y;
        }
        return true;
      });
    }
  }
}

void RunsModel::refresh(const std::function<RunState(const SourceEntry&)>& stateOf) {
  for (Run& run : runs_) {
    std::optional<RunState> state;
    for (SourceId id : run.sources) {
      const SourceEntry* source = registry_.source(id);
      if (source == nullptr) continue;
      const RunState of = stateOf(*source);
      // The liveliest source tells: one live rank keeps the run live.
      if (!state || static_cast<int>(of) < static_cast<int>(*state)) state = of;
    }
    run.state = state.value_or(RunState::Finished);
    summarise(run);
  }
  allChanged();
}

void RunsModel::allChanged() {
  if (!runs_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

void RunsModel::setSummaryKeys(const QStringList& keys) {
  QStringList kept;
  for (const QString& key : keys) {
    if (!key.isEmpty() && !kept.contains(key) && kept.size() < kMaxSummaryKeys) kept << key;
  }
  if (kept == summaryKeys_) return;
  beginResetModel();
  summaryKeys_ = kept;
  for (Run& run : runs_) {
    run.summaries.assign(static_cast<std::size_t>(summaryKeys_.size()), std::nullopt);
    summarise(run);
  }
  endResetModel();
}

void RunsModel::setBest(Best best) {
  if (best == best_) return;
  best_ = best;
  allChanged();
  emit headerDataChanged(Qt::Horizontal, 0, columnCount() - 1);
}

QStringList RunsModel::availableKeys() const {
  std::set<QString> keys;
  for (const Run& run : runs_) {
    for (SeriesId id : run.series) {
      if (const SeriesEntry* entry = registry_.series(id)) keys.insert(entry->stat);
    }
  }
  return QStringList(keys.begin(), keys.end());
}

QString RunsModel::runName(int row) const {
  return row >= 0 && row < rowCount() ? runs_[static_cast<std::size_t>(row)].name : QString();
}

const RunConfig* RunsModel::config(int row) const {
  return row >= 0 && row < rowCount() ? &runs_[static_cast<std::size_t>(row)].config : nullptr;
}

std::optional<RunState> RunsModel::state(int row) const {
  if (row < 0 || row >= rowCount()) return std::nullopt;
  return runs_[static_cast<std::size_t>(row)].state;
}

int RunsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(runs_.size()); }

int RunsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kFixedColumns + static_cast<int>(configKeys_.size()) + 4 * static_cast<int>(summaryKeys_.size());
}

}  // namespace livemon::ui
