// The theme (issue 30): View › Theme switches the whole window between dark and light at once,
// charts, lines and secondary text included, and the next session starts in the theme chosen.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <QAction>
#include <QApplication>
#include <QLabel>
#include <QTemporaryDir>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

constexpr double kT0Ms = 1'700'000'000'000.0;

class ThemeTest : public ::testing::Test {
 protected:
  void TearDown() override { applyTheme(*qApp, Theme::Dark); }  // the theme is the application's

  DashboardOptions options() {
    DashboardOptions result;
    result.exactEndpoints = true;  // no publishers: only what the test feeds
    result.settingsFile = dir_.filePath(QStringLiteral("livemon.ini"));
    return result;
  }

  // A chart of train.loss with its mean, min and max.
  static StatChartView* chartOf(MainWindow& window) {
    const auto source = test::makeSource("train", 4242, std::nullopt, kT0Ms);
    std::vector<transport::ReceivedEvent> events;
    for (int i = 0; i < 3; ++i) {
      events.push_back(test::received(source, Event{std::string(kStatEventName), test::atMs(kT0Ms + 1000.0 * i),
                                                    {{"train.loss.mean", 0.5}, {"train.loss.min", 0.4},
                                                     {"train.loss.max", 0.6}}}));
    }
    window.dashboard().ingest().deliver(events);
    StatChartView* chart = nullptr;
    test::waitFor([&] {
      window.dashboard().refreshNow();
      const auto charts = window.findChildren<StatChartView*>();
      chart = charts.isEmpty() ? nullptr : charts.front();
      return chart != nullptr && chart->chart()->series().size() >= 3;
    });
    return chart;
  }

  static QColor linePenColour(StatChartView& chart, const QString& aggregation) {
    for (QAbstractSeries* series : chart.chart()->series()) {
      auto* line = qobject_cast<QLineSeries*>(series);
      if (line != nullptr && line->name().startsWith(aggregation)) return line->pen().color();
    }
    return {};
  }

  QTemporaryDir dir_;
};

TEST_F(ThemeTest, TheViewMenuSwitchesEverythingToTheLightThemeAndTheNextSessionStartsInIt) {
  {
    MainWindow window(options());
    window.resize(1200, 800);
    window.show();
    StatChartView* chart = chartOf(window);
    ASSERT_NE(chart, nullptr);
    auto* light = window.findChild<QAction*>(QStringLiteral("viewThemeLight"));
    ASSERT_NE(light, nullptr) << "View › Theme › Light";
    EXPECT_FALSE(light->isChecked()) << "dark to begin with";
    const QColor darkDim = QColor(colours::dimText());

    light->trigger();

    EXPECT_EQ(currentTheme(), Theme::Light);
    EXPECT_GT(qApp->palette().color(QPalette::Window).lightness(), 200) << "the widgets' palette";
    EXPECT_GT(qApp->palette().color(QPalette::Text).lightness(), -1);
    EXPECT_LT(qApp->palette().color(QPalette::Text).lightness(), 80) << "dark text on it";
    // The chart already on screen takes the light colours: card, plot and its lines.
    EXPECT_EQ(chart->chart()->backgroundBrush().color(), QColor(colours::panel()));
    EXPECT_EQ(chart->chart()->plotAreaBackgroundBrush().color(), QColor(colours::window()));
    EXPECT_GT(chart->chart()->plotAreaBackgroundBrush().color().lightness(), 200);
    for (const QString& aggregation : {QStringLiteral("mean"), QStringLiteral("max"), QStringLiteral("min")}) {
      const QColor line = linePenColour(*chart, aggregation);
      ASSERT_TRUE(line.isValid()) << aggregation.toStdString();
      EXPECT_GE(contrastRatio(line, QColor(colours::window())), 3.0)
          << aggregation.toStdString() << " must read on the light plot: " << line.name().toStdString();
    }
    // Secondary text set from dimTextStyle() before the switch now has the light theme's colour.
    int dimLabels = 0;
    for (QWidget* widget : QApplication::allWidgets()) {
      const QString sheet = widget->styleSheet();
      EXPECT_FALSE(sheet.contains(darkDim.name(), Qt::CaseInsensitive)) << sheet.toStdString();
      if (sheet.contains(QColor(colours::dimText()).name(), Qt::CaseInsensitive)) ++dimLabels;
    }
    EXPECT_GT(dimLabels, 0);
    window.close();  // saves the settings
  }
  applyTheme(*qApp, Theme::Dark);
  MainWindow again(options());
  EXPECT_EQ(currentTheme(), Theme::Light) << "the theme chosen last session";
  EXPECT_TRUE(again.findChild<QAction*>(QStringLiteral("viewThemeLight"))->isChecked());
  again.findChild<QAction*>(QStringLiteral("viewThemeDark"))->trigger();
  EXPECT_EQ(currentTheme(), Theme::Dark);
  EXPECT_LT(qApp->palette().color(QPalette::Window).lightness(), 60);
}

TEST_F(ThemeTest, EveryLineColourReadsOnItsThemesPlot) {
  const QStringList aggregations{"value", "mean", "p50", "p90", "p99", "min", "max", "stddev", "count", "sum"};
  for (const Theme theme : {Theme::Dark, Theme::Light}) {
    applyTheme(*qApp, theme);
    const QColor plot(colours::window());
    for (const QString& aggregation : aggregations) {
      EXPECT_GE(contrastRatio(aggregationColour(aggregation), plot), 3.0)
          << themeName(theme).toStdString() << " " << aggregation.toStdString();
    }
    for (unsigned i = 0; i < 8; ++i) EXPECT_GE(contrastRatio(sourceColour(i), plot), 3.0) << "source " << i;
    for (unsigned i = 0; i < 5; ++i) EXPECT_GE(contrastRatio(rankColour(i), plot), 3.0) << "rank " << i;
  }
}

TEST_F(ThemeTest, ThemeNamesRoundTripAndAnUnknownOneIsNone) {
  for (const Theme theme : {Theme::Dark, Theme::Light}) EXPECT_EQ(themeNamed(themeName(theme)), theme);
  EXPECT_FALSE(themeNamed(QStringLiteral("solarized")).has_value());
}

}  // namespace
}  // namespace livemon::ui
