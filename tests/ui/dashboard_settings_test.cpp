// What the dashboard keeps between sessions, through DashboardSettings: every value round-trips
// through the file, unset or damaged keys read as the defaults, and a file an earlier livemon wrote
// (its keys spelled as they always were) reads the same.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QVariantMap>

#include <livemon/ui/dashboard/dashboard_settings.h>
#include <livemon/ui/model/chart_sections.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {
namespace {

class SettingsFile : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.isValid()); }
  QString file() const { return dir_.filePath(QStringLiteral("livemon.ini")); }
  // The file as QSettings sees it, to write what an earlier livemon (or a user's editor) wrote.
  QSettings raw() const { return QSettings(file(), QSettings::IniFormat); }

 private:
  QTemporaryDir dir_;
};

using DashboardSettingsTest = SettingsFile;

TEST_F(DashboardSettingsTest, EveryValueRoundTripsThroughTheFile) {
  std::map<std::string, transport::CurveOptions> curves;
  curves["tcp://head:5555"] = {"/keys/laptop.key_secret", "", "/keys/head.key", false};
  ChartChoices choices;
  choices.pinned = {QStringLiteral("train.loss")};
  choices.collapsed = {QStringLiteral("system")};
  ChartViewState view{0.3, true, {{QStringLiteral("train.lr"), false}}};
  {
    DashboardSettings settings(file());
    settings.setEndpoints({QStringLiteral("tcp://a:1"), QStringLiteral("ipc:///tmp/b")});
    settings.setEndpointCurves(curves);
    settings.setFetchHistory(false);
    settings.setAlertRules({QStringLiteral("train.loss.mean > 10")});
    settings.setBaselinesFollowLive(true);
    settings.setWindowLayout({QByteArray("geometry"), QByteArray("state"), QByteArray("splitter")});
    settings.setTimeRange(TimeRange::Last30Minutes);
    settings.setTimeAxisMode(TimeAxisMode::Step);
    settings.setView(DashboardView::Ranks);
    settings.setLogAutoScroll(false);
    settings.setChartChoices(choices);
    settings.setChartView(view);
  }
  const DashboardSettings settings(file());
  EXPECT_EQ(settings.endpoints(), (std::vector<std::string>{"tcp://a:1", "ipc:///tmp/b"}));
  const auto loaded = settings.endpointCurves();
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded.at("tcp://head:5555").certificate, "/keys/laptop.key_secret");
  EXPECT_EQ(loaded.at("tcp://head:5555").serverCertificate, "/keys/head.key");
  EXPECT_FALSE(settings.fetchHistory());
  EXPECT_EQ(settings.alertRules(), QStringList{QStringLiteral("train.loss.mean > 10")});
  EXPECT_TRUE(settings.baselinesFollowLive());
  const DashboardSettings::WindowLayout layout = settings.windowLayout();
  EXPECT_EQ(layout.geometry, QByteArray("geometry"));
  EXPECT_EQ(layout.state, QByteArray("state"));
  EXPECT_EQ(layout.splitter, QByteArray("splitter"));
  EXPECT_EQ(settings.timeRange(), TimeRange::Last30Minutes);
  EXPECT_EQ(settings.timeAxisMode(), TimeAxisMode::Step);
  EXPECT_EQ(settings.view(), DashboardView::Ranks);
  EXPECT_FALSE(settings.logAutoScroll());
  EXPECT_EQ(settings.chartChoices().pinned, choices.pinned);
  EXPECT_EQ(settings.chartChoices().collapsed, choices.collapsed);
  EXPECT_DOUBLE_EQ(settings.chartView().smoothing, 0.3);
  EXPECT_TRUE(settings.chartView().logScaleAll);
  EXPECT_EQ(settings.chartView().logScale, view.logScale);
}

