#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include <QString>
#include <QWidget>

#include <livemon/ui/data/ingest_batch.h>

class QComboBox;
class QLabel;
class QLineEdit;
class QTableView;

namespace livemon::ui {

class ChartGrid;
class Dashboard;
class RankHeatmap;

// GUI thread only.
// The Ranks view, beside Charts and Ranges: for a chosen Stat key (RankScoresModel, default
// train.compute_time_ms.mean as `livemonctl ranks`) a heatmap of rank × window and a table of the
// shown run's ranks, worst first, with the ranks RankScorer flags highlighted in both. It is also
// the rank picker: the ranks named in its "Show ranks" field, or clicked in the heatmap or the
// table, are drawn on the charts as lines of their own over their group's band. The ranks the
// scorer flags (in any run) are drawn there too, unasked, while they are flagged.
class RanksView : public QWidget {
  Q_OBJECT

 public:
  RanksView(Dashboard& dashboard, ChartGrid& grid, QWidget* parent = nullptr);

  // Shows `rank` of the shown run on the charts, or takes it off.
  void toggleRank(int64_t rank);
  // The ranks shown on the charts, as the field reads them ("3, 7"); others are ignored.
  void setPickedRanks(const QString& text);
  const std::set<int64_t>& pickedRanks() const noexcept { return picked_; }

  RankHeatmap& heatmap() const noexcept { return *heatmap_; }
  QTableView& table() const noexcept { return *table_; }
  QString summary() const;

 private:
  void updateChoices();
  void updateSummary();
  void applyPicks();

  Dashboard& dashboard_;
  ChartGrid& grid_;
  QComboBox* keyBox_ = nullptr;
  QComboBox* runBox_ = nullptr;
  QLineEdit* picker_ = nullptr;
  QLabel* summary_ = nullptr;
  RankHeatmap* heatmap_ = nullptr;
  QTableView* table_ = nullptr;
  std::set<int64_t> picked_;
  std::vector<SeriesId> shownSeries_;  // the picked and flagged ranks' series on the charts
  std::set<SourceId> flaggedSources_;  // the flagged ranks, as the charts name them
};

}  // namespace livemon::ui
