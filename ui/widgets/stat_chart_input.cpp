// StatChartView's input: the mouse, the wheel and the context menu go to its ChartGestures and
// ChartHover, and what they ask of the view (the value under the pointer, a reset, a y range the
// user chose).
#include <QMenu>
#include <QMouseEvent>
#include <QWheelEvent>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/ui/widgets/chart_export.h>
#include <livemon/ui/widgets/chart_gestures.h>
#include <livemon/ui/widgets/chart_tooltip.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

std::optional<QPointF> StatChartView::valueAt(QPoint viewportPos) const {
  if (lines_.empty() || !plotRect().contains(viewportPos)) return std::nullopt;
  const QPointF inChart = chart()->mapFromScene(mapToScene(viewportPos));
  return chart()->mapToValue(inChart, lines_.front()->series());
}

void StatChartView::mousePressEvent(QMouseEvent* event) {
  if (!gestures_->press(event)) {
    QChartView::mousePressEvent(event);  // the legend takes its clicks here
    return;
  }
  hover_->hide();
  event->accept();
}

void StatChartView::mouseMoveEvent(QMouseEvent* event) {
  if (gestures_->move(event)) {
    event->accept();
    return;
  }
  hover_->show(event->position().toPoint(), tooltipAt(event->position().toPoint()));
  QChartView::mouseMoveEvent(event);
}

void StatChartView::mouseReleaseEvent(QMouseEvent* event) {
  if (gestures_->release(event)) {
    event->accept();
    return;
  }
  QChartView::mouseReleaseEvent(event);
}

void StatChartView::mouseDoubleClickEvent(QMouseEvent* event) {
  if (!plotRect().contains(event->position().toPoint())) {
    QChartView::mouseDoubleClickEvent(event);
    return;
  }
  resetView();
  event->accept();
}

QAbstractButton* StatChartView::followLiveButton() const { return gestures_->followLiveButton(); }

void StatChartView::resetView() {
  manualY_.reset();
  ++layoutVersion_;
  emit resetRequested();
}

void StatChartView::setManualYRange(XRange y) {
  manualY_ = y;
  ++layoutVersion_;
}

void StatChartView::showContextMenu(QPoint viewportPos) {
  hover_->hide();
  QMenu* menu = makeChartMenu(*this, this);
  menu->setAttribute(Qt::WA_DeleteOnClose);
  menu->popup(viewport()->mapToGlobal(viewportPos));
}

void StatChartView::wheelEvent(QWheelEvent* event) {
  if (gestures_->wheel(event)) {
    event->accept();
    return;
  }
  // Not the chart's: ignored, it goes on to the parents, so the grid of charts scrolls.
  event->ignore();
}

void StatChartView::leaveEvent(QEvent* event) {
  hover_->hide();
  QChartView::leaveEvent(event);
}

}  // namespace livemon::ui
