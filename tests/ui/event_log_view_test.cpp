// The event log panel under a full ring: it follows the newest row at the bottom, and scrolled up
// (or with auto-scroll off) keeps the events the user reads and selects in place while newer
// events push older ones out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <QCoreApplication>
#include <QFontDatabase>
#include <QFontMetricsF>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QScrollBar>
#include <QTableView>

#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/widgets/event_log_view.h>
#include <livemon/ui/widgets/event_log_view_delegate.h>

namespace livemon::ui {
namespace {

// Events numbered from `first`, data "n=<i>".
std::vector<LogEntry> entries(int first, int count) {
  std::vector<LogEntry> result;
  for (int i = first; i < first + count; ++i) {
    LogEntry entry;
    entry.timeNs = 1'700'000'000'000'000'000 + int64_t{i} * 1'000'000;
    entry.data = "n=" + std::to_string(i);
    result.push_back(std::move(entry));
  }
  return result;
}

class EventLogViewTest : public ::testing::Test {
 protected:
  EventLogViewTest() : model_(100), view_(model_) {
    model_.setSourceLabel(0, QStringLiteral("train@a:1"));
    model_.setEventName(0, QStringLiteral("tick"));
    view_.resize(500, 300);
    view_.show();
  }

  // As the dashboard does on each refresh, then lets the view lay itself out as the event loop
  // would before the next one.
  void append(int first, int count) {
    model_.append(entries(first, count));
    view_.rowsAppended();
    QCoreApplication::processEvents();
  }

  QTableView& table() { return *view_.table(); }
  QString dataOfRow(int row) { return model_.index(row, EventLogModel::DataColumn).data().toString(); }
  QString topEvent() { return dataOfRow(table().rowAt(0)); }
  // The lowest row in view (the last row when all fit).
  QString bottomEvent() {
    const int row = table().rowAt(table().viewport()->height() - 1);
    return dataOfRow(row >= 0 ? row : model_.rowCount() - 1);
  }
  QStringList selectedEvents() {
    QStringList events;
    for (const QModelIndex& index : table().selectionModel()->selectedRows(EventLogModel::DataColumn)) {
      events << index.data().toString();
    }
    events.sort();
    return events;
  }
  // Scrolls as a user would, to the row `row` at the top.
  void scrollTo(int row) {
    QScrollBar* bar = table().verticalScrollBar();
    const int step = table().verticalScrollMode() == QAbstractItemView::ScrollPerPixel
                         ? table().verticalHeader()->defaultSectionSize()
                         : 1;
    bar->setValue(row * step);
    QCoreApplication::processEvents();
  }

