#pragma once

#include <QWidget>

class QTimer;

namespace livemon::ui {

// GUI thread only.
// A red frame over a chart for a moment, so the eye finds the chart a double-clicked alert is
// about after the grid scrolled to it. It covers the chart, lets the mouse through, and hides
// itself after kDuration.
class ChartFlash : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kDurationMs = 1500;

  // Flashes `chart` (again, from the start, if it is flashing): its ChartFlash, made on first use.
  static ChartFlash* flash(QWidget& chart);
  // Whether the frame is shown now.
  bool isFlashing() const { return isVisible(); }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  explicit ChartFlash(QWidget& chart);

  QTimer* timer_;
};

}  // namespace livemon::ui