TEST_F(DashboardSettingsTest, NothingSavedGivesTheDefaults) {
  const DashboardSettings settings(file());
  EXPECT_TRUE(settings.endpoints().empty());
  EXPECT_TRUE(settings.endpointCurves().empty());
  EXPECT_TRUE(settings.fetchHistory());
  EXPECT_TRUE(settings.alertRules().isEmpty());
  EXPECT_FALSE(settings.baselinesFollowLive());
  EXPECT_TRUE(settings.windowLayout().geometry.isEmpty());
  EXPECT_FALSE(settings.timeRange().has_value());
  EXPECT_FALSE(settings.timeAxisMode().has_value());
  EXPECT_EQ(settings.view(), DashboardView::Charts);
  EXPECT_TRUE(settings.logAutoScroll());
  EXPECT_TRUE(settings.chartChoices().pinned.empty());
  EXPECT_DOUBLE_EQ(settings.chartView().smoothing, kDefaultSmoothing);
  EXPECT_FALSE(settings.chartView().logScaleAll);
}

// The keys are the file format: a user's settings from before keep working.
TEST_F(DashboardSettingsTest, ReadsTheKeysAsEarlierVersionsWroteThem) {
  {
    QSettings old = raw();
    old.setValue(QStringLiteral("endpoints"), QStringList{QStringLiteral(" tcp://a:1 "), QStringLiteral("  ")});
    old.setValue(QStringLiteral("ingest/history"), false);
    old.setValue(QStringLiteral("alerts/rules"), QStringList{QStringLiteral("nan")});
    old.setValue(QStringLiteral("baseline/followLive"), true);
    old.setValue(QStringLiteral("window/splitter"), QByteArray("sizes"));
    old.setValue(QStringLiteral("view/timeRange"), QStringLiteral("1min"));
    old.setValue(QStringLiteral("view/xAxis"), QStringLiteral("run"));
    old.setValue(QStringLiteral("view/tab"), QStringLiteral("ranges"));
    old.setValue(QStringLiteral("log/autoScroll"), false);
    old.setValue(QStringLiteral("charts/pinned"), QStringList{QStringLiteral("eval.accuracy")});
    old.setValue(QStringLiteral("charts/smoothing"), 0.9);
    old.setValue(QStringLiteral("charts/logScale"), QVariantMap{{QStringLiteral("train.loss"), true}});
    old.beginWriteArray(QStringLiteral("endpointCurve"), 1);
    old.setArrayIndex(0);
    old.setValue(QStringLiteral("endpoint"), QStringLiteral("tcp://a:1"));
    old.setValue(QStringLiteral("serverCertificate"), QStringLiteral("/k/a.key"));
    old.setValue(QStringLiteral("clientCertificate"), QStringLiteral("/k/me.key_secret"));
    old.endArray();
  }
  const DashboardSettings settings(file());
  // Trimmed, the blank one left out.
  EXPECT_EQ(settings.endpoints(), std::vector<std::string>{"tcp://a:1"});
  EXPECT_EQ(settings.endpointCurves().at("tcp://a:1").serverCertificate, "/k/a.key");
  EXPECT_FALSE(settings.fetchHistory());
  EXPECT_EQ(settings.alertRules(), QStringList{QStringLiteral("nan")});
  EXPECT_TRUE(settings.baselinesFollowLive());
  EXPECT_EQ(settings.windowLayout().splitter, QByteArray("sizes"));
  EXPECT_EQ(settings.timeRange(), TimeRange::LastMinute);
  EXPECT_EQ(settings.timeAxisMode(), TimeAxisMode::SinceRunStart);
  EXPECT_EQ(settings.view(), DashboardView::Ranges);
  EXPECT_FALSE(settings.logAutoScroll());
  EXPECT_EQ(settings.chartChoices().pinned, std::set<QString>{QStringLiteral("eval.accuracy")});
  EXPECT_DOUBLE_EQ(settings.chartView().smoothing, 0.9);
  EXPECT_TRUE(settings.chartView().logScale.at(QStringLiteral("train.loss")));
}

