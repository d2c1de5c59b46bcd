// The demo's synchronous ranks with a straggler (`livemonctl demo --ranks 32 --straggler 7`'s step
// model, synchronousStep) fed through the dashboard's ingest path: the Ranks view flags rank 7 and
// no other, raises one straggler alert, and the charts show the run as a median over a band, with
// a picked rank as a line of its own.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <QLineEdit>
#include <QRegularExpression>
#include <QTableView>
#include <QTemporaryDir>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/clock.h>
#include <livemon/ui/model/rank_groups.h>
#include <livemon/ui/model/rank_scores_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/chart_legend.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/rank_heatmap.h>
#include <livemon/ui/widgets/ranks_view.h>
#include <livemon/ui/widgets/stat_chart_view.h>
#include <livemonctl/demo_ranks.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr int kRanks = 32;
constexpr int64_t kStraggler = 7;
constexpr double kT0 = 1'700'000'000'000.0;

class RanksViewTest : public ::testing::Test {
 protected:
  RanksViewTest() {
    DashboardOptions options;
    options.exactEndpoints = true;  // no endpoints: only what the test delivers
    options.settingsFile = settingsDir_.filePath(QStringLiteral("livemon.ini"));
    options.clock = &clock_;
    options.ingestClock = &clock_;
    window_ = std::make_unique<MainWindow>(options);
    window_->resize(1400, 900);
    window_->show();
    for (int r = 0; r < kRanks; ++r) sources_.push_back(test::makeSource("train", 1000 + r, r));
  }

  Dashboard& dashboard() { return window_->dashboard(); }

  // One window of every rank: a synchronous step where rank 7 computes twice as long, so every
  // other rank's allreduce waits for it. Ranks close their windows a millisecond apart.
  // `straggling` false: rank 7 computes as the others do.
  void deliverWindow(int w, bool straggling = true) {
    std::vector<double> compute(kRanks);
    for (int r = 0; r < kRanks; ++r) {
      const bool slow = straggling && r == kStraggler;
      compute[static_cast<std::size_t>(r)] = 100.0 * (1.0 + 0.04 * std::sin(r * 1.7 + w)) * (slow ? 2.0 : 1.0);
    }
    const std::vector<livemonctl::RankStepTimes> times = livemonctl::synchronousStep(compute, 5.0);
    std::vector<transport::ReceivedEvent> events;
    for (int r = 0; r < kRanks; ++r) {
      const livemonctl::RankStepTimes& t = times[static_cast<std::size_t>(r)];
      Event event{std::string(kStatEventName), test::atMs(kT0 + w * 1000.0 + r), {}};
      event.data["train.compute_time_ms.mean"] = t.computeMs;
      event.data["train.compute_time_ms.max"] = t.computeMs * 1.1;
      event.data["train.allreduce_time_ms.mean"] = t.allreduceMs;
      event.data["train.step_time_ms.mean"] = t.stepMs;
      // A window of few samples: its p99 is its max.
      event.data["train.step_time_ms.p99"] = t.stepMs * 1.2;
      event.data["train.step_time_ms.max"] = t.stepMs * 1.2;
      events.push_back(test::received(sources_[static_cast<std::size_t>(r)], std::move(event)));
    }
    dashboard().ingest().deliver(events);
    // Applied once the group's median has the window's newest point.
    ASSERT_TRUE(test::waitFor([&] {
      dashboard().refreshNow();
      const SeriesEntry* median = groupLine(QStringLiteral("train.compute_time_ms"), QStringLiteral("mean"), SeriesRole::RankMedian);
      return median != nullptr && median->store.lastX() == kT0 + w * 1000.0 + (kRanks - 1);
    }));
    // A second passes: the ranks are scored.
    clock_.advance(std::chrono::seconds(1));
    dashboard().refreshNow();
  }

