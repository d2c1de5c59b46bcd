#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include <livemon/clock.h>
#include <livemon/rank_scores.h>
#include <livemon/ui/data/ingest_batch.h>

namespace livemon::ui {

class StatRegistry;

// Thread-safety: a plain value type.
// A rank that RankScorer flagged in a window, for the alert it raises.
struct RankFlagged {
  QString run;
  RankScore score;
  std::optional<SourceId> source;  // the rank's source in the registry, when known
  double timeMs = 0.0;             // the window's wall time, ms since the Unix epoch
  double median = 0.0;             // the window's median across the scored ranks
  std::size_t scored = 0;          // the ranks scored in the window
};

// Thread-safety: a plain value type.
// One window of the heatmap: every rank's value of the key at an evaluation (NaN: none, or stale).
struct RankHeatColumn {
  double timeMs = 0.0;
  std::map<int64_t, double> values;
};

// GUI thread only.
// The Ranks view's data: the shared RankScorer (core, as `livemonctl ranks` uses it) fed with the
// values of one Stat key from every ranked source, evaluated once per window on the injected
// clock; the latest window of the run shown as a table (worst first: rank, value, score, flag,
// pid, host) and the last windows of its ranks as heatmap columns (at most kHeatColumns).
// Memory is the scorer's caps plus kHeatColumns columns of the run's ranks.
class RankScoresModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { RankColumn = 0, ValueColumn, ScoreColumn, FlagColumn, PidColumn, HostColumn, ColumnCount };
  static constexpr std::size_t kHeatColumns = 300;
  // Qt::UserRole on any cell: the row's rank (an int64).
  static constexpr int kRankRole = Qt::UserRole;
  // Qt::UserRole + 1: whether the row's rank is flagged.
  static constexpr int kFlaggedRole = Qt::UserRole + 1;

  // `clock` (nullptr: the system clock) measures the windows and staleness; it must outlive the
  // model. `window`: how often ranks are scored.
  RankScoresModel(const StatRegistry& registry, Clock* clock = nullptr,
                  std::chrono::milliseconds window = std::chrono::milliseconds(1000), QObject* parent = nullptr);
  ~RankScoresModel() override;

  // The key scored ("train.compute_time_ms.mean"): a new scorer, and the windows so far forgotten.
  void setKey(const QString& key);
  QString key() const;
  const RankScorerOptions& scoring() const;
  // The run shown; empty: the first run (by name) that has ranks.
  void setRun(const QString& run);
  QString shownRun() const;
  QStringList runs() const;

  // A batch the registry has applied: the key's values from ranked sources go to the scorer.
  void observe(const IngestBatch& batch);
  // Scores every run when a window has passed since the last scoring; returns the ranks flagged
  // now that were not flagged in the window before (each raises one alert).
  std::vector<RankFlagged> tick();

  // Every run's ranks flagged in its latest window.
  std::vector<RankFlagged> flaggedRanks() const;
  // The shown run's latest window; nullptr before the first.
  const RankWindow* window() const;
  const std::deque<RankHeatColumn>& heatColumns() const;
  // The shown run's ranks, ascending, as the heatmap's rows.
  std::vector<int64_t> heatRanks() const;
  bool isFlagged(int64_t rank) const;
  // The Stat keys seen from ranked sources, for choosing one.
  QStringList knownKeys() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  // A window was scored: the table and heatmap changed.
  void scored();

 private:
  struct RunState {
    std::optional<RankWindow> latest;
    std::deque<RankHeatColumn> heat;
    std::map<int64_t, std::size_t> heatRanks;  // the ranks in `heat`, with how many columns have each
    std::map<int64_t, SourceId> sources;
  };
  const RunState* shown() const;
  bool isKeySeries(SeriesId id);

  const StatRegistry& registry_;
  Clock* clock_;
  std::chrono::milliseconds window_;
  std::unique_ptr<RankScorer> scorer_;
  std::optional<std::chrono::steady_clock::time_point> nextWindow_;
  std::map<QString, RunState> runs_;
  QString run_;
  std::unordered_map<SeriesId, bool> keySeries_;  // whether a series carries the key (cached)
  std::map<QString, bool> keys_;                  // keys seen from ranked sources
};

}  // namespace livemon::ui
