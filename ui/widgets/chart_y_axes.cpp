#include <livemon/ui/widgets/chart_y_axes.h>

#include <algorithm>
#include <cmath>

#include <QGraphicsSimpleTextItem>
#include <QtCharts/QChart>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

ChartYAxes::ChartYAxes(QChart* chart) : chart_(chart), note_(new QGraphicsSimpleTextItem(chart)) {
  values_ = make(false, {}, Qt::AlignLeft);
  note_->setBrush(QColor(colours::kWarn));
  note_->setFont(smallFont(8));
  note_->setZValue(1000);
  note_->hide();
}

void ChartYAxes::setLeftOut(std::size_t values) {
  if (values == 0) {
    note_->hide();
    return;
  }
  note_->setText(values == 1 ? QStringLiteral("1 value ≤ 0 not shown on the log scale")
                             : QStringLiteral("%1 values ≤ 0 not shown on the log scale").arg(values));
  note_->setPos(chart_->plotArea().topLeft() + QPointF(6, 4));
  note_->show();
}

QString ChartYAxes::note() const { return note_->isVisible() ? note_->text() : QString(); }

QAbstractAxis* ChartYAxes::make(bool log, const QString& title, Qt::Alignment side) {
  QAbstractAxis* axis = nullptr;
  if (log) {
    auto* logAxis = new QLogValueAxis();
    logAxis->setBase(10.0);
    logAxis->setLabelFormat(QStringLiteral("%g"));
    logAxis->setMinorTickCount(-1);  // a minor tick per unit between decades: 2, 3, ... 9
    axis = logAxis;
  } else {
    auto* valueAxis = new QValueAxis();
    valueAxis->setTickType(QValueAxis::TicksDynamic);
    valueAxis->setTickAnchor(0.0);
    axis = valueAxis;
  }
  styleAxis(axis);
  styleAxisTitle(axis, title);
  chart_->addAxis(axis, side);
  return axis;
}

bool ChartYAxes::configure(bool countAxis, bool log, const QString& unit) {
  const bool replace = log != log_ || countAxis != (counts_ != nullptr);
  if (!replace && unit == unit_) return false;
  unit_ = unit;
  if (!replace) {
    styleAxisTitle(values_, unit_);
    return false;
  }
  for (QAbstractAxis* old : {values_, counts_}) {
    if (old == nullptr) continue;
    chart_->removeAxis(old);
    delete old;
  }
  log_ = log;
  values_ = make(log_, unit_, Qt::AlignLeft);
  counts_ = countAxis ? make(log_, QStringLiteral("count"), Qt::AlignRight) : nullptr;
  if (counts_ == nullptr) countRange_.reset();
  return true;
}

void ChartYAxes::applyRange(QAbstractAxis* axis, XRange range, double heightPixels) {
  // A span below the values' precision (a rubber band drawn on a flat line) would have Qt step
  // its ticks by less than an ulp, forever.
  if (!(range.max - range.min > 1e-9 * std::max(std::abs(range.min), std::abs(range.max)))) {
    range = paddedY(range.min, range.max);
  }
  if (auto* linear = qobject_cast<QValueAxis*>(axis)) {
    const double step = tickStep(range.max - range.min, heightPixels, 45.0);
    linear->setTickInterval(step);
    linear->setLabelFormat(labelFormatFor(step, std::max(std::abs(range.min), std::abs(range.max))));
    linear->setRange(range.min, range.max);
  } else if (auto* log = qobject_cast<QLogValueAxis*>(axis)) {
    log->setRange(range.min, range.max);
  }
}

void ChartYAxes::setRanges(XRange values, std::optional<XRange> counts, double heightPixels) {
  valueRange_ = values;
  applyRange(values_, values, heightPixels);
  if (counts_ != nullptr) {
    countRange_ = counts.value_or(log_ ? XRange{1.0, 10.0} : XRange{0.0, 1.0});
    applyRange(counts_, *countRange_, heightPixels);
  }
}

}  // namespace livemon::ui
