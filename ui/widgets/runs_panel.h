#pragma once

#include <QDockWidget>
#include <QRect>
#include <QStringList>

class QComboBox;
class QMainWindow;
class QMenu;
class QLabel;
class QLineEdit;
class QModelIndex;
class QTableView;
class QToolButton;

namespace livemon::ui {

class Dashboard;
class RunsFilterModel;

// GUI thread only.
// The Runs panel, a dock beside the charts: the dashboard's runs (RunsModel) in a table sorted by
// any column and filtered by a filter box (`lr>1e-3 optimizer=adam`; an expression that cannot
// be read is shown as such under it), with a button to choose the summary keys (the charted Stats)
// and whether their best is the lowest or the highest. A run's check box shows or hides its lines
// in every chart; selecting rows shows exactly those runs. It shows itself the first time a
// second run appears, unless it was closed by the user; the summary keys are kept in the
// settings (with none kept, the first Stat named like "loss" is summarised).
class RunsPanel : public QDockWidget {
  Q_OBJECT

 public:
  RunsPanel(Dashboard& dashboard, QWidget* parent = nullptr);
  // Docks a hidden panel at the bottom of `window`, with an entry in its View menu `view`.
  static RunsPanel* addTo(QMainWindow& window, Dashboard& dashboard, QMenu& view);

  QLineEdit* filterBox() const noexcept { return filter_; }
  QTableView* table() const noexcept { return table_; }
  RunsFilterModel& filterModel() const noexcept { return *proxy_; }
  // The filter's errors as shown; empty when it reads.
  QString errorText() const;
  // The line under the table when config keys were left out (RunsModel::kMaxConfigColumns); empty
  // when every key is a column.
  QString limitText() const;
  // What the summary button offers: the runs' charted Stats.
  QStringList summaryChoices() const;
  void setSummaryKeys(const QStringList& keys);
  // Where a row's check box is, in the table's viewport.
  QRect checkBoxRect(const QModelIndex& index) const;

 protected:
  // A press on a check box ticks it without showing only that run (the row it selects).
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void showErrors(const QStringList& errors);
  void selectionChanged();
  void buildSummaryMenu();
  void runsChanged();

  Dashboard& dashboard_;
  RunsFilterModel* proxy_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QLabel* errors_ = nullptr;
  QLabel* limit_ = nullptr;
  QToolButton* summaries_ = nullptr;
  QComboBox* best_ = nullptr;
  QTableView* table_ = nullptr;
  bool autoPicked_ = false;  // a summary key was picked for the user, or the user picked
  bool autoShown_ = false;   // shown for a second run once
  bool pressOnCheckBox_ = false;
};

}  // namespace livemon::ui
