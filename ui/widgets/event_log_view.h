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

// Thread-compatible: a widget, used on the GUI thread only.
// The event log panel: a text filter, an auto-scroll toggle, a copy button and the table.
// Ctrl+C (or the context menu) copies the selected rows as tab-separated text.
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

  // Call after rows were appended: scrolls to the newest when auto-scroll is on, and updates the
  // counts.
  void rowsAppended();

  // The selected rows as text (what copySelection() puts on the clipboard).
  QString selectedRowsText() const;
  void copySelection();

 private:
  void updateCount();

  EventLogModel& model_;
  QLineEdit* filter_ = nullptr;
  QCheckBox* autoScroll_ = nullptr;
  QLabel* count_ = nullptr;
  QTableView* table_ = nullptr;
  QTimer* filterDelay_ = nullptr;
};

}  // namespace livemon::ui
