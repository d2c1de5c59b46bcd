#include <livemon/ui/widgets/chart_x_axis.h>

#include <algorithm>

#include <QVariant>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QValueAxis>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {
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
  if (mode == TimeAxisMode::Step) {
    made->setProperty(kStepAxis, true);
    // Step numbers look like seconds or counts: the axis says what they are.
    styleAxisTitle(made, QStringLiteral("step"));
  }
  return made;
}

void setTimeAxisRange(QAbstractAxis* axis, XRange x, double widthPixels) {
  if (auto* wall = qobject_cast<QCategoryAxis*>(axis)) {
    // Every change of a category makes Qt lay out all the axis's labels again, and a range that
    // follows live data moves every tick: the categories change only when a tick comes or goes.
    const std::vector<WallClockTick> ticks = wallClockTickMarks(x, widthPixels);
    const QStringList labels = wall->categoriesLabels();
    const bool same = labels.size() == static_cast<qsizetype>(ticks.size()) &&
                      std::equal(ticks.begin(), ticks.end(), labels.begin(), [wall](const WallClockTick& tick, const QString& label) {
                        return tick.label == label && wall->endValue(label) == tick.ms;
                      });
    if (!same) {
      for (const QString& label : labels) wall->remove(label);
      wall->setStartValue(x.min);
      for (const WallClockTick& tick : ticks) wall->append(tick.label, tick.ms);
    }
    wall->setRange(x.min, x.max);
  } else if (auto* steps = qobject_cast<QValueAxis*>(axis); steps != nullptr && axis->property(kStepAxis).toBool()) {
    // Whole steps only: a tick between two steps would name a step that never was.
    steps->setTickInterval(std::max(1.0, tickStep(x.max - x.min, widthPixels, 110.0)));
    steps->setLabelFormat(QStringLiteral("%.0f"));
    steps->setRange(x.min, x.max);
  } else if (auto* run = qobject_cast<QValueAxis*>(axis)) {
    const double step = tickStep(x.max - x.min, widthPixels, 110.0);
    run->setTickInterval(step);
    run->setLabelFormat(step >= 1.0 ? QStringLiteral("%.0f s") : QStringLiteral("%.1f s"));
    run->setRange(x.min, x.max);
  }
}

}  // namespace livemon::ui
