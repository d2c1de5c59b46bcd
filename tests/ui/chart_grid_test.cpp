// The chart grid as a user meets it: sections in reading order that collapse, charts pinned to
// the top or enlarged to fill the area, the filter's alternatives and its "no chart matches", and
// cards that grow with the window. Offscreen.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <QApplication>
#include <QIcon>
#include <QImage>
#include <QScrollBar>
#include <QStyle>
#include <QTest>
#include <QToolButton>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;
using test::waitFor;

class ChartGridLayoutTest : public ::testing::Test {
 protected:
  // Feeds one event through the real converter into the registry and the grid, and makes the
  // charts.
  void feed(const std::string& name, std::unordered_map<std::string, DataValue> data) {
    IngestBatch batch;
    auto event = received(source_, Event{name, atMs(1'700'000'001'000.0), std::move(data)});
    converter_.convert(event, batch);
    grid_.addSeries(registry_.apply(batch).newSeries);
    while (grid_.pendingChartCount() > 0) grid_.refresh();
  }

  // The demo job's charts: Stats of train, system, ranges and livemon's own, and an eval event.
  void feedDemo() {
    feed("livemon.Stat", {{"range/forward.mean", 1.0}, {"range/backward.mean", 2.0}, {"livemon.publisher.dropped.value", 0.0},
                          {"system.memory_gb.value", 3.0}, {"train.grad_norm.mean", 1.0}, {"train.lr.value", 0.1},
                          {"train.samples_per_s.mean", 900.0}, {"train.step_time_ms.mean", 20.0}, {"train.loss.mean", 2.0},
                          {"train.loss.min", 1.0}, {"train.loss.max", 3.0}});
    feed("eval", {{"accuracy", 0.5}, {"loss", 1.5}, {"step", int64_t{100}}});
  }

  void show(int width, int height) {
    grid_.resize(width, height);
    grid_.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&grid_));
  }

  StatChartView* chart(const char* name) const { return grid_.chart(QString::fromLatin1(name)); }
  // Whether chart `a` comes before chart `b` as a page is read: a row higher, or left in the same row.
  bool readsBefore(const char* a, const char* b) const {
    return std::pair(chart(a)->y(), chart(a)->x()) < std::pair(chart(b)->y(), chart(b)->x());
  }

  QStringList shownCharts() const {
    QStringList names;
    for (StatChartView* chart : grid_.charts()) {
      if (!chart->isHidden()) names << chart->statName();
    }
    return names;
  }

  EventConverter converter_;
  StatRegistry registry_;
  ChartGrid grid_{registry_};
  const std::shared_ptr<const transport::SourceInfo> source_ = makeSource("train", 100);
};

TEST_F(ChartGridLayoutTest, TrainingChartsComeFirstInSectionsAndEvalEventsHaveChartsOfTheirOwn) {
  show(1000, 900);
  feedDemo();
  QStringList names;
  for (StatChartView* chart : grid_.charts()) names << chart->statName();
  EXPECT_EQ(names, (QStringList{QStringLiteral("train.loss"), QStringLiteral("train.step_time_ms"),
                                QStringLiteral("train.samples_per_s"), QStringLiteral("train.lr"),
                                QStringLiteral("train.grad_norm"), QStringLiteral("eval.loss"), QStringLiteral("eval.accuracy"),
                                QStringLiteral("range/backward"), QStringLiteral("range/forward"),
                                QStringLiteral("system.memory_gb"), QStringLiteral("livemon.publisher.dropped")}));
  std::vector<QString> sections;
  for (const ChartSection& section : grid_.arrangement().sections) sections.push_back(section.title);
  EXPECT_EQ(sections, (std::vector<QString>{QStringLiteral("train"), QStringLiteral("eval"), QStringLiteral("range/"),
                                            QStringLiteral("system"), QStringLiteral("livemon")}));
  // Loss, step time and throughput are on the first screen, side by side or one row down.
  for (const char* first : {"train.loss", "train.step_time_ms", "train.samples_per_s"}) {
    EXPECT_LT(chart(first)->geometry().bottom(), 900) << first;
  }
  EXPECT_EQ(chart("train.loss")->y(), chart("train.step_time_ms")->y()) << "two columns at 1000 px";
  EXPECT_LT(chart("train.loss")->y(), chart("eval.accuracy")->y());
}

