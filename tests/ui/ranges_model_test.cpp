// The Ranges table model: which Stats make rows, how rows and values follow the windows, how it
// sorts behind a proxy, sources and their removal, odd range names and keys, and
// QAbstractItemModelTester throughout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QSignalSpy>
#include <QSortFilterProxyModel>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/model/ranges_model.h>
#include <livemon/ui/model/stat_registry.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::ModelTesterMessages;

using EventData = decltype(Event::data);

using Timings = test::RangeTimings;

// The dashboard's path from received events to the model, without threads: the converter, the
// registry, then the model.
class RangesModelTest : public ::testing::Test {
 protected:
  RangesModelTest()
      : model_(registry_, &clock_), tester_(&model_, QAbstractItemModelTester::FailureReportingMode::Warning) {}

  ~RangesModelTest() override { EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::text(); }

  void deliver(const std::shared_ptr<const transport::SourceInfo>& source, double ms, EventData data,
               std::string eventName = std::string(kStatEventName)) {
    auto received = test::received(source, Event{std::move(eventName), atMs(ms), std::move(data)});
    converter_.convert(received, batch_);
  }

  // One GUI refresh: apply what was delivered, then publish.
  void refresh(bool publish = true) {
    const RegistryChanges changes = registry_.apply(batch_);
    model_.apply(batch_);
    if (changes.labelsChanged) model_.sourceLabelsChanged();
    batch_.clear();
    if (publish) model_.publish();
  }

  QVariant value(int row, int column, int role = Qt::DisplayRole) const { return model_.index(row, column).data(role); }

  std::vector<QString> rangeNames() const {
    std::vector<QString> names;
    for (int row = 0; row < model_.rowCount(); ++row) names.push_back(value(row, RangesModel::RangeColumn).toString());
    std::sort(names.begin(), names.end());
    return names;
  }

  ModelTesterMessages messages_;  // before the tester, which reports from its constructor on
  EventConverter converter_;
  StatRegistry registry_;
  ManualClock clock_;
  RangesModel model_;
  QAbstractItemModelTester tester_;
  IngestBatch batch_;
  std::shared_ptr<const transport::SourceInfo> train_ = makeSource("train", 100);
};

TEST_F(RangesModelTest, RowsAppearForRangeStatsOnly) {
  EventData data;
  test::addRangeWindow(data, "forward", {10, 4.0, 3.9, 7.5, 8.0});
  test::addRangeWindow(data, "backward", {10, 8.0, 7.7, 15.0, 16.0});
  data["loss.mean"] = 0.5;
  data["train.step_ms.p99"] = 20.0;
  data["ranges/forward.mean"] = 1.0;  // another prefix
  data["xrange/forward.mean"] = 1.0;
  deliver(train_, 1000.0, data);
  // A range Stat in an event that is not a Stat event is only logged.
  EventData notAStat;
  test::addRangeWindow(notAStat, "eval", {1, 1.0, 1.0, 1.0, 1.0});
  deliver(train_, 1000.0, notAStat, "checkpoint");
  // Nor is an event named like a range: its fields are charted, but they are no timings.
  deliver(train_, 1000.0, EventData{{"mean", 1.0}, {"count", 2.0}, {"p99", 3.0}}, "range/step");
  refresh();

  EXPECT_EQ(rangeNames(), (std::vector<QString>{QStringLiteral("backward"), QStringLiteral("forward")}));
  EXPECT_EQ(model_.columnCount(), RangesModel::ColumnCount);
  EXPECT_EQ(model_.headerData(RangesModel::P99Column, Qt::Horizontal).toString(), QStringLiteral("p99"));
  const int forward = model_.rowOf(0, QStringLiteral("forward"));
  ASSERT_GE(forward, 0);
  EXPECT_EQ(model_.statName(forward), QStringLiteral("range/forward"));
  EXPECT_EQ(value(forward, RangesModel::SourceColumn).toString(), QStringLiteral("train"));
}

TEST_F(RangesModelTest, TorchMonitorStatEventsAreRecognisedToo) {
  EventData data;
  test::addRangeWindow(data, "forward", {3, 1.0, 1.0, 1.0, 1.0});
  deliver(train_, 1000.0, data, std::string(kTorchStatEventName));
  refresh();
  EXPECT_EQ(model_.rowCount(), 1);
}

