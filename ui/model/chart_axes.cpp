#include <livemon/ui/model/chart_axes.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <utility>

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
  if (high - low <= 1e-9 * high) return XRange{high / 1.5, high * 1.5};  // flat, rounding noise too (paddedY)
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
  if (sorted == kWaitCounter) return QStringLiteral("ms");
  const QString name = statName.mid(statName.lastIndexOf(QLatin1Char('.')) + 1).toLower();
  const auto ends = [&name](const char* suffix) { return name.endsWith(QLatin1String(suffix)); };
  if (ends("_per_s") || ends("_per_sec") || ends("_per_second")) {
    return name.left(name.lastIndexOf(QLatin1String("_per_"))).section(QLatin1Char('_'), -1) + QStringLiteral("/s");
  }
  if (ends("_bytes")) return QStringLiteral("B");
  if (ends("_percent") || ends("_pct")) return QStringLiteral("%");
  if (ends("_ms")) return QStringLiteral("ms");
  if (ends("_s") || ends("_seconds") || ends("_sec")) return QStringLiteral("s");
  if (ends("_gb")) return QStringLiteral("GB");
  if (ends("_mb")) return QStringLiteral("MB");
  return {};
}

AxisScale axisScale(const QString& unit, double largest) {
  if (unit == QLatin1String("B")) {
    static const char* const kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int power = 0;
    while (power < 4 && largest >= std::pow(1024.0, power + 1)) ++power;
    return AxisScale{QString::fromLatin1(kBinary[power]), std::pow(1024.0, power)};
  }
  if (unit == QLatin1String("ms") && largest >= 1e4) return AxisScale{QStringLiteral("s"), 1e3};
  return AxisScale{unit, 1.0};
}

namespace {

// The round steps 1, 2, 2.5 and 5 times a power of ten, numbered in order: 4k is 10^k. (2.5
// keeps a step from halving when 5 gives too few ticks and 2 too many.)
constexpr double kStepMantissas[] = {1.0, 2.0, 2.5, 5.0};

int roundStepIndex(double step) {
  const int decade = static_cast<int>(std::floor(std::log10(step) + 1e-9));
  const double mantissa = step / std::pow(10.0, decade);
  return 4 * decade + (mantissa < 1.5 ? 0 : mantissa < 2.25 ? 1 : mantissa < 3.75 ? 2 : 3);
}

double roundStepAt(int index) {
  const int decade = index >= 0 ? index / 4 : -((-index + 3) / 4);
  return kStepMantissas[index - 4 * decade] * std::pow(10.0, decade);
}

// The decimals that print multiples of a round `step` exactly (2.5 needs one more than 2).
int decimalsFor(double step) {
  const int decade = static_cast<int>(std::floor(std::log10(step) + 1e-9));
  const bool half = std::abs(step / std::pow(10.0, decade) - 2.5) < 1e-6;
  return std::max(0, -decade + (half ? 1 : 0));
}

// Thread-safety: a plain value type.
// How one axis prints its (scaled) values, the same way for every label.
struct Notation {
  double divisor = 1.0;  // thousands: the value over this, then the suffix
  QString suffix;
  int decimals = 0;
  bool scientific = false;  // mantissa with `decimals` decimals, then e and `exponent`
  int exponent = 0;
};

QString printed(double value, const Notation& notation) {
  if (value == 0.0) return QStringLiteral("0");
  QString text;
  if (notation.scientific) {
    text = QString::number(value / std::pow(10.0, notation.exponent), 'f', notation.decimals) +
           QStringLiteral("e%1").arg(notation.exponent);
  } else {
    text = QString::number(value / notation.divisor, 'f', notation.decimals) + notation.suffix;
  }
  return text;
}

// Labels closer than this are cut to "..." by Qt.
constexpr double kTickPixels = 20.0;

// k, M, G or T for values from 10 000 on: the power of a thousand, 0 below.
int thousands(double largest) {
  if (!(largest >= 1e4)) return 0;
  return std::min(4, static_cast<int>(std::floor(std::log10(largest) / 3.0)));
}

Notation thousandsNotation(int power) {
  static const char* const kSuffixes[] = {"", "k", "M", "G", "T"};
  Notation notation;
  notation.divisor = std::pow(1000.0, power);
  notation.suffix = QString::fromLatin1(kSuffixes[power]);
  return notation;
}

// The multiples of `step` inside [low, high].
std::pair<double, double> multiplesIn(double low, double high, double step) {
  return {std::ceil(low / step - 1e-9), std::floor(high / step + 1e-9)};
}

std::vector<AxisTick> linearTickMarks(double low, double high, double factor, double lengthPixels, bool binary) {
  const double maxTicks = std::max(4.0, std::floor(lengthPixels / kTickPixels));
  const double wanted = std::clamp(lengthPixels / 45.0, 4.0, maxTicks);
  int index = roundStepIndex(niceStep((high - low) / wanted));
  const auto count = [low, high](double step) {
    const auto [first, last] = multiplesIn(low, high, step);
    return last - first + 1.0;
  };
  for (int tries = 0; tries < 12 && count(roundStepAt(index)) < 4.0; ++tries) --index;
  // 2.5 only where 2 would crowd: 0.00002 reads better than 0.000025.
  if (index % 4 == 2 || index % 4 == -2) {
    if (count(roundStepAt(index - 1)) <= maxTicks) --index;
  }
  const double step = roundStepAt(index);

  const double largest = std::max(std::abs(low), std::abs(high));
  Notation notation = thousandsNotation(binary ? 0 : thousands(largest));
  notation.decimals = decimalsFor(step / notation.divisor);
  if (notation.decimals > 6) {
    notation.scientific = true;
    notation.exponent = static_cast<int>(std::floor(std::log10(largest)));
    notation.decimals = decimalsFor(step / std::pow(10.0, notation.exponent));
  }
  std::vector<AxisTick> ticks;
  const auto [first, last] = multiplesIn(low, high, step);
  // A span too narrow for its magnitude (past 2^52 multiples of its step from zero, where k + 1
  // is k) has no ticks to tell apart: none rather than a loop that never ends.
  if (!(last - first >= 0.0) || last - first > maxTicks || std::max(std::abs(first), std::abs(last)) > 0x1p52) return ticks;
  for (int i = 0; i <= static_cast<int>(last - first); ++i) {
    const double value = (first + i) * step;
    ticks.push_back(AxisTick{value * factor, printed(value, notation)});
  }
  return ticks;
}

}  // namespace

