// RunsModel as a table: its columns, cells and headers, and the RunsFilterModel that sorts and
// filters it for the Runs panel.
#include <livemon/ui/model/runs_model.h>

#include <cmath>
#include <type_traits>
#include <variant>

#include <QColor>
#include <QDateTime>

#include <livemon/ui/model/run_display.h>

namespace livemon::ui {

namespace {

enum FixedColumn { kRun, kState, kStart, kDuration, kStep };

const char* const kPartKeys[] = {"last", "min", "max", "best_step"};

QVariant variantOf(const DataValue& value) {
  return std::visit(
      [](const auto& v) -> QVariant {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return QString::fromStdString(v);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return QVariant::fromValue(static_cast<qlonglong>(v));
        } else {
          return QVariant::fromValue(v);
        }
      },
      value);
}

QString durationText(double ms) {
  const auto seconds = static_cast<qint64>(std::llround(std::max(0.0, ms) / 1000.0));
  if (seconds < 60) return QObject::tr("%1 s").arg(seconds);
  if (seconds < 3600) return QObject::tr("%1 min %2 s").arg(seconds / 60).arg(seconds % 60, 2, 10, QLatin1Char('0'));
  return QObject::tr("%1 h %2 min").arg(seconds / 3600).arg((seconds / 60) % 60, 2, 10, QLatin1Char('0'));
}

QString displayOf(const QVariant& value) {
  if (!value.isValid()) return {};
  if (value.typeId() == QMetaType::Double) return QString::number(value.toDouble(), 'g', 6);
  if (value.typeId() == QMetaType::Bool) return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
  return value.toString();
}

bool isNumber(const QVariant& value) {
  return value.typeId() == QMetaType::Double || value.typeId() == QMetaType::LongLong;
}

}  // namespace

bool RunsModel::isCell(const QModelIndex& index) const {
  // Not checkIndex(), which warns: views ask the root's flags as a matter of course.
  return index.isValid() && index.model() == this && !index.parent().isValid() && index.row() < rowCount() &&
         index.column() < columnCount();
}

QString RunsModel::columnKey(int column) const {
  static const char* const fixed[] = {"run", "state", "start", "duration", "step"};
  if (column < 0 || column >= columnCount()) return {};
  if (column < kFixedColumns) return QString::fromLatin1(fixed[column]);
  const int config = column - kFixedColumns;
  if (config < configKeys_.size()) return configKeys_[config];
  const int summary = config - static_cast<int>(configKeys_.size());
  return summaryKeys_[summary / 4] + QLatin1Char('.') + QString::fromLatin1(kPartKeys[summary % 4]);
}

QStringList RunsModel::columnKeys() const {
  QStringList keys;
  for (int column = 1; column < columnCount(); ++column) keys << columnKey(column);
  return keys;
}

int RunsModel::columnOf(const QString& key) const {
  // A config key first: it is the run's own.
  if (const qsizetype config = configKeys_.indexOf(key); config >= 0) return kFixedColumns + static_cast<int>(config);
  for (int column = 1; column < columnCount(); ++column) {
    if (columnKey(column) == key) return column;
  }
  return -1;
}

QVariant RunsModel::value(int row, const QString& key) const {
  if (row < 0 || row >= rowCount()) return {};
  const int column = columnOf(key);
  return column > 0 ? cellValue(runs_[static_cast<std::size_t>(row)], column) : QVariant();
}

QVariant RunsModel::fixedValue(const Run& run, int column) const {
  switch (column) {
    case kRun: return run.name;
    case kState: return runStateName(run.state);
    case kStart: return run.startMs ? QVariant(*run.startMs) : QVariant();
    case kDuration: return run.startMs && run.endMs ? QVariant(*run.endMs - *run.startMs) : QVariant();
    case kStep: return run.lastStep ? QVariant(*run.lastStep) : QVariant();
    default: return {};
  }
}

QVariant RunsModel::summaryValue(const Run& run, int key, Part part) const {
  const std::optional<RunKeySummary>& summary = run.summaries[static_cast<std::size_t>(key)];
  if (!summary) return {};
  switch (part) {
    case Part::Last: return summary->last;
    case Part::Min: return summary->min;
    case Part::Max: return summary->max;
    case Part::BestStep: {
      const std::optional<double> step = best_ == Best::Min ? summary->minStep : summary->maxStep;
      return step ? QVariant(*step) : QVariant();
    }
  }
  return {};
}

QVariant RunsModel::cellValue(const Run& run, int column) const {
  if (column < kFixedColumns) return fixedValue(run, column);
  const int config = column - kFixedColumns;
  if (config < configKeys_.size()) {
    const auto found = run.config.find(configKeys_[config].toStdString());
    return found != run.config.end() ? variantOf(found->second) : QVariant();
  }
  const int summary = config - static_cast<int>(configKeys_.size());
  return summaryValue(run, summary / 4, static_cast<Part>(summary % 4));
}

