#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>
#include <QString>
#include <QStringList>

#include <livemon/run_config.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/model/run_filter.h>

namespace livemon::ui {

class RunDisplay;
class StatRegistry;
struct SourceEntry;

// What the dashboard knows of a run: its sources heard lately (live), silent past the stale
// time (stopped answering), all gone with a goodbye (finished), or read from a recording.
enum class RunState { Live, Stopped, Recorded, Finished };
// "live" "stopped answering" "recorded" "finished"
QString runStateName(RunState state);

// The aggregation a chart of several runs draws for each, and the Runs panel summarises: the
// first of value, mean, p50, last present; otherwise the first by name. -1 is best; larger worse.
int mainAggregationRank(const QString& aggregation);

// Thread-safety: a plain value type.
// One run's values of one Stat (its main aggregation) over all it holds.
struct RunKeySummary {
  double last = 0.0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  std::optional<double> minStep;  // the step at the lowest value, when it carried one
  std::optional<double> maxStep;
};

// GUI thread only.
// The Runs panel's table: one row per run (SourceInfo::run; the ranks of a run are one row), live
// or recorded, in the order first heard. Columns: the run (its colour as decoration, shown or
// hidden as a check box: the RunDisplay's), its state, start, duration (to its newest sample),
// last step, then one column per config key any run has (blank where a run lacks it), then four
// per summary key (summaryKeys): the last, lowest and highest value of the Stat's main
// aggregation, and the step at the best (the lowest, or with Best::Max the highest).
//
// Fed by the Dashboard: apply() (new runs and their configs: a run's config is the newest any of
// its sources sent), addSeries() (the lines charted, rank groups' medians for ranked runs), and
// refresh() (states, durations, steps and summaries, from the registry's stores; about once a
// second). Column keys for filters and lookups (value()): a config key, "state", "start",
// "duration", "step", and "<stat>.last", ".min", ".max", ".best_step" for a summary key.
class RunsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum class Best { Min, Max };
  // The value a cell sorts by: a double for numbers (and times), text otherwise, invalid for a
  // blank, which sorts last.
  static constexpr int kSortRole = Qt::UserRole + 1;
  static constexpr int kFixedColumns = 5;  // run, state, start, duration, last step
  // Config keys shown at most (columns); more are left out, counted by droppedConfigKeys().
  static constexpr int kMaxConfigColumns = 256;
  // Summary keys at most.
  static constexpr int kMaxSummaryKeys = 16;

  RunsModel(const StatRegistry& registry, RunDisplay& display, QObject* parent = nullptr);

  // A batch just applied to the registry: its new sources' runs, and its configs.
  void apply(const IngestBatch& batch);
  // Series charted (Dashboard::seriesAdded): the lines the summaries read.
  void addSeries(const std::vector<SeriesId>& series);
  // Sources about to leave the registry (a recording closed): their runs go when no source is left.
  void removeSources(const std::vector<SourceId>& sources, const std::vector<SeriesId>& series);
  // Recomputes states, durations, steps and summaries; `stateOf` tells each source's state.
  void refresh(const std::function<RunState(const SourceEntry&)>& stateOf);

  // Stats (chart names) summarised, in column order; duplicates and those beyond
  // kMaxSummaryKeys are left out.
  void setSummaryKeys(const QStringList& keys);
  const QStringList& summaryKeys() const noexcept { return summaryKeys_; }
  void setBest(Best best);
  Best best() const noexcept { return best_; }
  // Charted Stats of the runs, sorted: what summary keys are chosen from.
  QStringList availableKeys() const;
  // Config keys over kMaxConfigColumns, not shown.
  std::size_t droppedConfigKeys() const noexcept { return droppedConfigKeys_; }

  QString runName(int row) const;
  const RunConfig* config(int row) const;
  std::optional<RunState> state(int row) const;
  // The cell of `row` under a column key (see above); invalid when the run has none.
  QVariant value(int row, const QString& key) const;
  // Every column key, in column order (the run's name excepted).
  QStringList columnKeys() const;
  // The column of a key; -1 for none.
  int columnOf(const QString& key) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  struct Run {
    QString name;
    std::vector<SourceId> sources;
    std::vector<SeriesId> series;
    RunConfig config;
    int64_t configNs = std::numeric_limits<int64_t>::min();
    RunState state = RunState::Live;
    std::optional<double> startMs;
    std::optional<double> endMs;  // its newest sample
    std::optional<double> lastStep;
    std::vector<std::optional<RunKeySummary>> summaries;  // per summary key
  };
  enum class Part { Last, Min, Max, BestStep };

  int rowOf(const QString& run) const;
  int rowOfSource(SourceId source) const;
  // Takes away the columns of config keys that no run left has.
  void dropUnusedConfigKeys();
  // The keys of `config` not shown yet, within kMaxConfigColumns (those beyond are counted).
  QStringList newConfigKeys(const RunConfig& config);
  void summarise(Run& run) const;
  QVariant summaryValue(const Run& run, int key, Part part) const;
  QVariant fixedValue(const Run& run, int column) const;
  QVariant cellValue(const Run& run, int column) const;
  QString columnKey(int column) const;
  bool isCell(const QModelIndex& index) const;
  void allChanged();

  const StatRegistry& registry_;
  RunDisplay& display_;
  std::vector<Run> runs_;
  QStringList configKeys_;  // sorted
  std::size_t droppedConfigKeys_ = 0;
  QStringList summaryKeys_;
  Best best_ = Best::Min;
};

// GUI thread only.
// The Runs panel's sorting and filtering over a RunsModel: numbers sort as numbers (kSortRole),
// blanks last either way; the filter (RunFilter) keeps the runs every expression holds for. An
// expression naming no column is an error too (errors()).
class RunsFilterModel : public QSortFilterProxyModel {
  Q_OBJECT

 public:
  explicit RunsFilterModel(RunsModel& runs, QObject* parent = nullptr);

  void setFilterText(const QString& text);
  const RunFilter& filter() const noexcept { return filter_; }
  // The filter's errors, and its expressions naming no column; empty when it reads.
  QStringList errors() const;

 signals:
  void errorsChanged(const QStringList& errors);

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  RunsModel& runs_;
  RunFilter filter_;
  QStringList lastErrors_;
};

}  // namespace livemon::ui
