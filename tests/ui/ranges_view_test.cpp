// The Ranges view in the main window: fed through the ingest path as received events would be,
// its table, sorting, filter, selection, the chart of the selected range, pause and the tab.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QStyle>
#include <QStyleOptionHeader>
#include <QHeaderView>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/ranges_model.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/ranges_view.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::lastY;
using test::makeSource;
using test::ModelTesterMessages;

using EventData = decltype(Event::data);

using Timings = test::RangeTimings;

// A training step's ranges in window `i`: data, forward, backward, optimizer, each with its own
// durations that drift from window to window.
EventData stepWindow(int i) {
  EventData data;
  const auto add = [&data](const std::string& name, const Timings& t) { test::addRangeWindow(data, name, t); };
  add("data", {10, 2.0 + i, 1.9 + i, 4.0 + i, 5.0 + i});
  add("forward", {10, 30.0 + i, 29.0 + i, 41.0 + i, 44.0 + i});
  add("backward", {10, 60.0 + i, 58.0 + i, 90.0 + i, 95.0 + i});
  add("optimizer", {10, 0.5 + i, 0.45 + i, 0.8 + i, 0.9 + i});
  data["train.loss.mean"] = 1.0 / (i + 1);
  return data;
}

class RangesViewTest : public ::testing::Test {
 protected:
  RangesViewTest() {
    DashboardOptions options;
    options.exactEndpoints = true;  // no endpoints: only what the test delivers
    options.settingsFile = settingsDir_.filePath(QStringLiteral("livemon.ini"));
    window_ = std::make_unique<MainWindow>(options);
    window_->resize(1400, 900);
    window_->setView(DashboardView::Ranges);
    window_->show();
  }

  void deliver(const std::shared_ptr<const transport::SourceInfo>& source, double ms, EventData data) {
    std::vector<transport::ReceivedEvent> events;
    events.push_back(test::received(source, Event{std::string(kStatEventName), test::atMs(ms), std::move(data)}));
    window_->dashboard().ingest().deliver(events);
  }

  RangesView& view() { return window_->rangesView(); }
  RangesModel& model() { return view().model(); }
  QSortFilterProxyModel& proxy() { return view().proxy(); }
  // Refreshes (and lets Qt lay out and show new widgets) until `condition` holds.
  bool refreshUntil(const std::function<bool()>& condition) {
    return test::waitFor([&] {
      window_->dashboard().refreshNow();
      return condition();
    });
  }
  static bool hasPoints(const StatChartView* chart, const QString& aggregation, SourceId source, int count) {
    const QLineSeries* line = chart != nullptr ? chart->line(aggregation, source) : nullptr;
    return line != nullptr && line->count() == count;
  }

  QString shownName(int proxyRow) { return proxy().index(proxyRow, RangesModel::RangeColumn).data().toString(); }

  static constexpr double kT0 = 1'700'000'000'000.0;
  ModelTesterMessages messages_;
  QTemporaryDir settingsDir_;
  std::unique_ptr<MainWindow> window_;
  std::shared_ptr<const transport::SourceInfo> train_ = makeSource("train", 100);
};

