// The event log panel under a full ring: it follows the newest row at the bottom, and scrolled up
// (or with auto-scroll off) keeps the events the user reads and selects in place while newer
// events push older ones out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <QCoreApplication>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QScrollBar>
#include <QTableView>

#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/widgets/event_log_view.h>

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

}  // namespace
}  // namespace livemon::ui
