// What a chart's axes say, read as a person reads them: the y labels shown (enough of them, each
// different, in one notation, in the unit the Stat's name gives), the x axis's title, a badge on a
// chart whose scale is not the toolbar's, and a y axis that a few values orders of magnitude
// beyond the rest do not flatten.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QValueAxis>
#include <QtTest/QTest>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_x_axis.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;

constexpr double kStart = 1'700'000'000'000.0;

// The labels an axis shows inside its range, lowest first, whichever kind of axis it is.
QStringList shownLabels(QAbstractAxis* axis) {
  QStringList labels;
  if (auto* category = qobject_cast<QCategoryAxis*>(axis)) {
    for (const QString& label : category->categoriesLabels()) {
      const double at = category->endValue(label);
      if (at >= category->min() && at <= category->max()) labels << label;
    }
  } else if (const auto* log = qobject_cast<const QLogValueAxis*>(axis)) {
    // Qt labels a log axis at the powers of its base only.
    for (double decade = std::ceil(std::log10(log->min())); std::pow(10.0, decade) <= log->max(); decade += 1.0) {
      labels << QString::asprintf(log->labelFormat().toLatin1().constData(), std::pow(10.0, decade));
    }
  } else if (const auto* linear = qobject_cast<const QValueAxis*>(axis)) {
    const double step = linear->tickInterval();
    const double anchor = linear->tickAnchor();
    for (double at = anchor + std::ceil((linear->min() - anchor) / step) * step; at <= linear->max(); at += step) {
      labels << QString::asprintf(linear->labelFormat().toLatin1().constData(), at);
    }
  }
  return labels;
}

// The y axis a reader sees on the left: the one with visible labels.
QAbstractAxis* shownLeftAxis(const StatChartView& chart) {
  for (QAbstractAxis* axis : chart.chart()->axes(Qt::Vertical)) {
    if (axis->isVisible() && axis->labelsVisible() && axis->alignment() == Qt::AlignLeft) return axis;
  }
  return nullptr;
}

// The text items on the chart that are shown, such as a badge or a note.
QStringList shownTexts(const StatChartView& chart) {
  QStringList texts;
  for (const QGraphicsItem* item : chart.chart()->scene()->items()) {
    const auto* text = dynamic_cast<const QGraphicsSimpleTextItem*>(item);
    if (text != nullptr && text->isVisible() && !text->text().isEmpty()) texts << text->text();
  }
  return texts;
}

class ChartAxisLabelsTest : public ::testing::Test {
 protected:
  // `stat`.value over 200 seconds, from `low` to `high` and back along a sine.
  std::vector<SeriesId> feedWave(const std::string& stat, double low, double high) {
    std::vector<SeriesId> ids;
    for (int i = 0; i < 200; ++i) {
      const double value = low + (high - low) * (0.5 + 0.5 * std::sin(i * 0.1));
      const std::vector<SeriesId> added = feed(kStart + 1000.0 * i, {{stat + ".value", value}});
      ids.insert(ids.end(), added.begin(), added.end());
    }
    return ids;
  }

  std::vector<SeriesId> feed(double ms, std::unordered_map<std::string, DataValue> data) {
    IngestBatch batch;
    auto event = received(source_, Event{"livemon.Stat", atMs(ms), std::move(data)});
    converter_.convert(event, batch);
    return registry_.apply(batch).newSeries;
  }

  // A chart of the usual size in the grid.
  StatChartView& showChart(const QString& stat, const std::vector<SeriesId>& ids,
                           TimeAxisMode mode = TimeAxisMode::SinceRunStart) {
    chart_ = std::make_unique<StatChartView>(stat, registry_, mode);
    chart_->setViewOptions(&options_);
    for (SeriesId id : ids) chart_->addSeries(id);
    chart_->resize(480, 280);
    chart_->show();
    EXPECT_TRUE(QTest::qWaitForWindowExposed(chart_.get()));
    return *chart_;
  }

