#include <livemon/ui/widgets/chart_y_axes.h>

#include <algorithm>
#include <cmath>

#include <QBrush>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QPen>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QChart>
#include <QtCharts/QLogValueAxis>

#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

bool setCategoryTicks(QCategoryAxis* axis, const std::vector<AxisTick>& ticks, bool log) {
  const auto at = [log](const AxisTick& tick) { return log ? std::log10(tick.value) : tick.value; };
  const QStringList labels = axis->categoriesLabels();
  const bool same = labels.size() == static_cast<qsizetype>(ticks.size()) &&
                    std::equal(ticks.begin(), ticks.end(), labels.begin(), [&](const AxisTick& tick, const QString& label) {
                      return tick.label == label && axis->endValue(label) == at(tick);
                    });
  if (same) return false;
  for (const QString& label : labels) axis->remove(label);
  if (ticks.empty()) return true;
  // Below the first tick, so that the first category has room before it.
  axis->setStartValue(at(ticks.front()) - 1.0 - std::abs(at(ticks.front())));
  for (const AxisTick& tick : ticks) axis->append(tick.label, at(tick));
  return true;
}

ChartYAxes::ChartYAxes(QChart* chart)
    : chart_(chart), note_(new QGraphicsSimpleTextItem(chart)), badge_(new QGraphicsRectItem(chart)),
      badgeText_(new QGraphicsSimpleTextItem(badge_)) {
  values_ = make(false, Qt::AlignLeft);
  note_->setBrush(QColor(colours::warn()));
  note_->setFont(smallFont(8));
  note_->setZValue(1000);
  note_->hide();
  badgeText_->setBrush(QColor(colours::accent()));
  badgeText_->setFont(smallFont(8, true));
  badge_->setPen(QPen(QColor(colours::accent()), 1.0));
  badge_->setBrush(QColor(colours::panel()));
  badge_->setZValue(1000);
  badge_->hide();
}

void ChartYAxes::setLeftOut(std::size_t values) {
  leftOut_ = values == 0   ? QString()
             : values == 1 ? QStringLiteral("1 value ≤ 0 not shown on the log scale")
                           : QStringLiteral("%1 values ≤ 0 not shown on the log scale").arg(values);
  showNote();
}

void ChartYAxes::setOffScale(const FittedExtent& fitted) {
  QStringList parts;
  if (fitted.above > 0) parts << QStringLiteral("%1 above, up to %2").arg(fitted.above).arg(formatValue(fitted.highest));
  if (fitted.below > 0) parts << QStringLiteral("%1 below, down to %2").arg(fitted.below).arg(formatValue(fitted.lowest));
  offScale_ = parts.isEmpty() ? QString()
                              : QStringLiteral("Outliers off the scale: %1 (Log scale shows them)").arg(parts.join(QStringLiteral("; ")));
  showNote();
}

void ChartYAxes::showNote() {
  QStringList notes;
  for (const QString& note : {leftOut_, offScale_}) {
    if (!note.isEmpty()) notes << note;
  }
  if (notes.isEmpty()) {
    note_->hide();
    return;
  }
  note_->setText(notes.join(QLatin1Char('\n')));
  note_->setPos(chart_->plotArea().topLeft() + QPointF(6, 16));  // below markers standing on the top edge
  note_->show();
}

QString ChartYAxes::note() const { return note_->isVisible() ? note_->text() : QString(); }

void ChartYAxes::setBadge(const QString& text) {
  if (text.isEmpty()) {
    badge_->hide();
    return;
  }
  badgeText_->setText(text);
  badge_->setToolTip(text == QLatin1String("log")
                         ? QStringLiteral("This chart has its own log scale (the toolbar's Log scale is off); right-click to change it")
                         : QStringLiteral("This chart has its own linear scale (the toolbar's Log scale is on); right-click to change it"));
  const QRectF textRect = badgeText_->boundingRect();
  badge_->setRect(0, 0, textRect.width() + 8, textRect.height() + 2);
  badgeText_->setPos(4, 1);
  badge_->setPos(8, 6);  // the title row's left end: the title is centred
  badge_->show();
}

QString ChartYAxes::badge() const { return badge_->isVisible() ? badgeText_->text() : QString(); }

ChartYAxes::Side ChartYAxes::make(bool log, Qt::Alignment alignment) {
  Side side;
  side.labels = new QCategoryAxis();
  side.labels->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  styleAxis(side.labels);
  if (log) {
    auto* logAxis = new QLogValueAxis();
    logAxis->setBase(10.0);
    styleAxis(logAxis);
    // The lines are drawn against it; the category axis over its decades shows the ticks.
    logAxis->setVisible(false);
    chart_->addAxis(logAxis, alignment);
    side.scale = logAxis;
  } else {
    side.scale = side.labels;
  }
  chart_->addAxis(side.labels, alignment);
  return side;
}

void ChartYAxes::remove(Side& side) {
  for (QAbstractAxis* axis : {side.scale, static_cast<QAbstractAxis*>(side.labels)}) {
    if (axis == nullptr) continue;
    chart_->removeAxis(axis);
    delete axis;
    if (side.scale == side.labels) break;  // a linear side's one axis
  }
  side = Side{};
}

bool ChartYAxes::configure(bool countAxis, bool log, const QString& unit) {
  const bool replace = log != log_ || countAxis != (counts_.scale != nullptr);
  if (!replace && unit == unit_) return false;
  unit_ = unit;
  if (!replace) return false;  // the title follows the unit on the next setRanges
  remove(values_);
  remove(counts_);
  log_ = log;
  values_ = make(log_, Qt::AlignLeft);
  if (countAxis) counts_ = make(log_, Qt::AlignRight);
  else countRange_.reset();
  return true;
}

bool ChartYAxes::applyRange(const Side& side, XRange range, double heightPixels, const QString& unit,
                            const QString& title) {
  // A span below the values' precision (a rubber band drawn on a flat line) would make steps of
  // less than an ulp.
  if (!(range.max - range.min > 1e-9 * std::max(std::abs(range.min), std::abs(range.max)))) {
    range = log_ ? paddedLogY(range.min, range.max) : paddedY(range.min, range.max);
  }
  const AxisTicks ticks = log_ ? logTicks(range, heightPixels, unit) : linearTicks(range, heightPixels, unit);
  styleAxisTitle(side.labels, title.isEmpty() ? ticks.title : title);
  const bool changed = setCategoryTicks(side.labels, ticks.ticks, log_);
  if (log_) {
    side.scale->setRange(range.min, range.max);
    side.labels->setRange(std::log10(range.min), std::log10(range.max));
  } else {
    side.labels->setRange(range.min, range.max);
  }
  return changed;
}

bool ChartYAxes::setRanges(XRange values, std::optional<XRange> counts, double heightPixels) {
  valueRange_ = values;
  bool changed = applyRange(values_, values, heightPixels, unit_, {});
  if (counts_.scale != nullptr) {
    countRange_ = counts.value_or(log_ ? XRange{1.0, 10.0} : XRange{0.0, 1.0});
    changed = applyRange(counts_, *countRange_, heightPixels, {}, QStringLiteral("count")) || changed;
  }
  return changed;
}

}  // namespace livemon::ui
