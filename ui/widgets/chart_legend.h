#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <QBrush>
#include <QMetaObject>
#include <QPen>
#include <QRectF>
#include <QString>

QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace livemon::ui {

// Thread-safety: a plain value type.
// One entry of a chart's legend: a line (a short stretch of its pen) or a band (a swatch of its
// fill), and its name.
struct LegendEntry {
  QString label;
  QPen pen = QPen(Qt::NoPen);  // a line's stroke; none for a band
  QBrush fill;                 // a band's swatch
  bool dimmed = false;         // its line or band is hidden: drawn faint, to be clicked back
  int64_t key = 0;             // handed back when the entry is clicked
  friend bool operator==(const LegendEntry&, const LegendEntry&) = default;
};

// GUI thread only, as the chart it draws on.
// A chart's legend below its plot, in rows that wrap to the chart's width, as in TensorBoard and
// W&B: Qt's own legend puts every entry in one row below the plot, cutting their labels to nothing
// once a chart has several sources, or beside it, where it takes half the plot. An entry wider than
// the whole chart is cut ("…") and its tooltip holds the whole label (every entry has it as its
// tooltip). A click on an entry calls back with its key. The legend sets the chart's bottom margin
// to its height, so the plot and its axis labels end above it; its items are the chart's children.
class ChartLegend {
 public:
  ChartLegend(QChart* chart, std::function<void(int64_t)> clicked);
  ~ChartLegend();
  ChartLegend(const ChartLegend&) = delete;
  ChartLegend& operator=(const ChartLegend&) = delete;

  // The entries in order; unchanged entries cost nothing. Lays the legend out again.
  void setEntries(std::vector<LegendEntry> entries);
  // Places the rows for the chart's present width: after a resize.
  void layout();

  const std::vector<LegendEntry>& entries() const noexcept { return entries_; }
  // An entry's text as drawn (cut with "…" only when wider than the chart), its tooltip, and where
  // it is in the chart's coordinates.
  QString shownText(std::size_t entry) const;
  QString toolTip(std::size_t entry) const;
  QRectF entryRect(std::size_t entry) const;
  // Clicks an entry, as the mouse does.
  void click(std::size_t entry) const;

 private:
  class Item;

  QChart* chart_;
  std::function<void(int64_t)> clicked_;
  std::vector<LegendEntry> entries_;
  std::vector<Item*> items_;  // the chart's children, deleted by the legend
  QMetaObject::Connection resized_;
};

}  // namespace livemon::ui