TEST_F(RangesModelTest, ShowsTheLatestWindowAndTheTotalCount) {
  std::vector<Timings> windows{{10, 4.25, 4.0, 7.5, 9.0}, {12, 5.5, 5.0, 9.75, 11.0}, {7, 0.4, 0.35, 0.9, 1.2}};
  double total = 0;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    EventData data;
    test::addRangeWindow(data, "forward", windows[i]);
    deliver(train_, 1000.0 * static_cast<double>(i + 1), data);
    QSignalSpy inserted(&model_, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&model_, &QAbstractItemModel::dataChanged);
    refresh();
    total += windows[i].count;

    ASSERT_EQ(model_.rowCount(), 1);
    // The row is inserted once, then its cells change.
    EXPECT_EQ(inserted.count(), i == 0 ? 1 : 0);
    EXPECT_EQ(changed.count(), i == 0 ? 0 : 1);
    const Timings& t = windows[i];
    EXPECT_EQ(value(0, RangesModel::CallsColumn, Qt::EditRole).toDouble(), total);
    EXPECT_EQ(value(0, RangesModel::MeanColumn, Qt::EditRole).toDouble(), t.mean);
    EXPECT_EQ(value(0, RangesModel::P50Column, Qt::EditRole).toDouble(), t.p50);
    EXPECT_EQ(value(0, RangesModel::P99Column, Qt::EditRole).toDouble(), t.p99);
    EXPECT_EQ(value(0, RangesModel::MaxColumn, RangesModel::SortRole).toDouble(), t.max);
    EXPECT_EQ(value(0, RangesModel::MeanColumn).toString(), formatDurationMs(t.mean));
    EXPECT_EQ(value(0, RangesModel::CallsColumn).toString(), QString::number(static_cast<int>(total)));
    EXPECT_TRUE(value(0, RangesModel::CallsColumn, Qt::ToolTipRole)
                    .toString()
                    .endsWith(QStringLiteral("; %1 in the latest window").arg(static_cast<int>(t.count))));
  }
  // The last window's durations are under a millisecond: shown in microseconds.
  EXPECT_EQ(value(0, RangesModel::MeanColumn).toString(), QStringLiteral("400 µs"));
  EXPECT_EQ(value(0, RangesModel::MaxColumn).toString(), QStringLiteral("1.20 ms"));
  EXPECT_EQ(value(0, RangesModel::MeanColumn, Qt::TextAlignmentRole).value<Qt::Alignment>() & Qt::AlignRight,
            Qt::AlignRight);
}

// Issue 30: read as torch.profiler's table is read: Calls (not a "Total" that reads as time),
// the total time, the time per second of wall time, the share of the step and self time.
TEST_F(RangesModelTest, ColumnsSayCallsTotalTimeTimePerSecondShareOfTheStepAndSelfTime) {
  std::vector<QString> headers;
  for (int column = 0; column < RangesModel::ColumnCount; ++column) {
    headers.push_back(model_.headerData(column, Qt::Horizontal).toString());
  }
  EXPECT_EQ(headers, (std::vector<QString>{QStringLiteral("Range"), QStringLiteral("Source"), QStringLiteral("Calls"),
                                           QStringLiteral("Total time"), QStringLiteral("Time/s"), QStringLiteral("% of step"),
                                           QStringLiteral("Self time"), QStringLiteral("Mean"), QStringLiteral("p50"),
                                           QStringLiteral("p99"), QStringLiteral("Max"), QStringLiteral("Last seen")}));

  // Two 1 s windows of a step of 10 calls and, nested in it by name, its forward pass; a range
  // outside the family has no known self time.
  for (int i = 0; i < 2; ++i) {
    EventData data;
    test::addRangeWindow(data, "train_step", {10, 50.0 + i * 10, 50.0, 70.0, 80.0});
    test::addRangeWindow(data, "train_step/forward", {10, 20.0, 20.0, 25.0, 30.0});
    test::addRangeWindow(data, "optimizer", {10, 5.0, 5.0, 6.0, 7.0});
    deliver(train_, 1000.0 * (i + 1), data);
  }
  refresh();
  const int step = model_.rowOf(0, QStringLiteral("train_step"));
  const int forward = model_.rowOf(0, QStringLiteral("train_step/forward"));
  const int optimizer = model_.rowOf(0, QStringLiteral("optimizer"));
  const auto number = [this](int row, int column) { return value(row, column, Qt::EditRole).toDouble(); };
  EXPECT_EQ(number(step, RangesModel::CallsColumn), 20.0);
  EXPECT_EQ(number(step, RangesModel::TotalTimeColumn), 10 * 50.0 + 10 * 60.0);
  EXPECT_EQ(value(step, RangesModel::TotalTimeColumn).toString(), QStringLiteral("1.10 s"));
  // 10 calls of 60 ms in the last second: 600 ms per second.
  EXPECT_EQ(number(step, RangesModel::TimePerSecondColumn), 600.0);
  EXPECT_EQ(value(step, RangesModel::TimePerSecondColumn).toString(), QStringLiteral("600 ms/s"));
  EXPECT_EQ(number(step, RangesModel::StepShareColumn), 100.0);
  EXPECT_EQ(number(forward, RangesModel::StepShareColumn), 100.0 * 400.0 / 1100.0);
  EXPECT_EQ(value(forward, RangesModel::StepShareColumn).toString(), QStringLiteral("36.4 %"));
  EXPECT_EQ(value(optimizer, RangesModel::StepShareColumn).toString(), QStringLiteral("9.09 %"));
  EXPECT_EQ(model_.stepRange(0), QStringLiteral("train_step"));
  // Self time: the step less its forward pass; the forward pass, nothing known inside it.
  EXPECT_EQ(number(step, RangesModel::SelfTimeColumn), 700.0);
  EXPECT_EQ(number(forward, RangesModel::SelfTimeColumn), 400.0);
  EXPECT_FALSE(value(optimizer, RangesModel::SelfTimeColumn, Qt::EditRole).isValid());
  EXPECT_EQ(value(optimizer, RangesModel::SelfTimeColumn).toString(), QStringLiteral("—"));
  EXPECT_TRUE(value(optimizer, RangesModel::SelfTimeColumn, Qt::ToolTipRole).toString().contains(QStringLiteral("optimizer/<child>")));
  // The full name leads the name's tooltip (the column elides long ones).
  EXPECT_TRUE(value(forward, RangesModel::RangeColumn, Qt::ToolTipRole).toString().startsWith(QStringLiteral("train_step/forward\n")));
}