TEST_F(RangesViewTest, ShowsTheRangesLiveAndChartsTheSelectedOne) {
  QAbstractItemModelTester tester(&proxy(), QAbstractItemModelTester::FailureReportingMode::Warning);
  constexpr int kWindows = 5;
  for (int i = 0; i < kWindows; ++i) {
    EventData data = stepWindow(i);
    // Called once, the slowest by its mean, but little of the run's time.
    if (i == 0) test::addRangeWindow(data, "checkpoint", {1, 500.0, 500.0, 500.0, 500.0});
    deliver(train_, kT0 + 1000.0 * i, data);
  }
  window_->dashboard().refreshNow();

  ASSERT_EQ(model().rowCount(), 5);  // train.loss is not a range
  // Sorted by total time, where the time went first (torch.profiler's order), with the latest
  // window's values.
  EXPECT_EQ(view().table()->horizontalHeader()->sortIndicatorSection(), RangesModel::TotalTimeColumn);
  EXPECT_EQ(shownName(0), QStringLiteral("backward"));
  EXPECT_EQ(shownName(2), QStringLiteral("checkpoint"));
  EXPECT_EQ(shownName(4), QStringLiteral("optimizer"));
  EXPECT_EQ(proxy().index(0, RangesModel::MeanColumn).data(Qt::EditRole).toDouble(), 60.0 + kWindows - 1);
  EXPECT_EQ(proxy().index(0, RangesModel::CallsColumn).data(Qt::EditRole).toDouble(), 10.0 * kWindows);
  EXPECT_TRUE(view().table()->isColumnHidden(RangesModel::SourceColumn));  // one source

  // The top row is selected from the start, and its chart has a line per duration aggregation.
  ASSERT_EQ(view().selectedRow(), model().rowOf(0, QStringLiteral("backward")));
  StatChartView* chart = view().chart();
  ASSERT_NE(chart, nullptr);
  EXPECT_EQ(chart->statName(), QStringLiteral("range/backward"));
  ASSERT_TRUE(refreshUntil([&] { return hasPoints(chart, QStringLiteral("mean"), 0, kWindows); }));
  EXPECT_EQ(lastY(chart->line(QStringLiteral("p99"), 0)), 90.0 + kWindows - 1);
  EXPECT_NE(chart->line(QStringLiteral("p50"), 0), nullptr);
  EXPECT_NE(chart->line(QStringLiteral("max"), 0), nullptr);
  EXPECT_EQ(chart->line(QStringLiteral("count"), 0), nullptr);  // not a duration

  // Selecting another row charts that range.
  ASSERT_TRUE(view().selectRow(model().rowOf(0, QStringLiteral("optimizer"))));
  chart = view().chart();
  ASSERT_NE(chart, nullptr);
  EXPECT_EQ(chart->statName(), QStringLiteral("range/optimizer"));
  ASSERT_TRUE(refreshUntil([&] { return hasPoints(chart, QStringLiteral("mean"), 0, kWindows); }));
  EXPECT_EQ(lastY(chart->line(QStringLiteral("mean"), 0)), 0.5 + kWindows - 1);

  // A new window updates the table and the chart; the selection stays on its range.
  deliver(train_, kT0 + 1000.0 * kWindows, stepWindow(kWindows));
  window_->dashboard().refreshNow();
  EXPECT_EQ(model().index(model().rowOf(0, QStringLiteral("optimizer")), RangesModel::MeanColumn).data(Qt::EditRole).toDouble(),
            0.5 + kWindows);
  EXPECT_EQ(view().chart(), chart);
  EXPECT_TRUE(refreshUntil([&] { return hasPoints(chart, QStringLiteral("mean"), 0, kWindows + 1); }));

  // Range Stats are charted in the grid too.
  window_->setView(DashboardView::Charts);
  ASSERT_TRUE(refreshUntil([&] { return window_->chartGrid().chart(QStringLiteral("range/forward")) != nullptr; }));
  EXPECT_NE(window_->chartGrid().chart(QStringLiteral("train.loss")), nullptr);
  EXPECT_TRUE(ModelTesterMessages::messages().isEmpty()) << ModelTesterMessages::text();
}

TEST_F(RangesViewTest, TheToolbarsLogScaleAndAChartsOwnChoiceApplyToTheRangesChart) {
  // An operator's p50 of 0.3 ms beside a max of 12 ms: on a linear axis the typical durations
  // are a flat line at the bottom, so the toolbar's "Log scale" must reach this chart too.
  for (int i = 0; i < 3; ++i) deliver(train_, kT0 + 1000.0 * i, stepWindow(i));
  window_->dashboard().refreshNow();
  StatChartView* chart = view().chart();
  ASSERT_NE(chart, nullptr);
  ASSERT_TRUE(refreshUntil([&] { return hasPoints(chart, QStringLiteral("mean"), 0, 3); }));
  EXPECT_FALSE(chart->isLogScale());

  ChartViewOptions& options = window_->chartGrid().viewOptions();
  options.setLogScaleAll(true);
  EXPECT_TRUE(refreshUntil([&] { return chart->isLogScale(); }));
  options.setLogScaleAll(false);
  EXPECT_TRUE(refreshUntil([&] { return !chart->isLogScale(); }));

  // A chart picked later follows as well, and so does a choice made for that range's chart alone.
  options.setLogScale(QStringLiteral("range/optimizer"), true);
  ASSERT_TRUE(view().selectRow(model().rowOf(0, QStringLiteral("optimizer"))));
  chart = view().chart();
  ASSERT_NE(chart, nullptr);
  EXPECT_TRUE(refreshUntil([&] { return chart->isLogScale(); }));
}

