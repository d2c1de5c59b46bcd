// The event log model: checked by QAbstractItemModelTester through appends, evictions, filters
// and resets; bounded by its ring; filtering and copying as text.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include <QAbstractItemModelTester>
#include <QSignalSpy>

#include <livemon/ui/model/event_log_model.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::ModelTesterMessages;

// Events numbered from `first`: source i % 3, name "tick" or "eval", data "n=<i>".
std::vector<LogEntry> entries(int first, int count) {
  std::vector<LogEntry> result;
  for (int i = first; i < first + count; ++i) {
    LogEntry entry;
    entry.timeNs = 1'700'000'000'000'000'000 + int64_t{i} * 1'000'000;
    entry.source = static_cast<SourceId>(i % 3);
    entry.name = i % 10 == 0 ? 1 : 0;
    entry.data = "n=" + std::to_string(i);
    result.push_back(std::move(entry));
  }
  return result;
}

void label(EventLogModel& model) {
  model.setSourceLabel(0, QStringLiteral("train@a:1"));
  model.setSourceLabel(1, QStringLiteral("train@b:2 rank 1"));
  model.setSourceLabel(2, QStringLiteral("eval@c:3"));
  model.setEventName(0, QStringLiteral("tick"));
  model.setEventName(1, QStringLiteral("eval"));
}

QString dataAt(const EventLogModel& model, int row) {
  return model.index(row, EventLogModel::DataColumn).data().toString();
}

TEST(EventLogModel, PassesTheModelTesterThroughAppendsEvictionsFiltersAndResets) {
  ModelTesterMessages messages;
  EventLogModel model(100);
  label(model);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);

  int next = 0;
  for (int size : {1, 7, 50, 42, 1, 99, 100, 250, 3}) {
    model.append(entries(next, size));
    next += size;
  }
  model.setFilterText(QStringLiteral("eval"));
  for (int size : {5, 60, 130, 1}) {
    model.append(entries(next, size));
    next += size;
  }
  model.setFilterText(QStringLiteral("rank 1"));
  model.append(entries(next, 37));
  next += 37;
  model.setFilterText(QString());
  model.append(entries(next, 10));
  model.clear();
  model.append(entries(0, 5));
  EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::messages().join(QLatin1Char('\n')).toStdString();
}

