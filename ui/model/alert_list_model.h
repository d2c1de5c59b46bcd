#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include <QAbstractTableModel>
#include <QString>

#include <livemon/ui/data/ingest_batch.h>

namespace livemon::ui {

// Thread-safety: a plain value type.
// One triggered alert rule as the dashboard lists it: what livemon::Alert carries, with the
// source as the dashboard labels it. Text in it may come from a peer: views show it as plain text.
struct AlertEntry {
  double timeMs = 0.0;  // when it happened: the event's time (ms since the Unix epoch)
  QString source;       // the source's label
  std::optional<SourceId> sourceId;  // the source's id; none when the dashboard refused the source
  QString kind;         // the rule's kind: "nan" "silent" "loss" "threshold"
  QString rule;         // the rule's text, e.g. "train.loss.mean > 10 for 3"
  QString key;          // the value's key; empty for silence
  double value = 0.0;   // the value; for silence the seconds quiet, for loss the events lost
  QString message;      // one sentence saying what happened
  std::optional<int64_t> step;  // the step of the event that raised it, when it stated one
  // What the Value column says, when `key = value` would not say what was measured (a straggler:
  // "rank 7: train.compute_time_ms mean 200 ms, 2.00× the median of 32 ranks (score 0.50)").
  QString valueText;
};

// GUI thread only.
// The Alerts list: every alert raised, newest last, the newest `capacity` kept (a rule that fires
// on every window of a long run cannot grow it without bound; dropped() counts the evicted).
// Columns: time, source, rule, value; the message is every cell's tooltip. It also counts the
// alerts not yet seen, for the status bar's badge, until markSeen().
class AlertListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { TimeColumn = 0, SourceColumn, RuleColumn, ValueColumn, ColumnCount };
  // Qt::UserRole on any cell: the alert's time in ms since the Unix epoch (a double).
  static constexpr int kTimeRole = Qt::UserRole;
  static constexpr std::size_t kDefaultCapacity = 10'000;

  // Throws std::invalid_argument when capacity is 0.
  explicit AlertListModel(std::size_t capacity = kDefaultCapacity, QObject* parent = nullptr);

  void append(AlertEntry entry);
  void clear();
  const AlertEntry* entry(int row) const;
  std::size_t capacity() const noexcept { return capacity_; }
  uint64_t dropped() const noexcept { return dropped_; }

  // Alerts appended since markSeen() (the badge); unseenChanged() tells.
  uint64_t unseen() const noexcept { return unseen_; }
  void markSeen();

  // "12.5", "NaN", "+Inf", "1.23e+09": a value as the list shows it.
  static QString formatValue(double value);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 signals:
  void unseenChanged(uint64_t unseen);

 private:
  std::size_t capacity_;
  std::deque<AlertEntry> entries_;
  uint64_t dropped_ = 0;
  uint64_t unseen_ = 0;
};

}  // namespace livemon::ui
