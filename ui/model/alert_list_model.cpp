#include <livemon/ui/model/alert_list_model.h>

#include <cmath>
#include <stdexcept>
#include <utility>

#include <QDateTime>

namespace livemon::ui {

AlertListModel::AlertListModel(std::size_t capacity, QObject* parent) : QAbstractTableModel(parent), capacity_(capacity) {
  if (capacity_ == 0) throw std::invalid_argument("AlertListModel: capacity must be at least 1");
}

void AlertListModel::append(AlertEntry entry) {
  if (entries_.size() >= capacity_) {
    beginRemoveRows({}, 0, 0);
    entries_.pop_front();
    ++dropped_;
    endRemoveRows();
  }
  const int row = static_cast<int>(entries_.size());
  beginInsertRows({}, row, row);
  entries_.push_back(std::move(entry));
  endInsertRows();
  ++unseen_;
  emit unseenChanged(unseen_);
}

void AlertListModel::clear() {
  beginResetModel();
  entries_.clear();
  endResetModel();
  markSeen();
}

const AlertEntry* AlertListModel::entry(int row) const {
  if (row < 0 || static_cast<std::size_t>(row) >= entries_.size()) return nullptr;
  return &entries_[static_cast<std::size_t>(row)];
}

void AlertListModel::markSeen() {
  if (unseen_ == 0) return;
  unseen_ = 0;
  emit unseenChanged(0);
}

QString AlertListModel::formatValue(double value) {
  if (std::isnan(value)) return QStringLiteral("NaN");
  if (std::isinf(value)) return value > 0 ? QStringLiteral("+Inf") : QStringLiteral("-Inf");
  return QString::number(value, 'g', 6);
}

int AlertListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(entries_.size());
}

int AlertListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant AlertListModel::data(const QModelIndex& index, int role) const {
  const AlertEntry* alert = index.isValid() ? entry(index.row()) : nullptr;
  if (alert == nullptr) return {};
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case TimeColumn:
          return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(alert->timeMs)).toString(QStringLiteral("HH:mm:ss.zzz"));
        case SourceColumn:
          return alert->source;
        case RuleColumn:
          return alert->rule;
        case ValueColumn:
          if (!alert->valueText.isEmpty()) return alert->valueText;
          if (alert->kind == QLatin1String("silent")) return tr("quiet %1 s").arg(formatValue(alert->value));
          if (alert->kind == QLatin1String("loss")) return tr("%1 lost").arg(formatValue(alert->value));
          return QStringLiteral("%1 = %2").arg(alert->key, formatValue(alert->value));
        default:
          return {};
      }
    case Qt::ToolTipRole:
      return alert->message;
    case kTimeRole:
      return alert->timeMs;
    default:
      return {};
  }
}

QVariant AlertListModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case TimeColumn:
      return tr("Time");
    case SourceColumn:
      return tr("Source");
    case RuleColumn:
      return tr("Rule");
    case ValueColumn:
      return tr("Value");
    default:
      return {};
  }
}

}  // namespace livemon::ui