  const SeriesEntry* groupLine(const QString& stat, const QString& aggregation, SeriesRole role) const {
    const StatRegistry& registry = window_->dashboard().registry();
    for (SeriesId id = StatRegistry::kFirstDerivedSeries;; ++id) {
      const SeriesEntry* entry = registry.series(id);
      if (entry == nullptr) return nullptr;
      if (entry->stat == stat && entry->aggregation == aggregation && entry->role == role) return entry;
    }
  }

  StatChartView* chartShown(const QString& stat) {
    StatChartView* chart = nullptr;
    test::waitFor([&] {
      window_->chartGrid().refresh();
      chart = window_->chartGrid().chart(stat);
      return chart != nullptr && chart->lineCount() > 0 && chart->render(window_->chartGrid().renderContext(), true);
    });
    return chart;
  }

  ManualClock clock_;
  QTemporaryDir settingsDir_;
  std::unique_ptr<MainWindow> window_;
  std::vector<std::shared_ptr<const transport::SourceInfo>> sources_;
};

// A legend entry as a user reads it: its whole label, the text drawn, its tooltip, its colour and
// where it is (viewport coordinates).
struct ShownEntry {
  QString label;
  QString text;
  QString toolTip;
  QColor colour;
  QRect rect;
};

// The legend entries shown, once the legend has laid itself out.
std::vector<ShownEntry> shownLegend(StatChartView& chart) {
  std::vector<ShownEntry> entries;
  test::waitFor([&] {
    entries.clear();
    const ChartLegend& legend = chart.legend();
    for (std::size_t i = 0; i < legend.entries().size(); ++i) {
      const QRect rect = chart.mapFromScene(chart.chart()->mapRectToScene(legend.entryRect(i))).boundingRect();
      entries.push_back({legend.entries()[i].label, legend.shownText(i), legend.toolTip(i), legend.entries()[i].pen.color(), rect});
    }
    return !entries.empty();
  });
  return entries;
}

QStringList labelsOf(const std::vector<ShownEntry>& entries) {
  QStringList labels;
  for (const ShownEntry& entry : entries) labels << entry.label;
  return labels;
}

double colourDistance(const QColor& a, const QColor& b) {
  return std::hypot(a.red() - b.red(), a.green() - b.green(), a.blue() - b.blue());
}