TEST_F(RangesModelTest, WithoutAStepRangeTheShareSaysWhichRangeWouldBeTheStep) {
  EventData data;
  test::addRangeWindow(data, "aten::cross_entropy_loss", {4, 2.0, 2.0, 3.0, 3.0});
  deliver(train_, 1000.0, data);
  refresh();
  EXPECT_EQ(model_.stepRange(0), QString());
  EXPECT_EQ(value(0, RangesModel::StepShareColumn).toString(), QStringLiteral("—"));
  EXPECT_TRUE(value(0, RangesModel::StepShareColumn, Qt::ToolTipRole).toString().contains(QStringLiteral("train_step")));
  // One window: no interval to take the time per second over yet.
  EXPECT_EQ(value(0, RangesModel::TimePerSecondColumn).toString(), QStringLiteral("—"));
  EXPECT_EQ(value(0, RangesModel::TotalTimeColumn).toString(), QStringLiteral("8.00 ms"));
}

TEST_F(RangesModelTest, AWindowThatChangesNothingSignalsNothingAndOnlyChangedCellsAreReported) {
  EventData data;
  test::addRangeWindow(data, "forward", {10, 4.0, 3.9, 7.5, 8.0});
  deliver(train_, 1000.0, data);
  refresh();
  QSignalSpy changed(&model_, &QAbstractItemModel::dataChanged);
  refresh();  // nothing new
  EXPECT_EQ(changed.count(), 0);

  // A window with only a p99: one dataChanged, for that cell and the window's time (and the time
  // per second, as the interval between windows is now known).
  EventData next;
  next["range/forward.p99"] = 9.5;
  deliver(train_, 2000.0, next);
  refresh();
  ASSERT_EQ(changed.count(), 1);
  const auto topLeft = changed[0][0].value<QModelIndex>();
  const auto bottomRight = changed[0][1].value<QModelIndex>();
  EXPECT_EQ(topLeft.column(), RangesModel::TimePerSecondColumn);
  EXPECT_EQ(bottomRight.column(), RangesModel::LastSeenColumn);
  EXPECT_EQ(value(0, RangesModel::P99Column, Qt::EditRole).toDouble(), 9.5);
  EXPECT_EQ(value(0, RangesModel::CallsColumn, Qt::EditRole).toDouble(), 10.0);  // no count in that window
}

TEST_F(RangesModelTest, AWindowOfEveryRangeIsOneDataChanged) {
  const std::vector<std::string> names{"a", "b", "c"};
  for (int i = 0; i < 2; ++i) {
    EventData data;
    for (const std::string& name : names) test::addRangeWindow(data, name, {10, 1.0 + i, 1.0 + i, 2.0 + i, 3.0 + i});
    deliver(train_, 1000.0 * (i + 1), data);
    if (i == 0) refresh();
  }
  QSignalSpy changed(&model_, &QAbstractItemModel::dataChanged);
  QSignalSpy reset(&model_, &QAbstractItemModel::modelReset);
  refresh();
  ASSERT_EQ(changed.count(), 1);
  // The span starts at the calls, summed.
  EXPECT_EQ(changed[0][0].value<QModelIndex>(), model_.index(0, RangesModel::CallsColumn));
  EXPECT_EQ(changed[0][1].value<QModelIndex>(), model_.index(2, RangesModel::LastSeenColumn));
  EXPECT_EQ(reset.count(), 0);
  for (int row = 0; row < 3; ++row) EXPECT_EQ(value(row, RangesModel::MeanColumn, Qt::EditRole).toDouble(), 2.0);
}

