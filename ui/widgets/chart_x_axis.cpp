#include <livemon/ui/widgets/chart_x_axis.h>

#include <algorithm>
#include <vector>

#include <QVariant>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QValueAxis>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/widgets/chart_y_axes.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {
// A tick per this many pixels, at most, on the step and run-time axes: their labels ("1000",
// "120 s") take some 35 px, and the 1-2-5 rounding widens the spacing up to 2.5 times, so a card
// some 400 px wide still labels three or four ticks.
constexpr double kPixelsPerValueTick = 70.0;

// Marks the Step axis, a value axis like the run-time one but labelled in whole steps.
const char* const kStepAxis = "livemonStepAxis";
}  // namespace

QAbstractAxis* makeTimeAxis(TimeAxisMode mode) {
  QAbstractAxis* made = nullptr;
  if (mode == TimeAxisMode::WallClock) {
    // A category axis rather than QDateTimeAxis, which can only split its range evenly: its ticks
    // would fall on odd times (19:03:35, 19:04:18) that move as the range follows the data.
    auto* axis = new QCategoryAxis();
    axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    made = axis;
  } else {
    auto* axis = new QValueAxis();
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0.0);
    made = axis;
  }
  styleAxis(made);
  // Step numbers look like seconds or counts, and times like steps: the axis says what it counts.
  if (mode == TimeAxisMode::Step) made->setProperty(kStepAxis, true);
  styleAxisTitle(made, mode == TimeAxisMode::Step          ? QStringLiteral("step")
                       : mode == TimeAxisMode::WallClock ? QStringLiteral("time")
                                                         : QStringLiteral("time since start"));
  return made;
}

void setTimeAxisRange(QAbstractAxis* axis, XRange x, double widthPixels) {
  if (auto* wall = qobject_cast<QCategoryAxis*>(axis)) {
    std::vector<AxisTick> ticks;
    // A label centred on a tick near an edge would be cut there ("21:11:" at the right): such a
    // tick goes unlabelled. About half a label of "21:11:30" in pixels.
    const double margin = widthPixels > 0.0 ? 28.0 * (x.max - x.min) / widthPixels : 0.0;
    for (const WallClockTick& tick : wallClockTickMarks(x, widthPixels)) {
      if (tick.ms < x.min + margin || tick.ms > x.max - margin) continue;
      ticks.push_back(AxisTick{tick.ms, tick.label});
    }
    setCategoryTicks(wall, ticks);
    wall->setRange(x.min, x.max);
  } else if (auto* steps = qobject_cast<QValueAxis*>(axis); steps != nullptr && axis->property(kStepAxis).toBool()) {
    // Whole steps only: a tick between two steps would name a step that never was.
    steps->setTickInterval(std::max(1.0, tickStep(x.max - x.min, widthPixels, kPixelsPerValueTick)));
    steps->setLabelFormat(QStringLiteral("%.0f"));
    steps->setRange(x.min, x.max);
  } else if (auto* run = qobject_cast<QValueAxis*>(axis)) {
    const double step = tickStep(x.max - x.min, widthPixels, kPixelsPerValueTick);
    run->setTickInterval(step);
    run->setLabelFormat(step >= 1.0 ? QStringLiteral("%.0f s") : QStringLiteral("%.1f s"));
    run->setRange(x.min, x.max);
  }
}

}  // namespace livemon::ui