TEST_F(RanksViewTest, FlagsTheStragglerAndNoOtherRankAndRaisesOneAlert) {
  window_->setView(DashboardView::Ranks);
  RankScoresModel& scores = dashboard().rankScores();
  EXPECT_EQ(scores.key(), QStringLiteral("train.compute_time_ms.mean"));
  for (int w = 0; w < 6; ++w) deliverWindow(w);

  const RankWindow* window = scores.window();
  ASSERT_NE(window, nullptr);
  EXPECT_EQ(window->ranks.size(), static_cast<std::size_t>(kRanks));
  EXPECT_EQ(window->flagged, (std::vector<int64_t>{kStraggler}));
  // The table: worst first, the straggler flagged, no other row.
  QAbstractItemModel* table = window_->ranksView().table().model();
  ASSERT_EQ(table->rowCount(), kRanks);
  EXPECT_EQ(table->index(0, 0).data(RankScoresModel::kRankRole).toLongLong(), kStraggler);
  EXPECT_TRUE(table->index(0, 0).data(RankScoresModel::kFlaggedRole).toBool());
  EXPECT_EQ(table->index(0, RankScoresModel::FlagColumn).data().toString(), QStringLiteral("flagged"));
  EXPECT_LT(table->index(0, RankScoresModel::ScoreColumn).data().toString().toDouble(), 0.6);
  EXPECT_EQ(table->index(0, RankScoresModel::HostColumn).data().toString(), QStringLiteral("host"));
  EXPECT_EQ(table->index(0, RankScoresModel::PidColumn).data().toString(), QStringLiteral("1007"));
  for (int row = 1; row < kRanks; ++row) EXPECT_FALSE(table->index(row, 0).data(RankScoresModel::kFlaggedRole).toBool()) << row;
  // The heatmap: a row per rank, the straggler's highlighted, its row the brightest.
  EXPECT_EQ(scores.heatRanks().size(), static_cast<std::size_t>(kRanks));
  EXPECT_GE(scores.heatColumns().size(), 5U);
  EXPECT_TRUE(scores.isFlagged(kStraggler));
  for (int r = 0; r < kRanks; ++r) {
    if (r != kStraggler) {
      EXPECT_FALSE(scores.isFlagged(r)) << r;
    }
  }
  const RankHeatColumn& last = scores.heatColumns().back();
  EXPECT_EQ(std::max_element(last.values.begin(), last.values.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; })->first,
            kStraggler);
  EXPECT_TRUE(window_->ranksView().summary().contains(QStringLiteral("Flagged (score below 0.8 for 3 windows): 7")))
      << window_->ranksView().summary().toStdString();
  // Rows map to ranks: the heatmap's height split into 32 rows, rank 7 the eighth.
  RankHeatmap& heatmap = window_->ranksView().heatmap();
  ASSERT_TRUE(test::waitFor([&] { return heatmap.isVisible() && heatmap.height() > 100; }));
  bool seven = false;
  for (int y = 0; y < heatmap.height() && !seven; ++y) seven = heatmap.rankAt(QPoint(heatmap.width() / 2, y)) == kStraggler;
  EXPECT_TRUE(seven);

  // One alert, for rank 7, though it stayed flagged for several windows.
  const AlertListModel& alerts = dashboard().alertCentre().alerts();
  ASSERT_EQ(alerts.rowCount(), 1);
  EXPECT_EQ(alerts.entry(0)->kind, QStringLiteral("straggler"));
  EXPECT_EQ(alerts.entry(0)->source, QStringLiteral("train r7"));
  EXPECT_EQ(alerts.entry(0)->key, QStringLiteral("train.compute_time_ms.mean"));
  EXPECT_TRUE(alerts.entry(0)->message.contains(QStringLiteral("Rank 7 of run train is a straggler")));
}

TEST_F(RanksViewTest, ChartsShowTheRunAsAMedianOverABandAndAPickedRankOverIt) {
  window_->setView(DashboardView::Charts);
  for (int w = 0; w < 2; ++w) deliverWindow(w);  // not yet flagged (3 windows), so not drawn unasked
  StatChartView* chart = chartShown(QStringLiteral("train.compute_time_ms"));
  ASSERT_NE(chart, nullptr);
  // mean and max, each a median with its two edges: not 64 lines.
  EXPECT_EQ(chart->lineCount(), 6U);
  const SeriesEntry* median = groupLine(QStringLiteral("train.compute_time_ms"), QStringLiteral("mean"), SeriesRole::RankMedian);
  ASSERT_NE(median, nullptr);
  QAreaSeries* band = chart->rankBand(median->id);
  ASSERT_NE(band, nullptr);
  ASSERT_GT(band->upperSeries()->count(), 0);
  // The band's top is the straggler's compute time, twice the others'; the median is a typical rank's.
  const double top = band->upperSeries()->at(band->upperSeries()->count() - 1).y();
  const double bottom = band->lowerSeries()->at(band->lowerSeries()->count() - 1).y();
  EXPECT_GT(top, 180.0);
  EXPECT_LT(bottom, 100.0);
  const std::optional<double> middle = test::lastY(chart->line(median->id));
  ASSERT_TRUE(middle);
  EXPECT_GT(*middle, 95.0);
  EXPECT_LT(*middle, 105.0);
  // The legend: one entry per aggregation, named by it, and the band's.
  QStringList names = labelsOf(shownLegend(*chart));
  names.sort();
  EXPECT_EQ(names, (QStringList{QStringLiteral("max"), QStringLiteral("mean"), QStringLiteral("min–max over 32 ranks")}));
  // The hover names the ranks at the edges.
  const QRect plot = chart->plotRect();
  const QString tip = chart->tooltipAt(QPoint(plot.right() - 1, plot.center().y()));
  EXPECT_TRUE(tip.contains(QStringLiteral("mean highest rank: r7"))) << tip.toStdString();

  // Picking rank 7 draws its own lines over the band; unpicking takes them off again.
  window_->ranksView().setPickedRanks(QStringLiteral("7"));
  chart = chartShown(QStringLiteral("train.compute_time_ms"));
  EXPECT_EQ(chart->lineCount(), 8U);
  EXPECT_NE(chart->line(QStringLiteral("mean"), 7), nullptr);  // rank 7's source id is 7
  window_->ranksView().toggleRank(kStraggler);
  chart = chartShown(QStringLiteral("train.compute_time_ms"));
  EXPECT_EQ(chart->lineCount(), 6U);
}