// A range that stopped keeps its last values, but says when they were and is dimmed once it has
// missed its windows for longer than kStaleIntervals of its interval and kStaleMinimum.
TEST_F(RangesModelTest, ARangeWithoutWindowsForAWhileIsDimmedAndSaysWhenItWasLastSeen) {
  using namespace std::chrono_literals;
  const QBrush dim(QColor(1, 2, 3));
  model_.setStaleForeground(dim);
  const double t0 = std::chrono::duration<double, std::milli>(clock_.wallNow().time_since_epoch()).count();
  // Both ranges every second for 5 s, then only forward.
  for (int i = 0; i < 20; ++i) {
    EventData data;
    test::addRangeWindow(data, "forward", {10, 4.0, 3.9, 7.5, 8.0});
    if (i < 5) test::addRangeWindow(data, "backward", {10, 9.0, 8.5, 18.0, 19.0});
    deliver(train_, t0 + 1000.0 * i, data);
    refresh();
    if (i + 1 < 20) clock_.advance(1s);
  }
  const int forward = model_.rowOf(0, QStringLiteral("forward"));
  const int backward = model_.rowOf(0, QStringLiteral("backward"));
  ASSERT_GE(backward, 0);
  // Silent since t0 + 4 s for 15 s, more than the 10 s minimum.
  EXPECT_TRUE(model_.isStale(backward));
  EXPECT_FALSE(model_.isStale(forward));
  for (int column = 0; column < RangesModel::ColumnCount; ++column) {
    EXPECT_EQ(value(backward, column, Qt::ForegroundRole).value<QBrush>(), dim) << column;
    EXPECT_FALSE(value(forward, column, Qt::ForegroundRole).isValid()) << column;
  }
  EXPECT_EQ(value(backward, RangesModel::LastSeenColumn, RangesModel::SortRole).toDouble(), t0 + 4000.0);
  EXPECT_EQ(value(backward, RangesModel::LastSeenColumn).toString(),
            QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(t0) + 4000).time().toString(QStringLiteral("HH:mm:ss")));
  EXPECT_EQ(value(forward, RangesModel::LastSeenColumn, RangesModel::SortRole).toDouble(), t0 + 19'000.0);
  EXPECT_EQ(model_.headerData(RangesModel::LastSeenColumn, Qt::Horizontal).toString(), QStringLiteral("Last seen"));

  // A window brings it back at once, with one dataChanged for its foreground.
  QSignalSpy changed(&model_, &QAbstractItemModel::dataChanged);
  EventData back;
  test::addRangeWindow(back, "backward", {10, 9.0, 8.5, 18.0, 19.0});
  deliver(train_, t0 + 19'000.0, back);
  refresh();
  EXPECT_FALSE(model_.isStale(backward));
  EXPECT_FALSE(value(backward, RangesModel::P99Column, Qt::ForegroundRole).isValid());
  const auto foreground = std::count_if(changed.begin(), changed.end(), [](const QList<QVariant>& signal) {
    return signal[2].value<QList<int>>() == QList<int>{Qt::ForegroundRole};
  });
  EXPECT_EQ(foreground, 1);

  // Its interval is now 15 s: it is dimmed only after three of them.
  clock_.advance(40s);
  refresh();
  EXPECT_TRUE(model_.isStale(forward));  // 41 s silent: three of its 1 s windows and the minimum
  EXPECT_FALSE(model_.isStale(backward));
  clock_.advance(10s);
  refresh();
  EXPECT_TRUE(model_.isStale(backward));
}

// A replayed source's rows are as old as they were at its playhead, not by the wall clock.
TEST_F(RangesModelTest, ARowIsOldOrNotByItsSourcesReferenceTime) {
  using namespace std::chrono_literals;
  const double t0 = std::chrono::duration<double, std::milli>(clock_.wallNow().time_since_epoch()).count();
  std::optional<double> playhead = t0 + 1000.0;
  model_.setReferenceTime([&](SourceId) { return playhead; });
  EventData data;
  test::addRangeWindow(data, "forward", {10, 4.0, 3.9, 7.5, 8.0});
  deliver(train_, t0, data);
  clock_.advance(1h);
  refresh();
  EXPECT_FALSE(model_.isStale(0));
  playhead = t0 + 60'000.0;
  clock_.advance(1s);
  refresh();
  EXPECT_TRUE(model_.isStale(0));
  playhead = std::nullopt;  // live: the clock's wall time
  clock_.advance(1s);
  refresh();
  EXPECT_TRUE(model_.isStale(0));
}

TEST_F(RangesModelTest, UnpublishedWindowsAreCountedButNotShown) {
  EventData first;
  test::addRangeWindow(first, "forward", {10, 4.0, 3.9, 7.5, 8.0});
  deliver(train_, 1000.0, first);
  refresh();
  EventData second;
  test::addRangeWindow(second, "forward", {20, 5.0, 4.5, 9.0, 9.5});
  test::addRangeWindow(second, "backward", {20, 9.0, 8.5, 18.0, 19.0});
  deliver(train_, 2000.0, second);
  refresh(false);  // a paused dashboard

  EXPECT_EQ(model_.rowCount(), 1);
  EXPECT_EQ(value(0, RangesModel::MeanColumn, Qt::EditRole).toDouble(), 4.0);
  EXPECT_EQ(model_.rowOf(0, QStringLiteral("backward")), -1);

  model_.publish();
  EXPECT_EQ(model_.rowCount(), 2);
  EXPECT_EQ(value(model_.rowOf(0, QStringLiteral("forward")), RangesModel::CallsColumn, Qt::EditRole).toDouble(), 30.0);
  EXPECT_EQ(value(model_.rowOf(0, QStringLiteral("forward")), RangesModel::MeanColumn, Qt::EditRole).toDouble(), 5.0);
}

TEST_F(RangesModelTest, ClearedSourcesKeepTheirRowsWithoutValues) {
  const auto replayed = makeSource("recorded", 300);
  EventData data;
  test::addRangeWindow(data, "forward", {10, 4.0, 3.9, 7.5, 8.0});
  deliver(train_, 1000.0, data);
  deliver(replayed, 1000.0, data);
  refresh();
  model_.clearValues([](SourceId id) { return id == 1; });
  model_.publish();
  ASSERT_EQ(model_.rowCount(), 2);
  const int live = model_.rowOf(0, QStringLiteral("forward"));
  const int gone = model_.rowOf(1, QStringLiteral("forward"));
  EXPECT_EQ(value(live, RangesModel::CallsColumn, Qt::EditRole).toDouble(), 10.0);
  EXPECT_FALSE(value(gone, RangesModel::CallsColumn, Qt::EditRole).isValid());
  EXPECT_FALSE(value(gone, RangesModel::MeanColumn, Qt::EditRole).isValid());
  // The next window starts the total again.
  deliver(replayed, 2000.0, data);
  refresh();
  EXPECT_EQ(value(gone, RangesModel::CallsColumn, Qt::EditRole).toDouble(), 10.0);
}

TEST_F(RangesModelTest, RemovedSourcesLoseTheirRowsAndTheOthersKeepTheirsAndTheirValues) {
  const auto replayed = makeSource("recorded", 300);
  EventData forward;
  test::addRangeWindow(forward, "forward", {10, 4.0, 3.9, 7.5, 8.0});
  EventData backward;
  test::addRangeWindow(backward, "backward", {10, 6.0, 5.9, 9.5, 9.0});
  // Rows: train forward, recorded forward, train backward, recorded backward (not yet published).
  deliver(train_, 1000.0, forward);
  refresh();
  deliver(replayed, 1000.0, forward);
  refresh();
  deliver(train_, 1000.0, backward);
  refresh();
  deliver(replayed, 1000.0, backward);
  refresh(false);
  ASSERT_EQ(model_.rowCount(), 3);
  ASSERT_EQ(model_.sourceCount(), 2);
  QSignalSpy removed(&model_, &QAbstractItemModel::rowsRemoved);

  const RegistryRemoval removal = registry_.removeSources([](const SourceEntry& source) { return source.id == 1; });
  model_.removeSources(removal.sources);
  ASSERT_EQ(removed.count(), 1);
  EXPECT_EQ(removed.front().at(1).toInt(), 1);
  EXPECT_EQ(removed.front().at(2).toInt(), 1);
  ASSERT_EQ(model_.rowCount(), 2);
  EXPECT_EQ(model_.sourceCount(), 1);
  EXPECT_EQ(model_.rowOf(1, QStringLiteral("forward")), -1);
  const int forwardRow = model_.rowOf(0, QStringLiteral("forward"));
  const int backwardRow = model_.rowOf(0, QStringLiteral("backward"));
  EXPECT_EQ(forwardRow, 0);
  EXPECT_EQ(backwardRow, 1);
  EXPECT_EQ(value(backwardRow, RangesModel::MeanColumn, Qt::EditRole).toDouble(), 6.0);
  EXPECT_EQ(value(backwardRow, RangesModel::SourceColumn).toString(), QStringLiteral("train"));
  for (SeriesId id : model_.durationSeries(backwardRow)) EXPECT_EQ(registry_.series(id)->source, 0U);

  // The unpublished row of the removed source never shows; the moved row still gets its windows.
  test::addRangeWindow(backward, "backward", {20, 7.0, 6.9, 9.5, 9.0});
  deliver(train_, 2000.0, backward);
  refresh();
  ASSERT_EQ(model_.rowCount(), 2);
  EXPECT_EQ(value(backwardRow, RangesModel::MeanColumn, Qt::EditRole).toDouble(), 7.0);
  EXPECT_EQ(value(backwardRow, RangesModel::CallsColumn, Qt::EditRole).toDouble(), 30.0);
  EXPECT_EQ(value(forwardRow, RangesModel::CallsColumn, Qt::EditRole).toDouble(), 10.0);
}

TEST_F(RangesModelTest, EveryNumericColumnSortsAsNumbersNotAsText) {
  // As text, "10" < "100" < "9"; each column gets its values in a different row order so a
  // column sorted by another's values would fail.
  const std::vector<double> values{9.0, 100.0, 10.0, 0.5, 2000.0};
  EventData data;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto at = [&](std::size_t shift) { return values[(i + shift) % values.size()]; };
    std::string name = "r";
    name += std::to_string(i);  // (GCC 12 warns falsely about "r" + std::to_string(i))
    test::addRangeWindow(data, name, {at(0), at(1), at(2), at(3), at(4)});
  }
  deliver(train_, 1000.0, data);
  refresh();
  ASSERT_EQ(model_.rowCount(), static_cast<int>(values.size()));

  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&model_);
  proxy.setSortRole(RangesModel::SortRole);
  QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::Warning);
  for (int column : {RangesModel::CallsColumn, RangesModel::MeanColumn,
                     RangesModel::P50Column, RangesModel::P99Column, RangesModel::MaxColumn}) {
    for (Qt::SortOrder order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
      proxy.sort(column, order);
      std::vector<double> shown;
      for (int row = 0; row < proxy.rowCount(); ++row) shown.push_back(proxy.index(row, column).data(Qt::EditRole).toDouble());
      std::vector<double> expected = values;
      std::sort(expected.begin(), expected.end());
      if (order == Qt::DescendingOrder) std::reverse(expected.begin(), expected.end());
      EXPECT_EQ(shown, expected) << "column " << column;
    }
  }
  proxy.sort(RangesModel::RangeColumn, Qt::DescendingOrder);
  EXPECT_EQ(proxy.index(0, RangesModel::RangeColumn).data().toString(), QStringLiteral("r4"));
}

