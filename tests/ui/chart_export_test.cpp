// Saving a chart from its context menu: PNG and SVG pictures and CSV data that read back, a
// failure reported, and the menu's log scale and follow-live entries.
#include <gtest/gtest.h>

#include <memory>

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QImage>
#include <QMenu>
#include <QSignalSpy>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_export.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr double kStart = 1'700'000'000'000.0;

class ChartExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    std::vector<SeriesId> ids;
    for (int i = 0; i < 10; ++i) {
      IngestBatch batch;
      auto event = test::received(source_, Event{"livemon.Stat", test::atMs(kStart + 1000.0 * i),
                                                 {{"train.loss.mean", 1.0 / (i + 1)}, {"train.loss.max", 2.0}}});
      converter_.convert(event, batch);
      const auto added = registry_.apply(batch).newSeries;
      ids.insert(ids.end(), added.begin(), added.end());
    }
    chart_ = std::make_unique<StatChartView>(QStringLiteral("train.loss"), registry_, TimeAxisMode::SinceRunStart);
    chart_->setViewOptions(&options_);
    for (SeriesId id : ids) chart_->addSeries(id);
    chart_->resize(640, 360);
    chart_->show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(chart_.get()));
    ChartRenderContext context;
    context.mode = TimeAxisMode::SinceRunStart;
    context.x = XRange{0.0, 20.0};
    chart_->render(context);
  }

  QTemporaryDir dir_;
  EventConverter converter_;
  StatRegistry registry_;
  ChartViewOptions options_;
  std::unique_ptr<StatChartView> chart_;
  const std::shared_ptr<const transport::SourceInfo> source_ = test::makeSource("train", 100, std::nullopt, kStart);
};

TEST_F(ChartExportTest, PngAndSvgAreWrittenAndReadBack) {
  const QString png = dir_.filePath(QStringLiteral("loss.png"));
  QString error;
  ASSERT_TRUE(saveChartPng(*chart_, png, &error)) << error.toStdString();
  const QImage image(png);
  ASSERT_FALSE(image.isNull());
  EXPECT_EQ(image.size(), chart_->size() * chart_->devicePixelRatio());

  const QString svg = dir_.filePath(QStringLiteral("loss.svg"));
  ASSERT_TRUE(saveChartSvg(*chart_, svg, &error)) << error.toStdString();
  QSvgRenderer renderer(svg);
  ASSERT_TRUE(renderer.isValid());
  EXPECT_EQ(renderer.viewBox().size(), chart_->size());
  QFile file(svg);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_TRUE(file.readAll().contains("train.loss"));
}

TEST_F(ChartExportTest, CsvHoldsAColumnPerVisibleLineAndARowPerTime) {
  const QString path = dir_.filePath(QStringLiteral("loss.csv"));
  QString error;
  ASSERT_TRUE(saveChartCsv(*chart_, path, &error)) << error.toStdString();
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly | QIODevice::Text));
  const QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  ASSERT_EQ(lines.size(), 11);
  EXPECT_EQ(lines[0], QStringLiteral("seconds,mean,max"));
  EXPECT_EQ(lines[1], QStringLiteral("0.000,1,2"));
  EXPECT_EQ(lines[4].section(QLatin1Char(','), 1, 1).toDouble(), 0.25);
  // A line hidden from the legend is not in view, so not in the file.
  chart_->setSeriesVisible(chart_->seriesIds().back(), false);
  ASSERT_TRUE(saveChartCsv(*chart_, path, &error));
  QFile again(path);
  ASSERT_TRUE(again.open(QIODevice::ReadOnly | QIODevice::Text));
  EXPECT_TRUE(again.readLine().startsWith("seconds,mean\n"));
}

TEST_F(ChartExportTest, AFileThatCannotBeWrittenIsReportedByName) {
  const QString nowhere = dir_.filePath(QStringLiteral("missing/dir/loss"));
  for (const auto& save : {&saveChartPng, &saveChartSvg}) {
    QString error;
    EXPECT_FALSE(save(*chart_, nowhere + QStringLiteral(".x"), &error));
    EXPECT_TRUE(error.contains(nowhere)) << error.toStdString();
  }
  QString error;
  EXPECT_FALSE(saveChartCsv(*chart_, nowhere + QStringLiteral(".csv"), &error));
  EXPECT_TRUE(error.contains(nowhere)) << error.toStdString();
}

TEST_F(ChartExportTest, TheMenuSwitchesThisChartsLogScaleAndFollowsLiveData) {
  std::unique_ptr<QMenu> menu(makeChartMenu(*chart_, nullptr));
  QAction* log = menu->findChild<QAction*>(QStringLiteral("logScale"));
  ASSERT_NE(log, nullptr);
  EXPECT_FALSE(log->isChecked());
  log->trigger();
  EXPECT_TRUE(options_.logScale(QStringLiteral("train.loss")));
  EXPECT_FALSE(options_.logScale(QStringLiteral("train.lr")));  // this chart only
  QSignalSpy reset(chart_.get(), &StatChartView::resetRequested);
  QAction* live = menu->findChild<QAction*>(QStringLiteral("followLive"));
  ASSERT_NE(live, nullptr);
  live->trigger();
  EXPECT_EQ(reset.count(), 1);
  QStringList texts;
  for (QAction* action : menu->actions()) texts << action->text();
  EXPECT_TRUE(texts.contains(QStringLiteral("Save as PNG…")));
  EXPECT_TRUE(texts.contains(QStringLiteral("Save as SVG…")));
  EXPECT_TRUE(texts.contains(QStringLiteral("Save data as CSV…")));
}

TEST_F(ChartExportTest, ARightClickWithoutDraggingOpensTheMenu) {
  const QPoint inside = chart_->plotRect().center();
  QTest::mousePress(chart_->viewport(), Qt::RightButton, Qt::NoModifier, inside);
  QTest::mouseRelease(chart_->viewport(), Qt::RightButton, Qt::NoModifier, inside);
  ASSERT_TRUE(test::waitFor([] { return qobject_cast<QMenu*>(QApplication::activePopupWidget()) != nullptr; }));
  QApplication::activePopupWidget()->close();
}

TEST(ChartExport, FileNamesKeepOnlyWhatFileSystemsTake) {
  EXPECT_EQ(chartFileStem(QStringLiteral("range/forward")), QStringLiteral("range_forward"));
  EXPECT_EQ(chartFileStem(QStringLiteral("train.loss")), QStringLiteral("train.loss"));
  EXPECT_EQ(chartFileStem(QStringLiteral("../../etc")), QStringLiteral(".._.._etc"));
  EXPECT_EQ(chartFileStem(QString()), QStringLiteral("chart"));
}

}  // namespace
}  // namespace livemon::ui
