#pragma once

#include <QString>
#include <QWidget>

#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/widgets/stat_chart_view.h>

class QLabel;
class QLineEdit;
class QModelIndex;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;
class QVBoxLayout;

namespace livemon::ui {

class RangesModel;
class StatRegistry;
struct RegistryChanges;
struct RegistryRemoval;

// GUI thread only.
// The Ranges view: a table with a row per timed range (RangesModel) behind a sort and filter
// proxy, sortable by every column (numbers as numbers), a filter on the range name, and below it
// a chart of the selected range's durations (mean, p50, p99, max) over time. The chart is a
// StatChartView of the range's Stat ("range/<name>") showing the selected row's source only; the
// count is left out, as it is not a duration and would squash the y axis.
//
// The model is the Dashboard's, which applies each batch to it. Its owner wires the Dashboard's
// signals to sourceLabelsChanged() and beginRemove()/endRemove(), and calls refresh() on each GUI
// tick with the grid's render context, so the chart shares the grid's time range, zoom and pause.
// Zoom and pan requests from the chart come out as rangeRequested/resetRequested for the owner of
// that shared range.
class RangesView : public QWidget {
  Q_OBJECT

 public:
  // `registry` and `model` must outlive the view.
  RangesView(const StatRegistry& registry, RangesModel& model, QWidget* parent = nullptr);

  RangesModel& model() const noexcept { return *model_; }
  QSortFilterProxyModel& proxy() const noexcept { return *proxy_; }
  QTableView* table() const noexcept { return table_; }
  QLineEdit* filterEdit() const noexcept { return filter_; }
  // The line beside the filter: how many ranges, and which is the step range.
  QString summaryText() const;
  // The selected range's chart; nullptr while no range is selected.
  StatChartView* chart() const noexcept { return chart_; }
  // The smoothing and log scale the chart follows: the Charts grid's, so that the toolbar's
  // controls (and a chart's own log-scale choice) apply here too. Must outlive the view.
  void setViewOptions(ChartViewOptions* options);

  // A source's label changed (the model was told): the chart and its title follow.
  void sourceLabelsChanged();
  // Around RangesModel::removeSources: a selected range of a removed source is unselected, and
  // the next refresh selects the top row; one of a remaining source stays selected.
  void beginRemove();
  void endRemove(const RegistryRemoval& removal);
  // One GUI tick: shows what was applied (unless paused), selects the top row when nothing is
  // selected yet, and redraws the chart if it is on screen and changed.
  void refresh(const ChartRenderContext& context);
  // Paused: the table keeps its values (new windows are still counted) and the chart is frozen
  // by the render context.
  void setPaused(bool paused);

  // Shows only ranges whose name contains `filter` (ignoring case); '*' and '?' are wildcards.
  void setFilterText(const QString& filter);
  // Selects a RangesModel row (scrolling it into view); false when it is not shown.
  bool selectRow(int modelRow);
  // The selected RangesModel row, or -1.
  int selectedRow() const noexcept { return selected_; }

 signals:
  void rangeRequested(double min, double max);
  void resetRequested();

 private:
  void currentChanged(const QModelIndex& current);
  void showChart(int modelRow);
  // Names the source in the chart's title only while the table shows several.
  void updateChartTitle();
  void updateSummary();
  // The Source column from two sources on, Self time once a range is nested in another by name.
  void updateColumns();

  const StatRegistry& registry_;
  RangesModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QLabel* summary_ = nullptr;
  QTableView* table_ = nullptr;
  QWidget* chartHolder_ = nullptr;
  QVBoxLayout* chartLayout_ = nullptr;
  QLabel* chartPlaceholder_ = nullptr;
  StatChartView* chart_ = nullptr;
  ChartViewOptions* viewOptions_ = nullptr;
  int selected_ = -1;
  // Until the user picks a row the chart follows the top one: the first range seen is rarely the
  // one the table puts first once the windows come in.
  bool followTop_ = true;
  bool selectingTop_ = false;
  bool paused_ = false;
  bool removingRows_ = false;  // the selection moves with the rows; endRemove() settles it after
  SourceId removingSelectedSource_ = 0;  // the selected row's, as beginRemove() found it
  QString removingSelectedName_;
};

}  // namespace livemon::ui