TEST_F(RangesModelTest, MissingAndNaNValuesSortLast) {
  EventData data;
  test::addRangeWindow(data, "a", {1, 2.0, 2.0, 2.0, 2.0});
  test::addRangeWindow(data, "b", {1, std::numeric_limits<double>::quiet_NaN(), 1.0, 1.0, 1.0});
  data["range/c.max"] = 3.0;  // no mean
  test::addRangeWindow(data, "d", {1, 1.0, 1.0, 1.0, 1.0});
  deliver(train_, 1000.0, data);
  refresh();
  const int b = model_.rowOf(0, QStringLiteral("b"));
  const int c = model_.rowOf(0, QStringLiteral("c"));
  EXPECT_EQ(value(b, RangesModel::MeanColumn).toString(), QStringLiteral("NaN"));
  EXPECT_FALSE(value(b, RangesModel::MeanColumn, RangesModel::SortRole).isValid());
  EXPECT_EQ(value(c, RangesModel::MeanColumn).toString(), QStringLiteral("—"));
  EXPECT_FALSE(value(c, RangesModel::CallsColumn, Qt::EditRole).isValid());

  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&model_);
  proxy.setSortRole(RangesModel::SortRole);
  proxy.sort(RangesModel::MeanColumn, Qt::AscendingOrder);
  EXPECT_EQ(proxy.index(0, RangesModel::RangeColumn).data().toString(), QStringLiteral("d"));
  EXPECT_EQ(proxy.index(1, RangesModel::RangeColumn).data().toString(), QStringLiteral("a"));

  // A NaN that stays NaN is not a change: only the window's time is (and the time per second,
  // NaN too, now that an interval between windows is known).
  deliver(train_, 2000.0, EventData{{"range/b.mean", std::numeric_limits<double>::quiet_NaN()}});
  QSignalSpy changed(&model_, &QAbstractItemModel::dataChanged);
  refresh();
  ASSERT_EQ(changed.count(), 1);
  EXPECT_EQ(changed[0][0].value<QModelIndex>(), model_.index(b, RangesModel::TimePerSecondColumn));
  EXPECT_EQ(changed[0][1].value<QModelIndex>(), model_.index(b, RangesModel::LastSeenColumn));
}

