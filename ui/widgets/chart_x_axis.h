#pragma once

#include <livemon/ui/model/time_view.h>

QT_BEGIN_NAMESPACE
class QAbstractAxis;
QT_END_NAMESPACE

namespace livemon::ui {

// Thread-safety: for the GUI thread (they make and change chart axes).
// A chart's x axis: wall-clock ticks at round local times, seconds since the run started at
// round steps, or whole training steps; titled "time", "time since start" or "step".

// A new, styled axis for `mode`; the caller adds it to a chart.
QAbstractAxis* makeTimeAxis(TimeAxisMode mode);
// Shows `x` (in the mode's units) on an axis made by makeTimeAxis, `widthPixels` wide.
void setTimeAxisRange(QAbstractAxis* axis, XRange x, double widthPixels);

}  // namespace livemon::ui
