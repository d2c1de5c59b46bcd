#include <livemon/ui/widgets/chart_gestures.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include <QMouseEvent>
#include <QPushButton>
#include <QRubberBand>
#include <QWheelEvent>

#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

namespace {
constexpr int kMinimumDragPixels = 6;
}

ChartGestures::ChartGestures(StatChartView& view)
    : view_(view), rubberBand_(new QRubberBand(QRubberBand::Rectangle, view.viewport())) {
  auto* button = new QPushButton(QObject::tr("Zoomed · click to follow"), view.viewport());
  button->setToolTip(QObject::tr("This chart shows a fixed range: new data is not followed. Click (or double-click "
                                 "the chart) to follow the data again: the live data, or a replay's playhead."));
  button->setCursor(Qt::PointingHandCursor);
  button->setFont(smallFont(8));
  button->setStyleSheet(QStringLiteral("QPushButton { color: %1; background-color: %2; border: 1px solid %1;"
                                       " border-radius: 3px; padding: 1px 6px; }")
                            .arg(QColor(colours::warn()).name(), QColor(colours::panel()).name()));
  button->hide();
  QObject::connect(button, &QPushButton::clicked, &view, &StatChartView::resetView);
  followLive_ = button;
}

void ChartGestures::showZoomed(bool zoomed) {
  if (!zoomed) {
    followLive_->hide();
    return;
  }
  followLive_->adjustSize();
  const QRect plot = view_.plotRect();
  followLive_->move(plot.right() - followLive_->width() - 6, plot.top() + 6);
  followLive_->show();
  followLive_->raise();
}

bool ChartGestures::press(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (!view_.plotRect().contains(pos)) return false;  // the legend takes its clicks
  if (event->button() == Qt::LeftButton) {
    selecting_ = true;
    origin_ = pos;
    rubberBand_->setGeometry(QRect(pos, QSize()));
    rubberBand_->show();
  } else if (event->button() == Qt::RightButton || event->button() == Qt::MiddleButton) {
    panning_ = true;
    dragged_ = false;
    origin_ = pos;
    panStart_ = view_.xRange();
    view_.setCursor(Qt::ClosedHandCursor);
  } else {
    return false;
  }
  return true;
}

bool ChartGestures::move(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (selecting_) {
    rubberBand_->setGeometry(QRect(origin_, pos).normalized().intersected(view_.plotRect()));
    return true;
  }
  if (!panning_) return false;
  if (std::abs(pos.x() - origin_.x()) < kMinimumDragPixels && !dragged_) return true;  // a click, so far
  dragged_ = true;
  const double plotWidth = std::max(1, view_.plotRect().width());
  const double shift = (pos.x() - origin_.x()) / plotWidth * (panStart_.max - panStart_.min);
  emit view_.rangeRequested(panStart_.min - shift, panStart_.max - shift);
  return true;
}

bool ChartGestures::release(QMouseEvent* event) {
  if (selecting_ && event->button() == Qt::LeftButton) {
    selecting_ = false;
    rubberBand_->hide();
    const QRect selected = rubberBand_->geometry();
    if (selected.width() < kMinimumDragPixels) return true;
    const std::optional<QPointF> topLeft = view_.valueAt(selected.topLeft());
    const std::optional<QPointF> bottomRight = view_.valueAt(selected.bottomRight());
    if (!topLeft || !bottomRight) return true;
    if (selected.height() >= kMinimumDragPixels) view_.setManualYRange(XRange{bottomRight->y(), topLeft->y()});
    emit view_.rangeRequested(topLeft->x(), bottomRight->x());
    return true;
  }
  if (!panning_) return false;
  panning_ = false;
  view_.unsetCursor();
  if (!dragged_ && event->button() == Qt::RightButton) view_.showContextMenu(event->position().toPoint());
  return true;
}

bool ChartGestures::wheel(QWheelEvent* event) {
  // The plain wheel is the page's (the grid of charts scrolls), as in TensorBoard and W&B.
  if (!event->modifiers().testFlag(Qt::ControlModifier)) return false;
  const std::optional<QPointF> value = view_.valueAt(event->position().toPoint());
  if (!value || event->angleDelta().y() == 0) return false;
  const double factor = std::pow(0.8, event->angleDelta().y() / 120.0);
  const double centre = value->x();
  const XRange shown = view_.xRange();
  emit view_.rangeRequested(centre - (centre - shown.min) * factor, centre + (shown.max - centre) * factor);
  return true;
}

}  // namespace livemon::ui
