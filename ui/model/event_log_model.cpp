#include <livemon/ui/model/event_log_model.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>
#include <string_view>

#include <QDateTime>
#include <QFont>
#include <QFontDatabase>

#include <livemon/ui/data/stat_key.h>

namespace livemon::ui {

namespace {

char lowerAscii(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool containsIgnoringCase(std::string_view haystack, std::string_view lowerNeedle) {
  if (lowerNeedle.empty()) return true;
  const auto found = std::search(haystack.begin(), haystack.end(), lowerNeedle.begin(), lowerNeedle.end(),
                                 [](char a, char b) { return lowerAscii(a) == b; });
  return found != haystack.end();
}

QString formatTime(int64_t timeNs) {
  const QDateTime time = QDateTime::fromMSecsSinceEpoch(timeNs / 1'000'000);
  return time.time().toString(QStringLiteral("HH:mm:ss.zzz"));
}

const QString kUnknown = QStringLiteral("?");

}  // namespace

EventLogModel::EventLogModel(std::size_t capacity, QObject* parent, std::size_t byteBudget)
    : QAbstractTableModel(parent),
      capacity_(capacity),
      byteBudget_(byteBudget),
      rings_{Ring(std::max<std::size_t>(capacity, 1)), Ring(statWindowCapacity(capacity))} {
  if (capacity_ == 0) throw std::invalid_argument("EventLogModel: capacity must be at least 1");
  if (byteBudget_ == 0) throw std::invalid_argument("EventLogModel: byteBudget must be at least 1");
  // Qt models count rows in int.
  if (capacity_ > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw std::invalid_argument("EventLogModel: capacity must be at most 2147483647");
  }
  fixedFont_ = QFontDatabase::systemFont(QFontDatabase::FixedFont);
}

void EventLogModel::setSourceLabel(SourceId id, const QString& label) {
  if (sourceLabels_.size() <= id) sourceLabels_.resize(id + 1);
  sourceLabels_[id] = label;
  if (!filterLower_.empty()) {
    sourceMatches_.resize(sourceLabels_.size(), 0);
    sourceMatches_[id] = containsIgnoringCase(label.toStdString(), filterLower_) ? 1 : 0;
  }
}

void EventLogModel::setEventName(NameId id, const QString& name) {
  if (eventNames_.size() <= id) eventNames_.resize(id + 1);
  eventNames_[id] = name;
  if (statNames_.size() <= id) statNames_.resize(id + 1, 0);
  statNames_[id] = isStatEventName(name.toStdString()) ? 1 : 0;
  if (!filterLower_.empty()) {
    nameMatches_.resize(eventNames_.size(), 0);
    nameMatches_[id] = containsIgnoringCase(name.toStdString(), filterLower_) ? 1 : 0;
  }
}

const QString& EventLogModel::sourceLabel(SourceId id) const {
  return id < sourceLabels_.size() ? sourceLabels_[id] : kUnknown;
}

const QString& EventLogModel::eventName(NameId id) const {
  return id < eventNames_.size() ? eventNames_[id] : kUnknown;
}

bool EventLogModel::matchesText(const LogEntry& entry) const {
  if (filterLower_.empty()) return true;
  if (entry.source < sourceMatches_.size() && sourceMatches_[entry.source] != 0) return true;
  if (entry.name < nameMatches_.size() && nameMatches_[entry.name] != 0) return true;
  return containsIgnoringCase(entry.data, filterLower_);
}

EventLogModel::Slot& EventLogModel::Ring::at(uint64_t seq) {
  const auto index = static_cast<std::size_t>(seq % capacity_);
  const std::size_t block = index / kBlockSize;
  while (blocks_.size() <= block) {
    const std::size_t blockStart = blocks_.size() * kBlockSize;
    blocks_.push_back(std::make_unique<Slot[]>(std::min(kBlockSize, capacity_ - blockStart)));
  }
  return blocks_[block][index % kBlockSize];
}

uint64_t EventLogModel::keyOfRow(int row) const {
  return !indexed() ? keyOf(kOthers, rings_[kOthers].first + static_cast<uint64_t>(row))
                    : matches_[static_cast<std::size_t>(row)];
}

int EventLogModel::storedRows() const noexcept {
  return static_cast<int>(!indexed() ? rings_[kOthers].size() : matches_.size());
}

bool EventLogModel::shown(uint64_t key) const {
  const Ring& ring = rings_[key & 1];
  if ((key >> 1) < ring.first) return false;
  return !showStatWindows_ || ring.at(key >> 1).order >= firstShownOrder();
}

void EventLogModel::evictFront(RingId id) {
  Ring& ring = rings_[id];
  Slot& slot = ring.at(ring.first++);
  storedBytes_ -= slot.entry.data.size();
  // The data goes now rather than when the slot is reused (see takeEvicted()).
  evicted_.push_back(std::exchange(slot.entry.data, std::string()));
  evictedBelow_[id] = slot.order + 1;
}

void EventLogModel::evictOldest() {
  const Ring& others = rings_[kOthers];
  const Ring& stats = rings_[kStatWindows];
  if (stats.size() == 0) {
    evictFront(kOthers);
  } else if (others.size() == 0) {
    evictFront(kStatWindows);
  } else {
    evictFront(others.at(others.first).order < stats.at(stats.first).order ? kOthers : kStatWindows);
  }
}

void EventLogModel::append(std::vector<LogEntry>&& entries) {
  if (entries.empty()) return;
  // Nobody takes them (a model used without a dashboard): freed here, within a bound.
  if (evicted_.size() > kEvictedKept) evicted_ = {};
  received_ += entries.size();
  // More than the log holds, in rows or bytes: the oldest of them would be evicted at once, so
  // skip them. The newest always stays.
  std::size_t skip = entries.size() > capacity_ ? entries.size() - capacity_ : 0;
  std::size_t incomingBytes = 0;
  for (std::size_t i = skip; i < entries.size(); ++i) incomingBytes += entries[i].data.size();
  while (incomingBytes > byteBudget_ && skip + 1 < entries.size()) incomingBytes -= entries[skip++].data.size();

  // 1. Store, evicting as the rings, the row count and the bytes require; the new rows are listed
  // after the rows shown so far.
  const std::size_t shownBefore = static_cast<std::size_t>(rows_);
  const uint64_t othersFirstBefore = rings_[kOthers].first;
  const uint64_t othersEndBefore = rings_[kOthers].end;
  for (std::size_t i = skip; i < entries.size(); ++i) {
    LogEntry& entry = entries[i];
    const RingId id = isStatWindow(entry) ? kStatWindows : kOthers;
    Ring& ring = rings_[id];
    if (ring.size() == ring.capacity()) {
      evictFront(id);
    } else if (storedCount() == capacity_) {
      evictOldest();
    }
    const uint64_t seq = ring.end++;
    Slot& slot = ring.at(seq);
    storedBytes_ += entry.data.size();
    slot.entry = std::move(entry);
    slot.order = nextOrder_++;
    while (storedBytes_ > byteBudget_ && storedCount() > 1) evictOldest();
    if (indexed() && (id == kOthers || showStatWindows_) && matchesText(slot.entry)) matches_.push_back(keyOf(id, seq));
  }

  // 2. The rows shown so far that left at the front; the rows that stay in number now show the
  // events that moved up. A row beyond the stored ones (when fewer arrive than leave) shows
  // nothing until step 3 removes it.
  std::size_t leaving = 0;
  if (!indexed()) {
    leaving = static_cast<std::size_t>(std::min(rings_[kOthers].first, othersEndBefore) - othersFirstBefore);
  } else {
    // Evictions leave a prefix of the rows (shown() is monotonic along matches_), which may
    // include rows of this batch.
    std::size_t gone = 0;
    while (gone < matches_.size() && !shown(matches_[gone])) ++gone;
    matches_.erase(matches_.begin(), matches_.begin() + static_cast<std::ptrdiff_t>(gone));
    leaving = std::min(gone, shownBefore);
  }
  if (leaving > 0 && rows_ > 0) {
    emit dataChanged(index(0, 0), index(rows_ - 1, ColumnCount - 1));
    emit rowsShifted(static_cast<int>(leaving));
  }

  // 3. The difference at the end.
  const int stored = storedRows();
  if (stored > rows_) {
    beginInsertRows(QModelIndex(), rows_, stored - 1);
    rows_ = stored;
    endInsertRows();
  } else if (stored < rows_) {
    beginRemoveRows(QModelIndex(), stored, rows_ - 1);
    rows_ = stored;
    endRemoveRows();
  }
}

void EventLogModel::clear() {
  beginResetModel();
  for (Ring& ring : rings_) ring.release();
  matches_.clear();
  nextOrder_ = 0;
  evictedBelow_[kOthers] = evictedBelow_[kStatWindows] = 0;
  storedBytes_ = 0;
  received_ = 0;
  rows_ = 0;
  endResetModel();
}

std::size_t EventLogModel::removeIf(const std::function<bool(const LogEntry&)>& which) {
  std::size_t removed = 0;
  beginResetModel();
  for (Ring& ring : rings_) {
    std::vector<Slot> kept;
    for (uint64_t seq = ring.first; seq < ring.end; ++seq) {
      Slot& slot = ring.at(seq);
      if (which(slot.entry)) {
        ++removed;
        storedBytes_ -= slot.entry.data.size();
        std::string().swap(slot.entry.data);
      } else {
        kept.push_back(std::move(slot));
      }
    }
    // Back in the ring from slot 0, in the same order; each keeps its order among both rings.
    ring.first = 0;
    ring.end = kept.size();
    for (std::size_t i = 0; i < kept.size(); ++i) ring.at(i) = std::move(kept[i]);
  }
  received_ -= removed;
  rebuildMatches();
  rows_ = storedRows();
  endResetModel();
  return removed;
}

void EventLogModel::rebuildMatches() {
  matches_.clear();
  sourceMatches_.assign(sourceLabels_.size(), 0);
  nameMatches_.assign(eventNames_.size(), 0);
  if (!filterLower_.empty()) {
    for (std::size_t i = 0; i < sourceLabels_.size(); ++i) {
      sourceMatches_[i] = containsIgnoringCase(sourceLabels_[i].toStdString(), filterLower_) ? 1 : 0;
    }
    for (std::size_t i = 0; i < eventNames_.size(); ++i) {
      nameMatches_[i] = containsIgnoringCase(eventNames_[i].toStdString(), filterLower_) ? 1 : 0;
    }
  }
  if (!indexed()) return;
  // Both rings merged by order (only the other one while Stat windows are hidden).
  const Ring& others = rings_[kOthers];
  const Ring& stats = rings_[kStatWindows];
  uint64_t other = others.first;
  uint64_t stat = showStatWindows_ ? stats.first : stats.end;
  while (other < others.end || stat < stats.end) {
    const bool takeOther = stat == stats.end || (other < others.end && others.at(other).order < stats.at(stat).order);
    const uint64_t key = takeOther ? keyOf(kOthers, other++) : keyOf(kStatWindows, stat++);
    if (shown(key) && matchesText(slotOf(key).entry)) matches_.push_back(key);
  }
}

void EventLogModel::setFilterText(const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed == filterText_) return;
  beginResetModel();
  filterText_ = trimmed;
  filterLower_ = trimmed.toLower().toStdString();
  rebuildMatches();
  rows_ = storedRows();
  endResetModel();
}

void EventLogModel::setShowStatWindows(bool show) {
  if (show == showStatWindows_) return;
  beginResetModel();
  showStatWindows_ = show;
  rebuildMatches();
  rows_ = storedRows();
  endResetModel();
}

int EventLogModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : rows_;
}

int EventLogModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString EventLogModel::cellText(const LogEntry& entry, int column) const {
  switch (column) {
    case TimeColumn:
      return formatTime(entry.timeNs);
    case StepColumn:
      return entry.step == LogEntry::kNoStep ? QString() : QString::number(entry.step);
    case SourceColumn:
      return sourceLabel(entry.source);
    case NameColumn:
      return eventName(entry.name);
    case DataColumn:
      return QString::fromStdString(entry.data);
    default:
      return {};
  }
}

QVariant EventLogModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  if (index.row() >= storedRows()) return {};  // a row about to be removed after a slide
  const LogEntry& entry = slotOf(keyOfRow(index.row())).entry;
  switch (role) {
    case Qt::DisplayRole:
      return cellText(entry, index.column());
    case Qt::ToolTipRole:
      if (index.column() == TimeColumn) {
        return QDateTime::fromMSecsSinceEpoch(entry.timeNs / 1'000'000).toString(Qt::ISODateWithMs);
      }
      return cellText(entry, index.column());
    case Qt::FontRole:
      if (index.column() == DataColumn || index.column() == TimeColumn || index.column() == StepColumn) {
        return fixedFont_;
      }
      return {};
    case Qt::TextAlignmentRole:
      if (index.column() == StepColumn) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    default:
      return {};
  }
}