TEST_F(DashboardSettingsTest, RunColoursAndSummaryKeysRoundTripWithinBounds) {
  {
    DashboardSettings settings(file());
    settings.setRunColours({{QStringLiteral("lr-1e-3"), 2}, {QStringLiteral("lr-1e-2"), 0}});
    settings.setRunSummaryKeys({QStringLiteral("train.loss"), QStringLiteral("eval.accuracy")});
    settings.setRunBestIsMax(true);
  }
  {
    const DashboardSettings settings(file());
    EXPECT_EQ(settings.runColours(), (std::map<QString, unsigned>{{QStringLiteral("lr-1e-3"), 2}, {QStringLiteral("lr-1e-2"), 0}}));
    EXPECT_EQ(settings.runSummaryKeys(), (QStringList{QStringLiteral("train.loss"), QStringLiteral("eval.accuracy")}));
    EXPECT_TRUE(settings.runBestIsMax());
  }
  // Edited by hand: an index that is no number and a name over the bound are left out, and at most
  // kMaxSavedRunColours are read.
  {
    QVariantMap colours;
    colours.insert(QStringLiteral("ok"), 3);
    colours.insert(QStringLiteral("bad"), QStringLiteral("blue"));
    colours.insert(QString(kMaxSavedRunNameLength + 1, QLatin1Char('x')), 1);
    for (std::size_t i = 0; i < kMaxSavedRunColours + 10; ++i) colours.insert(QStringLiteral("run%1").arg(i), 1);
    raw().setValue(QStringLiteral("runs/colours"), colours);
  }
  const std::map<QString, unsigned> read = DashboardSettings(file()).runColours();
  EXPECT_EQ(read.size(), kMaxSavedRunColours);
  EXPECT_FALSE(read.contains(QStringLiteral("bad")));
}

TEST_F(DashboardSettingsTest, KeysLivemonDoesNotWriteReadAsUnset) {
  {
    QSettings edited = raw();
    edited.setValue(QStringLiteral("view/timeRange"), QStringLiteral("forever"));
    edited.setValue(QStringLiteral("view/xAxis"), 3);
    edited.setValue(QStringLiteral("view/tab"), QStringLiteral("graphs"));
    // An entry without its client certificate is no certificate pair.
    edited.beginWriteArray(QStringLiteral("endpointCurve"), 1);
    edited.setArrayIndex(0);
    edited.setValue(QStringLiteral("endpoint"), QStringLiteral("tcp://a:1"));
    edited.setValue(QStringLiteral("serverCertificate"), QStringLiteral("/k/a.key"));
    edited.endArray();
  }
  const DashboardSettings settings(file());
  EXPECT_FALSE(settings.timeRange().has_value());
  EXPECT_FALSE(settings.timeAxisMode().has_value());
  EXPECT_EQ(settings.view(), DashboardView::Charts);
  EXPECT_TRUE(settings.endpointCurves().empty());
}

TEST(DashboardView, KeysRoundTripAndAnUnknownOneIsCharts) {
  for (DashboardView view : {DashboardView::Charts, DashboardView::Ranges, DashboardView::Ranks}) {
    EXPECT_EQ(dashboardViewFromKey(dashboardViewKey(view)), view);
  }
  EXPECT_EQ(dashboardViewKey(DashboardView::Ranks), QStringLiteral("ranks"));
  EXPECT_EQ(dashboardViewFromKey(QString()), DashboardView::Charts);
}

using ConnectDialogSettings = SettingsFile;

TEST_F(ConnectDialogSettings, ForgettingEveryCertificateLeavesNoEntry) {
  std::map<std::string, transport::CurveOptions> curves;
  curves["tcp://head:5555"] = {"/keys/laptop.key_secret", "", "/keys/head.key", false};
  DashboardSettings(file()).setEndpointCurves(curves);
  DashboardSettings(file()).setEndpointCurves({});
  EXPECT_TRUE(DashboardSettings(file()).endpointCurves().empty());
  EXPECT_FALSE(raw().contains(QStringLiteral("endpointCurve/size")));
}

// ChartViewOptions and the grid's choices as the settings keep them.

TEST(ChartViewOptions, SettingsKeepTheChoices) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString path = dir.filePath(QStringLiteral("livemon.ini"));
  {
    ChartViewOptions options;
    options.setSmoothing(0.25);
    options.setLogScale(QStringLiteral("train.loss"), true);
    DashboardSettings(path).setChartView(options.state());
  }
  ChartViewOptions restored;
  QSignalSpy changed(&restored, &ChartViewOptions::changed);
  restored.restore(DashboardSettings(path).chartView());
  EXPECT_EQ(changed.count(), 1);
  EXPECT_DOUBLE_EQ(restored.smoothing(), 0.25);
  EXPECT_FALSE(restored.logScaleAll());
  EXPECT_TRUE(restored.logScale(QStringLiteral("train.loss")));
  EXPECT_FALSE(restored.logScale(QStringLiteral("train.lr")));
}