AxisTicks linearTicks(XRange range, double lengthPixels, const QString& unit) {
  const AxisScale scale = axisScale(unit, std::max(std::abs(range.min), std::abs(range.max)));
  AxisTicks result{scale.unit, {}};
  const double low = range.min / scale.factor;
  const double high = range.max / scale.factor;
  if (!(high > low) || !std::isfinite(high - low)) return result;
  result.ticks = linearTickMarks(low, high, scale.factor, lengthPixels, unit == QLatin1String("B"));
  return result;
}

AxisTicks logTicks(XRange range, double lengthPixels, const QString& unit) {
  if (!(range.min > 0.0) || !(range.max > range.min) || !std::isfinite(range.max)) return AxisTicks{unit, {}};
  if (range.max / range.min < 3.0) return linearTicks(range, lengthPixels, unit);
  const AxisScale scale = axisScale(unit, range.max);
  const double low = range.min / scale.factor;
  const double high = range.max / scale.factor;
  const double pixelsPerDecade = lengthPixels / std::log10(high / low);
  const int firstDecade = static_cast<int>(std::floor(std::log10(low)));
  const int lastDecade = static_cast<int>(std::ceil(std::log10(high)));

  // From the coarsest: powers of ten every 10, 5, 2 decades or each, then between them.
  struct Candidate {
    int stride;
    std::vector<double> mantissas;
  };
  static const Candidate kCandidates[] = {{10, {1.0}}, {5, {1.0}}, {2, {1.0}}, {1, {1.0}}, {1, {1.0, 3.0}},
                                          {1, {1.0, 2.0, 5.0}}, {1, {1.0, 2.0, 3.0, 5.0}}};
  std::vector<double> chosen;
  for (const Candidate& candidate : kCandidates) {
    std::vector<double> values;
    for (int decade = firstDecade; decade <= lastDecade; ++decade) {
      if (decade % candidate.stride != 0) continue;
      for (double mantissa : candidate.mantissas) {
        const double value = mantissa * std::pow(10.0, decade);
        if (value >= low * (1 - 1e-9) && value <= high * (1 + 1e-9)) values.push_back(value);
      }
    }
    double closest = std::numeric_limits<double>::infinity();
    for (std::size_t i = 1; i < values.size(); ++i) {
      closest = std::min(closest, pixelsPerDecade * std::log10(values[i] / values[i - 1]));
    }
    if (closest < kTickPixels && !chosen.empty()) break;  // finer ones crowd their labels
    chosen = std::move(values);
    if (chosen.size() >= 4) break;
  }
  if (chosen.size() < 4 && high / low < 10.0) return linearTicks(range, lengthPixels, unit);

  const bool tiny = !chosen.empty() && chosen.front() < 1e-3;
  const int big = unit == QLatin1String("B") || chosen.empty() ? 0 : thousands(chosen.back());
  AxisTicks result{scale.unit, {}};
  for (double value : chosen) {
    QString label;
    if (tiny) {
      const int exponent = static_cast<int>(std::floor(std::log10(value) + 1e-9));
      label = QString::number(value / std::pow(10.0, exponent), 'g', 3) + QStringLiteral("e%1").arg(exponent);
    } else {
      const int power = big > 0 ? std::min(big, thousands(value * 10.0)) : 0;  // 1k and on, beside 500
      label = QString::number(value / std::pow(1000.0, power), 'g', 6) + thousandsNotation(power).suffix;
    }
    result.ticks.push_back(AxisTick{value * scale.factor, label});
  }
  return result;
}

