#include <livemon/ui/model/ranges_model.h>

#include <algorithm>
#include <cmath>

#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

namespace {

// The aggregation a Stat key ends with, as a RangesModel value index; -1 for the others.
int valueIndexOf(std::string_view aggregation) {
  static constexpr std::string_view kNames[] = {"count", "mean", "p50", "p99", "max"};
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i) {
    if (aggregation == kNames[i]) return i;
  }
  return -1;
}

}  // namespace

RangesModel::RangesModel(const StatRegistry& registry, const Clock* clock, QObject* parent)
    : QAbstractTableModel(parent), registry_(registry), clock_(clock != nullptr ? clock : &systemClock()) {}

void RangesModel::apply(const IngestBatch& batch) {
  for (const SeriesDescriptor& descriptor : batch.series) {
    if (targets_.size() <= descriptor.id) targets_.resize(descriptor.id + 1);
    // Only a Stat's windows: an event named "range/..." has fields, not timings.
    if (descriptor.kind != SeriesKind::StatWindow || !descriptor.stat.starts_with(kRangeStatPrefix)) continue;
    const int value = valueIndexOf(descriptor.aggregation);
    if (value < 0) continue;  // p90, min, or a key without an aggregation: not a column here
    const std::optional<QString> name = rangeNameOfStat(QString::fromStdString(descriptor.stat));
    if (!name) continue;
    std::pair<SourceId, QString> key{descriptor.source, *name};
    if (rows_.size() >= maxRows_ && !rowIndex_.contains(key)) {
      unlisted_.insert(std::move(key));
      continue;
    }
    const auto [found, inserted] = rowIndex_.try_emplace(std::move(key), static_cast<int>(rows_.size()));
    if (inserted) {
      Row row;
      row.source = descriptor.source;
      row.name = *name;
      rows_.push_back(std::move(row));
    }
    rows_[static_cast<std::size_t>(found->second)].series[static_cast<std::size_t>(value)] = descriptor.id;
    targets_[descriptor.id] = Target{found->second, value};
  }
  for (const StatSample& sample : batch.samples) {
    if (sample.series >= targets_.size()) continue;
    const Target target = targets_[sample.series];
    if (target.row < 0) continue;
    Values& values = rows_[static_cast<std::size_t>(target.row)].current;
    values.latest[static_cast<std::size_t>(target.value)] = sample.y;
    // A window's aggregations share its time; an older window (out of order) is not the latest.
    if (!values.lastSeen || sample.x > *values.lastSeen) {
      if (values.lastSeen) values.interval = sample.x - *values.lastSeen;
      values.lastSeen = sample.x;
    }
    if (target.value == Count && std::isfinite(sample.y)) values.calls = values.calls.value_or(0.0) + sample.y;
    if (target.value == Count || target.value == Mean) {
      addToTotalTime(rows_[static_cast<std::size_t>(target.row)], target.value, sample.x, sample.y);
    }
  }
}

void RangesModel::addToTotalTime(Row& row, int value, double x, double y) {
  WindowProduct& window = row.window;
  if (window.x != x) window = WindowProduct{x, std::nullopt, std::nullopt, false};
  (value == Count ? window.count : window.mean) = y;
  if (window.added || !window.count || !window.mean) return;
  window.added = true;
  const double time = *window.count * *window.mean;
  // A window of no calls (or a NaN mean) adds nothing; a NaN would poison the sum for good.
  if (std::isfinite(time)) row.current.totalTime = row.current.totalTime.value_or(0.0) + time;
}

bool RangesModel::isStepRangeName(const QString& name) {
  const QString lower = name.toLower();
  for (const char* step : {"train_step", "training_step", "train.step", "train/step", "trainstep", "step", "iteration"}) {
    if (lower == QLatin1String(step)) return true;
  }
  return false;
}