  ChartRenderContext context(double min, double max, TimeAxisMode mode = TimeAxisMode::SinceRunStart) const {
    ChartRenderContext result;
    result.mode = mode;
    result.x = XRange{mode == TimeAxisMode::WallClock ? kStart + 1000.0 * min : min,
                      mode == TimeAxisMode::WallClock ? kStart + 1000.0 * max : max};
    return result;
  }

  // At least four labels, all different, in one notation (all scientific or none), none with an
  // exponent sign ("1e+09").
  static void expectReadable(const QStringList& labels, const std::string& what) {
    EXPECT_GE(labels.size(), 4) << what << ": " << labels.join(QStringLiteral(" | ")).toStdString();
    const std::set<QString> unique(labels.begin(), labels.end());
    EXPECT_EQ(unique.size(), static_cast<std::size_t>(labels.size()))
        << what << ": " << labels.join(QStringLiteral(" | ")).toStdString();
    int scientific = 0;
    for (const QString& label : labels) {
      EXPECT_FALSE(label.contains(QLatin1String("e+"))) << what << ": " << label.toStdString();
      EXPECT_LE(label.size(), 9) << what << ": " << label.toStdString();
      scientific += label.contains(QLatin1Char('e')) ? 1 : 0;
    }
    EXPECT_TRUE(scientific == 0 || scientific == labels.size() || (scientific == labels.size() - 1 && labels.contains(QStringLiteral("0"))))
        << what << ": mixed notations " << labels.join(QStringLiteral(" | ")).toStdString();
  }

  EventConverter converter_;
  StatRegistry registry_;
  ChartViewOptions options_;
  std::unique_ptr<StatChartView> chart_;
  const std::shared_ptr<const transport::SourceInfo> source_ = makeSource("train", 100, std::nullopt, kStart);
};

TEST_F(ChartAxisLabelsTest, ALogAxisUnderADecadeStillShowsFourLabels) {
  options_.setSmoothing(0.0);
  options_.setLogScaleAll(true);
  const std::vector<SeriesId> ids = feedWave("train.loss", 0.5, 1.5);
  StatChartView& chart = showChart(QStringLiteral("train.loss"), ids);
  chart.render(context(0.0, 200.0));
  ASSERT_TRUE(chart.isLogScale());
  QAbstractAxis* axis = shownLeftAxis(chart);
  ASSERT_NE(axis, nullptr);
  expectReadable(shownLabels(axis), "log 0.5-1.5");

  // Over decades: the powers of ten, and 2 and 5 between them where there is room.
  const std::vector<SeriesId> wide = feedWave("train.grad_norm", 0.02, 40.0);
  StatChartView& decades = showChart(QStringLiteral("train.grad_norm"), wide);
  decades.render(context(0.0, 200.0));
  const QStringList labels = shownLabels(shownLeftAxis(decades));
  expectReadable(labels, "log 0.02-40");
  EXPECT_TRUE(labels.contains(QStringLiteral("1")) && labels.contains(QStringLiteral("10")))
      << labels.join(QStringLiteral(" | ")).toStdString();
}

TEST_F(ChartAxisLabelsTest, LinearAxesShowFourDifferentLabelsInOneNotation) {
  options_.setSmoothing(0.0);
  struct Case {
    std::string stat;
    double low;
    double high;
  };
  for (const Case& c : {Case{"train.samples_per_s", 650.0, 750.0}, Case{"train.lr", 0.000293, 0.000295},
                        Case{"train.lr_warmup", 0.0, 0.0001}, Case{"train.loss", 0.2, 2.4},
                        Case{"train.tokens", 0.0, 3.2e9}}) {
    const std::vector<SeriesId> ids = feedWave(c.stat, c.low, c.high);
    StatChartView& chart = showChart(QString::fromStdString(c.stat), ids);
    chart.render(context(0.0, 200.0));
    QAbstractAxis* axis = shownLeftAxis(chart);
    ASSERT_NE(axis, nullptr) << c.stat;
    expectReadable(shownLabels(axis), c.stat);
  }
}

