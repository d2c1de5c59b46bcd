#pragma once

#include <QPoint>

#include <livemon/ui/model/time_view.h>

class QAbstractButton;
class QMouseEvent;
class QRubberBand;
class QWheelEvent;

namespace livemon::ui {

class StatChartView;

// GUI thread only, as the chart it is part of.
// The mouse on a chart's plot area: a left drag draws a rubber band and zooms to what it covers
// (x, and y when it is tall enough), a right or middle drag pans, Ctrl+wheel zooms x about the
// cursor (20 % a notch; the plain wheel is left to the page, which scrolls), and a right click
// that does not drag opens the chart's context menu.
// While zoomed, a button on the plot says the chart no longer follows live data and returns to
// it when clicked.
// Each handler returns whether it took the event; the chart passes on the others.
class ChartGestures {
 public:
  explicit ChartGestures(StatChartView& view);

  bool press(QMouseEvent* event);
  bool move(QMouseEvent* event);
  bool release(QMouseEvent* event);
  bool wheel(QWheelEvent* event);
  bool busy() const noexcept { return selecting_ || panning_; }
  // Shows or hides the "follow live" button in the plot's top right corner.
  void showZoomed(bool zoomed);
  QAbstractButton* followLiveButton() const noexcept { return followLive_; }

 private:
  StatChartView& view_;
  QRubberBand* rubberBand_;
  QPoint origin_;
  bool selecting_ = false;
  bool panning_ = false;
  bool dragged_ = false;  // the pan moved: not a click
  XRange panStart_;
  QAbstractButton* followLive_ = nullptr;
};

}  // namespace livemon::ui