// Rows of large data (a peer may send up to the row limit in each) are evicted by bytes before
// the row capacity is reached, so the log's memory stays within its budget.
TEST(EventLogModel, KeepsOnlyTheNewestEventsWithinItsByteBudget) {
  ModelTesterMessages messages;
  EventLogModel model(1000, nullptr, 10'000);
  label(model);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  auto large = [](int first, int count) {
    std::vector<LogEntry> batch = entries(first, count);
    for (LogEntry& entry : batch) entry.data += std::string(1000 - entry.data.size(), '.');
    return batch;
  };
  for (int first = 0; first < 300; first += 7) model.append(large(first, 7));
  EXPECT_EQ(model.rowCount(), 10);
  EXPECT_LE(model.storedBytes(), model.byteBudget());
  EXPECT_TRUE(dataAt(model, 9).startsWith(QStringLiteral("n=300."))) << dataAt(model, 9).toStdString();
  EXPECT_TRUE(dataAt(model, 0).startsWith(QStringLiteral("n=291."))) << dataAt(model, 0).toStdString();

  model.setFilterText(QStringLiteral("n=3"));  // evictions while filtering, and one batch beyond the budget
  model.append(large(301, 40));
  EXPECT_LE(model.storedBytes(), model.byteBudget());
  EXPECT_EQ(model.storedCount(), 10U);
  model.setFilterText(QString());
  EXPECT_TRUE(dataAt(model, 9).startsWith(QStringLiteral("n=340."))) << dataAt(model, 9).toStdString();

  // Small rows (2,500 bytes in all) take the room of the three oldest large ones.
  model.append(entries(400, 500));
  EXPECT_EQ(model.rowCount(), 507);
  EXPECT_LE(model.storedBytes(), model.byteBudget());
  EXPECT_THROW(EventLogModel(10, nullptr, 0), std::invalid_argument);
  EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::messages().join(QLatin1Char('\n')).toStdString();
}

TEST(EventLogModel, KeepsOnlyTheNewestEventsOfItsCapacity) {
  EventLogModel model(100);
  label(model);
  for (int first = 0; first < 1000; first += 30) model.append(entries(first, 30));
  EXPECT_EQ(model.rowCount(), 100);
  EXPECT_EQ(model.storedCount(), 100U);
  EXPECT_EQ(model.receivedCount(), 1020U);
  EXPECT_EQ(model.evictedCount(), 920U);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=920"));
  EXPECT_EQ(dataAt(model, 99), QStringLiteral("n=1019"));

  // A batch larger than the ring keeps its newest entries.
  model.append(entries(5000, 250));
  EXPECT_EQ(model.rowCount(), 100);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=5150"));
  EXPECT_EQ(dataAt(model, 99), QStringLiteral("n=5249"));
}

TEST(EventLogModel, HandsTheEvictedRowsDataToWhoeverTakesItAndKeepsNoneOfItOtherwise) {
  EventLogModel model(100);
  label(model);
  model.append(entries(0, 100));
  EXPECT_TRUE(model.takeEvicted().empty());  // nothing left yet
  model.append(entries(100, 30));
  // The 30 oldest rows' data, oldest first, for the dashboard to free on the ingest thread.
  const std::vector<std::string> evicted = model.takeEvicted();
  ASSERT_EQ(evicted.size(), 30U);
  EXPECT_EQ(evicted.front(), "n=0");
  EXPECT_EQ(evicted.back(), "n=29");
  EXPECT_TRUE(model.takeEvicted().empty());
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=30"));
  EXPECT_EQ(dataAt(model, 99), QStringLiteral("n=129"));

  // Never taken, the evicted data does not pile up beyond a bound.
  for (int first = 130; first < 200'000; first += 1000) model.append(entries(first, 1000));
  EXPECT_LE(model.takeEvicted().size(), std::size_t{1} << 17);
}

// What the views pay for a batch must not grow with the table: rows that leave at the front are
// not removed (Qt's headers walk every row on a removal) but slide up in place.
TEST(EventLogModel, AppendSlidesRowsUpInPlaceInsteadOfRemovingThemAtTheFront) {
  ModelTesterMessages messages;
  EventLogModel model(10);
  label(model);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  model.append(entries(0, 8));
  QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
  QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
  QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
  QSignalSpy shifted(&model, &EventLogModel::rowsShifted);

  // Filling up: 3 rows leave, 5 arrive. The 8 rows slide up by 3, then 2 rows are added at the end.
  model.append(entries(8, 5));
  EXPECT_EQ(removed.count(), 0);
  ASSERT_EQ(changed.count(), 1);
  EXPECT_EQ(changed[0][0].toModelIndex(), model.index(0, 0));
  EXPECT_EQ(changed[0][1].toModelIndex(), model.index(7, EventLogModel::DataColumn));
  ASSERT_EQ(shifted.count(), 1);
  EXPECT_EQ(shifted[0][0].toInt(), 3);
  ASSERT_EQ(inserted.count(), 1);
  EXPECT_EQ(inserted[0][1].toInt(), 8);
  EXPECT_EQ(inserted[0][2].toInt(), 9);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=3"));
  EXPECT_EQ(dataAt(model, 9), QStringLiteral("n=12"));

  // Full: the row count stays; every row shows the event 4 rows below it before.
  removed.clear();
  inserted.clear();
  changed.clear();
  shifted.clear();
  model.append(entries(13, 4));
  EXPECT_EQ(model.rowCount(), 10);
  EXPECT_EQ(removed.count(), 0);
  EXPECT_EQ(inserted.count(), 0);
  ASSERT_EQ(changed.count(), 1);
  EXPECT_EQ(changed[0][1].toModelIndex(), model.index(9, EventLogModel::DataColumn));
  ASSERT_EQ(shifted.count(), 1);
  EXPECT_EQ(shifted[0][0].toInt(), 4);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=7"));
  EXPECT_EQ(dataAt(model, 9), QStringLiteral("n=16"));
  EXPECT_EQ(model.evictedCount(), 7U);
  EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::messages().join(QLatin1Char('\n')).toStdString();
}

// While filtering, fewer matching rows may arrive than leave: the rows slide up and the surplus
// is removed at the end, never showing a row beyond the stored ones.
TEST(EventLogModel, RemovesTheSurplusAtTheEndWhenFewerMatchingRowsArriveThanLeave) {
  ModelTesterMessages messages;
  EventLogModel model(20);
  label(model);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  model.append(entries(0, 20));
  model.setFilterText(QStringLiteral("n=1"));  // n=1 and n=10..19
  ASSERT_EQ(model.rowCount(), 11);
  QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
  QSignalSpy shifted(&model, &EventLogModel::rowsShifted);
  model.append(entries(20, 10));  // evicts n=0..9 (n=1 among them); none of n=20..29 match
  ASSERT_EQ(shifted.count(), 1);
  EXPECT_EQ(shifted[0][0].toInt(), 1);
  ASSERT_EQ(removed.count(), 1);
  EXPECT_EQ(removed[0][1].toInt(), 10);
  EXPECT_EQ(removed[0][2].toInt(), 10);
  ASSERT_EQ(model.rowCount(), 10);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=10"));
  EXPECT_EQ(dataAt(model, 9), QStringLiteral("n=19"));
  EXPECT_EQ(model.rowsAsText({10}), QString());

  // Everything shown leaves at once: every row slides out.
  shifted.clear();
  model.append(entries(100, 20));  // n=100..119: n=100..119 all match "n=1"
  ASSERT_EQ(shifted.count(), 1);
  EXPECT_EQ(shifted[0][0].toInt(), 10);
  EXPECT_EQ(model.rowCount(), 20);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=100"));
  EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::messages().join(QLatin1Char('\n')).toStdString();
}

TEST(EventLogModel, ShowsTimeSourceNameAndData) {
  EventLogModel model;
  label(model);
  model.append(entries(10, 1));
  ASSERT_EQ(model.columnCount(), 5);
  EXPECT_EQ(model.headerData(EventLogModel::TimeColumn, Qt::Horizontal).toString(), QStringLiteral("Time"));
  EXPECT_EQ(model.headerData(EventLogModel::DataColumn, Qt::Horizontal).toString(), QStringLiteral("Data"));
  EXPECT_EQ(model.index(0, EventLogModel::SourceColumn).data().toString(), QStringLiteral("train@b:2 rank 1"));
  EXPECT_EQ(model.index(0, EventLogModel::NameColumn).data().toString(), QStringLiteral("eval"));
  EXPECT_EQ(model.index(0, EventLogModel::DataColumn).data().toString(), QStringLiteral("n=10"));
  // HH:mm:ss.zzz in local time.
  EXPECT_EQ(model.index(0, EventLogModel::TimeColumn).data().toString().size(), 12);
  EXPECT_TRUE(model.index(0, EventLogModel::TimeColumn).data().toString().endsWith(QStringLiteral(".010")));
}

TEST(EventLogModel, FilterMatchesSourceNameOrDataIgnoringCaseAndFollowsNewRows) {
  EventLogModel model(50);
  label(model);
  model.append(entries(0, 40));
  model.setFilterText(QStringLiteral("EVAL"));  // name "eval" (every 10th) and source "eval@c:3" (i % 3 == 2)
  int expected = 0;
  for (int i = 0; i < 40; ++i) expected += (i % 10 == 0 || i % 3 == 2) ? 1 : 0;
  EXPECT_EQ(model.rowCount(), expected);

  model.setFilterText(QStringLiteral("n=3"));  // data: n=3, n=30..39
  EXPECT_EQ(model.rowCount(), 11);
  model.append(entries(40, 30));  // evicts n=0..19 (n=3 among them), adds none matching
  EXPECT_EQ(model.rowCount(), 10);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=30"));

  model.setFilterText(QStringLiteral("  "));  // blank: everything
  EXPECT_EQ(model.rowCount(), 50);
}

TEST(EventLogModel, CopiesRowsAsTabSeparatedText) {
  EventLogModel model;
  label(model);
  model.append(entries(0, 3));
  const QString text = model.rowsAsText({0, 2});
  const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  ASSERT_EQ(lines.size(), 2);
  const QStringList fields = lines[1].split(QLatin1Char('\t'));
  ASSERT_EQ(fields.size(), 5);
  EXPECT_EQ(fields[1], QString());  // no step
  EXPECT_EQ(fields[2], QStringLiteral("eval@c:3"));
  EXPECT_EQ(fields[3], QStringLiteral("tick"));
  EXPECT_EQ(fields[4], QStringLiteral("n=2"));
  EXPECT_EQ(fields[0].size(), QStringLiteral("2023-11-14T22:13:20.002").size());  // ISO date and time, in ms
}

TEST(EventLogModel, ShowsTheStepAnEventStated) {
  EventLogModel model;
  label(model);
  std::vector<LogEntry> rows = entries(0, 2);
  rows[1].step = 120;
  model.append(std::move(rows));
  EXPECT_EQ(model.headerData(EventLogModel::StepColumn, Qt::Horizontal).toString(), QStringLiteral("Step"));
  EXPECT_EQ(model.index(0, EventLogModel::StepColumn).data().toString(), QString());
  EXPECT_EQ(model.index(1, EventLogModel::StepColumn).data().toString(), QStringLiteral("120"));
  EXPECT_TRUE(model.rowsAsText({1}).contains(QStringLiteral("\t120\t")));
}

// Names 0 "livemon.Stat", 1 "eval", 2 "torch.monitor.Stat": every 10th an eval, every 7th a
// torch.monitor window.
std::vector<LogEntry> windowsAndEvals(int first, int count) {
  std::vector<LogEntry> result = entries(first, count);
  for (std::size_t i = 0; i < result.size(); ++i) {
    if ((first + static_cast<int>(i)) % 7 == 0 && result[i].name == 0) result[i].name = 2;
  }
  return result;
}

void labelWindowsAndEvals(EventLogModel& model) {
  model.setSourceLabel(0, QStringLiteral("train@a:1"));
  model.setSourceLabel(1, QStringLiteral("train@b:2 rank 1"));
  model.setSourceLabel(2, QStringLiteral("eval@c:3"));
  model.setEventName(0, QStringLiteral("livemon.Stat"));
  model.setEventName(1, QStringLiteral("eval"));
  model.setEventName(2, QStringLiteral("torch.monitor.Stat"));
}

TEST(EventLogModel, HidesStatWindowsWhenAskedThroughAppendsEvictionsAndTheTextFilter) {
  ModelTesterMessages messages;
  EventLogModel model(100);  // at most 25 Stat windows
  labelWindowsAndEvals(model);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  EXPECT_TRUE(model.showStatWindows());  // the model shows all unless told (the window tells it)

  // 36 windows and the evals n=0, 10, 20, 30: the 25 newest windows are kept (n=13..39 but 20,
  // 30), and the rows start at the oldest of them.
  model.append(windowsAndEvals(0, 40));
  EXPECT_EQ(model.storedCount(), 29U);
  EXPECT_EQ(model.storedStatWindows(), 25U);
  ASSERT_EQ(model.rowCount(), 27);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=13"));
  EXPECT_EQ(dataAt(model, 26), QStringLiteral("n=39"));

  model.setShowStatWindows(false);
  EXPECT_TRUE(model.filtering());
  ASSERT_EQ(model.rowCount(), 4);  // every eval kept
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=0"));
  EXPECT_EQ(dataAt(model, 3), QStringLiteral("n=30"));
  model.append(windowsAndEvals(40, 90));  // 81 more windows, the evals 40..120
  ASSERT_EQ(model.rowCount(), 13);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=0"));
  EXPECT_EQ(dataAt(model, 12), QStringLiteral("n=120"));

  model.setFilterText(QStringLiteral("rank 1"));  // source 1: i % 3 == 1 among the evals: 10, 40, 70, 100
  EXPECT_EQ(model.rowCount(), 4);
  model.setShowStatWindows(true);  // and among the windows kept, n=103..129
  EXPECT_EQ(model.rowCount(), 9);  // 103 106 109 112 115 118 121 124 127
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=103"));
  model.setFilterText({});
  EXPECT_FALSE(model.filtering());
  EXPECT_EQ(model.rowCount(), 27);  // n=103..129
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=103"));
  EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::messages().join(QLatin1Char('\n')).toStdString();
}

// A run of many ranks sends mostly Stat windows. They keep a quarter of the log, so they neither
// take the log's memory nor push the few other events out; and rows still only leave at the front,
// sliding, whichever ring evicts.
TEST(EventLogModel, KeepsStatWindowsToAQuarterOfTheLogAndRowsStillLeaveOnlyAtTheFront) {
  ModelTesterMessages messages;
  EventLogModel model(400);
  labelWindowsAndEvals(model);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  int next = 0;
  for (int batch = 0; batch < 50; ++batch) {
    const int size = 1 + (batch * 37) % 90;
    QSignalSpy shifted(&model, &EventLogModel::rowsShifted);
    std::vector<QString> before;
    for (int row = 0; row < model.rowCount(); ++row) before.push_back(dataAt(model, row));
    model.append(windowsAndEvals(next, size));
    next += size;
    const int shift = shifted.isEmpty() ? 0 : shifted[0][0].toInt();
    // After rowsShifted(n), the event of row r is at row r - n: the rows kept are the old rows'
    // tail, in order, followed by the new ones.
    for (int row = shift; row < static_cast<int>(before.size()); ++row) {
      ASSERT_EQ(dataAt(model, row - shift), before[static_cast<std::size_t>(row)]) << "batch " << batch << " row " << row;
    }
  }
  // The 2 265 events held 227 evals: all kept, with the newest 100 windows.
  ASSERT_EQ(next, 2265);
  EXPECT_EQ(model.storedStatWindows(), 100U);
  EXPECT_EQ(model.storedCount(), 327U);
  model.setShowStatWindows(false);
  EXPECT_EQ(model.rowCount(), 227);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=0"));
  model.setShowStatWindows(true);
  EXPECT_EQ(dataAt(model, model.rowCount() - 1), QStringLiteral("n=%1").arg(next - 1));

  // Once the other events fill the log, they take the place of the oldest events of both.
  std::vector<LogEntry> evals = entries(100'000, 400);
  for (LogEntry& entry : evals) entry.name = 1;
  model.append(std::move(evals));
  EXPECT_EQ(model.storedCount(), 400U);
  EXPECT_EQ(model.storedStatWindows(), 0U);
  EXPECT_EQ(model.rowCount(), 400);
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=100000"));
  EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::messages().join(QLatin1Char('\n')).toStdString();
}

// The byte budget evicts the oldest events of both rings, in the order received.
TEST(EventLogModel, TheByteBudgetEvictsTheOldestEventsOfEitherKind) {
  EventLogModel model(1000, nullptr, 1000);
  labelWindowsAndEvals(model);
  const auto padded = [](int first, int count) {  // rows of 100 bytes: 10 fit
    std::vector<LogEntry> batch = windowsAndEvals(first, count);
    for (LogEntry& entry : batch) entry.data += std::string(100 - entry.data.size(), '.');
    return batch;
  };
  model.append(padded(0, 10));
  model.append(padded(10, 10));
  EXPECT_EQ(model.storedCount(), 10U);
  EXPECT_EQ(model.storedBytes(), 1000U);
  EXPECT_EQ(model.rowCount(), 10);
  EXPECT_TRUE(dataAt(model, 0).startsWith(QStringLiteral("n=10.")));
  model.setShowStatWindows(false);
  EXPECT_EQ(model.rowCount(), 1);  // the eval n=10; n=0 went for the bytes
  EXPECT_TRUE(dataAt(model, 0).startsWith(QStringLiteral("n=10.")));
  const std::vector<std::string> evicted = model.takeEvicted();
  ASSERT_EQ(evicted.size(), 10U);
  EXPECT_EQ(evicted.front().substr(0, 4), "n=0.");
  EXPECT_EQ(evicted.back().substr(0, 4), "n=9.");
}

// A seek in a replay removes rows of both kinds; the rest keep their order and where the rows start.
TEST(EventLogModel, RemovingRowsKeepsTheOthersInOrder) {
  EventLogModel model(40);  // 10 Stat windows
  labelWindowsAndEvals(model);
  model.append(windowsAndEvals(0, 60));  // beyond the 40 rows: n=20..59
  ASSERT_EQ(model.storedCount(), 14U);  // evals 20..50, windows 49..59 but 50
  EXPECT_EQ(model.rowCount(), 11);      // n=49..59
  const std::size_t removed = model.removeIf([](const LogEntry& entry) { return entry.data >= "n=55"; });
  EXPECT_EQ(removed, 5U);
  EXPECT_EQ(model.rowCount(), 6);  // n=49..54
  EXPECT_EQ(dataAt(model, 0), QStringLiteral("n=49"));
  EXPECT_EQ(dataAt(model, 5), QStringLiteral("n=54"));
  model.append(windowsAndEvals(60, 3));
  EXPECT_EQ(dataAt(model, 8), QStringLiteral("n=62"));
  model.setShowStatWindows(false);
  EXPECT_EQ(model.rowCount(), 5);  // the evals 20..60
  EXPECT_EQ(dataAt(model, 4), QStringLiteral("n=60"));
}

TEST(EventLogModel, NamesARankedSourceByItsRankFirst) {
  SourceInfo source;
  source.run = "train";
  source.host = "gpu01";
  source.pid = 4242;
  EXPECT_EQ(logSourceLabel(source), QStringLiteral("train@gpu01:4242"));
  source.rank = 3;
  EXPECT_EQ(logSourceLabel(source), QStringLiteral("rank 3 · train@gpu01:4242"));
  source.worldSize = 64;
  EXPECT_EQ(logSourceLabel(source), QStringLiteral("rank 3/64 · train@gpu01:4242"));
}

TEST(EventLogModel, RejectsAZeroCapacity) { EXPECT_THROW(EventLogModel(0), std::invalid_argument); }

}  // namespace
}  // namespace livemon::ui