TEST_F(ChartAxisLabelsTest, BytesAreLabelledInBinaryUnits) {
  options_.setSmoothing(0.0);
  const std::vector<SeriesId> ids = feedWave("system.rss_bytes", 0.0, 1.75e7);
  StatChartView& chart = showChart(QStringLiteral("system.rss_bytes"), ids);
  chart.render(context(0.0, 200.0));
  QAbstractAxis* axis = shownLeftAxis(chart);
  ASSERT_NE(axis, nullptr);
  expectReadable(shownLabels(axis), "rss_bytes");
  EXPECT_EQ(axis->titleText(), QStringLiteral("MiB"));
  EXPECT_TRUE(axis->isTitleVisible());
}

TEST_F(ChartAxisLabelsTest, TheXAxisSaysWhatItCounts) {
  const std::vector<SeriesId> ids = feedWave("train.loss", 1.0, 2.0);
  for (const auto& [mode, title] : {std::pair{TimeAxisMode::WallClock, QStringLiteral("time")},
                                    std::pair{TimeAxisMode::SinceRunStart, QStringLiteral("time since start")}}) {
    StatChartView& chart = showChart(QStringLiteral("train.loss"), ids, mode);
    chart.render(context(0.0, 200.0, mode));
    const QList<QAbstractAxis*> x = chart.chart()->axes(Qt::Horizontal);
    ASSERT_EQ(x.size(), 1);
    EXPECT_EQ(x.front()->titleText(), title);
    EXPECT_TRUE(x.front()->isTitleVisible());
  }
}

TEST_F(ChartAxisLabelsTest, ABadgeSaysWhenAChartsScaleIsNotTheToolbars) {
  const std::vector<SeriesId> ids = feedWave("train.loss", 1.0, 2.0);
  StatChartView& chart = showChart(QStringLiteral("train.loss"), ids);
  chart.render(context(0.0, 200.0));
  EXPECT_FALSE(shownTexts(chart).contains(QStringLiteral("log")));

  // As settings restore it: this chart on a log scale, the toolbar's box unchecked.
  ChartViewState state;
  state.logScale[QStringLiteral("train.loss")] = true;
  options_.restore(state);
  chart.render(context(0.0, 200.0));
  ASSERT_TRUE(chart.isLogScale());
  EXPECT_TRUE(shownTexts(chart).contains(QStringLiteral("log"))) << shownTexts(chart).join(QStringLiteral(" | ")).toStdString();

  // The toolbar's box checked: every chart is on a log scale, this one like the rest.
  options_.setLogScaleAll(true);
  chart.render(context(0.0, 200.0));
  ASSERT_TRUE(chart.isLogScale());
  EXPECT_FALSE(shownTexts(chart).contains(QStringLiteral("log")));
  EXPECT_FALSE(shownTexts(chart).contains(QStringLiteral("linear")));

  // This chart alone back to linear: it says so.
  options_.setLogScale(QStringLiteral("train.loss"), false);
  chart.render(context(0.0, 200.0));
  ASSERT_FALSE(chart.isLogScale());
  EXPECT_TRUE(shownTexts(chart).contains(QStringLiteral("linear")));
}

