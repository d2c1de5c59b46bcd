#include <livemon/ui/model/chart_csv.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <QDateTime>
#include <QIODevice>

#include <livemon/ui/model/series_store.h>
#include <livemon/ui/model/step_points.h>

namespace livemon::ui {

namespace {

// A column's name, which comes from the events (a publisher's choice). One a spreadsheet would run
// as a formula (starting with = + - @, a tab or a CR) gets a leading ' and quotes, like
// `livemonctl export --format csv`.
QString csvField(const QString& text) {
  const bool formula = !text.isEmpty() && QStringLiteral("=+-@\t\r").contains(text.front());
  if (!formula && !text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
      !text.contains(QLatin1Char('\n')) && !text.contains(QLatin1Char('\r'))) {
    return text;
  }
  QString quoted = text;
  quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
  return (formula ? QStringLiteral("\"'") : QStringLiteral("\"")) + quoted + QLatin1Char('"');
}

QString timeField(double x, TimeAxisMode mode) {
  if (mode == TimeAxisMode::Step) return QString::number(std::llround(x));
  if (mode == TimeAxisMode::WallClock) {
    return QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(std::llround(x))).toString(Qt::ISODateWithMs);
  }
  return QString::number(x, 'f', 3);
}

// The points of a store (or of its StepPoints) in `x`, in the chart's units.
template <typename Points>
void collect(const Points& points, PlotTransform transform, XRange x, std::vector<QPointF>& out) {
  points.visitFrom(x.min / transform.scale + transform.offset, 0, [&](double storeX, double y, bool) {
    const double plotX = transform.apply(storeX);
    if (plotX > x.max) return false;
    // A bucket's first sample may be its lowest too: one row for it.
    if (plotX >= x.min && (out.empty() || out.back().x() != plotX)) out.emplace_back(plotX, y);
    return true;
  });
}

}  // namespace

bool writeChartCsv(QIODevice& out, const std::vector<CsvColumn>& columns, XRange x, TimeAxisMode mode) {
  // Each column's samples in view, in the chart's units.
  std::vector<std::vector<QPointF>> samples(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const CsvColumn& column = columns[c];
    if (column.store == nullptr) continue;
    if (mode == TimeAxisMode::Step) {
      collect(StepPoints(*column.store, column.stepWindow), PlotTransform{}, x, samples[c]);
    } else {
      collect(*column.store, column.transform, x, samples[c]);
    }
  }

  QString header = mode == TimeAxisMode::WallClock ? QStringLiteral("time")
                   : mode == TimeAxisMode::Step    ? QStringLiteral("step")
                                                   : QStringLiteral("seconds");
  for (const CsvColumn& column : columns) header += QLatin1Char(',') + csvField(column.name);
  if (out.write(header.toUtf8() + '\n') < 0) return false;

  // Merge the columns by time: a row per distinct time.
  std::vector<std::size_t> next(columns.size(), 0);
  QByteArray chunk;
  while (true) {
    double time = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < samples.size(); ++c) {
      if (next[c] < samples[c].size()) time = std::min(time, samples[c][next[c]].x());
    }
    if (!std::isfinite(time)) break;
    QString row = timeField(time, mode);
    for (std::size_t c = 0; c < samples.size(); ++c) {
      row += QLatin1Char(',');
      if (next[c] < samples[c].size() && samples[c][next[c]].x() == time) {
        row += QString::number(samples[c][next[c]].y(), 'g', 17);
        ++next[c];
      }
    }
    chunk += row.toUtf8() + '\n';
    if (chunk.size() >= 1 << 16) {
      if (out.write(chunk) < 0) return false;
      chunk.clear();
    }
  }
  return out.write(chunk) >= 0;
}

}  // namespace livemon::ui
