// The chart grid as a user meets it: sections in reading order that collapse, charts pinned to
// the top or enlarged to fill the area, the filter's alternatives and its "no chart matches", and
// cards that grow with the window. Offscreen.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <QApplication>
#include <QIcon>
#include <QImage>
#include <QScrollBar>
#include <QStyle>
#include <QTest>
#include <QToolButton>

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
  grid_.setSectionCollapsed(QStringLiteral("range/"), true);
  EXPECT_TRUE(chart("range/forward")->isHidden());
  EXPECT_TRUE(chart("range/backward")->isHidden());
  EXPECT_LT(chart("system.memory_gb")->y(), systemY) << "the charts below move up";
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
  EXPECT_LT(chart("livemon.publisher.dropped")->y(), chart("train.loss")->y());
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
  EXPECT_LT(chart("eval.accuracy")->y(), chart("train.loss")->y());
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
    EXPECT_GE(contrastingPixels(icon, QColor(colours::kPanel)), 12) << "the Enlarge icon is there to see";
    const QImage text = card->grab(pin->geometry()).toImage();
    EXPECT_GE(contrastingPixels(text, QColor(colours::kPanel)), 12) << "so is Pin";
  }
  // Enlarged, the button is checked and its arrows point back in.
  const QImage out = enlarge->icon().pixmap(QSize(32, 32), QIcon::Normal, QIcon::Off).toImage();
  const QImage in = enlarge->icon().pixmap(QSize(32, 32), QIcon::Normal, QIcon::On).toImage();
  EXPECT_GE(contrastingPixels(out, QColor(colours::kPanel)), 20);
  EXPECT_GE(contrastingPixels(in, QColor(colours::kPanel)), 20);
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
