// The wheel over a chart as TensorBoard and W&B users expect it: it scrolls the grid of charts
// (the page), and Ctrl+wheel zooms the shared time axis about the cursor. Offscreen.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <QApplication>
#include <QScrollBar>
#include <QSignalSpy>
#include <QWheelEvent>
#include <QtTest/QTest>
#include <QtTest/qtestspontaneevent.h>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr double kStart = 1'700'000'000'000.0;

// One notch of the wheel at the centre of `chart`'s plot: towards the user (down the page, a zoom
// out) or away from the user (up the page, a zoom in). Returns whether a widget took it.
enum class Notch { Down = -120, Up = 120 };
bool turnWheel(StatChartView& chart, Qt::KeyboardModifiers modifiers, Notch notch = Notch::Down) {
  const QPointF at(chart.plotRect().center());
  QWheelEvent wheel(at, QPointF(chart.viewport()->mapToGlobal(at)), QPoint(), QPoint(0, static_cast<int>(notch)), Qt::NoButton, modifiers,
                    Qt::NoScrollPhase, false);
  // As a mouse's wheel event arrives: spontaneous, so that Qt passes it on to the parents while
  // no widget takes it (sendEvent would make it synthetic, which stays where it is sent).
  QSpontaneKeyEvent::setSpontaneous(&wheel);
  QApplication::instance()->notify(chart.viewport(), &wheel);
  return wheel.isAccepted();
}

class ChartWheelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Twelve charts with 100 s of data each: more rows than fit in the window.
    std::vector<SeriesId> ids;
    for (int i = 0; i <= 100; ++i) {
      std::unordered_map<std::string, DataValue> data;
      for (int stat = 0; stat < 12; ++stat) data["stat" + std::to_string(10 + stat) + ".mean"] = 1.0 * i;
      IngestBatch batch;
      auto event = test::received(source_, Event{"livemon.Stat", test::atMs(kStart + 1000.0 * i), std::move(data)});
      converter_.convert(event, batch);
      const std::vector<SeriesId> added = registry_.apply(batch).newSeries;
      ids.insert(ids.end(), added.begin(), added.end());
    }
    grid_.setRenderBudget(std::chrono::hours(1));
    grid_.setTimeAxisMode(TimeAxisMode::SinceRunStart);
    grid_.setTimeRange(TimeRange::All);
    grid_.resize(1000, 600);
    grid_.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&grid_));
    grid_.addSeries(ids);
    ASSERT_TRUE(test::waitFor([&] {
      grid_.refresh();
      return chart() != nullptr && chart()->isOnScreen() && grid_.verticalScrollBar()->maximum() > 0;
    }));
    grid_.refresh();
  }

  StatChartView* chart() const { return grid_.chart(QStringLiteral("stat10")); }

  EventConverter converter_;
  StatRegistry registry_;
  ChartGrid grid_{registry_};
  const std::shared_ptr<const transport::SourceInfo> source_ = test::makeSource("train", 100, std::nullopt, kStart);
};

TEST_F(ChartWheelTest, TheWheelOverAChartScrollsTheGridAndLeavesTheRangeAlone) {
  const XRange before = chart()->xRange();
  ASSERT_EQ(grid_.verticalScrollBar()->value(), 0);
  QSignalSpy ranges(chart(), &StatChartView::rangeRequested);

  turnWheel(*chart(), Qt::NoModifier);
  grid_.refresh();
  EXPECT_GT(grid_.verticalScrollBar()->value(), 0) << "the page scrolls";
  EXPECT_EQ(ranges.count(), 0);
  EXPECT_EQ(chart()->xRange(), before);
  EXPECT_TRUE(grid_.timeView().followsLive());
}

TEST_F(ChartWheelTest, CtrlWheelZoomsEveryChartAndLeavesThePageWhereItIs) {
  const XRange before = chart()->xRange();
  StatChartView* other = grid_.chart(QStringLiteral("stat11"));
  ASSERT_NE(other, nullptr);

  EXPECT_TRUE(turnWheel(*chart(), Qt::ControlModifier, Notch::Up));
  grid_.refresh();
  EXPECT_EQ(grid_.verticalScrollBar()->value(), 0) << "the page stays";
  const XRange after = chart()->xRange();
  EXPECT_NEAR(after.max - after.min, 0.8 * (before.max - before.min), 0.5) << "a notch up zooms in";
  EXPECT_FALSE(grid_.timeView().followsLive());
  EXPECT_EQ(other->xRange(), after) << "the charts share the zoom";
}

// The Ranges view's chart is a StatChartView on its own, in no scroll area: the plain wheel
// leaves it alone (it goes to the view's parent), Ctrl+wheel zooms it.
TEST(ChartWheel, AChartOnItsOwnZoomsOnlyWithCtrl) {
  EventConverter converter;
  StatRegistry registry;
  const auto source = test::makeSource("train", 100, std::nullopt, kStart);
  std::vector<SeriesId> ids;
  for (int i = 0; i <= 20; ++i) {
    IngestBatch batch;
    auto event = test::received(source, Event{"livemon.Stat", test::atMs(kStart + 1000.0 * i), {{"range/step.mean", 1.0 * i}}});
    converter.convert(event, batch);
    const std::vector<SeriesId> added = registry.apply(batch).newSeries;
    ids.insert(ids.end(), added.begin(), added.end());
  }
  StatChartView chart(QStringLiteral("range/step"), registry, TimeAxisMode::SinceRunStart);
  for (SeriesId id : ids) chart.addSeries(id);
  chart.resize(800, 400);
  chart.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&chart));
  ChartRenderContext context;
  context.mode = TimeAxisMode::SinceRunStart;
  context.x = XRange{0.0, 20.0};
  chart.render(context);
  QSignalSpy ranges(&chart, &StatChartView::rangeRequested);

  turnWheel(chart, Qt::NoModifier);
  EXPECT_EQ(ranges.count(), 0) << "left to the parents";
  EXPECT_TRUE(turnWheel(chart, Qt::ControlModifier));
  ASSERT_EQ(ranges.count(), 1);
  EXPECT_NEAR(ranges[0][1].toDouble() - ranges[0][0].toDouble(), 25.0, 0.5);  // 20 % a notch, out
}

}  // namespace
}  // namespace livemon::ui
