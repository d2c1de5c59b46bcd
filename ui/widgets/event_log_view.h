#pragma once

#include <QString>
#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTimer;

namespace livemon::ui {

class EventLogModel;

// GUI thread only.
// The event log panel: a text filter, a toggle for the Stat windows (off by default, set by the
// window: they are charted already and would bury everything else), an auto-scroll toggle, a copy
// button and the table.
// Ctrl+C (or the context menu) copies the selected rows as tab-separated text.
// With auto-scroll on, the table follows the newest row while it is scrolled to the bottom; scrolled
// up (or with auto-scroll off) it stays on the events the user reads as newer ones push older ones
// out. A selected event stays selected until the log drops it.
class EventLogView : public QWidget {
  Q_OBJECT

 public:
  explicit EventLogView(EventLogModel& model, QWidget* parent = nullptr);

  QTableView* table() const noexcept { return table_; }
  QLineEdit* filterEdit() const noexcept { return filter_; }

  bool autoScroll() const;
  void setAutoScroll(bool enabled);
  // Applies the filter now (typing applies it after a short pause).
  void setFilterText(const QString& text);
  // Whether the table lists Stat windows too (EventLogModel::setShowStatWindows).
  bool showStatWindows() const;
  void setShowStatWindows(bool show);
  QCheckBox* statWindowsBox() const noexcept { return statWindows_; }

  // Call after rows were appended: scrolls to the newest when auto-scroll is on and the table was
  // at the bottom, and updates the counts.
  void rowsAppended();
  // Whether the table follows the newest row: it is (or was, before the last append) scrolled to
  // the bottom.
  bool followingNewest() const noexcept { return following_; }

  // The selected rows as text (what copySelection() puts on the clipboard).
  QString selectedRowsText() const;
  void copySelection();

 signals:
  void statWindowsShownChanged(bool shown);

 private:
  void updateCount();
  void applyFilter(const QString& text);
  // The model slid its rows up by `rows`: move the selection and, unless following the newest, the
  // scroll position with them.
  void keepRowsInPlace(int rows);

  EventLogModel& model_;
  QLineEdit* filter_ = nullptr;
  QCheckBox* statWindows_ = nullptr;
  QCheckBox* autoScroll_ = nullptr;
  QLabel* count_ = nullptr;
  QTableView* table_ = nullptr;
  QTimer* filterDelay_ = nullptr;
  bool following_ = true;
};

}  // namespace livemon::ui
