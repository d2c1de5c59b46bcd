#include <livemon/ui/widgets/chart_tooltip.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include <QGraphicsLineItem>
#include <QHelpEvent>
#include <QToolTip>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>

#include <livemon/ui/model/alert_list_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

ChartHover::ChartHover(QChartView& view, std::function<QString(QPoint)> textAt)
    : view_(view), textAt_(std::move(textAt)), crosshair_(new QGraphicsLineItem()) {
  view.viewport()->installEventFilter(this);
  crosshair_->setPen(QPen(QColor(colours::dimText()), 1, Qt::DashLine));
  crosshair_->setZValue(1000);
  crosshair_->hide();
  view.scene()->addItem(crosshair_);  // the scene owns it
}

void ChartHover::show(QPoint viewportPos, const QString& text) {
  if (text.isEmpty()) {
    hide();
    return;
  }
  const QRectF plot = view_.chart()->mapRectToScene(view_.chart()->plotArea());
  const QPointF scenePos = view_.mapToScene(viewportPos);
  crosshair_->setLine(scenePos.x(), plot.top(), scenePos.x(), plot.bottom());
  crosshair_->show();
  QToolTip::showText(view_.viewport()->mapToGlobal(viewportPos + QPoint(16, 16)), text, &view_);
}

bool ChartHover::eventFilter(QObject* watched, QEvent* event) {
  if (watched != view_.viewport() || event->type() != QEvent::ToolTip) return false;
  const QPoint pos = static_cast<QHelpEvent*>(event)->pos();
  const QString text = textAt_(pos);
  if (text.isEmpty()) return false;  // the legend's own tooltips, outside the plot
  show(pos, text);
  event->accept();
  return true;
}

void ChartHover::hide() {
  crosshair_->hide();
  QToolTip::hideText();
}

std::optional<QPointF> nearestPoint(const QList<QPointF>& points, double x, double tolerance) {
  if (points.isEmpty()) return std::nullopt;
  auto at = std::lower_bound(points.begin(), points.end(), x, [](const QPointF& p, double v) { return p.x() < v; });
  if (at == points.end()) --at;
  if (at != points.begin() && std::abs(std::prev(at)->x() - x) < std::abs(at->x() - x)) --at;
  if (std::abs(at->x() - x) > tolerance) return std::nullopt;
  return *at;
}

QString sourcesHtml(const StatRegistry& registry, const std::vector<std::pair<SourceId, QColor>>& sources) {
  QStringList lines;
  for (const auto& [id, colour] : sources) {
    if (const SourceEntry* source = registry.source(id)) {
      lines << QStringLiteral("<span style='color:%1'>%2</span> %3")
                   .arg(colour.name(), source->label.toHtmlEscaped(), source->description.toHtmlEscaped());
    }
  }
  return lines.join(QStringLiteral("<br/>"));
}

QString tooltipHtml(const QString& title, const QString& xText, const std::vector<TooltipRow>& rows,
                    const QString& sourcesHtml) {
  QString table;
  for (const TooltipRow& row : rows) {
    // NaN and infinities by name, as the alerts give them (a line has no point there).
    QString value = AlertListModel::formatValue(row.value);
    if (row.raw) value += QStringLiteral(" <small>(raw %1)</small>").arg(QString::number(*row.raw, 'g', 6));
    table += QStringLiteral("<tr><td><span style='color:%1'>&#9632;</span> %2</td><td align='right'>&nbsp;%3</td></tr>")
                 .arg(row.colour, row.name.toHtmlEscaped(), value);
  }
  return QStringLiteral("<b>%1</b> &nbsp;%2<table cellspacing='0'>%3</table><small>%4</small>")
      .arg(title.toHtmlEscaped(), xText, table, sourcesHtml);
}

}  // namespace livemon::ui
