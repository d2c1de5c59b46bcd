#include <livemon/ui/model/ranges_model.h>

#include <algorithm>
#include <cmath>

#include <QDateTime>
#include <QLocale>

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

// The value index a column shows; -1 for the text columns and Total.
int valueIndexOfColumn(int column) {
  switch (column) {
    case RangesModel::CountColumn:
      return 0;
    case RangesModel::MeanColumn:
      return 1;
    case RangesModel::P50Column:
      return 2;
    case RangesModel::P99Column:
      return 3;
    case RangesModel::MaxColumn:
      return 4;
    default:
      return -1;
  }
}

bool isDurationColumn(int column) { return column >= RangesModel::MeanColumn && column <= RangesModel::MaxColumn; }

QString formatCount(double count) {
  if (!std::isfinite(count)) return QString::number(count);
  if (count == std::floor(count) && std::abs(count) < 9e15) return QLocale().toString(static_cast<qlonglong>(count));
  return QString::number(count, 'g', 6);
}

const QString kMissing = QStringLiteral("—");

}  // namespace

std::optional<QString> rangeNameOfStat(const QString& statName) {
  const QLatin1String prefix(kRangeStatPrefix.data(), static_cast<qsizetype>(kRangeStatPrefix.size()));
  if (!statName.startsWith(prefix) || statName.size() == prefix.size()) return std::nullopt;
  return statName.mid(prefix.size());
}

QString formatDurationMs(double ms) {
  if (std::isnan(ms)) return QStringLiteral("NaN");
  if (std::isinf(ms)) return ms > 0 ? QStringLiteral("∞") : QStringLiteral("-∞");
  if (ms == 0.0) return QStringLiteral("0 ms");
  struct Unit {
    double perMs;
    const char* name;
  };
  static constexpr Unit kUnits[] = {{1e6, "ns"}, {1e3, "µs"}, {1.0, "ms"}, {1e-3, "s"}};
  const double magnitude = std::abs(ms);
  for (std::size_t i = 0; i < std::size(kUnits); ++i) {
    const double scaled = magnitude * kUnits[i].perMs;
    // Three significant digits of the value as rounded: 99.96 reads "100", not "100.0", and
    // 999.96 µs reads "1.00 ms", not "1000 µs".
    int decimals = 2;
    double shown = std::round(scaled * 100.0) / 100.0;
    while (decimals > 0 && shown >= std::pow(10.0, 3 - decimals)) {
      --decimals;
      shown = std::round(scaled * std::pow(10.0, decimals)) / std::pow(10.0, decimals);
    }
    if (shown < 1000.0 || i + 1 == std::size(kUnits)) {
      return QStringLiteral("%1%2 %3")
          .arg(ms < 0 ? QStringLiteral("-") : QString(), QString::number(shown, 'f', decimals),
               QString::fromUtf8(kUnits[i].name));
    }
  }
  return {};
}

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
    if (target.value == Count && std::isfinite(sample.y)) values.total = values.total.value_or(0.0) + sample.y;
  }
}

void RangesModel::publish() {
  static const QList<int> kRoles{Qt::DisplayRole, Qt::EditRole, SortRole, Qt::ToolTipRole};
  // One dataChanged per run of adjacent changed rows (spanning their changed columns): every
  // range's window lands at once, and a sorting proxy does its work per signal.
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
    for (int column = CountColumn; column < ColumnCount; ++column) {
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
    if (which(row.source)) row.current = Values{};
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
  if (column == TotalColumn) return values.total;
  if (column == LastSeenColumn) return values.lastSeen;
  const int value = valueIndexOfColumn(column);
  return value >= 0 ? values.latest[static_cast<std::size_t>(value)] : std::nullopt;
}

bool RangesModel::same(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return *a == *b || (std::isnan(*a) && std::isnan(*b));
}

bool RangesModel::same(const Values& a, const Values& b) {
  for (std::size_t i = 0; i < a.latest.size(); ++i) {
    if (!same(a.latest[i], b.latest[i])) return false;
  }
  return same(a.total, b.total) && same(a.lastSeen, b.lastSeen);
}

QString RangesModel::sourceLabel(SourceId id) const {
  const SourceEntry* entry = registry_.source(id);
  return entry != nullptr ? entry->label : QStringLiteral("?");
}

int RangesModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : publishedRows_; }

int RangesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RangesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Row& row = rows_[static_cast<std::size_t>(index.row())];
  const int column = index.column();
  if (role == Qt::ForegroundRole) return row.stale ? QVariant(staleForeground_) : QVariant();
  if (column == RangeColumn || column == SourceColumn) {
    switch (role) {
      case Qt::DisplayRole:
      case Qt::EditRole:
      case SortRole:
        return column == RangeColumn ? row.name : sourceLabel(row.source);
      case Qt::ToolTipRole: {
        const SourceEntry* entry = registry_.source(row.source);
        return tr("Stat %1 from %2")
            .arg(statName(index.row()), entry != nullptr ? entry->description : QStringLiteral("?"));
      }
      default:
        return {};
    }
  }
  const std::optional<double> value = cell(row.shown, column);
  if (column == LastSeenColumn && value) {
    // On the publisher's clock, as the charts' time axis.
    const QDateTime time = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(*value)));
    if (role == Qt::DisplayRole) return QLocale().toString(time.time(), QStringLiteral("HH:mm:ss"));
    if (role == Qt::ToolTipRole) {
      return row.stale ? tr("Latest window at %1: none since, for longer than usual").arg(QLocale().toString(time, QLocale::LongFormat))
                       : tr("Latest window at %1").arg(QLocale().toString(time, QLocale::LongFormat));
    }
  }
  switch (role) {
    case Qt::DisplayRole:
      if (!value) return kMissing;
      return isDurationColumn(column) ? formatDurationMs(*value) : formatCount(*value);
    case Qt::EditRole:
      return value ? QVariant(*value) : QVariant();
    case SortRole:
      return value && !std::isnan(*value) ? QVariant(*value) : QVariant();
    case Qt::ToolTipRole:
      if (!value) return tr("Not in the Stat's windows");
      return isDurationColumn(column) ? tr("%1 ms").arg(QString::number(*value, 'g', 9)) : formatCount(*value);
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    default:
      return {};
  }
}

QVariant RangesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return QAbstractTableModel::headerData(section, orientation, role);
  if (role == Qt::TextAlignmentRole) {
    return QVariant::fromValue(Qt::Alignment((section >= CountColumn ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter));
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case RangeColumn:
        return tr("The range's name (its Stat is range/<name>)");
      case SourceColumn:
        return tr("The publisher that timed it");
      case CountColumn:
        return tr("Times the range ran in the latest window");
      case TotalColumn:
        return tr("Times the range ran since the dashboard first saw it");
      case MeanColumn:
        return tr("Mean duration in the latest window");
      case P50Column:
        return tr("Median duration in the latest window");
      case P99Column:
        return tr("99th percentile duration in the latest window");
      case MaxColumn:
        return tr("Longest duration in the latest window");
      case LastSeenColumn:
        return tr("When the latest window was; a range with no window for a while is dimmed");
      default:
        return {};
    }
  }
  if (role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case RangeColumn:
      return tr("Range");
    case SourceColumn:
      return tr("Source");
    case CountColumn:
      return tr("Count");
    case TotalColumn:
      return tr("Total");
    case MeanColumn:
      return tr("Mean");
    case P50Column:
      return tr("p50");
    case P99Column:
      return tr("p99");
    case MaxColumn:
      return tr("Max");
    case LastSeenColumn:
      return tr("Last seen");
    default:
      return {};
  }
}

}  // namespace livemon::ui
