#include <livemon/ui/widgets/chart_view_controls.h>

#include <cmath>

#include <QCheckBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>

#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {

ChartViewControls::ChartViewControls(ChartViewOptions& options, QWidget* parent)
    : QWidget(parent), options_(options) {
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  auto* label = new QLabel(tr("Smoothing"), this);
  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setRange(0, static_cast<int>(std::lround(kMaxSmoothing * 100)));
  slider_->setFixedWidth(110);
  const QString tip = tr("Draws every line as its exponential moving average (TensorBoard's, debiased), "
                         "with the values themselves faint behind it. 0: no smoothing.");
  slider_->setToolTip(tip);
  label->setToolTip(tip);
  value_ = new QLabel(this);
  value_->setMinimumWidth(value_->fontMetrics().horizontalAdvance(QStringLiteral("0.00 ")));
  logAll_ = new QCheckBox(tr("Log scale"), this);
  logAll_->setToolTip(tr("A log y axis on every chart (a chart's own menu can differ)"));
  row->addWidget(label);
  row->addWidget(slider_);
  row->addWidget(value_);
  row->addSpacing(8);
  row->addWidget(logAll_);

  connect(slider_, &QSlider::valueChanged, this, [this](int value) { options_.setSmoothing(value / 100.0); });
  connect(logAll_, &QCheckBox::toggled, this, [this](bool on) { options_.setLogScaleAll(on); });
  connect(&options_, &ChartViewOptions::changed, this, &ChartViewControls::sync);
  sync();
}

void ChartViewControls::sync() {
  const QSignalBlocker sliderBlocker(slider_);
  const QSignalBlocker logBlocker(logAll_);
  slider_->setValue(static_cast<int>(std::lround(options_.smoothing() * 100)));
  value_->setText(QString::number(options_.smoothing(), 'f', 2));
  logAll_->setChecked(options_.logScaleAll());
}

}  // namespace livemon::ui
