#pragma once

#include <algorithm>
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
// The event log: every event received, newest last, in rings of the newest events whose data
// together take at most `byteBudget` bytes (older ones are evicted, so memory stays bounded however
// long the run and however large the events a peer sends). Columns: time, step (empty for an event
// that stated none), source, name, data. Two filters show only some rows: a text (case-insensitive
// substring of source, name or data) and whether Stat windows are shown (the window already
// charted, most of a run's events: the window hides them by default, so eval events, alerts and
// notices stand out). They are applied here rather than in a proxy model because a proxy keeps a
// per-row mapping that it rebuilds as rows leave the front of a million-row ring.
//
// The log keeps the newest `capacity` events, of which at most a quarter Stat windows: they have a
// ring of their own, so a run of 1 024 ranks, whose Stat windows are nearly all it sends, neither
// spends the log's memory on rows it hides nor pushes its eval events out within a minute. While
// Stat windows are shown, the rows start at the oldest Stat window kept: older events of the other
// ring are listed again when Stat windows are hidden. (That way rows only ever leave at the front.)
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

  // Throws std::invalid_argument when capacity or byteBudget is 0. Stat windows keep at most
  // statWindowCapacity(capacity) of the rows.
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

  static std::size_t statWindowCapacity(std::size_t capacity) noexcept { return std::max<std::size_t>(1, capacity / 4); }

  std::size_t capacity() const noexcept { return capacity_; }
  std::size_t byteBudget() const noexcept { return byteBudget_; }
  // The data bytes of the stored rows (at most byteBudget(), but for a single row beyond it).
  std::size_t storedBytes() const noexcept { return storedBytes_; }
  std::size_t storedCount() const noexcept { return rings_[kOthers].size() + rings_[kStatWindows].size(); }
  // Of them, Stat windows.
  std::size_t storedStatWindows() const noexcept { return rings_[kStatWindows].size(); }
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
  struct Slot {
    LogEntry entry;
    uint64_t order = 0;  // its place among the events of both rings: received order
  };
  // A FIFO of at most `capacity` slots, seqs first..end-1, the slot of seq s at s % capacity. It is
  // stored in fixed-size blocks, allocated as it first fills: it never moves a million entries to
  // grow, as a vector would, and a ring that never fills takes only what it holds.
  class Ring {
   public:
    explicit Ring(std::size_t capacity) : capacity_(capacity) {}
    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t size() const noexcept { return static_cast<std::size_t>(end - first); }
    Slot& at(uint64_t seq);  // allocates the slot's block the first time
    const Slot& at(uint64_t seq) const {
      const auto index = static_cast<std::size_t>(seq % capacity_);
      return blocks_[index / kBlockSize][index % kBlockSize];
    }
    void release() {  // empties it and frees its blocks
      blocks_.clear();
      first = end = 0;
    }

    uint64_t first = 0;  // oldest stored
    uint64_t end = 0;    // one past the newest stored

   private:
    static constexpr std::size_t kBlockSize = 16384;
    std::size_t capacity_;
    std::vector<std::unique_ptr<Slot[]>> blocks_;
  };
  enum RingId : unsigned { kOthers = 0, kStatWindows = 1 };
  // A row's event: a ring and a seq in it.
  static uint64_t keyOf(RingId ring, uint64_t seq) noexcept { return seq << 1 | ring; }
  const Slot& slotOf(uint64_t key) const { return rings_[key & 1].at(key >> 1); }

  // Whether rows map to events through matches_ rather than directly to the other ring's seqs
  // (which they do only while Stat windows are hidden and there is no text filter).
  bool indexed() const noexcept { return showStatWindows_ || !filterLower_.empty(); }
  uint64_t keyOfRow(int row) const;
  // While Stat windows are shown, the rows start here: at the oldest Stat window kept, once any
  // was evicted (see the class comment).
  uint64_t firstShownOrder() const noexcept { return std::max(evictedBelow_[kOthers], evictedBelow_[kStatWindows]); }
  bool shown(uint64_t key) const;
  // Evicts the oldest event of `ring`, or of both rings.
  void evictFront(RingId ring);
  void evictOldest();
  // The rows the stored entries give (all, or those matching the filter); rowCount() is rows_,
  // which differs from it only inside append, between the slide and the insertion or removal.
  int storedRows() const noexcept;
  bool isStatWindow(const LogEntry& entry) const noexcept {
    return entry.name < statNames_.size() && statNames_[entry.name] != 0;
  }
  bool matchesText(const LogEntry& entry) const;
  void rebuildMatches();
  QString cellText(const LogEntry& entry, int column) const;
  const QString& sourceLabel(SourceId id) const;
  const QString& eventName(NameId id) const;

  std::size_t capacity_;
  std::size_t byteBudget_;
  std::size_t storedBytes_ = 0;  // data bytes of the entries stored in both rings
  static constexpr std::size_t kEvictedKept = 1u << 16;
  std::vector<std::string> evicted_;  // see takeEvicted()
  Ring rings_[2];                     // kOthers, kStatWindows
  uint64_t nextOrder_ = 0;
  uint64_t evictedBelow_[2] = {0, 0};  // per ring: one past the order of its newest evicted event
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
  std::deque<uint64_t> matches_;           // keys of the rows shown while indexed(), oldest first
};

// A source as the log's Source column names it: the rank first ("rank 3/64 · train@gpu01:4242"),
// so a narrow column still tells ranks apart; transport::describe() without a rank.
QString logSourceLabel(const SourceInfo& source);

}  // namespace livemon::ui