TEST_F(RangesViewTest, ClickingAHeaderSortsByThatColumnAsNumbers) {
  // p99 as text would put "100" before "9": one range gets each.
  const std::vector<std::pair<std::string, double>> p99s{{"a", 9.0}, {"b", 100.0}, {"c", 10.0}, {"d", 2.5}};
  EventData data;
  for (const auto& [name, p99] : p99s) {
    data["range/" + name + ".p99"] = p99;
    data["range/" + name + ".mean"] = 1.0;
  }
  deliver(train_, kT0, data);
  window_->dashboard().refreshNow();
  ASSERT_EQ(proxy().rowCount(), 4);

  QHeaderView* header = view().table()->horizontalHeader();
  const int x = header->sectionViewportPosition(RangesModel::P99Column) + header->sectionSize(RangesModel::P99Column) / 2;
  QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, QPoint(x, header->height() / 2));
  EXPECT_EQ(header->sortIndicatorSection(), RangesModel::P99Column);
  std::vector<double> shown;
  for (int row = 0; row < proxy().rowCount(); ++row) {
    shown.push_back(proxy().index(row, RangesModel::P99Column).data(Qt::EditRole).toDouble());
  }
  std::vector<double> sorted = shown;
  std::sort(sorted.begin(), sorted.end());
  if (header->sortIndicatorOrder() == Qt::DescendingOrder) std::reverse(sorted.begin(), sorted.end());
  EXPECT_EQ(shown, sorted);
}

TEST_F(RangesViewTest, TheFilterMatchesRangeNames) {
  deliver(train_, kT0, stepWindow(0));
  window_->dashboard().refreshNow();
  view().setFilterText(QStringLiteral("WARD"));
  ASSERT_EQ(proxy().rowCount(), 2);
  for (int row = 0; row < proxy().rowCount(); ++row) EXPECT_TRUE(shownName(row).endsWith(QStringLiteral("ward")));
  view().setFilterText(QStringLiteral("*a?a"));
  ASSERT_EQ(proxy().rowCount(), 1);
  EXPECT_EQ(shownName(0), QStringLiteral("data"));
  EXPECT_EQ(view().filterEdit()->text(), QStringLiteral("*a?a"));
  view().setFilterText(QString());
  EXPECT_EQ(proxy().rowCount(), 4);
}

TEST_F(RangesViewTest, SeveralSourcesGetASourceColumnAndTheChartShowsTheSelectedRowsSource) {
  const auto rank0 = makeSource("train", 200, 0);
  const auto rank1 = makeSource("train", 201, 1);
  for (int i = 0; i < 3; ++i) {
    deliver(rank0, kT0 + 1000.0 * i, stepWindow(i));
    deliver(rank1, kT0 + 1000.0 * i, stepWindow(i + 10));
  }
  window_->dashboard().refreshNow();
  ASSERT_EQ(model().rowCount(), 8);
  EXPECT_FALSE(view().table()->isColumnHidden(RangesModel::SourceColumn));

  const int forward1 = model().rowOf(1, QStringLiteral("forward"));
  ASSERT_TRUE(view().selectRow(forward1));
  StatChartView* chart = view().chart();
  ASSERT_NE(chart, nullptr);
  ASSERT_TRUE(refreshUntil([&] { return hasPoints(chart, QStringLiteral("mean"), 1, 3); }));
  EXPECT_EQ(chart->line(QStringLiteral("mean"), 0), nullptr);  // rank 0 is another row
  EXPECT_EQ(lastY(chart->line(QStringLiteral("mean"), 1)), 30.0 + 12);
  EXPECT_TRUE(chart->chart()->title().contains(QStringLiteral("train r1")));
}