TEST_F(ChartGridLayoutTest, ASectionCollapsesToItsHeaderAndOpensAgain) {
  show(1000, 900);
  feedDemo();
  const int systemY = chart("system.memory_gb")->y();
  const int livemonY = chart("livemon.publisher.dropped")->y();
  grid_.setSectionCollapsed(QStringLiteral("range/"), true);
  EXPECT_TRUE(chart("range/forward")->isHidden());
  EXPECT_TRUE(chart("range/backward")->isHidden());
  // (Sections flow on from one another, so the chart after a collapsed section may be a row
  // further down, its header on a row of its own: the charts at the end move up.)
  EXPECT_LT(chart("livemon.publisher.dropped")->y(), livemonY) << "the charts below move up";
  // Its header stays, and clicking it opens the section.
  QToolButton* header = nullptr;
  for (QToolButton* button : grid_.widget()->findChildren<QToolButton*>(Qt::FindDirectChildrenOnly)) {
    if (button->text().startsWith(QLatin1String("range/"))) header = button;
  }
  ASSERT_NE(header, nullptr);
  EXPECT_FALSE(header->isHidden());
  EXPECT_EQ(header->text(), QStringLiteral("range/  (2)"));
  header->click();
  EXPECT_FALSE(grid_.isSectionCollapsed(QStringLiteral("range/")));
  EXPECT_FALSE(chart("range/forward")->isHidden());
  EXPECT_EQ(chart("system.memory_gb")->y(), systemY);
}

TEST_F(ChartGridLayoutTest, APinnedChartLeadsTheGridAndItsButtonUnpinsIt) {
  show(1000, 900);
  feedDemo();
  grid_.setPinned(QStringLiteral("livemon.publisher.dropped"), true);
  EXPECT_EQ(grid_.arrangement().sections.front().name, kPinnedSection);
  EXPECT_TRUE(readsBefore("livemon.publisher.dropped", "train.loss"));
  // The card's own button says so, and unpins.
  auto* pin = chart("livemon.publisher.dropped")->findChild<QToolButton*>(QStringLiteral("pinChart"));
  ASSERT_NE(pin, nullptr);
  EXPECT_TRUE(pin->isChecked());
  pin->click();
  EXPECT_FALSE(grid_.isPinned(QStringLiteral("livemon.publisher.dropped")));
  EXPECT_GT(chart("livemon.publisher.dropped")->y(), chart("system.memory_gb")->y());
  auto* pinLoss = chart("eval.accuracy")->findChild<QToolButton*>(QStringLiteral("pinChart"));
  ASSERT_NE(pinLoss, nullptr);
  pinLoss->click();
  EXPECT_TRUE(grid_.isPinned(QStringLiteral("eval.accuracy")));
  EXPECT_TRUE(readsBefore("eval.accuracy", "train.loss"));
}

TEST_F(ChartGridLayoutTest, AnEnlargedChartFillsTheAreaAndEscapeReturnsToTheGrid) {
  show(1000, 800);
  feedDemo();
  const QSize card = chart("train.grad_norm")->size();
  auto* enlarge = chart("train.grad_norm")->findChild<QToolButton*>(QStringLiteral("enlargeChart"));
  ASSERT_NE(enlarge, nullptr);
  enlarge->click();
  ASSERT_EQ(grid_.enlarged(), QStringLiteral("train.grad_norm"));
  EXPECT_EQ(shownCharts(), QStringList{QStringLiteral("train.grad_norm")});
  StatChartView* big = chart("train.grad_norm");
  EXPECT_GT(big->width(), card.width());
  EXPECT_GT(big->height(), grid_.viewport()->height() - 20);
  EXPECT_LE(big->geometry().bottom(), grid_.viewport()->height());
  EXPECT_FALSE(grid_.verticalScrollBar()->isVisible()) << "nothing to scroll to";

  // It follows the window.
  grid_.resize(1200, 600);
  ASSERT_TRUE(waitFor([&] { return big->height() < 600 && big->width() > 1100; }));

  QTest::keyClick(&grid_, Qt::Key_Escape);
  EXPECT_FALSE(grid_.enlarged());
  EXPECT_EQ(shownCharts().size(), grid_.charts().size());
}

// Pixels of `image` far from `background` in brightness: what a reader can make out.
int contrastingPixels(const QImage& image, QColor background) {
  int count = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      count += std::abs(qGray(image.pixel(x, y)) - qGray(background.rgb())) > 100 ? 1 : 0;
    }
  }
  return count;
}

// Puts the application's palette back however the test ends.
class PaletteGuard {
 public:
  PaletteGuard() : saved_(QApplication::palette()) {}
  ~PaletteGuard() { QApplication::setPalette(saved_); }

 private:
  QPalette saved_;
};