TEST_F(RangesModelTest, SeveralSourcesAreToldApart) {
  const auto rank0 = makeSource("train", 200, 0);
  const auto rank1 = makeSource("train", 201, 1);
  EventData fast;
  test::addRangeWindow(fast, "forward", {10, 4.0, 3.9, 7.5, 8.0});
  EventData slow;
  test::addRangeWindow(slow, "forward", {10, 6.0, 5.5, 12.0, 13.0});
  deliver(rank0, 1000.0, fast);
  deliver(rank1, 1000.0, slow);
  refresh();

  ASSERT_EQ(model_.rowCount(), 2);
  EXPECT_EQ(model_.sourceCount(), 2);
  const int r0 = model_.rowOf(0, QStringLiteral("forward"));
  const int r1 = model_.rowOf(1, QStringLiteral("forward"));
  ASSERT_GE(r0, 0);
  ASSERT_GE(r1, 0);
  EXPECT_NE(r0, r1);
  EXPECT_EQ(value(r0, RangesModel::SourceColumn).toString(), QStringLiteral("train r0"));
  EXPECT_EQ(value(r1, RangesModel::SourceColumn).toString(), QStringLiteral("train r1"));
  EXPECT_EQ(value(r0, RangesModel::MeanColumn, Qt::EditRole).toDouble(), 4.0);
  EXPECT_EQ(value(r1, RangesModel::MeanColumn, Qt::EditRole).toDouble(), 6.0);
  // The tooltip names the publisher in full.
  EXPECT_TRUE(value(r1, RangesModel::RangeColumn, Qt::ToolTipRole).toString().contains(QStringLiteral("host:201")))
      << value(r1, RangesModel::RangeColumn, Qt::ToolTipRole).toString().toStdString();
  // Each row's chart series are its own source's.
  for (SeriesId id : model_.durationSeries(r1)) EXPECT_EQ(registry_.series(id)->source, 1U);
  EXPECT_EQ(model_.durationSeries(r1).size(), 4U);  // mean, p50, p99, max: no count

  // A third publisher of the same run and rank relabels the sources: the column follows.
  const auto rank1Again = makeSource("train", 301, 1);
  deliver(rank1Again, 1000.0, slow);
  QSignalSpy changed(&model_, &QAbstractItemModel::dataChanged);
  refresh();
  EXPECT_GE(changed.count(), 1);
  EXPECT_EQ(value(r1, RangesModel::SourceColumn).toString(), QStringLiteral("train r1:201"));
}

