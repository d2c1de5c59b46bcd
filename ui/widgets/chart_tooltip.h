#pragma once

#include <optional>
#include <vector>

#include <QList>
#include <QPointF>
#include <QString>

#include <livemon/ui/ingest/ingest_batch.h>

namespace livemon::ui {

class StatRegistry;

// Thread-safety: a plain value type.
// One line's row in a chart's hover text.
struct TooltipRow {
  QString colour;  // #rrggbb
  QString name;
  double value = 0.0;
  std::optional<double> raw;  // the raw value under a smoothed one
};

// Thread-safety: pure functions of their arguments.
// The point of `points` (ascending x) nearest to `x`, when it is within `tolerance` of it: a line
// that ended long before the cursor has nothing to say there.
std::optional<QPointF> nearestPoint(const QList<QPointF>& points, double x, double tolerance);

// A chart's hover text: its title and the x under the cursor, a row per line (colour swatch,
// name, value and the raw value where smoothed), then `sourcesHtml` in small print. Names are
// escaped; `xText` and `sourcesHtml` are taken as they are.
// The sources' lines of a hover text: each source's label in its colour and its description.
QString sourcesHtml(const StatRegistry& registry, const std::vector<SourceId>& sources);

QString tooltipHtml(const QString& title, const QString& xText, const std::vector<TooltipRow>& rows,
                    const QString& sourcesHtml);

}  // namespace livemon::ui