TEST_F(RangesViewTest, PauseHoldsTheTableAndResumeCatchesUp) {
  deliver(train_, kT0, stepWindow(0));
  window_->dashboard().refreshNow();
  const int forward = model().rowOf(0, QStringLiteral("forward"));
  const QModelIndex mean = model().index(forward, RangesModel::MeanColumn);
  ASSERT_EQ(mean.data(Qt::EditRole).toDouble(), 30.0);

  window_->dashboard().setPaused(true);
  deliver(train_, kT0 + 1000.0, stepWindow(1));
  window_->dashboard().refreshNow();
  EXPECT_EQ(mean.data(Qt::EditRole).toDouble(), 30.0);
  window_->dashboard().setPaused(false);
  window_->dashboard().refreshNow();
  EXPECT_EQ(mean.data(Qt::EditRole).toDouble(), 31.0);
  EXPECT_EQ(model().index(forward, RangesModel::CallsColumn).data(Qt::EditRole).toDouble(), 20.0);
}

TEST_F(RangesViewTest, TheChosenViewIsSavedAndAnOptionOverridesIt) {
  EXPECT_EQ(window_->view(), DashboardView::Ranges);
  window_->close();  // saves
  window_.reset();

  DashboardOptions options;
  options.exactEndpoints = true;
  options.settingsFile = settingsDir_.filePath(QStringLiteral("livemon.ini"));
  {
    MainWindow restored(options);
    EXPECT_EQ(restored.view(), DashboardView::Ranges);
  }
  options.view = DashboardView::Charts;
  MainWindow chosen(options);
  EXPECT_EQ(chosen.view(), DashboardView::Charts);
}

}  // namespace
}  // namespace livemon::ui

namespace livemon::ui {
namespace {

// Issue 30: the sort arrow drawn over "Mean" (the slowest-first column) in the dashboard's style.
TEST_F(RangesViewTest, TheSortArrowLeavesEveryNumberHeaderReadable) {
  auto* app = qobject_cast<QApplication*>(QCoreApplication::instance());
  ASSERT_NE(app, nullptr);
  applyDashboardStyle(*app);
  deliver(train_, kT0, stepWindow(0));
  window_->dashboard().refreshNow();
  QHeaderView* header = view().table()->horizontalHeader();
  view().table()->setColumnHidden(RangesModel::SelfTimeColumn, false);  // shown once nesting is known
  for (int column = RangesModel::CallsColumn; column < RangesModel::ColumnCount; ++column) {
    header->setSortIndicator(column, Qt::DescendingOrder);
    QStyleOptionHeader option;
    option.initFrom(header);
    option.state |= QStyle::State_Horizontal;
    option.orientation = Qt::Horizontal;
    option.section = column;
    option.rect = QRect(header->sectionViewportPosition(column), 0, header->sectionSize(column), header->height());
    option.text = model().headerData(column, Qt::Horizontal).toString();
    option.textAlignment = model().headerData(column, Qt::Horizontal, Qt::TextAlignmentRole).value<Qt::Alignment>();
    option.sortIndicator = QStyleOptionHeader::SortDown;
    const QRect label = header->style()->subElementRect(QStyle::SE_HeaderLabel, &option, header);
    const QRect arrow = header->style()->subElementRect(QStyle::SE_HeaderArrow, &option, header);
    const QRect text = QStyle::alignedRect(Qt::LeftToRight, option.textAlignment,
                                           QSize(header->fontMetrics().horizontalAdvance(option.text), header->fontMetrics().height()),
                                           label);
    EXPECT_FALSE(text.intersects(arrow)) << option.text.toStdString() << ": text " << text.x() << "+" << text.width()
                                         << ", arrow " << arrow.x() << "+" << arrow.width();
    EXPECT_LE(header->fontMetrics().horizontalAdvance(option.text), label.width()) << option.text.toStdString();
  }
  app->setStyleSheet(QString());
}

}  // namespace
}  // namespace livemon::ui