TEST_F(RanksViewTest, APickedRankLeavesTheBandsTheirColoursAndGainsAStatThatArrivesLater) {
  window_->setView(DashboardView::Charts);
  for (int w = 0; w < 2; ++w) deliverWindow(w);
  const QString stat = QStringLiteral("train.compute_time_ms");
  StatChartView* chart = chartShown(stat);
  ASSERT_NE(chart, nullptr);
  const SeriesEntry* mean = groupLine(stat, QStringLiteral("mean"), SeriesRole::RankMedian);
  const SeriesEntry* max = groupLine(stat, QStringLiteral("max"), SeriesRole::RankMedian);
  ASSERT_NE(mean, nullptr);
  ASSERT_NE(max, nullptr);
  const QColor meanColour = chart->line(mean->id)->pen().color();
  const QColor maxColour = chart->line(max->id)->pen().color();
  ASSERT_NE(meanColour, maxColour);

  window_->ranksView().setPickedRanks(QStringLiteral("7"));
  chart = chartShown(stat);
  ASSERT_EQ(chart->lineCount(), 8U);
  // The group's lines (and so its bands) keep their aggregations' colours; rank 7's own line
  // takes a colour of its own.
  EXPECT_EQ(chart->line(mean->id)->pen().color(), meanColour);
  EXPECT_EQ(chart->line(max->id)->pen().color(), maxColour);
  ASSERT_NE(chart->line(QStringLiteral("mean"), 7), nullptr);
  EXPECT_NE(chart->line(QStringLiteral("mean"), 7)->pen().color(), meanColour);

  // A Stat the ranks start sending after the pick: rank 7's line is on its chart too.
  std::vector<transport::ReceivedEvent> events;
  for (int r = 0; r < kRanks; ++r) {
    Event event{std::string(kStatEventName), test::atMs(kT0 + 5000.0 + r), {{"train.data_time_ms.mean", 3.0 + r}}};
    events.push_back(test::received(sources_[static_cast<std::size_t>(r)], std::move(event)));
  }
  dashboard().ingest().deliver(events);
  StatChartView* later = nullptr;
  ASSERT_TRUE(test::waitFor([&] {
    dashboard().refreshNow();
    later = chartShown(QStringLiteral("train.data_time_ms"));
    return later != nullptr && later->line(QStringLiteral("mean"), 7) != nullptr;
  }));
  EXPECT_EQ(later->lineCount(), 4U);  // the median, its edges, and rank 7
}