void RangesModel::link() {
  linkedRows_ = rows_.size();
  stepRows_.clear();
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    Row& row = rows_[r];
    if (isStepRangeName(row.name)) stepRows_.try_emplace(row.source, static_cast<int>(r));
    // The nearest enclosing name the same source times: "a/b/c" in "a/b", else in "a".
    row.parent = -1;
    for (qsizetype slash = row.name.lastIndexOf(QLatin1Char('/')); slash > 0;
         slash = row.name.lastIndexOf(QLatin1Char('/'), slash - 1)) {
      const auto found = rowIndex_.find({row.source, row.name.left(slash)});
      if (found != rowIndex_.end()) {
        row.parent = found->second;
        break;
      }
    }
  }
}

void RangesModel::derive() {
  if (linkedRows_ != rows_.size()) link();
  std::vector<double> childTime(rows_.size(), 0.0);
  std::vector<bool> hasChildren(rows_.size(), false);
  for (const Row& row : rows_) {
    if (row.parent < 0) continue;
    hasChildren[static_cast<std::size_t>(row.parent)] = true;
    childTime[static_cast<std::size_t>(row.parent)] += row.current.totalTime.value_or(0.0);
  }
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    Values& values = rows_[r].current;
    const auto step = stepRows_.find(rows_[r].source);
    const std::optional<double> stepTime =
        step != stepRows_.end() ? rows_[static_cast<std::size_t>(step->second)].current.totalTime : std::nullopt;
    values.stepShare = values.totalTime && stepTime && *stepTime > 0.0
                           ? std::optional<double>(100.0 * *values.totalTime / *stepTime)
                           : std::nullopt;
    values.selfTime = std::nullopt;
    if (!values.totalTime || (!hasChildren[r] && rows_[r].parent < 0)) continue;
    // Windows of a parent and its children close apart: never below zero.
    values.selfTime = std::max(0.0, *values.totalTime - childTime[r]);
  }
}

bool RangesModel::nestingKnown() const {
  for (int row = 0; row < publishedRows_; ++row) {
    if (rows_[static_cast<std::size_t>(row)].parent >= 0) return true;
  }
  return false;
}

QString RangesModel::stepRange(SourceId source) const {
  const auto step = stepRows_.find(source);
  return step != stepRows_.end() && step->second < publishedRows_ ? rows_[static_cast<std::size_t>(step->second)].name
                                                                   : QString();
}

void RangesModel::publish() {
  static const QList<int> kRoles{Qt::DisplayRole, Qt::EditRole, SortRole, Qt::ToolTipRole};
  // One dataChanged per run of adjacent changed rows (spanning their changed columns): every
  // range's window lands at once, and a sorting proxy does its work per signal.
  derive();
  bool anyChanged = false;
  int runFirst = -1;
  int firstColumn = ColumnCount;
  int lastColumn = -1;
  const auto endRun = [&](int end) {
    if (runFirst >= 0) emit dataChanged(index(runFirst, firstColumn), index(end - 1, lastColumn), kRoles);
    runFirst = -1;
    firstColumn = ColumnCount;
    lastColumn = -1;
  };
  for (int r = 0; r < publishedRows_; ++r) {
    Row& row = rows_[static_cast<std::size_t>(r)];
    if (same(row.current, row.shown)) {
      endRun(r);
      continue;
    }
    for (int column = CallsColumn; column < ColumnCount; ++column) {
      if (!same(cell(row.current, column), cell(row.shown, column))) {
        firstColumn = std::min(firstColumn, column);
        lastColumn = std::max(lastColumn, column);
      }
    }
    row.shown = row.current;
    anyChanged = true;
    if (runFirst < 0) runFirst = r;
  }
  endRun(publishedRows_);
  // A new window may bring a row back to life at once; a row falling silent is noticed within
  // kStaleCheck.
  updateStale(anyChanged);
  if (publishedRows_ < static_cast<int>(rows_.size())) {
    beginInsertRows(QModelIndex(), publishedRows_, static_cast<int>(rows_.size()) - 1);
    for (std::size_t r = static_cast<std::size_t>(publishedRows_); r < rows_.size(); ++r) {
      rows_[r].shown = rows_[r].current;
      rows_[r].stale = staleNow(rows_[r]);
      if (std::find(publishedSources_.begin(), publishedSources_.end(), rows_[r].source) == publishedSources_.end()) {
        publishedSources_.push_back(rows_[r].source);
      }
    }
    publishedRows_ = static_cast<int>(rows_.size());
    endInsertRows();
  }
}

