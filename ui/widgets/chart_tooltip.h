#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <QColor>
#include <QList>
#include <QObject>
#include <QPointF>
#include <QString>

#include <QPoint>

#include <livemon/ui/data/ingest_batch.h>

class QGraphicsLineItem;
QT_BEGIN_NAMESPACE
class QChartView;
QT_END_NAMESPACE

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

// GUI thread only, as the chart it is part of.
// The hover over a chart's plot: a dashed vertical line at the cursor and the values beside it.
// It stays while the mouse rests: Qt then asks the view for a tooltip, and the chart's scene,
// having none over the plot, would answer with nothing and so hide it; the hover answers instead,
// with `textAt` (the chart's hover text at a viewport position, empty for none).
class ChartHover : public QObject {
 public:
  ChartHover(QChartView& view, std::function<QString(QPoint)> textAt);
  // Shows `text` (rich text) for the cursor at `viewportPos`; an empty text hides the hover.
  void show(QPoint viewportPos, const QString& text);
  void hide();

 private:
  bool eventFilter(QObject* watched, QEvent* event) override;

  QChartView& view_;
  std::function<QString(QPoint)> textAt_;
  QGraphicsLineItem* crosshair_;
};

// Thread-safety: pure functions of their arguments.
// The point of `points` (ascending x) nearest to `x`, when it is within `tolerance` of it: a line
// that ended long before the cursor has nothing to say there.
std::optional<QPointF> nearestPoint(const QList<QPointF>& points, double x, double tolerance);

// A chart's hover text: its title and the x under the cursor, a row per line (colour swatch,
// name, value and the raw value where smoothed), then `sourcesHtml` in small print. Names are
// escaped; `xText` and `sourcesHtml` are taken as they are.
// The sources' lines of a hover text: each source's label in its colour and its description.
QString sourcesHtml(const StatRegistry& registry, const std::vector<std::pair<SourceId, QColor>>& sources);

QString tooltipHtml(const QString& title, const QString& xText, const std::vector<TooltipRow>& rows,
                    const QString& sourcesHtml);

}  // namespace livemon::ui