TEST_F(ChartGridLayoutTest, TheCardsButtonsShowOnTheCardInTheDarkAndTheLightPalette) {
  const PaletteGuard guard;
  show(1000, 800);
  feedDemo();
  StatChartView* card = chart("train.loss");
  auto* enlarge = card->findChild<QToolButton*>(QStringLiteral("enlargeChart"));
  auto* pin = card->findChild<QToolButton*>(QStringLiteral("pinChart"));
  ASSERT_NE(enlarge, nullptr);
  ASSERT_NE(pin, nullptr);
  const QPalette light = QApplication::style()->standardPalette();
  ASSERT_GT(qGray(light.color(QPalette::Window).rgb()), 128) << "the style's own palette is a light one";
  for (const QPalette& palette : {dashboardPalette(), light}) {
    QApplication::setPalette(palette);
    // The card stays dark in either: the buttons must stand out from it, not from the palette.
    const QImage icon = card->grab(enlarge->geometry()).toImage();
    EXPECT_GE(contrastingPixels(icon, QColor(colours::panel())), 12) << "the Enlarge icon is there to see";
    const QImage text = card->grab(pin->geometry()).toImage();
    EXPECT_GE(contrastingPixels(text, QColor(colours::panel())), 12) << "so is Pin";
  }
  // Enlarged, the button is checked and its arrows point back in.
  const QImage out = enlarge->icon().pixmap(QSize(32, 32), QIcon::Normal, QIcon::Off).toImage();
  const QImage in = enlarge->icon().pixmap(QSize(32, 32), QIcon::Normal, QIcon::On).toImage();
  EXPECT_GE(contrastingPixels(out, QColor(colours::panel())), 20);
  EXPECT_GE(contrastingPixels(in, QColor(colours::panel())), 20);
  EXPECT_NE(out, in);
}

TEST_F(ChartGridLayoutTest, TheFilterTakesAlternativesGivesALoneChartTheRoomAndSaysWhenNothingMatches) {
  show(1000, 800);
  feedDemo();
  grid_.setNameFilter(QStringLiteral("accuracy|step_time"));
  EXPECT_EQ(shownCharts(), (QStringList{QStringLiteral("train.step_time_ms"), QStringLiteral("eval.accuracy")}));
  EXPECT_TRUE(grid_.placeholderText().isEmpty());

  grid_.setNameFilter(QStringLiteral("accuracy"));
  EXPECT_EQ(shownCharts(), QStringList{QStringLiteral("eval.accuracy")});
  EXPECT_GT(chart("eval.accuracy")->width(), 900);
  EXPECT_GT(chart("eval.accuracy")->height(), grid_.viewport()->height() - 20);

  grid_.setNameFilter(QStringLiteral("nosuch|neither"));
  EXPECT_TRUE(shownCharts().isEmpty());
  EXPECT_TRUE(grid_.placeholderText().contains(QStringLiteral("No chart matches “nosuch|neither”"))) << grid_.placeholderText().toStdString();

  grid_.setNameFilter(QString());
  EXPECT_EQ(shownCharts().size(), grid_.charts().size());
  EXPECT_TRUE(grid_.placeholderText().isEmpty());
}

TEST_F(ChartGridLayoutTest, CardsGrowWithTheWindowAndMoreColumnsFitAWiderOne) {
  show(900, 700);
  feedDemo();
  const QSize narrow = chart("train.loss")->size();
  grid_.resize(1300, 700);
  ASSERT_TRUE(waitFor([&] { return chart("train.loss")->width() != narrow.width(); }));
  // Three columns now, each wider than the 400 px minimum, and the cards keep their shape.
  EXPECT_EQ(chart("train.loss")->y(), chart("train.samples_per_s")->y());
  EXPECT_GT(chart("train.loss")->width(), 400);
  grid_.resize(1900, 1000);
  ASSERT_TRUE(waitFor([&] { return chart("train.loss")->width() > 420; }));
  EXPECT_GT(chart("train.loss")->height(), narrow.height());
}

}  // namespace
}  // namespace livemon::ui

namespace livemon::ui {
namespace {

// Chart heights follow their width; a scroll bar that came and went with the content's height
// changed the width and so the height again, which at some window sizes recursed until the stack
// overflowed. In the grid the scroll bar stays, so a chart keeps its width when more charts come.
TEST_F(ChartGridLayoutTest, ChartsKeepTheirWidthWhenTheGridGrowsTallerThanTheWindow) {
  show(900, 700);
  feed("livemon.Stat", {{"train.loss.mean", 1.0}});
  QCoreApplication::processEvents();
  EXPECT_TRUE(grid_.verticalScrollBar()->isVisible()) << "there before the grid needs it";
  const int alone = chart("train.loss")->width();
  for (int i = 0; i < 16; ++i) feed("livemon.Stat", {{"train.extra" + std::to_string(i) + ".mean", 1.0}});
  EXPECT_GT(grid_.widget()->height(), grid_.viewport()->height()) << "the grid is taller than the window now";
  EXPECT_EQ(chart("train.loss")->width(), alone);
  for (int width = 600; width <= 1700; width += 7) {
    grid_.resize(width, 700);
    QCoreApplication::processEvents();
  }
  EXPECT_TRUE(grid_.verticalScrollBar()->isVisible());
}

}  // namespace
}  // namespace livemon::ui