namespace livemon::ui {
namespace {

// Issue 30: with ten number columns, PyTorch's operator names were squeezed to "ate…ces".
TEST_F(RangesViewTest, LongNamesKeepTheirRoomAndAreWholeInTheTooltip) {
  EventData data;
  test::addRangeWindow(data, "autograd::engine::evaluate_function: ConvolutionBackward0", {10, 1.0, 1.0, 2.0, 2.0});
  test::addRangeWindow(data, "aten::cross_entropy_loss", {10, 1.0, 1.0, 2.0, 2.0});
  deliver(train_, kT0, data);
  window_->dashboard().refreshNow();
  window_->resize(1000, 800);
  QCoreApplication::processEvents();
  QHeaderView* header = view().table()->horizontalHeader();
  EXPECT_GE(header->sectionSize(RangesModel::RangeColumn),
            view().table()->fontMetrics().horizontalAdvance(QStringLiteral("aten::cross_entropy_loss")));
  const int row = model().rowOf(0, QStringLiteral("autograd::engine::evaluate_function: ConvolutionBackward0"));
  EXPECT_TRUE(model().index(row, RangesModel::RangeColumn).data(Qt::ToolTipRole).toString().startsWith(
      QStringLiteral("autograd::engine::evaluate_function: ConvolutionBackward0\n")));
  // No step range: the summary says what to name one, then which range it is.
  EXPECT_TRUE(view().summaryText().contains(QStringLiteral("no step range"))) << view().summaryText().toStdString();
  EventData step;
  test::addRangeWindow(step, "train_step", {10, 5.0, 5.0, 6.0, 6.0});
  deliver(train_, kT0 + 1000.0, step);
  ASSERT_TRUE(refreshUntil([&] { return model().rowCount() == 3; }));
  EXPECT_TRUE(view().summaryText().endsWith(QStringLiteral(" · step: train_step"))) << view().summaryText().toStdString();
  // Self time is "—" on every row until a range is nested in another by name: its column waits.
  EXPECT_TRUE(view().table()->isColumnHidden(RangesModel::SelfTimeColumn));
  EventData nested;
  test::addRangeWindow(nested, "train_step/forward", {10, 2.0, 2.0, 3.0, 3.0});
  deliver(train_, kT0 + 2000.0, nested);
  ASSERT_TRUE(refreshUntil([&] { return model().rowCount() == 4; }));
  EXPECT_FALSE(view().table()->isColumnHidden(RangesModel::SelfTimeColumn));
}

}  // namespace
}  // namespace livemon::ui

namespace livemon::ui {
namespace {

// The first range seen is rarely the one the table puts first once the windows come in: until
// the user picks a row, the chart follows the top one; after, it stays on the user's.
TEST_F(RangesViewTest, TheChartFollowsTheTopRowUntilTheUserPicksOne) {
  EventData first;
  test::addRangeWindow(first, "randn", {1, 1.5, 1.5, 1.5, 1.5});
  deliver(train_, kT0, first);
  window_->dashboard().refreshNow();
  ASSERT_TRUE(refreshUntil([&] { return view().chart() != nullptr; }));
  EXPECT_EQ(view().chart()->statName(), QStringLiteral("range/randn"));

  for (int i = 1; i < 4; ++i) deliver(train_, kT0 + 1000.0 * i, stepWindow(i));
  ASSERT_TRUE(refreshUntil([&] { return shownName(0) == QStringLiteral("backward"); }));
  ASSERT_NE(view().chart(), nullptr);
  EXPECT_EQ(view().chart()->statName(), QStringLiteral("range/backward"));
  EXPECT_EQ(view().table()->currentIndex().row(), 0) << "the charted row is the one highlighted";

  // Picked by the user, a row stays charted when another takes the top.
  const QModelIndex optimizer = proxy().mapFromSource(model().index(model().rowOf(0, QStringLiteral("optimizer")), 0));
  ASSERT_TRUE(optimizer.isValid());
  view().table()->setCurrentIndex(optimizer);
  EXPECT_EQ(view().chart()->statName(), QStringLiteral("range/optimizer"));
  EventData heavy = stepWindow(4);
  test::addRangeWindow(heavy, "checkpoint", {100, 900.0, 900.0, 900.0, 900.0});
  deliver(train_, kT0 + 5000.0, heavy);
  ASSERT_TRUE(refreshUntil([&] { return shownName(0) == QStringLiteral("checkpoint"); }));
  EXPECT_EQ(view().chart()->statName(), QStringLiteral("range/optimizer"));
}

}  // namespace
}  // namespace livemon::ui