// With a rank picked over its group's band, the legend stays below the plot (which keeps the
// chart's width), every entry whole or its whole text in its tooltip, the band has an entry of its
// own, and the rank's lines do not take the colours of the group's; min and max differ too.
TEST_F(RanksViewTest, ARankedChartsLegendIsBelowThePlotWholeWithTheBandAndDistinctColours) {
  window_->setView(DashboardView::Charts);
  for (int w = 0; w < 2; ++w) deliverWindow(w);
  window_->ranksView().setPickedRanks(QStringLiteral("3"));
  const QString stat = QStringLiteral("train.compute_time_ms");
  StatChartView* chart = chartShown(stat);
  ASSERT_NE(chart, nullptr);
  ASSERT_EQ(chart->lineCount(), 8U);
  const std::vector<ShownEntry> legend = shownLegend(*chart);
  const QRect plot = chart->plotRect();
  for (const ShownEntry& entry : legend) {
    EXPECT_GE(entry.rect.top(), plot.bottom()) << entry.label.toStdString();
    EXPECT_GE(entry.rect.left(), 0) << entry.label.toStdString();
    EXPECT_LE(entry.rect.right(), chart->viewport()->width()) << entry.label.toStdString();
    EXPECT_TRUE(entry.text == entry.label || entry.toolTip == entry.label) << entry.label.toStdString();
  }
  EXPECT_GT(plot.width(), chart->viewport()->width() * 3 / 4);
  const QStringList labels = labelsOf(legend);
  EXPECT_TRUE(labels.contains(QStringLiteral("min–max over 32 ranks"))) << labels.join(QStringLiteral(", ")).toStdString();
  EXPECT_TRUE(labels.contains(QStringLiteral("mean · rank 3"))) << labels.join(QStringLiteral(", ")).toStdString();

  const SeriesEntry* mean = groupLine(stat, QStringLiteral("mean"), SeriesRole::RankMedian);
  const SeriesEntry* max = groupLine(stat, QStringLiteral("max"), SeriesRole::RankMedian);
  ASSERT_NE(mean, nullptr);
  ASSERT_NE(max, nullptr);
  for (const char* aggregation : {"mean", "max"}) {
    QLineSeries* rank = chart->line(QString::fromLatin1(aggregation), 3);  // rank 3's source id is 3
    ASSERT_NE(rank, nullptr) << aggregation;
    for (const SeriesEntry* group : {mean, max}) {
      EXPECT_GT(colourDistance(rank->pen().color(), chart->line(group->id)->pen().color()), 40.0)
          << aggregation << " against the group's " << group->aggregation.toStdString();
    }
  }
  EXPECT_GT(colourDistance(linePen(QStringLiteral("min"), std::nullopt).color(), linePen(QStringLiteral("max"), std::nullopt).color()),
            40.0);
}

// A line drawn nowhere in view (a max that lies on its p99 throughout) is not listed; one the
// user hid stays listed, to be clicked back.
TEST_F(RanksViewTest, ALineDrawnNowhereHasNoLegendEntry) {
  window_->setView(DashboardView::Charts);
  for (int w = 0; w < 3; ++w) deliverWindow(w);
  const QString stat = QStringLiteral("train.step_time_ms");
  StatChartView* chart = chartShown(stat);
  ASSERT_NE(chart, nullptr);
  QStringList labels = labelsOf(shownLegend(*chart));
  EXPECT_TRUE(labels.contains(QStringLiteral("p99"))) << labels.join(QStringLiteral(", ")).toStdString();
  EXPECT_FALSE(std::any_of(labels.begin(), labels.end(), [](const QString& label) { return label.startsWith(QStringLiteral("max")); }))
      << labels.join(QStringLiteral(", ")).toStdString();

  const SeriesEntry* p99 = groupLine(stat, QStringLiteral("p99"), SeriesRole::RankMedian);
  ASSERT_NE(p99, nullptr);
  chart->setSeriesVisible(p99->id, false);
  chart->render(window_->chartGrid().renderContext(), true);
  labels = labelsOf(shownLegend(*chart));
  EXPECT_TRUE(labels.contains(QStringLiteral("p99"))) << labels.join(QStringLiteral(", ")).toStdString();
  EXPECT_TRUE(labels.contains(QStringLiteral("max"))) << labels.join(QStringLiteral(", ")).toStdString();
}

