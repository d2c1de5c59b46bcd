// RangesModel as it reads: cell texts, tooltips and headers, and the duration format.
#include <livemon/ui/model/ranges_model.h>

#include <cmath>

#include <QDateTime>
#include <QLocale>

#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

namespace {

bool isDurationColumn(int column) {
  return column == RangesModel::TotalTimeColumn || column == RangesModel::SelfTimeColumn ||
         (column >= RangesModel::MeanColumn && column <= RangesModel::MaxColumn);
}

QString formatCount(double count) {
  if (!std::isfinite(count)) return QString::number(count);
  if (count == std::floor(count) && std::abs(count) < 9e15) return QLocale().toString(static_cast<qlonglong>(count));
  return QString::number(count, 'g', 6);
}

// "12.5 %", "0.42 %", "< 0.01 %": three significant digits at most.
QString formatPercent(double percent) {
  if (!std::isfinite(percent)) return QString::number(percent);
  if (percent > 0.0 && percent < 0.01) return QStringLiteral("< 0.01 %");
  const int decimals = percent >= 100.0 ? 0 : percent >= 10.0 ? 1 : 2;
  return QStringLiteral("%1 %").arg(QString::number(percent, 'f', decimals));
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
      case Qt::ToolTipRole:
        return toolTip(row, index.row(), column, std::nullopt);
      default:
        return {};
    }
  }
  const std::optional<double> value = cell(row.shown, column);
  switch (role) {
    case Qt::DisplayRole:
      return displayText(row, column, value);
    case Qt::EditRole:
      return value ? QVariant(*value) : QVariant();
    case SortRole:
      return value && !std::isnan(*value) ? QVariant(*value) : QVariant();
    case Qt::ToolTipRole:
      return toolTip(row, index.row(), column, value);
    case Qt::TextAlignmentRole:
      return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
    default:
      return {};
  }
}

QVariant RangesModel::displayText(const Row& row, int column, std::optional<double> value) const {
  if (!value) return kMissing;
  switch (column) {
    case LastSeenColumn:
      // On the publisher's clock, as the charts' time axis.
      return QLocale().toString(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(*value))).time(),
                                QStringLiteral("HH:mm:ss"));
    case CallsColumn:
      return formatCount(*value);
    case TimePerSecondColumn:
      return formatDurationMs(*value) + QStringLiteral("/s");
    case StepShareColumn:
      return formatPercent(*value);
    default:
      (void)row;
      return formatDurationMs(*value);
  }
}

QVariant RangesModel::toolTip(const Row& row, int modelRow, int column, std::optional<double> value) const {
  switch (column) {
    case RangeColumn:
    case SourceColumn: {
      const SourceEntry* entry = registry_.source(row.source);
      // The name in full first: the column elides a long one.
      return tr("%1\nStat %2 from %3")
          .arg(column == RangeColumn ? row.name : sourceLabel(row.source), statName(modelRow),
               entry != nullptr ? entry->description : QStringLiteral("?"));
    }
    case LastSeenColumn: {
      if (!value) break;
      const QString time =
          QLocale().toString(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(*value))), QLocale::LongFormat);
      return row.stale ? tr("Latest window at %1: none since, for longer than usual").arg(time)
                       : tr("Latest window at %1").arg(time);
    }
    case CallsColumn:
      if (!value) break;
      return tr("%1 calls since the dashboard first saw it; %2 in the latest window")
          .arg(formatCount(*value), row.shown.latest[Count] ? formatCount(*row.shown.latest[Count]) : kMissing);
    case StepShareColumn: {
      const QString step = stepRange(row.source);
      if (step.isEmpty()) return tr("No step range: time each training step as a range named train_step (or step)");
      if (!value) break;
      return tr("%1 of the total time of %2, the step range").arg(formatPercent(*value), step);
    }
    case SelfTimeColumn:
      if (!value) {
        return tr("Not known: name the ranges nested in it %1/<child> to see its own time, without theirs")
            .arg(row.name);
      }
      return tr("%1 ms in the range itself: its total time less that of the ranges named %2/…")
          .arg(QString::number(*value, 'g', 9), row.name);
    case TimePerSecondColumn:
      if (!value) return tr("Needs two windows: the time between them");
      return tr("%1 ms in the range per second of wall time, in the latest window").arg(QString::number(*value, 'g', 9));
    default:
      break;
  }
  if (!value) return tr("Not in the Stat's windows");
  return isDurationColumn(column) ? tr("%1 ms").arg(QString::number(*value, 'g', 9)) : formatCount(*value);
}

QVariant RangesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return QAbstractTableModel::headerData(section, orientation, role);
  if (role == Qt::TextAlignmentRole) {
    return QVariant::fromValue(Qt::Alignment((section >= CallsColumn ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter));
  }
  if (role == Qt::ToolTipRole) {
    switch (section) {
      case RangeColumn:
        return tr("The range's name (its Stat is range/<name>)");
      case SourceColumn:
        return tr("The publisher that timed it");
      case CallsColumn:
        return tr("Times the range ran since the dashboard first saw it");
      case TotalTimeColumn:
        return tr("Time spent in the range since the dashboard first saw it (each window's count × mean)");
      case TimePerSecondColumn:
        return tr("Time spent in the range per second of wall time, in the latest window (over 1 s/s: on several "
                  "threads at once)");
      case StepShareColumn:
        return tr("Total time as a share of the step range's (a range named train_step or step)");
      case SelfTimeColumn:
        return tr("Total time less the time of the ranges nested in it, where nesting is known from names "
                  "(parent/child)");
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
    case CallsColumn:
      return tr("Calls");
    case TotalTimeColumn:
      return tr("Total time");
    case TimePerSecondColumn:
      return tr("Time/s");
    case StepShareColumn:
      return tr("% of step");
    case SelfTimeColumn:
      return tr("Self time");
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
