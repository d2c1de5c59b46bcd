#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <QAbstractTableModel>
#include <QBrush>
#include <QString>

#include <livemon/clock.h>
#include <livemon/record_function.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/data/ingest_limits.h>

namespace livemon::ui {

class StatRegistry;

// Ranges (<livemon/record_function.h>) are timed by Stats named kRangeStatPrefix + name
// ("range/forward"), whose count, mean, p50, p99 and max (in milliseconds) arrive once per window.

// The range name of a Stat name ("range/aten::mm" -> "aten::mm"); std::nullopt for a Stat that
// is not a range, or a bare "range/".
std::optional<QString> rangeNameOfStat(const QString& statName);

// Formats a duration given in milliseconds with a unit that suits it: "850 ns", "12.4 µs",
// "3.07 ms", "1.25 s" (three significant digits); "NaN" and "∞" for what is not finite.
QString formatDurationMs(double ms);

// GUI thread only.
// The Ranges table: one row per (source, range), read the way torch.profiler's key_averages()
// table is: how often it ran (Calls, since the dashboard first saw it), how long in all (Total
// time: each window's count × mean, summed), the time it took per second of wall time in the
// latest window (Time/s), its share of the step range's total time (% of step; the step range is
// the source's range named as stepRangeName() says, train_step for instance), its self time
// where nesting is known (see below), and the latest window's mean, p50, p99 and max.
//
// Nesting is known from names only (range Stats carry no parent): a range "a/b" is a child of
// "a" when the same source times "a". Self time is shown for a range that has such children
// (its total time minus theirs) and for such a child (nothing timed inside it is known: its
// total time); a range outside any such family has none ("—"), as its children are not known.
//
// apply() takes each batch after the StatRegistry has applied it and records what changed;
// publish() shows it: new rows are inserted at the end (rows are never moved, sorting is a
// proxy's job, and only removeSources() removes any) and changed cells are reported with one
// dataChanged per run of adjacent changed rows, never with a reset. Between the two the model
// reports what it last published, so a paused dashboard keeps a table that does not move while
// counting every window.
//
// Rows are bounded (setMaxRows): a (source, range) pair beyond it gets no row, for good, and is
// counted (unlistedCount()); its series still chart as usual.
//
// A row also shows when its latest window was (its time, on the publisher's clock), and is dimmed
// (Qt::ForegroundRole) once it has had no window for a while: longer than kStaleIntervals of its
// usual interval between windows, and than kStaleMinimum, by the reference time of its source
// (setReferenceTime; the clock's wall time unless told otherwise). A range that stopped is thus
// told apart from a live one. Staleness is checked on publish(), at most every kStaleCheck.
//
// Qt::DisplayRole is formatted (durations with their unit, counts with digit grouping);
// Qt::EditRole and SortRole give the raw double (milliseconds, ms per second, percent, or a
// count) so a proxy sorts numbers as numbers. SortRole is empty for a missing value and for NaN,
// which sort last. The range column's tooltip starts with the full name (the column elides it).
class RangesModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    RangeColumn = 0,
    SourceColumn,
    CallsColumn,          // samples in all windows seen
    TotalTimeColumn,      // the time in the range over all windows seen, ms
    TimePerSecondColumn,  // ms in the range per second of wall time, in the latest window
    StepShareColumn,      // total time as a percentage of the step range's
    SelfTimeColumn,       // total time minus the known children's, ms
    MeanColumn,
    P50Column,
    P99Column,
    MaxColumn,
    LastSeenColumn,  // the time of the latest window
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole;
  static constexpr std::chrono::milliseconds kStaleMinimum{10'000};
  static constexpr double kStaleIntervals = 3.0;
  static constexpr std::chrono::milliseconds kStaleCheck{500};

  // `clock` gives the wall time rows are measured against and paces the staleness checks;
  // nullptr: the system clock. It must outlive the model.
  explicit RangesModel(const StatRegistry& registry, const Clock* clock = nullptr, QObject* parent = nullptr);

  // What "now" is for a source's rows, in ms since the Unix epoch (a replayed source's is its
  // playhead); std::nullopt, or no function: the clock's wall time.
  void setReferenceTime(std::function<std::optional<double>(SourceId)> now) { referenceTime_ = std::move(now); }
  // The foreground of a dimmed row.
  void setStaleForeground(QBrush brush) { staleForeground_ = std::move(brush); }
  // Whether a published row is dimmed, as of the last publish().
  bool isStale(int row) const;

  // Records the batch's range series and samples. Call after StatRegistry::apply(batch).
  void apply(const IngestBatch& batch);
  // Shows what apply() recorded since the last publish().
  void publish();
  // Source labels changed (RegistryChanges::labelsChanged): re-reads them.
  void sourceLabelsChanged();
  // Forgets the values and totals of the rows of the sources `which` selects (a replayed
  // recording that seeks, as StatRegistry::clearSamples); the rows stay, empty until their next
  // window. Shown by the next publish().
  void clearValues(const std::function<bool(SourceId)>& which);
  // Removes the rows of sources the StatRegistry removed (a replayed recording that is closed),
  // at once, paused or not: their source can no longer be looked up. Rows below move up.
  void removeSources(const std::vector<SourceId>& sources);

  // The row of a range of a source, or -1.
  int rowOf(SourceId source, const QString& rangeName) const;
  QString rangeName(int row) const;
  SourceId source(int row) const;
  // The Stat the row's range is timed by ("range/<name>").
  QString statName(int row) const;
  // The row's duration series (mean, p50, p99, max: what a chart of the range shows), as far as
  // they are known.
  std::vector<SeriesId> durationSeries(int row) const;
  // Rows at most; lowering it does not take rows away.
  void setMaxRows(std::size_t rows) noexcept { maxRows_ = rows; }
  std::size_t maxRows() const noexcept { return maxRows_; }
  // (source, range) pairs left without a row, their sources not removed.
  std::size_t unlistedCount() const noexcept { return unlisted_.size(); }
  // Whether any published range is nested in another by name (Self time is known somewhere).
  bool nestingKnown() const;
  // The name of the step range of `source` ("train_step"), empty when it times none.
  QString stepRange(SourceId source) const;
  // How many sources the published rows come from (the view shows the source column from two).
  int sourceCount() const noexcept { return static_cast<int>(publishedSources_.size()); }

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  // The aggregations a row shows, in this order.
  enum Value { Count = 0, Mean, P50, P99, Max, ValueCount };
  static constexpr SeriesId kNoSeries = std::numeric_limits<SeriesId>::max();

  struct Values {
    std::array<std::optional<double>, ValueCount> latest;
    std::optional<double> calls;  // sum of the windows' counts
    std::optional<double> totalTime;  // sum of the windows' count × mean, ms
    std::optional<double> lastSeen;  // the latest window's time, ms since the Unix epoch
    std::optional<double> interval;  // between the latest two windows, ms
    std::optional<double> stepShare;  // derived (derive()), percent
    std::optional<double> selfTime;   // derived (derive()), ms
  };
  // A window's count and mean, until both arrived and their product went into the total time.
  struct WindowProduct {
    double x = 0.0;
    std::optional<double> count;
    std::optional<double> mean;
    bool added = false;
  };
  struct Row {
    SourceId source = 0;
    QString name;
    std::array<SeriesId, ValueCount> series{kNoSeries, kNoSeries, kNoSeries, kNoSeries, kNoSeries};
    Values current;  // as applied
    Values shown;    // as last published
    WindowProduct window;
    int parent = -1;  // the row of the range this one is nested in, by name ("a" of "a/b")
    bool stale = false;  // as last published
  };
  // Where a series' samples go.
  struct Target {
    int row = -1;
    int value = 0;
  };

  static std::optional<double> cell(const Values& values, int column);
  // Whether a range name is a step's ("train_step", "step", ...).
  static bool isStepRangeName(const QString& name);
  // Adds a count or mean sample to the row's window product (and its total time when complete).
  static void addToTotalTime(Row& row, int value, double x, double y);
  // Re-links rows to their parents and sources to their step rows (rows came or went).
  void link();
  // Fills every row's derived values (step share, self time) from the current ones.
  void derive();
  QVariant displayText(const Row& row, int column, std::optional<double> value) const;
  QVariant toolTip(const Row& row, int modelRow, int column, std::optional<double> value) const;
  // Equal, taking NaN as equal to NaN (so a NaN cell is not reported as changed on every publish).
  static bool same(std::optional<double> a, std::optional<double> b);
  static bool same(const Values& a, const Values& b);
  QString sourceLabel(SourceId id) const;
  // Rebuilds what refers to rows by index after rows were removed.
  void reindex();
  bool staleNow(const Row& row) const;
  // Re-dims the published rows (all of them when `force`, else only when kStaleCheck passed).
  void updateStale(bool force);

  const StatRegistry& registry_;
  std::vector<Row> rows_;
  std::map<std::pair<SourceId, QString>, int> rowIndex_;
  int publishedRows_ = 0;
  std::vector<SourceId> publishedSources_;
  std::map<SourceId, int> stepRows_;  // link()
  std::size_t linkedRows_ = 0;  // rows_.size() as link() last saw it
  std::vector<Target> targets_;  // indexed by SeriesId; row -1 for series that are not ranges
  std::size_t maxRows_ = kDefaultMaxRangeRows;
  // Left without a row; at most one entry per series, so bounded by the ingest's limits.
  std::set<std::pair<SourceId, QString>> unlisted_;
  const Clock* clock_;
  std::function<std::optional<double>(SourceId)> referenceTime_;
  QBrush staleForeground_{QColor(0x8b, 0x92, 0x9e)};
  std::chrono::steady_clock::time_point lastStaleCheck_{};
};

}  // namespace livemon::ui
