#pragma once

#include <QWidget>

class QCheckBox;
class QLabel;
class QSlider;

namespace livemon::ui {

class ChartViewOptions;

// GUI thread only.
// The toolbar's controls for how every chart draws its values: a smoothing slider (0 to 0.99 in
// steps of 0.01, its value beside it) and a log-scale switch for all charts. They follow the
// options both ways: moving them changes the options, and options changed elsewhere (restored
// settings, a chart's own menu) move them.
class ChartViewControls : public QWidget {
  Q_OBJECT

 public:
  ChartViewControls(ChartViewOptions& options, QWidget* parent = nullptr);

  QSlider* smoothingSlider() const noexcept { return slider_; }
  QCheckBox* logScaleBox() const noexcept { return logAll_; }

 private:
  void sync();

  ChartViewOptions& options_;
  QSlider* slider_;
  QLabel* value_;
  QCheckBox* logAll_;
};

}  // namespace livemon::ui