// The rank the scorer flags is drawn on the charts unasked, named as flagged, and its alert says
// what it measured; once no longer flagged its lines leave the charts, unless the user picked it.
TEST_F(RanksViewTest, AFlaggedRankIsDrawnOnTheChartsWhileFlagged) {
  window_->setView(DashboardView::Charts);
  for (int w = 0; w < 6; ++w) deliverWindow(w);
  ASSERT_TRUE(dashboard().rankScores().isFlagged(kStraggler));
  const QString stat = QStringLiteral("train.compute_time_ms");
  StatChartView* chart = chartShown(stat);
  ASSERT_NE(chart, nullptr);
  ASSERT_NE(chart->line(QStringLiteral("mean"), kStraggler), nullptr);  // rank 7's source id is 7
  EXPECT_EQ(chart->lineCount(), 8U);
  const QStringList labels = labelsOf(shownLegend(*chart));
  EXPECT_TRUE(labels.contains(QStringLiteral("mean · rank 7 (flagged)"))) << labels.join(QStringLiteral(", ")).toStdString();

  // The alert: the time rank 7 took against the median, and its score.
  const AlertListModel& alerts = dashboard().alertCentre().alerts();
  ASSERT_EQ(alerts.rowCount(), 1);
  const QString value = alerts.index(0, AlertListModel::ValueColumn).data().toString();
  EXPECT_TRUE(value.startsWith(QStringLiteral("rank 7: train.compute_time_ms mean "))) << value.toStdString();
  EXPECT_TRUE(value.contains(QStringLiteral(" ms, "))) << value.toStdString();
  EXPECT_TRUE(value.contains(QStringLiteral("× the median of 32 ranks"))) << value.toStdString();
  EXPECT_TRUE(value.contains(QRegularExpression(QStringLiteral("\\(score 0\\.\\d\\d\\)$")))) << value.toStdString();
  EXPECT_GT(alerts.entry(0)->value, 150.0);  // the time, not the score

  // Picked as well, it stays when its flag goes, named as picked; unpicked, it leaves.
  window_->ranksView().setPickedRanks(QStringLiteral("7"));
  for (int w = 6; w < 9; ++w) deliverWindow(w, false);
  ASSERT_FALSE(dashboard().rankScores().isFlagged(kStraggler));
  chart = chartShown(stat);
  ASSERT_NE(chart->line(QStringLiteral("mean"), kStraggler), nullptr);
  EXPECT_TRUE(labelsOf(shownLegend(*chart)).contains(QStringLiteral("mean · rank 7")));
  window_->ranksView().setPickedRanks(QString());
  chart = chartShown(stat);
  EXPECT_EQ(chart->line(QStringLiteral("mean"), kStraggler), nullptr);
  EXPECT_EQ(chart->lineCount(), 6U);
}

TEST_F(RanksViewTest, WithGroupingOffEveryRankIsALine) {
  DashboardOptions options;
  options.exactEndpoints = true;
  options.settingsFile = settingsDir_.filePath(QStringLiteral("off.ini"));
  options.groupRanks = false;
  window_ = std::make_unique<MainWindow>(options);
  window_->resize(1400, 900);
  window_->show();
  std::vector<transport::ReceivedEvent> events;
  for (int r = 0; r < 4; ++r) {
    Event event{std::string(kStatEventName), test::atMs(kT0 + r), {{"train.loss.mean", 1.0 + r}}};
    events.push_back(test::received(sources_[static_cast<std::size_t>(r)], std::move(event)));
  }
  dashboard().ingest().deliver(events);
  ASSERT_TRUE(test::waitFor([&] {
    dashboard().refreshNow();
    return dashboard().registry().seriesCount() == 4;
  }));
  StatChartView* chart = chartShown(QStringLiteral("train.loss"));
  ASSERT_NE(chart, nullptr);
  EXPECT_EQ(chart->lineCount(), 4U);
  EXPECT_TRUE(dashboard().rankGroups().groups().empty());
}

}  // namespace
}  // namespace livemon::ui