TEST(ChartViewOptions, BadSettingsGiveDefaultsOrTheNearestAllowedValue) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("livemon.ini"));
  {
    QSettings settings(path, QSettings::IniFormat);
    settings.setValue(QStringLiteral("charts/smoothing"), QStringLiteral("lots"));
  }
  ChartViewOptions options;
  options.restore(DashboardSettings(path).chartView());
  EXPECT_DOUBLE_EQ(options.smoothing(), kDefaultSmoothing);
  {
    QSettings settings(path, QSettings::IniFormat);
    settings.setValue(QStringLiteral("charts/smoothing"), 7.5);
  }
  options.restore(DashboardSettings(path).chartView());
  EXPECT_DOUBLE_EQ(options.smoothing(), kMaxSmoothing);
}

TEST(ChartSections, PinnedChartsAndCollapsedSectionsAreSavedAndRestored) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString file = dir.filePath(QStringLiteral("livemon.ini"));
  {
    ChartChoices choices;
    choices.pinned = {QStringLiteral("eval.accuracy"), QStringLiteral("range/data.load")};
    // The pinned section, "other" (""), and a section with a space and a comma.
    choices.collapsed = {kPinnedSection, QString(), QStringLiteral("range/"), QStringLiteral("my job, v2")};
    choices.filter = ChartFilter(QStringLiteral("loss"));
    choices.enlarged = QStringLiteral("train.loss");
    DashboardSettings(file).setChartChoices(choices);
  }
  const ChartChoices restored = DashboardSettings(file).chartChoices();
  EXPECT_EQ(restored.pinned, (std::set<QString>{QStringLiteral("eval.accuracy"), QStringLiteral("range/data.load")}));
  EXPECT_EQ(restored.collapsed,
            (std::set<QString>{kPinnedSection, QString(), QStringLiteral("range/"), QStringLiteral("my job, v2")}));
  // For the moment only.
  EXPECT_TRUE(restored.filter.empty());
  EXPECT_FALSE(restored.enlarged.has_value());

  // What was saved arranges the grid as before.
  const std::vector<QString> charts{QStringLiteral("train.loss"), QStringLiteral("eval.accuracy"),
                                    QStringLiteral("range/data.load"), QStringLiteral("alpha")};
  const ChartArrangement arrangement = arrangeCharts(charts, restored);
  ASSERT_FALSE(arrangement.sections.empty());
  EXPECT_EQ(arrangement.sections.front().name, kPinnedSection);
  EXPECT_TRUE(arrangement.sections.front().collapsed);
}

TEST(ChartSections, NothingSavedMeansNothingPinnedOrCollapsedAndADamagedFileIsBounded) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString file = dir.filePath(QStringLiteral("livemon.ini"));
  ChartChoices choices = DashboardSettings(file).chartChoices();
  EXPECT_TRUE(choices.pinned.empty());
  EXPECT_TRUE(choices.collapsed.empty());

  QStringList many{QString(kMaxSavedChartNameLength + 1, QLatin1Char('x'))};  // not a name we made
  for (int i = 0; i < 3 * kMaxSavedChartChoices; ++i) many << QStringLiteral("chart%1").arg(i);
  {
    QSettings settings(file, QSettings::IniFormat);
    settings.setValue(QStringLiteral("charts/pinned"), many);
    settings.setValue(QStringLiteral("charts/collapsed"), QStringLiteral("a single section"));
  }
  choices = DashboardSettings(file).chartChoices();
  EXPECT_EQ(static_cast<qsizetype>(choices.pinned.size()), kMaxSavedChartChoices);
  EXPECT_TRUE(choices.pinned.contains(QStringLiteral("chart0")));
  EXPECT_FALSE(choices.pinned.contains(many.front()));
  EXPECT_EQ(choices.collapsed, (std::set<QString>{QStringLiteral("a single section")}));
}

}  // namespace
}  // namespace livemon::ui
