#include <livemon/ui/widgets/event_log_view.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QScrollBar>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/event_log_view_delegate.h>

namespace livemon::ui {

EventLogView::EventLogView(EventLogModel& model, QWidget* parent) : QWidget(parent), model_(model) {
  QVBoxLayout* layout = nullptr;
  QHBoxLayout* barLayout = addPanelHeader(this, tr("Event log"), &layout);
  QWidget* bar = barLayout->parentWidget();
  filter_ = new QLineEdit(bar);
  filter_->setPlaceholderText(tr("Filter events (source, name, data)…"));
  filter_->setClearButtonEnabled(true);
  filter_->setMinimumWidth(60);
  statWindows_ = new QCheckBox(tr("Stat windows"), bar);
  statWindows_->setChecked(model_.showStatWindows());
  statWindows_->setToolTip(tr("Also list the livemon.Stat windows (the values the charts show)"));
  autoScroll_ = new QCheckBox(tr("Auto-scroll"), bar);
  autoScroll_->setChecked(true);
  autoScroll_->setToolTip(tr("Keep the newest event in view"));
  auto* copy = new QToolButton(bar);
  copy->setText(tr("Copy"));
  copy->setToolTip(tr("Copy the selected rows as tab-separated text (Ctrl+C)"));
  barLayout->addWidget(filter_, 1);
  barLayout->addWidget(statWindows_);
  barLayout->addWidget(autoScroll_);
  barLayout->addWidget(copy);

  table_ = new QTableView(this);
  table_->setModel(&model_);
  table_->setItemDelegate(new EventLogDelegate(table_));  // a line of text per cell, no style layout
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setAlternatingRowColors(true);
  table_->setShowGrid(false);
  table_->setWordWrap(false);
  table_->setTextElideMode(Qt::ElideRight);
  table_->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
  // By pixel: keeping the rows in place as older ones leave is then exact, also at the bottom,
  // where scrolling by row would align the last row and cut the top one.
  table_->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
  // Fixed row heights: the header then never measures a million rows.
  QHeaderView* rows = table_->verticalHeader();
  rows->setVisible(false);
  rows->setSectionResizeMode(QHeaderView::Fixed);
  rows->setDefaultSectionSize(fontMetrics().height() + 6);
  QHeaderView* columns = table_->horizontalHeader();
  columns->setSectionResizeMode(QHeaderView::Interactive);
  columns->setStretchLastSection(true);
  columns->setHighlightSections(false);
  columns->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  columns->resizeSection(EventLogModel::TimeColumn, fontMetrics().horizontalAdvance(QStringLiteral("00:00:00.000")) + 24);
  // Narrow enough for the Data column to show in the log's default width: the source's rank comes
  // first, so a cut source still tells ranks apart (the tooltip holds all of it).
  columns->resizeSection(EventLogModel::StepColumn, fontMetrics().horizontalAdvance(QStringLiteral("000000")) + 14);
  columns->resizeSection(EventLogModel::SourceColumn, 135);
  columns->resizeSection(EventLogModel::NameColumn, 100);
  layout->addWidget(table_, 1);

  count_ = new QLabel(this);
  count_->setWordWrap(true);  // a narrow log shows the whole line on two
  count_->setContentsMargins(6, 3, 6, 3);
  count_->setStyleSheet(dimTextStyle());
  // Its text may be cut: it must not hold the log wider than the user or the window makes it.
  count_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  layout->addWidget(count_);

  auto* copyAction = new QAction(tr("Copy rows"), table_);
  copyAction->setShortcut(QKeySequence::Copy);
  copyAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  table_->addAction(copyAction);
  table_->setContextMenuPolicy(Qt::ActionsContextMenu);
  connect(copyAction, &QAction::triggered, this, &EventLogView::copySelection);
  connect(copy, &QToolButton::clicked, this, &EventLogView::copySelection);

  // Filtering scans the whole ring: wait for a pause in typing.
  filterDelay_ = new QTimer(this);
  filterDelay_->setSingleShot(true);
  filterDelay_->setInterval(200);
  connect(filter_, &QLineEdit::textChanged, filterDelay_, qOverload<>(&QTimer::start));
  connect(filterDelay_, &QTimer::timeout, this, [this] { applyFilter(filter_->text()); });
  connect(statWindows_, &QCheckBox::toggled, this, [this](bool on) {
    model_.setShowStatWindows(on);
    following_ = true;  // other rows altogether: show the newest of them
    rowsAppended();
    emit statWindowsShownChanged(on);
  });
  connect(autoScroll_, &QCheckBox::toggled, this, [this](bool on) {
    if (on) table_->scrollToBottom();
  });
  // The user's scrolling decides whether the table follows: at the bottom it does. Rows added
  // below do not change the value, so following survives them.
  QScrollBar* scroll = table_->verticalScrollBar();
  connect(scroll, &QScrollBar::valueChanged, this, [this, scroll](int value) { following_ = value >= scroll->maximum(); });
  connect(&model_, &EventLogModel::rowsShifted, this, &EventLogView::keepRowsInPlace);
  updateCount();
}

bool EventLogView::autoScroll() const { return autoScroll_->isChecked(); }

void EventLogView::setAutoScroll(bool enabled) { autoScroll_->setChecked(enabled); }

bool EventLogView::showStatWindows() const { return statWindows_->isChecked(); }

void EventLogView::setShowStatWindows(bool show) {
  statWindows_->setChecked(show);
  model_.setShowStatWindows(show);  // also when the box already said so
}

void EventLogView::setFilterText(const QString& text) {
  filter_->setText(text);
  filterDelay_->stop();
  applyFilter(text);
}

void EventLogView::applyFilter(const QString& text) {
  model_.setFilterText(text);
  following_ = true;  // other rows altogether: show the newest of them
  rowsAppended();
}

void EventLogView::rowsAppended() {
  if (autoScroll_->isChecked() && following_) table_->scrollToBottom();
  updateCount();
}

void EventLogView::keepRowsInPlace(int rows) {
  QItemSelectionModel* selection = table_->selectionModel();
  const QModelIndex current = selection->currentIndex();
  if (selection->hasSelection() || current.isValid()) {
    // Work per selected range, not per row.
    QItemSelection moved;
    for (const QItemSelectionRange& range : selection->selection()) {
      if (range.bottom() < rows) continue;  // left the log
      moved.select(model_.index(std::max(range.top() - rows, 0), range.left()),
                   model_.index(range.bottom() - rows, range.right()));
    }
    selection->select(moved, QItemSelectionModel::ClearAndSelect);
    if (current.isValid() && current.row() >= rows) {
      selection->setCurrentIndex(model_.index(current.row() - rows, current.column()), QItemSelectionModel::NoUpdate);
    } else {
      selection->clearCurrentIndex();
    }
  }
  if (autoScroll_->isChecked() && following_) return;
  QScrollBar* bar = table_->verticalScrollBar();
  const int rowStep = table_->verticalScrollMode() == QAbstractItemView::ScrollPerPixel
                          ? table_->verticalHeader()->defaultSectionSize()
                          : 1;
  bar->setValue(bar->value() - static_cast<int>(std::min<int64_t>(int64_t{rows} * rowStep, bar->value())));
}

void EventLogView::updateCount() {
  const QLocale locale;
  QString text;
  // What is shown first: the rest of the line may be cut in a narrow log.
  if (model_.filterText().isEmpty() && !model_.showStatWindows()) {
    text = tr("%1 shown (Stat windows hidden) · ").arg(locale.toString(model_.rowCount()));
  } else if (model_.filterText().isEmpty() && static_cast<std::size_t>(model_.rowCount()) < model_.storedCount()) {
    // Stat windows keep a share of the log of their own; the rows start at the oldest one kept.
    text = tr("%1 shown (since the oldest Stat window kept) · ").arg(locale.toString(model_.rowCount()));
  }
  text += tr("%1 events received, %2 kept (newest %3)")
                     .arg(locale.toString(static_cast<qulonglong>(model_.receivedCount())),
                          locale.toString(static_cast<qulonglong>(model_.storedCount())),
                          locale.toString(static_cast<qulonglong>(model_.capacity())));
  if (!model_.filterText().isEmpty()) {
    text += tr(" · %1 match the filter").arg(locale.toString(model_.rowCount()));
  }
  count_->setText(text);
}

QString EventLogView::selectedRowsText() const {
  std::vector<int> rows;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows()) rows.push_back(index.row());
  std::sort(rows.begin(), rows.end());
  return model_.rowsAsText(rows);
}

void EventLogView::copySelection() {
  const QString text = selectedRowsText();
  if (!text.isEmpty()) QApplication::clipboard()->setText(text);
}

}  // namespace livemon::ui