bool RangesModel::staleNow(const Row& row) const {
  if (!row.shown.lastSeen) return false;  // no window yet (or cleared): nothing to call old
  std::optional<double> nowMs = referenceTime_ ? referenceTime_(row.source) : std::nullopt;
  if (!nowMs) nowMs = std::chrono::duration<double, std::milli>(clock_->wallNow().time_since_epoch()).count();
  const double allowed = std::max(static_cast<double>(kStaleMinimum.count()), kStaleIntervals * row.shown.interval.value_or(0.0));
  return *nowMs - *row.shown.lastSeen > allowed;
}

void RangesModel::updateStale(bool force) {
  const auto now = clock_->now();
  if (!force && now - lastStaleCheck_ < kStaleCheck) return;
  lastStaleCheck_ = now;
  static const QList<int> kRoles{Qt::ForegroundRole};
  int runFirst = -1;
  for (int r = 0; r <= publishedRows_; ++r) {
    bool flipped = false;
    if (r < publishedRows_) {
      Row& row = rows_[static_cast<std::size_t>(r)];
      const bool stale = staleNow(row);
      flipped = stale != row.stale;
      row.stale = stale;
    }
    if (flipped && runFirst < 0) runFirst = r;
    if (!flipped && runFirst >= 0) {
      emit dataChanged(index(runFirst, 0), index(r - 1, ColumnCount - 1), kRoles);
      runFirst = -1;
    }
  }
}

bool RangesModel::isStale(int row) const {
  return row >= 0 && row < publishedRows_ && rows_[static_cast<std::size_t>(row)].stale;
}

void RangesModel::clearValues(const std::function<bool(SourceId)>& which) {
  for (Row& row : rows_) {
    if (which(row.source)) {
      row.current = Values{};
      row.window = WindowProduct{};
    }
  }
}

void RangesModel::removeSources(const std::vector<SourceId>& sources) {
  const auto removed = [&sources](const Row& row) {
    return std::find(sources.begin(), sources.end(), row.source) != sources.end();
  };
  std::erase_if(unlisted_, [&sources](const auto& entry) {
    return std::find(sources.begin(), sources.end(), entry.first) != sources.end();
  });
  // Rows not yet published go unannounced.
  rows_.erase(std::remove_if(rows_.begin() + publishedRows_, rows_.end(), removed), rows_.end());
  // Published rows go a run of adjacent rows at a time, from the bottom, so the rows of each run
  // keep the numbers the views know them by until it is removed.
  for (int last = publishedRows_ - 1; last >= 0;) {
    if (!removed(rows_[static_cast<std::size_t>(last)])) {
      --last;
      continue;
    }
    int first = last;
    while (first > 0 && removed(rows_[static_cast<std::size_t>(first - 1)])) --first;
    beginRemoveRows(QModelIndex(), first, last);
    rows_.erase(rows_.begin() + first, rows_.begin() + last + 1);
    publishedRows_ -= last - first + 1;
    reindex();  // before endRemoveRows: the views' handlers may already ask for rows
    endRemoveRows();
    last = first - 1;
  }
  reindex();
}