  EventLogModel model_;
  EventLogView view_;
};

TEST_F(EventLogViewTest, FollowsTheNewestRowWhileAtTheBottomAlsoOnceTheRingIsFull) {
  append(0, 60);
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=59"));
  append(60, 90);  // full: 40 rows left at the front
  ASSERT_EQ(model_.rowCount(), 100);
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=149"));
  EXPECT_TRUE(view_.followingNewest());
  append(150, 7);
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=156"));
}

TEST_F(EventLogViewTest, ScrolledUpItKeepsTheEventsInViewAndTheSelectionWhileOlderOnesLeave) {
  append(0, 100);
  scrollTo(40);
  EXPECT_FALSE(view_.followingNewest());
  const QString top = topEvent();
  ASSERT_EQ(top, QStringLiteral("n=40"));
  table().selectRow(50);
  table().selectionModel()->select(model_.index(52, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
  ASSERT_EQ(selectedEvents(), (QStringList{QStringLiteral("n=50"), QStringLiteral("n=52")}));

  append(100, 10);
  EXPECT_EQ(topEvent(), top);
  EXPECT_EQ(selectedEvents(), (QStringList{QStringLiteral("n=50"), QStringLiteral("n=52")}));
  EXPECT_EQ(table().currentIndex().row(), 40);  // n=50, 10 rows higher
  EXPECT_FALSE(view_.followingNewest());

  // The selected events leave the log: the selection goes with them, the view stops at the oldest.
  append(110, 45);  // n=0..54 evicted
  EXPECT_TRUE(selectedEvents().isEmpty());
  EXPECT_FALSE(table().currentIndex().isValid());
  EXPECT_EQ(topEvent(), QStringLiteral("n=55"));
}

TEST_F(EventLogViewTest, ScrolledBackToTheBottomItFollowsAgain) {
  append(0, 100);
  scrollTo(30);
  append(100, 20);
  EXPECT_EQ(topEvent(), QStringLiteral("n=30"));
  table().scrollToBottom();
  EXPECT_TRUE(view_.followingNewest());
  append(120, 5);
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=124"));
}

TEST_F(EventLogViewTest, AFilterShowsItsNewestMatchesEvenWhenScrolledUp) {
  append(0, 100);
  scrollTo(5);
  view_.setFilterText(QStringLiteral("9"));  // n=9, 19, ... 89, 90..99: more than fit
  QCoreApplication::processEvents();
  ASSERT_EQ(model_.rowCount(), 19);
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=99"));
  EXPECT_NE(topEvent(), QStringLiteral("n=9"));
  view_.setFilterText(QString());
  QCoreApplication::processEvents();
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=99"));
  append(100, 10);
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=109"));
}

TEST_F(EventLogViewTest, WithAutoScrollOffItStaysOnTheSameEventsEvenAtTheBottom) {
  append(0, 100);
  view_.setAutoScroll(false);
  ASSERT_EQ(bottomEvent(), QStringLiteral("n=99"));
  const QString top = topEvent();
  append(100, 15);
  EXPECT_EQ(topEvent(), top);
  view_.setAutoScroll(true);  // back to the newest
  QCoreApplication::processEvents();
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=114"));
  append(115, 1);
  EXPECT_EQ(bottomEvent(), QStringLiteral("n=115"));
}

// At 100 000 events a second the log repaints its visible rows every refresh: each cell is one line
// of text drawn straight, cut to its column, and the labels that repeat (sources, names) are laid
// out once, not on every paint.
// The line under the table says how many rows are shown and why fewer than the log keeps: Stat
// windows hidden, or shown from the oldest one kept (they keep a quarter of the log).
TEST_F(EventLogViewTest, TheLineUnderTheTableSaysWhyFewerRowsAreShownThanKept) {
  model_.setEventName(1, QStringLiteral("livemon.Stat"));
  view_.setShowStatWindows(true);
  append(0, 10);  // ticks
  std::vector<LogEntry> windows = entries(10, 40);
  for (LogEntry& entry : windows) entry.name = 1;
  model_.append(std::move(windows));
  view_.rowsAppended();
  const auto countLine = [this] {
    for (const QLabel* label : view_.findChildren<QLabel*>()) {
      if (label->text().contains(QStringLiteral("events received"))) return label->text();
    }
    return QString();
  };
  EXPECT_EQ(model_.rowCount(), 25);  // the 25 windows kept, newer than every tick
  EXPECT_TRUE(countLine().startsWith(QStringLiteral("25 shown (since the oldest Stat window kept) · 50 events received, 35 kept")))
      << countLine().toStdString();
  view_.setShowStatWindows(false);
  view_.rowsAppended();
  EXPECT_TRUE(countLine().startsWith(QStringLiteral("10 shown (Stat windows hidden) · 50 events received, 35 kept")))
      << countLine().toStdString();
}

TEST_F(EventLogViewTest, CellsAreOneLineCutToTheColumnAndRepeatedLabelsAreLaidOutOnce) {
  auto* delegate = qobject_cast<EventLogDelegate*>(table().itemDelegate());
  ASSERT_NE(delegate, nullptr);
  const QString longData(300, QLatin1Char('x'));
  const QString cut = delegate->shownText(EventLogModel::DataColumn, longData, 120);
  EXPECT_TRUE(cut.endsWith(QStringLiteral("…"))) << cut.toStdString();
  EXPECT_LT(cut.size(), 30);
  EXPECT_LE(QFontMetricsF(QFontDatabase::systemFont(QFontDatabase::FixedFont)).horizontalAdvance(cut), 120.0);
  EXPECT_EQ(delegate->shownText(EventLogModel::DataColumn, QStringLiteral("n=1"), 120), QStringLiteral("n=1"));
  EXPECT_EQ(delegate->shownText(EventLogModel::DataColumn, longData, 0), QString());
  const QString source = delegate->shownText(EventLogModel::SourceColumn, QStringLiteral("rank 3/64 · ") + longData, 100);
  EXPECT_TRUE(source.startsWith(QStringLiteral("rank 3/64"))) << source.toStdString();
  EXPECT_TRUE(source.endsWith(QStringLiteral("…"))) << source.toStdString();

  append(0, 100);
  EXPECT_FALSE(view_.grab().isNull());
  const int labels = delegate->cachedLabels();
  EXPECT_GE(labels, 2);  // the source and the name
  for (int i = 1; i <= 5; ++i) {  // five refreshes of new rows from the same source
    append(100 * i, 100);
    EXPECT_FALSE(view_.grab().isNull());
  }
  EXPECT_EQ(delegate->cachedLabels(), labels);

  // A selected row is drawn in the highlight colour.
  table().selectRow(model_.rowCount() - 1);
  const QRect cell = table().visualRect(model_.index(model_.rowCount() - 1, EventLogModel::DataColumn));
  ASSERT_TRUE(cell.isValid());
  const QImage image = table().viewport()->grab().toImage();
  EXPECT_EQ(image.pixelColor(cell.left() + 2, cell.bottom() - 1).rgb(), table().palette().color(QPalette::Highlight).rgb());
}

// However many sources a run has, the labels kept laid out stay bounded.
TEST_F(EventLogViewTest, TheLabelsKeptLaidOutAreBounded) {
  auto* delegate = qobject_cast<EventLogDelegate*>(table().itemDelegate());
  ASSERT_NE(delegate, nullptr);
  for (int i = 0; i < EventLogDelegate::kMaxCached + 10; ++i) {
    delegate->shownText(EventLogModel::SourceColumn, QStringLiteral("rank %1").arg(i), 100);
  }
  EXPECT_LE(delegate->cachedLabels(), EventLogDelegate::kMaxCached);
  EXPECT_GE(delegate->cachedLabels(), 1);
}

}  // namespace
}  // namespace livemon::ui
