#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <QAbstractTableModel>
#include <QFont>
#include <QString>

#include <livemon/source_info.h>
#include <livemon/ui/data/ingest_batch.h>

namespace livemon::ui {

// GUI thread only.
// The event log: every event received, newest last, in a ring of the newest `capacity` events
// whose data together take at most `byteBudget` bytes (older ones are evicted, so memory stays
// bounded however long the run and however large the events a peer sends). Columns: time, step
// (empty for an event that stated none), source, name, data. Two filters show only some rows: a
// text (case-insensitive substring of source, name or data) and whether Stat windows are shown
// (the window already charted, most of a run's events: the window hides them by default, so eval
// events, alerts and notices stand out). They are applied here rather than in a proxy model
// because a proxy keeps a per-row mapping that it rebuilds as rows leave the front of a
// million-row ring.
//
// Rows arrive in batches (append). What a batch costs the views does not depend on how many rows
// are shown: rows that leave at the front are not removed (Qt's views and headers walk every row
// on a removal, 10-20 ms at a million rows) but the rows slide up in place: one dataChanged over
// the rows that stay in number, then rowsShifted(n), then rowsInserted (or rowsRemoved) at the end
// for the difference. So once the ring is full a row number names a position, not an event:
// after rowsShifted(n) the event of row r is at row r - n (gone when that is negative). A view
// that keeps a selection or a scroll position on the same events moves them up by n
// (EventLogView does); persistent indexes do not follow a shift.
class EventLogModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { TimeColumn = 0, StepColumn, SourceColumn, NameColumn, DataColumn, ColumnCount };

  static constexpr std::size_t kDefaultCapacity = 1'000'000;
  // A million rows of typical data (a few hundred bytes) fit; rows of the largest data a row
  // keeps (IngestLimits::maxLogDataBytes) are evicted sooner.
  static constexpr std::size_t kDefaultByteBudget = 256u * 1024 * 1024;

  // Throws std::invalid_argument when capacity or byteBudget is 0.
  explicit EventLogModel(std::size_t capacity = kDefaultCapacity, QObject* parent = nullptr,
                         std::size_t byteBudget = kDefaultByteBudget);

  // Labels for the ids LogEntry uses; set them before appending entries that use them.
  void setSourceLabel(SourceId id, const QString& label);
  void setEventName(NameId id, const QString& name);

  // Appends entries (oldest first), evicting the oldest stored ones beyond the capacity.
  void append(std::vector<LogEntry>&& entries);
  // The data of the rows evicted since the last call, for the caller to free where it likes: the
  // dashboard hands it back to the ingest thread, whose allocator made it (freed here, a full
  // log's thousands of evictions a second contended with that thread's allocations: 3-17 ms a
  // refresh at 5 120 rows a second).
  std::vector<std::string> takeEvicted() { return std::exchange(evicted_, {}); }
  void clear();
  // Removes the stored entries `which` selects, keeping the order of the others (a replayed
  // recording that seeks). Resets the model; returns how many were removed.
  std::size_t removeIf(const std::function<bool(const LogEntry&)>& which);

  // Shows only rows whose source, name or data contain `text` (ignoring case); empty shows all.
  void setFilterText(const QString& text);
  const QString& filterText() const noexcept { return filterText_; }
  // Whether rows of Stat windows (isStatEventName) are shown; true unless set false.
  void setShowStatWindows(bool show);
  bool showStatWindows() const noexcept { return showStatWindows_; }
  // Whether some stored rows are not shown (the text filter, or Stat windows hidden).
  bool filtering() const noexcept { return !filterLower_.empty() || !showStatWindows_; }

  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t byteBudget() const noexcept { return byteBudget_; }
  // The data bytes of the stored rows (at most byteBudget(), but for a single row beyond it).
  std::size_t storedBytes() const noexcept { return storedBytes_; }
  std::size_t storedCount() const noexcept { return static_cast<std::size_t>(endSeq_ - firstSeq_); }
  uint64_t receivedCount() const noexcept { return received_; }
  uint64_t evictedCount() const noexcept { return received_ - storedCount(); }

  // The rows as tab-separated text, one line per row, in the order given.
  QString rowsAsText(const std::vector<int>& rows) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  // Emitted during append, after the dataChanged of the slide and before rows are inserted or
  // removed at the end: the events shown at rows >= `rows` moved up by `rows`, those above left.
  void rowsShifted(int rows);

 private:
  // The ring is stored in fixed-size blocks, allocated as it first fills: it never moves a million
  // entries to grow, as a vector would.
  static constexpr std::size_t kBlockSize = 16384;
  LogEntry& slot(std::size_t index);
  const LogEntry& entryAt(uint64_t seq) const {
    const auto index = static_cast<std::size_t>(seq % capacity_);
    return blocks_[index / kBlockSize][index % kBlockSize];
  }
  uint64_t seqOfRow(int row) const;
  // The rows the stored entries give (all, or those matching the filter); rowCount() is rows_,
  // which differs from it only inside append, between the slide and the insertion or removal.
  int storedRows() const noexcept;
  bool matches(const LogEntry& entry) const;
  void rebuildMatches();
  QString cellText(const LogEntry& entry, int column) const;
  const QString& sourceLabel(SourceId id) const;
  const QString& eventName(NameId id) const;

  std::size_t capacity_;
  std::size_t byteBudget_;
  std::size_t storedBytes_ = 0;  // data bytes of the entries firstSeq_..endSeq_
  static constexpr std::size_t kEvictedKept = 1u << 16;
  std::vector<std::string> evicted_;  // see takeEvicted()
  std::vector<std::unique_ptr<LogEntry[]>> blocks_;  // the ring: entry for seq s at slot s % capacity_
  uint64_t firstSeq_ = 0;       // oldest stored
  uint64_t endSeq_ = 0;         // one past the newest stored
  uint64_t received_ = 0;
  int rows_ = 0;                // what rowCount() tells the views
  std::vector<QString> sourceLabels_;
  std::vector<QString> eventNames_;
  QFont fixedFont_;

  bool showStatWindows_ = true;
  std::vector<char> statNames_;            // per NameId: a Stat window's name
  QString filterText_;
  std::string filterLower_;                // UTF-8, lower-cased ASCII
  std::vector<char> sourceMatches_;        // per SourceId, for the current filter
  std::vector<char> nameMatches_;          // per NameId, for the current filter
  std::deque<uint64_t> matches_;           // seqs of the rows shown while filtering()
};

// A source as the log's Source column names it: the rank first ("rank 3/64 · train@gpu01:4242"),
// so a narrow column still tells ranks apart; transport::describe() without a rank.
QString logSourceLabel(const SourceInfo& source);

}  // namespace livemon::ui