TEST_F(RangesModelTest, RangeNamesMayHoldDotsColonsAndSlashes) {
  EventData data;
  test::addRangeWindow(data, "aten::mm", {100, 0.25, 0.2, 0.9, 1.1});
  test::addRangeWindow(data, "step.data", {10, 30.0, 29.0, 45.0, 50.0});
  test::addRangeWindow(data, "model/layer.3/attn", {40, 1.5, 1.4, 2.5, 3.0});
  deliver(train_, 1000.0, data);
  refresh();
  EXPECT_EQ(rangeNames(), (std::vector<QString>{QStringLiteral("aten::mm"), QStringLiteral("model/layer.3/attn"),
                                                QStringLiteral("step.data")}));
  const int step = model_.rowOf(0, QStringLiteral("step.data"));
  ASSERT_GE(step, 0);
  EXPECT_EQ(value(step, RangesModel::P99Column, Qt::EditRole).toDouble(), 45.0);
  EXPECT_EQ(model_.statName(step), QStringLiteral("range/step.data"));
}

TEST_F(RangesModelTest, MalformedKeysAreIgnored) {
  EventData data;
  data["range/forward"] = 1.0;        // no aggregation at all
  data["range/forward."] = 1.0;       // an empty one
  data["range/step.data"] = 2.0;      // a dotted name without its aggregation: "data" is none of ours
  data["range/.mean"] = 3.0;          // no name
  data["range/"] = 4.0;
  data["range/x.mean"] = std::string("slow");  // not a number
  data["range/y.mean"] = true;
  deliver(train_, 1000.0, data);
  refresh();
  EXPECT_EQ(model_.rowCount(), 0);

  // Good keys next to bad ones still count.
  EventData mixed;
  mixed["range/forward"] = 1.0;
  mixed["range/forward.p50"] = 2.5;
  mixed["range/forward.p90"] = 3.5;  // not a column
  deliver(train_, 2000.0, mixed);
  refresh();
  ASSERT_EQ(model_.rowCount(), 1);
  EXPECT_EQ(value(0, RangesModel::RangeColumn).toString(), QStringLiteral("forward"));
  EXPECT_EQ(value(0, RangesModel::P50Column, Qt::EditRole).toDouble(), 2.5);
  EXPECT_FALSE(value(0, RangesModel::MeanColumn, Qt::EditRole).isValid());
  EXPECT_EQ(model_.durationSeries(0).size(), 1U);
}

