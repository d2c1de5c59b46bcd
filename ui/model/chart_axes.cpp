#include <livemon/ui/model/chart_axes.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include <QDateTime>

namespace livemon::ui {

double niceStep(double raw) {
  if (!(raw > 0.0) || !std::isfinite(raw)) return 1.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double nice = fraction <= 1.0 ? 1.0 : fraction <= 2.0 ? 2.0 : fraction <= 5.0 ? 5.0 : 10.0;
  return nice * magnitude;
}

double tickStep(double span, double lengthPixels, double pixelsPerTick) {
  return niceStep(span / std::max(2.0, lengthPixels / pixelsPerTick));
}

QString labelFormatFor(double step, double largest) {
  if (largest >= 1e6 || step < 1e-4) return QStringLiteral("%.3g");
  const int decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
  return QStringLiteral("%.%1f").arg(decimals);
}

WallClockTicks wallClockTicks(double spanMs, double widthPixels) {
  static constexpr double kStepsMs[] = {1e3,    2e3,    5e3,    10e3,    15e3,    30e3,    60e3,
                                        120e3,  300e3,  600e3,  900e3,   1800e3,  3600e3,  7200e3,
                                        10800e3, 21600e3, 43200e3, 86400e3, 172800e3, 604800e3};
  const double labels = std::max(2.0, widthPixels / 90.0);
  double step = kStepsMs[std::size(kStepsMs) - 1];
  for (double candidate : kStepsMs) {
    if (spanMs / candidate <= labels) {
      step = candidate;
      break;
    }
  }
  QString format = step < 60e3 ? QStringLiteral("HH:mm:ss") : QStringLiteral("HH:mm");
  if (step >= 86400e3) {
    format = QStringLiteral("MM-dd");
  } else if (spanMs > 20 * 3600e3) {
    format = QStringLiteral("MM-dd HH:mm");  // "HH:mm" alone would repeat across days
  }
  return WallClockTicks{step, format};
}

std::vector<WallClockTick> wallClockTickMarks(XRange x, double widthPixels) {
  std::vector<WallClockTick> marks;
  const WallClockTicks ticks = wallClockTicks(x.max - x.min, widthPixels);
  // Round in local time: a minute tick falls on :00 of the local clock.
  const double offsetMs = 1000.0 * QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(x.min)).offsetFromUtc();
  for (double t = (std::floor((x.min + offsetMs) / ticks.stepMs) + 1) * ticks.stepMs - offsetMs; t <= x.max;
       t += ticks.stepMs) {
    marks.push_back(WallClockTick{t, QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(t)).toString(ticks.format)});
  }
  return marks;
}

XRange paddedY(double low, double high) {
  if (!(low <= high)) return XRange{0.0, 1.0};
  // Rounding noise (a smoothed constant one ulp off) is a flat line too: a span of 1e-16 would
  // ask the axis for a label every 1e-17.
  if (high - low <= 1e-9 * std::max(std::abs(low), std::abs(high))) {
    low = high;
    const double pad = low == 0.0 ? 1.0 : std::abs(low) * 0.1;
    return XRange{low - pad, high + pad};
  }
  const double pad = (high - low) * 0.08;
  return XRange{low - pad, high + pad};
}

XRange paddedLogY(double low, double high) {
  if (!(low > 0.0) || !(low <= high) || !std::isfinite(high)) return XRange{1.0, 10.0};
  if (high == low) return XRange{low / 1.5, high * 1.5};
  const double pad = std::pow(high / low, 0.08);
  return XRange{low / pad, high * pad};
}

QString valueUnit(const QString& statName, const QStringList& aggregations) {
  if (statName.startsWith(QLatin1String("range/"))) return QStringLiteral("ms");
  static const QStringList kWaitCounter{QStringLiteral("count"), QStringLiteral("max"), QStringLiteral("mean"),
                                        QStringLiteral("p50"), QStringLiteral("p99")};
  QStringList sorted = aggregations;
  sorted.sort();
  sorted.removeDuplicates();
  return sorted == kWaitCounter ? QStringLiteral("ms") : QString();
}

bool isCountAxis(const QString& aggregation) { return aggregation == QLatin1String("count"); }

QString formatX(double x, TimeAxisMode mode) {
  if (mode == TimeAxisMode::WallClock) {
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(x)).toString(QStringLiteral("HH:mm:ss.zzz"));
  }
  if (mode == TimeAxisMode::Step) return QStringLiteral("step %1").arg(std::llround(x));
  return QStringLiteral("%1 s since start").arg(x, 0, 'f', 2);
}

}  // namespace livemon::ui