QVariant RunsModel::data(const QModelIndex& index, int role) const {
  if (!isCell(index)) return {};
  const Run& run = runs_[static_cast<std::size_t>(index.row())];
  const int column = index.column();
  if (column == kRun) {
    if (role == Qt::DecorationRole) return display_.colour(run.name);
    if (role == Qt::CheckStateRole) return display_.isShown(run.name) ? Qt::Checked : Qt::Unchecked;
  }
  const QVariant value = cellValue(run, column);
  switch (role) {
    case kSortRole:
      return value;
    case Qt::DisplayRole:
      if (!value.isValid()) return QString();
      if (column == kStart) return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(value.toDouble())).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
      if (column == kDuration) return durationText(value.toDouble());
      if (column == kStep) return QString::number(value.toDouble(), 'f', 0);
      return displayOf(value);
    case Qt::TextAlignmentRole:
      return isNumber(value) ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    case Qt::ToolTipRole:
      if (column == kRun) return tr("%1: %n source(s)", nullptr, static_cast<int>(run.sources.size())).arg(run.name);
      return {};
    default:
      return {};
  }
}

bool RunsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!isCell(index) || index.column() != kRun ||
      role != Qt::CheckStateRole) {
    return false;
  }
  // RunDisplay::changed() repaints the box.
  display_.setShown(runs_[static_cast<std::size_t>(index.row())].name, value.toInt() == Qt::Checked);
  return true;
}

Qt::ItemFlags RunsModel::flags(const QModelIndex& index) const {
  if (!isCell(index)) return Qt::NoItemFlags;
  Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
  if (index.column() == kRun) flags |= Qt::ItemIsUserCheckable;
  return flags;
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) return QAbstractTableModel::headerData(section, orientation, role);
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  static const char* const fixed[] = {QT_TR_NOOP("Run"), QT_TR_NOOP("State"), QT_TR_NOOP("Start"), QT_TR_NOOP("Duration"),
                                      QT_TR_NOOP("Last step")};
  if (section < kFixedColumns) return tr(fixed[section]);
  const int config = section - kFixedColumns;
  if (config < configKeys_.size()) {
    return role == Qt::DisplayRole ? configKeys_[config] : tr("config: %1").arg(configKeys_[config]);
  }
  const int summary = config - static_cast<int>(configKeys_.size());
  const QString& key = summaryKeys_[summary / 4];
  const auto part = static_cast<Part>(summary % 4);
  if (role == Qt::ToolTipRole) {
    switch (part) {
      case Part::Last: return tr("%1: the newest value of its main aggregation").arg(key);
      case Part::Min: return tr("%1: the lowest value").arg(key);
      case Part::Max: return tr("%1: the highest value").arg(key);
      case Part::BestStep: return tr("%1: the step at the %2 value").arg(key, best_ == Best::Min ? tr("lowest") : tr("highest"));
    }
  }
  switch (part) {
    case Part::Last: return tr("%1 last").arg(key);
    case Part::Min: return tr("%1 min").arg(key);
    case Part::Max: return tr("%1 max").arg(key);
    case Part::BestStep: return tr("%1 best step").arg(key);
  }
  return {};
}

RunsFilterModel::RunsFilterModel(RunsModel& runs, QObject* parent) : QSortFilterProxyModel(parent), runs_(runs) {
  setSourceModel(&runs);
  setSortRole(RunsModel::kSortRole);
  // New columns may name what the filter asks for, or stop doing so.
  connect(&runs, &QAbstractItemModel::modelReset, this, [this] {
    invalidateFilter();
    if (const QStringList now = errors(); now != lastErrors_) {
      lastErrors_ = now;
      emit errorsChanged(now);
    }
  });
  // Summaries change every refresh: the filter and the sort follow them.
  setDynamicSortFilter(true);
}

void RunsFilterModel::setFilterText(const QString& text) {
  filter_ = RunFilter(text);
  invalidateFilter();
  lastErrors_ = errors();
  emit errorsChanged(lastErrors_);
}

QStringList RunsFilterModel::errors() const {
  QStringList errors = filter_.errors();
  const QStringList keys = runs_.columnKeys();
  for (const RunFilterTerm& term : filter_.terms()) {
    if (term.op != RunFilterTerm::Op::NameContains && !keys.contains(term.key)) {
      errors << tr("“%1”: no column “%2”").arg(term.text, term.key);
    }
  }
  return errors;
}

bool RunsFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  if (sourceParent.isValid()) return false;
  return filter_.matches(runs_.runName(sourceRow), [&](const QString& key) { return runs_.value(sourceRow, key); });
}

bool RunsFilterModel::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const QVariant a = left.data(RunsModel::kSortRole);
  const QVariant b = right.data(RunsModel::kSortRole);
  // Blanks last in either order.
  if (!a.isValid() || !b.isValid()) return a.isValid() != b.isValid() && a.isValid() == (sortOrder() == Qt::AscendingOrder);
  if (isNumber(a) && isNumber(b)) return a.toDouble() < b.toDouble();
  if (isNumber(a) != isNumber(b)) return isNumber(a);  // numbers before text
  return QString::localeAwareCompare(displayOf(a), displayOf(b)) < 0;
}

}  // namespace livemon::ui