QVariant EventLogModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case TimeColumn:
      return tr("Time");
    case StepColumn:
      return tr("Step");
    case SourceColumn:
      return tr("Source");
    case NameColumn:
      return tr("Name");
    case DataColumn:
      return tr("Data");
    default:
      return {};
  }
}

QString EventLogModel::rowsAsText(const std::vector<int>& rows) const {
  QString text;
  const int count = storedRows();
  for (const int row : rows) {
    if (row < 0 || row >= count) continue;
    const LogEntry& entry = slotOf(keyOfRow(row)).entry;
    const QDateTime time = QDateTime::fromMSecsSinceEpoch(entry.timeNs / 1'000'000);
    text += time.toString(Qt::ISODateWithMs);
    for (int column = StepColumn; column < ColumnCount; ++column) {
      text += QLatin1Char('\t');
      text += cellText(entry, column);
    }
    text += QLatin1Char('\n');
  }
  return text;
}

QString logSourceLabel(const SourceInfo& source) {
  SourceInfo unranked = source;
  unranked.rank.reset();
  const QString where = QString::fromStdString(describe(unranked));
  if (!source.rank) return where;
  QString rank = QStringLiteral("rank %1").arg(*source.rank);
  if (source.worldSize) rank += QStringLiteral("/%1").arg(*source.worldSize);
  return rank + QStringLiteral(" · ") + where;
}

}  // namespace livemon::ui