void RangesModel::reindex() {
  rowIndex_.clear();
  linkedRows_ = 0;  // rows moved: link() again
  for (Target& target : targets_) target = Target{};
  publishedSources_.clear();
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    const Row& row = rows_[r];
    rowIndex_.emplace(std::pair{row.source, row.name}, static_cast<int>(r));
    for (std::size_t value = 0; value < row.series.size(); ++value) {
      if (row.series[value] == kNoSeries) continue;
      targets_[row.series[value]] = Target{static_cast<int>(r), static_cast<int>(value)};
    }
    const bool published = static_cast<int>(r) < publishedRows_;
    if (published && std::find(publishedSources_.begin(), publishedSources_.end(), row.source) == publishedSources_.end()) {
      publishedSources_.push_back(row.source);
    }
  }
}

void RangesModel::sourceLabelsChanged() {
  if (publishedRows_ == 0) return;
  emit dataChanged(index(0, SourceColumn), index(publishedRows_ - 1, SourceColumn));
}

int RangesModel::rowOf(SourceId source, const QString& rangeName) const {
  const auto found = rowIndex_.find({source, rangeName});
  return found != rowIndex_.end() && found->second < publishedRows_ ? found->second : -1;
}

QString RangesModel::rangeName(int row) const {
  return row >= 0 && row < publishedRows_ ? rows_[static_cast<std::size_t>(row)].name : QString();
}

SourceId RangesModel::source(int row) const {
  return row >= 0 && row < publishedRows_ ? rows_[static_cast<std::size_t>(row)].source : SourceId{0};
}

QString RangesModel::statName(int row) const {
  if (row < 0 || row >= publishedRows_) return {};
  return QString::fromUtf8(kRangeStatPrefix.data(), static_cast<qsizetype>(kRangeStatPrefix.size())) +
         rows_[static_cast<std::size_t>(row)].name;
}

std::vector<SeriesId> RangesModel::durationSeries(int row) const {
  std::vector<SeriesId> ids;
  if (row < 0 || row >= publishedRows_) return ids;
  for (int value : {Mean, P50, P99, Max}) {
    const SeriesId id = rows_[static_cast<std::size_t>(row)].series[static_cast<std::size_t>(value)];
    if (id != kNoSeries) ids.push_back(id);
  }
  return ids;
}

std::optional<double> RangesModel::cell(const Values& values, int column) {
  switch (column) {
    case CallsColumn:
      return values.calls;
    case TotalTimeColumn:
      return values.totalTime;
    case TimePerSecondColumn: {
      const std::optional<double>& count = values.latest[Count];
      const std::optional<double>& mean = values.latest[Mean];
      if (!count || !mean || !values.interval || !(*values.interval > 0.0)) return std::nullopt;
      return *count * *mean / *values.interval * 1000.0;
    }
    case StepShareColumn:
      return values.stepShare;
    case SelfTimeColumn:
      return values.selfTime;
    case MeanColumn:
      return values.latest[Mean];
    case P50Column:
      return values.latest[P50];
    case P99Column:
      return values.latest[P99];
    case MaxColumn:
      return values.latest[Max];
    case LastSeenColumn:
      return values.lastSeen;
    default:
      return std::nullopt;
  }
}

bool RangesModel::same(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return *a == *b || (std::isnan(*a) && std::isnan(*b));
}

bool RangesModel::same(const Values& a, const Values& b) {
  for (std::size_t i = 0; i < a.latest.size(); ++i) {
    if (!same(a.latest[i], b.latest[i])) return false;
  }
  return same(a.calls, b.calls) && same(a.totalTime, b.totalTime) && same(a.lastSeen, b.lastSeen) &&
         same(a.interval, b.interval) && same(a.stepShare, b.stepShare) && same(a.selfTime, b.selfTime);
}

QString RangesModel::sourceLabel(SourceId id) const {
  const SourceEntry* entry = registry_.source(id);
  return entry != nullptr ? entry->label : QStringLiteral("?");
}

int RangesModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : publishedRows_; }

int RangesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

}  // namespace livemon::ui