QString formatValue(double value) {
  const int power = thousands(std::abs(value));
  if (power == 0 || !std::isfinite(value)) return QString::number(value, 'g', 4);
  return QString::number(value / std::pow(1000.0, power), 'g', 4) + thousandsNotation(power).suffix;
}

FittedExtent fitExtent(std::vector<double>& values) {
  FittedExtent fitted;
  fitted.low = std::numeric_limits<double>::infinity();
  fitted.high = -std::numeric_limits<double>::infinity();
  if (values.empty()) return fitted;
  const auto [lowest, highest] = std::minmax_element(values.begin(), values.end());
  fitted.low = *lowest;
  fitted.high = *highest;
  if (values.size() < 20) return fitted;
  const auto quantile = [&values](std::size_t at) {
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(at), values.end());
    return values[at];
  };
  const double lowQuartile = quantile((values.size() - 1) / 4);
  const double highQuartile = quantile((values.size() - 1) * 3 / 4);
  const double spread = highQuartile - lowQuartile;
  if (!(spread > 0.0)) return fitted;  // a constant: its spikes are what there is to see
  // Left out only where something lies orders of magnitude away; then cut ten interquartile ranges
  // out (Tukey's far fence is three), so the body's own spikes stay.
  const double size = std::max(std::abs(lowQuartile), std::abs(highQuartile));
  const bool farAbove = fitted.high > highQuartile + 50.0 * size;
  const bool farBelow = fitted.low < lowQuartile - 50.0 * size;
  if (!farAbove && !farBelow) return fitted;
  const double lowFence = farBelow ? lowQuartile - 10.0 * spread : -std::numeric_limits<double>::infinity();
  const double highFence = farAbove ? highQuartile + 10.0 * spread : std::numeric_limits<double>::infinity();
  fitted.low = std::numeric_limits<double>::infinity();
  fitted.high = -std::numeric_limits<double>::infinity();
  fitted.highest = highFence;
  fitted.lowest = lowFence;
  for (double value : values) {
    if (value > highFence) {
      ++fitted.above;
      fitted.highest = std::max(fitted.highest, value);
    } else if (value < lowFence) {
      ++fitted.below;
      fitted.lowest = std::min(fitted.lowest, value);
    } else {
      fitted.low = std::min(fitted.low, value);
      fitted.high = std::max(fitted.high, value);
    }
  }
  return fitted;
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