TEST_F(ChartAxisLabelsTest, AFewValuesOrdersOfMagnitudeBeyondTheRestDoNotFlattenIt) {
  options_.setSmoothing(0.0);
  std::vector<SeriesId> ids = feed(kStart, {{"train.loss.value", 2.3}});
  for (int i = 1; i < 400; ++i) feed(kStart + 1000.0 * i, {{"train.loss.value", 2.3 - 1.8 * i / 400.0}});
  for (int i = 400; i < 404; ++i) feed(kStart + 1000.0 * i, {{"train.loss.value", std::pow(10.0, i - 396)}});
  StatChartView& chart = showChart(QStringLiteral("train.loss"), ids);
  chart.render(context(0.0, 410.0));
  // The body, 0.5 to 2.3, fills the axis; the diverged values are off its top, and a note says so.
  EXPECT_LT(chart.yRange().max, 5.0);
  EXPECT_LT(chart.yRange().min, 0.6);
  const QStringList texts = shownTexts(chart);
  EXPECT_TRUE(std::any_of(texts.begin(), texts.end(), [](const QString& text) { return text.contains(QStringLiteral("above")); }))
      << texts.join(QStringLiteral(" | ")).toStdString();

  // Without them, the axis fits everything as before and says nothing.
  chart.render(context(0.0, 399.0));
  EXPECT_GE(chart.yRange().max, 2.3);
  const QStringList plain = shownTexts(chart);
  EXPECT_TRUE(std::none_of(plain.begin(), plain.end(), [](const QString& text) { return text.contains(QStringLiteral("above")); }))
      << plain.join(QStringLiteral(" | ")).toStdString();
}

}  // namespace
}  // namespace livemon::ui

namespace livemon::ui {
namespace {

// A wall-clock label is centred on its tick: one a few pixels from the plot's edge would be cut
// there ("21:11:" at the right), so such a tick goes unlabelled and the others keep theirs.
TEST(ChartXAxisLabels, NoWallClockLabelStandsWhereTheEdgeWouldCutIt) {
  std::unique_ptr<QAbstractAxis> axis(makeTimeAxis(TimeAxisMode::WallClock));
  auto* wall = qobject_cast<QCategoryAxis*>(axis.get());
  ASSERT_NE(wall, nullptr);
  // 300 s over 900 px: a tick every 30 s, 90 px apart; the range ends 1 s (3 px) after one.
  const double lastTick = 1'700'000'100'000.0;  // a multiple of 30 s, in every time zone
  const XRange x{lastTick - 299e3, lastTick + 1e3};
  setTimeAxisRange(axis.get(), x, 900.0);
  const QStringList labels = shownLabels(axis.get());
  ASSERT_GE(labels.size(), 8) << labels.join(' ').toStdString();
  for (const QString& label : wall->categoriesLabels()) {
    const double at = wall->endValue(label);
    EXPECT_GT((x.max - at) / (x.max - x.min) * 900.0, 20.0) << label.toStdString() << " is cut at the right edge";
    EXPECT_GT((at - x.min) / (x.max - x.min) * 900.0, 20.0) << label.toStdString() << " is cut at the left edge";
  }
}

// A chart of a run's steps in a card of the grid: 963 steps over some 400 px. The step and
// run-time axes label at least three ticks there, as the y axes do, rather than the one "500"
// that a tick per 110 px rounded up to 500 steps left.
TEST(ChartXAxisLabels, AStepAxisInACardLabelsAtLeastThreeTicks) {
  for (const TimeAxisMode mode : {TimeAxisMode::Step, TimeAxisMode::SinceRunStart}) {
    std::unique_ptr<QAbstractAxis> axis(makeTimeAxis(mode));
    auto* values = qobject_cast<QValueAxis*>(axis.get());
    ASSERT_NE(values, nullptr);
    const XRange x{1.0, 963.0};
    setTimeAxisRange(axis.get(), x, 400.0);
    const double interval = values->tickInterval();
    const double first = std::ceil((x.min - values->tickAnchor()) / interval) * interval + values->tickAnchor();
    int ticks = 0;
    for (double at = first; at <= x.max; at += interval) ++ticks;
    EXPECT_GE(ticks, 3) << "every " << interval;
    EXPECT_LE(ticks, 8) << "every " << interval << ": labels of 4 digits would run together";
  }
}

}  // namespace
}  // namespace livemon::ui