namespace livemon::ui {
namespace {

// Issue 30: a section of one chart left half a row empty; sections now flow on, each labelled
// above its first chart.
TEST_F(ChartGridLayoutTest, SectionsFlowOnSoASectionOfOneChartLeavesNoHalfRowEmpty) {
  show(1000, 900);  // two columns
  feed("livemon.Stat", {{"train.loss.mean", 1.0}, {"system.memory_gb.value", 3.0}});
  feed("eval", {{"accuracy", 0.5}});
  ASSERT_EQ(grid_.arrangement().sections.size(), 3U);
  EXPECT_EQ(chart("train.loss")->y(), chart("eval.accuracy")->y()) << "eval's one chart beside train's";
  EXPECT_LT(chart("train.loss")->x(), chart("eval.accuracy")->x());
  EXPECT_EQ(chart("system.memory_gb")->x(), chart("train.loss")->x()) << "the next row starts at the left";
  // Each section's label stands above its first chart, no wider than the charts it heads there.
  for (const char* name : {"eval", "train", "system"}) {
    QToolButton* header = nullptr;
    for (QToolButton* button : grid_.widget()->findChildren<QToolButton*>(Qt::FindDirectChildrenOnly)) {
      if (button->text().startsWith(QLatin1String(name))) header = button;
    }
    ASSERT_NE(header, nullptr) << name;
    const StatChartView* first = grid_.chart(grid_.arrangement().sections[name == std::string("train") ? 0
                                                                             : name == std::string("eval") ? 1 : 2]
                                                 .shown.front());
    EXPECT_EQ(header->x(), first->x()) << name;
    EXPECT_LE(header->width(), first->width()) << name;
    EXPECT_LT(header->geometry().bottom(), first->y()) << name;
  }
}

// Issue 30: a long title ran under the Pin button.
TEST_F(ChartGridLayoutTest, ALongTitleIsElidedBeforeThePinButtonAndShownWholeInTheTooltip) {
  show(1000, 900);
  const std::string name = "train.a_rather_long_metric_name_that_a_real_job_might_well_use_for_its_gradient_norm_by_layer";
  feed("livemon.Stat", {{name + ".mean", 1.0}, {"train.loss.mean", 1.0}});
  StatChartView* view = grid_.chart(QString::fromStdString(name));
  ASSERT_NE(view, nullptr);
  auto* pin = view->findChild<QToolButton*>(QStringLiteral("pinChart"));
  ASSERT_NE(pin, nullptr);
  const QString title = view->chart()->title();
  EXPECT_NE(title, QString::fromStdString(name));
  EXPECT_TRUE(title.contains(QChar(0x2026))) << title.toStdString();
  const int titleWidth = QFontMetrics(view->chart()->titleFont()).horizontalAdvance(title);
  EXPECT_LE(view->width() / 2 + titleWidth / 2, pin->x()) << "the centred title ends left of Pin";
  EXPECT_EQ(view->chart()->toolTip(), QString::fromStdString(name));
  // A short title is left whole, with no tooltip of its own.
  EXPECT_EQ(chart("train.loss")->chart()->title(), QStringLiteral("train.loss"));
  EXPECT_TRUE(chart("train.loss")->chart()->toolTip().isEmpty());
}

// Issue 30: an eval event gives one point per eval; smoothing them drew a curve nobody measured,
// and without markers a few points read as a line.
TEST_F(ChartGridLayoutTest, EventSeriesAreDrawnWithPointMarkersAndNotSmoothed) {
  show(1000, 900);
  grid_.viewOptions().setSmoothing(0.6);
  for (int i = 0; i < 4; ++i) {
    IngestBatch batch;
    auto evalEvent = received(source_, Event{"eval", atMs(1'700'000'001'000.0 + i * 1000.0), {{"loss", 2.0 - 0.3 * i}}});
    converter_.convert(evalEvent, batch);
    auto statEvent = received(source_, Event{"livemon.Stat", atMs(1'700'000'001'000.0 + i * 1000.0),
                                             {{"train.loss.mean", 2.0 + (i % 2)}}});
    converter_.convert(statEvent, batch);
    grid_.addSeries(registry_.apply(batch).newSeries);
    while (grid_.pendingChartCount() > 0) grid_.refresh();
  }
  grid_.refresh();
  StatChartView* eval = chart("eval.loss");
  StatChartView* train = chart("train.loss");
  ASSERT_NE(eval, nullptr);
  ASSERT_NE(train, nullptr);
  ASSERT_TRUE(waitFor([&] {
    grid_.refresh();
    return eval->line(eval->seriesIds().front())->count() == 4 && train->line(train->seriesIds().front())->count() == 4;
  }));
  EXPECT_TRUE(eval->isEventChart());
  EXPECT_FALSE(train->isEventChart());
  const SeriesId evalLine = eval->seriesIds().front();
  EXPECT_TRUE(eval->line(evalLine)->pointsVisible());
  EXPECT_EQ(eval->smoothedLine(evalLine)->count(), 0) << "not smoothed";
  EXPECT_EQ(eval->line(evalLine)->pen().color().alpha(), 255) << "drawn in full, not faint behind a smoothed line";
  // A Stat's windows are still smoothed, and drawn without markers.
  const SeriesId trainLine = train->seriesIds().front();
  EXPECT_FALSE(train->line(trainLine)->pointsVisible());
  EXPECT_GT(train->smoothedLine(trainLine)->count(), 0);
}

// A line of one point draws nothing: a range called once, or the first window of a Stat, showed
// an empty chart. A lone point is drawn as a marker, until its line has a second point.
TEST_F(ChartGridLayoutTest, ALonePointIsDrawnAsAMarkerUntilItsLineHasTwo) {
  show(1000, 900);
  grid_.viewOptions().setSmoothing(0.0);
  const auto window = [&](int i) {
    IngestBatch batch;
    auto event = received(source_, Event{"livemon.Stat", atMs(1'700'000'001'000.0 + i * 1000.0), {{"range/checkpoint.mean", 500.0 + i}}});
    converter_.convert(event, batch);
    grid_.addSeries(registry_.apply(batch).newSeries);
    while (grid_.pendingChartCount() > 0) grid_.refresh();
  };
  window(0);
  StatChartView* lone = chart("range/checkpoint");
  ASSERT_NE(lone, nullptr);
  const SeriesId id = lone->seriesIds().front();
  ASSERT_TRUE(waitFor([&] {
    grid_.refresh();
    return lone->line(id)->count() == 1;
  }));
  EXPECT_TRUE(lone->line(id)->pointsVisible());
  window(1);
  ASSERT_TRUE(waitFor([&] {
    grid_.refresh();
    return lone->line(id)->count() == 2;
  }));
  EXPECT_FALSE(lone->line(id)->pointsVisible()) << "a line of windows is drawn as a line";
}

// Issue 30: a range's count and p99 spikes flattened its mean: its chart starts with the mean
// and p50, the others a click away in the legend.
TEST_F(ChartGridLayoutTest, ARangeChartStartsWithItsMeanAndP50) {
  show(1000, 900);
  feed("livemon.Stat", {{"range/forward.count", 150.0}, {"range/forward.mean", 2.0}, {"range/forward.p50", 1.9},
                        {"range/forward.p99", 40.0}, {"range/forward.max", 90.0}, {"train.loss.max", 3.0},
                        {"train.loss.mean", 2.0}});
  grid_.refresh();
  StatChartView* range = chart("range/forward");
  ASSERT_NE(range, nullptr);
  ASSERT_EQ(range->seriesIds().size(), 5U);
  for (SeriesId id : range->seriesIds()) {
    const QString aggregation = registry_.series(id)->aggregation;
    const bool shown = aggregation == QLatin1String("mean") || aggregation == QLatin1String("p50");
    EXPECT_EQ(range->isSeriesVisible(id), shown) << aggregation.toStdString();
  }
  // The hidden count takes no axis of its own until it is shown.
  EXPECT_FALSE(range->yAxes().hasCountAxis());
  for (SeriesId id : range->seriesIds()) {
    if (registry_.series(id)->aggregation == QLatin1String("count")) range->setSeriesVisible(id, true);
  }
  grid_.refresh();
  EXPECT_TRUE(range->yAxes().hasCountAxis());
  // Other charts show every line.
  for (SeriesId id : chart("train.loss")->seriesIds()) EXPECT_TRUE(chart("train.loss")->isSeriesVisible(id));
}

}  // namespace
}  // namespace livemon::ui