TEST_F(RangesModelTest, RowsStopAtTheLimitTheRestAreCountedAndRemovingTheirSourceForgetsThem) {
  EXPECT_EQ(model_.maxRows(), kDefaultMaxRangeRows);
  model_.setMaxRows(3);
  const auto eval = makeSource("eval", 200);
  EventData data;
  for (const char* name : {"a", "b", "c", "d"}) test::addRangeWindow(data, name, Timings{1, 2, 2, 3, 4});
  deliver(train_, 1000, data);
  refresh();
  EXPECT_EQ(model_.rowCount(), 3);
  EXPECT_EQ(model_.unlistedCount(), 1U);
  deliver(eval, 1000, data);
  refresh();
  EXPECT_EQ(model_.rowCount(), 3);
  EXPECT_EQ(model_.unlistedCount(), 5U);

  // The rows listed keep their values up to date; the others' windows go nowhere.
  EventData next;
  for (const char* name : {"a", "b", "c", "d"}) test::addRangeWindow(next, name, Timings{7, 8, 8, 9, 10});
  deliver(train_, 2000, next);
  deliver(eval, 2000, next);
  refresh();
  ASSERT_EQ(model_.rowCount(), 3);
  for (int row = 0; row < 3; ++row) EXPECT_EQ(value(row, RangesModel::MeanColumn, RangesModel::SortRole).toDouble(), 8.0);
  EXPECT_EQ(value(0, RangesModel::CallsColumn, RangesModel::SortRole).toDouble(), 8.0);

  model_.removeSources({1});  // eval: none of its rows listed
  EXPECT_EQ(model_.unlistedCount(), 1U);
  EXPECT_EQ(model_.rowCount(), 3);
}

TEST(RangeNames, AreTheStatNameAfterThePrefix) {
  EXPECT_EQ(rangeNameOfStat(QStringLiteral("range/forward")), QStringLiteral("forward"));
  EXPECT_EQ(rangeNameOfStat(QStringLiteral("range/a/b")), QStringLiteral("a/b"));
  EXPECT_EQ(rangeNameOfStat(QStringLiteral("range/")), std::nullopt);
  EXPECT_EQ(rangeNameOfStat(QStringLiteral("Range/forward")), std::nullopt);
  EXPECT_EQ(rangeNameOfStat(QStringLiteral("loss")), std::nullopt);
}

TEST(FormatDuration, PicksAUnitAndThreeSignificantDigits) {
  EXPECT_EQ(formatDurationMs(0.00085), QStringLiteral("850 ns"));
  EXPECT_EQ(formatDurationMs(0.0124), QStringLiteral("12.4 µs"));
  EXPECT_EQ(formatDurationMs(0.5), QStringLiteral("500 µs"));
  EXPECT_EQ(formatDurationMs(3.0712), QStringLiteral("3.07 ms"));
  EXPECT_EQ(formatDurationMs(99.96), QStringLiteral("100 ms"));
  EXPECT_EQ(formatDurationMs(0.99996), QStringLiteral("1.00 ms"));  // rounds into the next unit
  EXPECT_EQ(formatDurationMs(1250.0), QStringLiteral("1.25 s"));
  EXPECT_EQ(formatDurationMs(5'000'000.0), QStringLiteral("5000 s"));
  EXPECT_EQ(formatDurationMs(0.0), QStringLiteral("0 ms"));
  EXPECT_EQ(formatDurationMs(-2.5), QStringLiteral("-2.50 ms"));
  EXPECT_EQ(formatDurationMs(std::numeric_limits<double>::quiet_NaN()), QStringLiteral("NaN"));
  EXPECT_EQ(formatDurationMs(std::numeric_limits<double>::infinity()), QStringLiteral("∞"));
}

}  // namespace
}  // namespace livemon::ui
