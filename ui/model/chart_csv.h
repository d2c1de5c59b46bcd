#pragma once

#include <limits>
#include <vector>

#include <QString>

#include <livemon/ui/model/column_decimator.h>
#include <livemon/ui/model/time_view.h>

class QIODevice;

namespace livemon::ui {

class SeriesStore;

// Thread-safety: a plain value type.
// One line of a chart as a CSV column.
struct CsvColumn {
  QString name;
  const SeriesStore* store = nullptr;
  PlotTransform transform;  // the store's x to the chart's
  // Step axis: the points timed in this window (ms since the Unix epoch) are written at their
  // steps (StepPoints); unused otherwise.
  XRange stepWindow{-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
};

// Thread-safety: reads the stores, so on the thread that owns them (the GUI thread).
// Writes what a chart shows as CSV: a header "time" (wall clock: ISO 8601 local time with
// milliseconds and offset), "seconds" (since the run started) or "step", then a column per line; a
// row per distinct time (or step) in `x` (the chart's units), ascending, with each line's value
// there or an empty cell. Values are every stored sample in view (old history, kept as first/lowest/highest/
// last per stretch, gives those), not the pixel-decimated points. Names are quoted where CSV
// needs it. Returns false when the device fails to take the text.
bool writeChartCsv(QIODevice& out, const std::vector<CsvColumn>& columns, XRange x, TimeAxisMode mode);

}  // namespace livemon::ui
