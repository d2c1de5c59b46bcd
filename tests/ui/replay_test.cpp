// Record and replay in the dashboard: a recording written here is opened on the timeline, seeked,
// stepped and played with a manual clock, closed and replaced beside a live source; damaged files,
// drops, recording from the dashboard and its failures.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <QLocale>
#include <QMimeData>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QUrl>
#include <QSlider>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTableView>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>
#include <QDropEvent>

#include <livemon/clock.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/model/ranges_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/replay/replay_session.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/ranges_view.h>
#include <livemon/ui/widgets/stat_chart_view.h>
#include <livemon/ui/widgets/timeline_bar.h>
#include <livemon/ui/widgets/timeline_strip.h>
#include <livemon/ui/dashboard/alert_centre.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::deliverLiveWindow;
using test::eventNs;
using test::kEvents;
using test::kT0Ms;
using test::kT0Ns;
using test::lastY;
using test::ReplayTest;
using test::waitFor;
using test::writeRecording;
using test::writeRecordingWithRanges;

TEST_F(ReplayTest, OpensAtTheEndAndSeeksBothWaysShowingExactlyTheEventsUpToThePlayhead) {
  MainWindow window(options());
  window.setTimeRange(TimeRange::All);
  window.resize(1400, 900);
  window.show();
  ReplaySession* session = openReplay(window.dashboard(), recording_);
  EXPECT_EQ(session->info().messages, static_cast<uint64_t>(kEvents)) << "one event per message";
  EXPECT_EQ(session->info().events, 0U) << "a version-2 recording's events are counted only by reading it";
  EXPECT_EQ(session->info().startNs, eventNs(0));
  EXPECT_EQ(session->info().endNs, eventNs(kEvents - 1));
  EXPECT_EQ(session->playheadNs(), eventNs(kEvents - 1));
  expectShows(window.dashboard(), 0, kEvents - 1);

  session->seek(eventNs(100) + 250'000'000);  // between two events
  settle(window.dashboard(), *session);
  expectShows(window.dashboard(), 0, 100);

  session->seek(eventNs(250));  // exactly on one: it is shown
  settle(window.dashboard(), *session);
  expectShows(window.dashboard(), 0, 250);

  // The chart draws the same: its last point is event 250's.
  StatChartView* chart = nullptr;
  ASSERT_TRUE(waitFor([&] {
    chart = window.chartGrid().chart(QStringLiteral("loss"));
    return chart != nullptr && lastY(chart->line(QStringLiteral("mean"), lossSeries(window.dashboard())->source)) == 250.0;
  }));
  // With the wall-clock axis the charts' right edge is the playhead.
  EXPECT_DOUBLE_EQ(window.chartGrid().renderContext().x.max, static_cast<double>(eventNs(250)) / 1e6);
  EXPECT_TRUE(window.timeline().positionText().startsWith(QStringLiteral("2:05.0 / 3:00.0")))
      << window.timeline().positionText().toStdString();

  session->seek(eventNs(0) - 5'000'000'000);  // clamped to the start
  settle(window.dashboard(), *session);
  EXPECT_EQ(session->playheadNs(), eventNs(0));
  expectShows(window.dashboard(), 0, 0);
}

TEST_F(ReplayTest, OnTheStepAxisTheRangeBeforeThePlayheadPicksTheStepsShown) {
  // The events of the usual recording, each at step 10 * i.
  const QString path = dir_.filePath(QStringLiteral("steps.mcap"));
  {
    transport::RecordingWriter writer(path.toStdString());
    const auto source = test::makeSource("train", 4242, std::nullopt, kT0Ms);
    for (int i = 0; i < kEvents; ++i) {
      Event event{std::string(kStatEventName), test::atMs(kT0Ms + 500.0 * i), {{"loss.mean", static_cast<double>(i)}}};
      event.step = 10 * i;
      transport::ReceivedEvent received = test::received(source, std::move(event));
      received.sequence = static_cast<uint64_t>(i);
      received.receivedAt = received.event.timestamp;
      transport::recordEvent(writer, received);
    }
    writer.close();
  }
  MainWindow window(options());
  window.setTimeRange(TimeRange::LastMinute);
  window.setTimeAxisMode(TimeAxisMode::Step);
  window.resize(1400, 900);
  window.show();
  ReplaySession* session = openReplay(window.dashboard(), path);
  session->seek(eventNs(250));
  settle(window.dashboard(), *session);
  // The minute before the playhead: events 130..250, at steps 1300..2500.
  StatChartView* chart = nullptr;
  ASSERT_TRUE(waitFor([&] {
    window.dashboard().refreshNow();
    chart = window.chartGrid().chart(QStringLiteral("loss"));
    return chart != nullptr && chart->xRange() == XRange{1300.0, 2500.0};
  })) << (chart != nullptr ? chart->xRange().min : -1.0) << ".." << (chart != nullptr ? chart->xRange().max : -1.0);
  const QLineSeries* mean = chart->line(QStringLiteral("mean"), lossSeries(window.dashboard())->source);
  ASSERT_NE(mean, nullptr);
  EXPECT_EQ(mean->count(), 121);
  EXPECT_EQ(lastY(mean), 250.0);
  EXPECT_EQ(mean->at(0).x(), 1300.0);
}

// The playhead is the charts' right edge on either time axis: on "Since run start" it is the
// playhead's time since the run started, not the newest sample (here 300 ms before it).
TEST_F(ReplayTest, TheChartsRightEdgeIsThePlayheadAlsoSinceRunStart) {
  MainWindow window(options());
  window.setTimeRange(TimeRange::All);
  window.setTimeAxisMode(TimeAxisMode::SinceRunStart);
  ReplaySession* session = openReplay(window.dashboard(), recording_);
  session->seek(eventNs(100) + 300'000'000);
  settle(window.dashboard(), *session);
  ASSERT_TRUE(window.dashboard().replays().playheadSinceRunStart().has_value());
  EXPECT_DOUBLE_EQ(*window.dashboard().replays().playheadSinceRunStart(), 50.3);
  EXPECT_DOUBLE_EQ(window.chartGrid().renderContext().x.max, 50.3);

  window.setTimeAxisMode(TimeAxisMode::WallClock);
  window.dashboard().refreshNow();
  EXPECT_DOUBLE_EQ(window.chartGrid().renderContext().x.max, kT0Ms + 50'300.0);

  window.dashboard().replays().closeReplay();
  EXPECT_EQ(window.dashboard().replays().playheadSinceRunStart(), std::nullopt);
}

TEST_F(ReplayTest, ClosingAReplayRemovesItsSourcesChartsAndRangeRows) {
  const QString path = dir_.filePath(QStringLiteral("ranges.mcap"));
  writeRecordingWithRanges(path.toStdString());
  MainWindow window(options());
  window.setTimeRange(TimeRange::All);
  window.resize(1400, 900);
  window.show();
  test::QtWarnings warnings;
  deliverLiveWindow(window.dashboard());
  window.dashboard().refreshNow();
  ASSERT_EQ(window.dashboard().registry().sourceCount(), 1U);
  const SourceId live = 0;
  openReplay(window.dashboard(), path);
  while (window.chartGrid().pendingChartCount() > 0) window.dashboard().refreshNow();
  window.dashboard().refreshNow();
  ASSERT_EQ(window.dashboard().registry().sourceCount(), 2U);
  ASSERT_NE(window.chartGrid().chart(QStringLiteral("accuracy")), nullptr);
  StatChartView* loss = window.chartGrid().chart(QStringLiteral("loss"));
  ASSERT_NE(loss, nullptr);
  loss->render(window.chartGrid().renderContext(), true);
  ASSERT_EQ(loss->seriesIds().size(), 2U);
  RangesView& ranges = window.rangesView();
  ASSERT_EQ(ranges.model().rowCount(), 2);
  ASSERT_FALSE(ranges.table()->isColumnHidden(RangesModel::SourceColumn));
  // The recording's range is the one looked at when it closes.
  ASSERT_TRUE(ranges.selectRow(ranges.model().rowOf(1, QStringLiteral("forward"))));
  window.dashboard().refreshNow();
  ASSERT_NE(ranges.chart(), nullptr);

  window.dashboard().replays().closeReplay();
  window.dashboard().refreshNow();

  EXPECT_EQ(window.dashboard().registry().sourceCount(), 1U);
  EXPECT_EQ(window.chartGrid().chart(QStringLiteral("accuracy")), nullptr);
  EXPECT_EQ(window.chartGrid().charts().size(), 2U);  // loss and range/forward, the live run's
  for (StatChartView* chart : window.chartGrid().charts()) {
    chart->render(window.chartGrid().renderContext(), true);
    for (SeriesId id : chart->seriesIds()) EXPECT_EQ(window.dashboard().registry().series(id)->source, live);
  }
  loss = window.chartGrid().chart(QStringLiteral("loss"));
  ASSERT_NE(loss, nullptr);
  ASSERT_EQ(loss->seriesIds().size(), 1U);
  ASSERT_NE(loss->line(QStringLiteral("mean"), live), nullptr);
  EXPECT_EQ(loss->line(QStringLiteral("mean"), live)->name(), QStringLiteral("mean"));
  EXPECT_EQ(lastY(loss->line(QStringLiteral("mean"), live)), 7.0);

  ASSERT_EQ(ranges.model().rowCount(), 1);
  EXPECT_EQ(ranges.model().source(0), live);
  EXPECT_TRUE(ranges.table()->isColumnHidden(RangesModel::SourceColumn));
  EXPECT_EQ(ranges.selectedRow(), 0);
  ASSERT_NE(ranges.chart(), nullptr);
  for (SeriesId id : ranges.chart()->seriesIds()) EXPECT_EQ(window.dashboard().registry().series(id)->source, live);
  EXPECT_EQ(window.dashboard().eventLog().rowCount(), 1);
  // The offscreen platform remarks on every size-hint change of a shown window (the timeline bar
  // hides): not the dashboard's doing.
  warnings.messages().removeIf([](const QString& message) { return message.contains(QLatin1String("propagateSizeHints")); });
  EXPECT_TRUE(warnings.messages().isEmpty()) << warnings.text();
}

TEST_F(ReplayTest, OpeningAnotherRecordingReplacesTheFirstsSources) {
  const QString other = dir_.filePath(QStringLiteral("other.mcap"));
  writeRecordingWithRanges(other.toStdString(), 4343);
  MainWindow window(options());
  window.setTimeRange(TimeRange::All);
  test::QtWarnings warnings;
  openReplay(window.dashboard(), recording_);
  ASSERT_EQ(window.dashboard().registry().sourceCount(), 1U);
  ASSERT_NE(window.dashboard().registry().source(0), nullptr);

  openReplay(window.dashboard(), other);
  while (window.chartGrid().pendingChartCount() > 0) window.dashboard().refreshNow();
  EXPECT_EQ(window.dashboard().registry().source(0), nullptr);
  ASSERT_EQ(window.dashboard().registry().sourceCount(), 1U);
  const SourceEntry* source = window.dashboard().registry().source(1);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->endpoint, other);
  EXPECT_EQ(source->label, QStringLiteral("train"));  // not "train:4343": nothing left to tell it from
  StatChartView* loss = window.chartGrid().chart(QStringLiteral("loss"));
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->seriesIds().size(), 1U);
  EXPECT_NE(window.chartGrid().chart(QStringLiteral("accuracy")), nullptr);
  EXPECT_EQ(window.rangesView().model().rowCount(), 1);
  EXPECT_EQ(window.dashboard().eventLog().rowCount(), 20);
  EXPECT_TRUE(warnings.messages().isEmpty()) << warnings.text();
}

TEST_F(ReplayTest, ARecordingOpenedAgainAfterClosingComesBackAsNewSources) {
  MainWindow window(options());
  window.setTimeRange(TimeRange::All);
  openReplay(window.dashboard(), recording_);
  const SourceId first = lossSeries(window.dashboard())->source;
  window.dashboard().replays().closeReplay();
  window.dashboard().refreshNow();
  EXPECT_EQ(window.dashboard().registry().sourceCount(), 0U);
  EXPECT_EQ(window.chartGrid().charts().size(), 0U);
  EXPECT_EQ(window.dashboard().eventLog().rowCount(), 0);

  openReplay(window.dashboard(), recording_);
  ASSERT_NE(lossSeries(window.dashboard()), nullptr);
  EXPECT_NE(lossSeries(window.dashboard())->source, first);
  EXPECT_EQ(window.dashboard().registry().sourceCount(), 1U);
  expectShows(window.dashboard(), 0, kEvents - 1);
  while (window.chartGrid().pendingChartCount() > 0) window.dashboard().refreshNow();
  EXPECT_NE(window.chartGrid().chart(QStringLiteral("loss")), nullptr);
}

// "<prefix><i><suffix>", built in place (GCC 12 warns wrongly on chained operator+ at -O3).
std::string numbered(const char* prefix, int i, const char* suffix = "") {
  std::string text(prefix);
  text += std::to_string(i);
  text += suffix;
  return text;
}

TEST_F(ReplayTest, ARecordingFullOfNewNamesStopsAtTheLimitsAndClosingItGivesTheirRoomBack) {
  // Every 10 ms a Stat window with loss and a Stat named anew, and an event named anew.
  constexpr int kWindows = 3000;
  const QString path = dir_.filePath(QStringLiteral("names.mcap"));
  {
    transport::RecordingWriter writer(path.toStdString());
    const auto source = test::makeSource("train", 4242, std::nullopt, kT0Ms);
    for (int i = 0; i < kWindows; ++i) {
      for (Event event : {Event{std::string(kStatEventName), test::atMs(kT0Ms + 10.0 * i),
                                {{"loss.mean", static_cast<double>(i)}, {numbered("step", i, ".mean"), 1.0}}},
                          Event{numbered("note", i), test::atMs(kT0Ms + 10.0 * i), {}}}) {
        transport::ReceivedEvent received = test::received(source, std::move(event));
        received.sequence = static_cast<uint64_t>(i);
        received.receivedAt = received.event.timestamp;
        transport::recordEvent(writer, received);
      }
    }
    writer.close();
  }
  MainWindow window(options());
  window.setTimeRange(TimeRange::All);
  const IngestLimits limits = window.dashboard().ingest().limits();
  openReplay(window.dashboard(), path);
  EXPECT_EQ(window.dashboard().registry().seriesCount(), limits.maxCharts);
  EXPECT_EQ(window.chartGrid().charts().size() + static_cast<std::size_t>(window.chartGrid().pendingChartCount()),
            limits.maxCharts);
  // Every Stat window is logged; of the other events only those with the names that fit.
  EXPECT_EQ(window.dashboard().eventLog().rowCount(), static_cast<int>(kWindows + limits.maxEventNames - 1));
  ASSERT_NE(lossSeries(window.dashboard()), nullptr);
  EXPECT_EQ(lossSeries(window.dashboard())->store.lastY(), kWindows - 1.0);
  window.dashboard().updateStatus();
  const QLocale locale;
  const QString refused = locale.toString(static_cast<qulonglong>(kWindows - (limits.maxCharts - 1)));
  EXPECT_EQ(window.limitText(), QStringLiteral("⚠ dropped %1 values of %1 new charts beyond the %2-chart limit · +1 more")
                                    .arg(refused, locale.toString(static_cast<qulonglong>(limits.maxCharts))));
  EXPECT_TRUE(window.limitToolTip().contains(QStringLiteral("%1 events of %1 new event names not logged").arg(refused)))
      << window.limitToolTip().toStdString();

  window.dashboard().replays().closeReplay();
  window.dashboard().refreshNow();
  EXPECT_EQ(window.dashboard().registry().sourceCount(), 0U);
  EXPECT_EQ(window.dashboard().registry().seriesCount(), 0U);
  EXPECT_EQ(window.chartGrid().charts().size() + static_cast<std::size_t>(window.chartGrid().pendingChartCount()), 0U);

  // The room is free again: a live run gets as many charts as the limit allows.
  std::unordered_map<std::string, DataValue> data;
  for (std::size_t i = 0; i < limits.maxCharts; ++i) data[numbered("live", static_cast<int>(i), ".mean")] = 1.0;
  std::vector<transport::ReceivedEvent> live{test::received(test::makeSource("live", 77, std::nullopt, kT0Ms),
                                                            Event{std::string(kStatEventName), test::atMs(kT0Ms), std::move(data)})};
  window.dashboard().ingest().deliver(live);
  window.dashboard().refreshNow();
  EXPECT_EQ(window.dashboard().registry().seriesCount(), limits.maxCharts);
}

TEST_F(ReplayTest, DroppingARecordingOnTheWindowOpensIt) {
  MainWindow window(options());
  window.show();
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(recording_)});
  QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&window, &enter);
  EXPECT_TRUE(enter.isAccepted());
  QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QCoreApplication::sendEvent(&window, &drop);
  ASSERT_TRUE(waitFor([&] { return window.dashboard().replays().replay() != nullptr; }));  // on the timeline once open
  EXPECT_TRUE(window.dashboard().replays().replay()->isOpen());
  EXPECT_EQ(window.dashboard().replays().replay()->info().path, recording_);

  QMimeData text;
  text.setUrls({QUrl::fromLocalFile(dir_.filePath(QStringLiteral("notes.txt")))});
  QDragEnterEvent other(QPoint(10, 10), Qt::CopyAction, &text, Qt::LeftButton, Qt::NoModifier);
  other.setAccepted(false);
  QCoreApplication::sendEvent(&window, &other);
  EXPECT_FALSE(other.isAccepted());
}

TEST_F(ReplayTest, ABaselineJoinsAsItsOwnLabelledSource) {
  MainWindow window(options());
  ReplaySession* baseline = window.dashboard().replays().openRecording(recording_, ReplayMode::Baseline);
  ASSERT_TRUE(waitFor([&] { return baseline->isOpen() && !baseline->busy(); }));
  window.dashboard().refreshNow();
  EXPECT_EQ(window.dashboard().replays().replay(), nullptr);
  ASSERT_EQ(window.dashboard().registry().sourceCount(), 1U);
  EXPECT_EQ(window.dashboard().registry().source(0)->label, QStringLiteral("baseline: train"));
  EXPECT_EQ(window.dashboard().eventLog().rowCount(), kEvents);
}

TEST_F(ReplayTest, RecordButtonWritesEveryEventReceivedAndShowsTheFileSize) {
  MainWindow window(options());
  const QString path = dir_.filePath(QStringLiteral("recorded.mcap"));
  ASSERT_TRUE(window.dashboard().startRecording(path));
  EXPECT_TRUE(window.dashboard().isRecording());
  const auto source = test::makeSource("live", 77);
  constexpr int kRecorded = 3000;
  for (int i = 0; i < kRecorded; i += 100) {
    std::vector<transport::ReceivedEvent> events;
    for (int j = i; j < i + 100; ++j) {
      events.push_back(test::received(source, Event{"step", test::atMs(kT0Ms + j), {{"i", int64_t{j}}}}));
    }
    window.dashboard().ingest().deliver(events);
  }
  window.dashboard().updateStatus();
  EXPECT_TRUE(window.recordingText().contains(QStringLiteral("recorded.mcap"))) << window.recordingText().toStdString();
  EXPECT_TRUE(window.recordingText().contains(QStringLiteral("3,000 events")) ||
              window.recordingText().contains(QStringLiteral("3000 events")))
      << window.recordingText().toStdString();
  window.dashboard().stopRecording();
  EXPECT_FALSE(window.dashboard().isRecording());
  EXPECT_TRUE(window.recordingText().isEmpty());

  transport::RecordingReader reader(path.toStdString());
  EXPECT_TRUE(reader.indexed());
  EXPECT_EQ(reader.summary().messageCount, static_cast<uint64_t>(kRecorded));
  EXPECT_GT(reader.summary().fileSize, 0U);
}

TEST_F(ReplayTest, TheSizeLabelGrowsWithTheFile) {
  MainWindow window(options());
  const QString path = dir_.filePath(QStringLiteral("growing.mcap"));
  ASSERT_TRUE(window.dashboard().startRecording(path));
  window.dashboard().updateStatus();
  const QString before = window.recordingText();
  EXPECT_TRUE(before.contains(QStringLiteral("0 events"))) << before.toStdString();
  const auto source = test::makeSource("live", 78);
  std::vector<transport::ReceivedEvent> events;
  // More than one 1 MiB chunk of records, so bytes reach the file while recording.
  for (int j = 0; j < 40'000; ++j) {
    events.push_back(test::received(source, Event{"step", test::atMs(kT0Ms + j), {{"text", std::string(40, 'x')}}}));
  }
  window.dashboard().ingest().deliver(events);
  window.dashboard().updateStatus();
  EXPECT_NE(window.recordingText(), before);
  EXPECT_GT(window.dashboard().ingest().recordingStatus().bytes, 0U);
  EXPECT_TRUE(window.recordingText().contains(QLocale().formattedDataSize(
      static_cast<qint64>(window.dashboard().ingest().recordingStatus().bytes))))
      << window.recordingText().toStdString();
  window.dashboard().stopRecording();
}

TEST_F(ReplayTest, RecordingIntoADirectoryOrAnUnwritablePlaceFailsWithAClearError) {
  MainWindow window(options());
  EXPECT_FALSE(window.dashboard().startRecording(dir_.path()));
  EXPECT_FALSE(window.dashboard().isRecording());
  EXPECT_TRUE(window.dashboard().lastError().contains(dir_.path())) << window.dashboard().lastError().toStdString();
  const QString missing = dir_.filePath(QStringLiteral("no/such/dir/run.mcap"));
  EXPECT_FALSE(window.dashboard().startRecording(missing));
  EXPECT_TRUE(window.dashboard().lastError().contains(missing)) << window.dashboard().lastError().toStdString();
  EXPECT_TRUE(window.recordingText().isEmpty());
}

TEST_F(ReplayTest, ARefusedFileLeavesTheWindowLiveWithTheErrorShownAndNoTimeline) {
  const QString notARecording = dir_.filePath(QStringLiteral("passwd.mcap"));
  {
    std::ofstream out(notARecording.toStdString());
    out << "root:x:0:0:root:/root:/bin/bash\n";
  }
  MainWindow window(options());
  window.show();
  deliverLiveWindow(window.dashboard());
  window.dashboard().refreshNow();
  const QString title = window.windowTitle();
  QSignalSpy reported(&window.dashboard(), &Dashboard::errorReported);
  window.dashboard().replays().openRecording(notARecording);
  ASSERT_TRUE(reported.wait(static_cast<int>(std::chrono::milliseconds(test::kDeadline).count())));
  window.dashboard().updateStatus();  // the once-a-second status line does not hide the error

  EXPECT_FALSE(window.timeline().isVisibleTo(&window));
  EXPECT_EQ(window.timeline().session(), nullptr);
  EXPECT_EQ(window.windowTitle(), title);
  const QString status = window.statusBar()->currentMessage();
  EXPECT_FALSE(status.contains(QStringLiteral("Replaying"))) << status.toStdString();
  EXPECT_TRUE(status.contains(QStringLiteral("passwd.mcap"))) << status.toStdString();
  EXPECT_NE(window.chartGrid().chart(QStringLiteral("loss")), nullptr);
}

// The slider's tooltip promises a jump to the click; a track click used to step a page instead.
TEST_F(ReplayTest, ClickingTheSlidersTrackJumpsThePlayheadToTheClick) {
  Dashboard dashboard(options());
  dashboard.replays().setTimeRange(TimeRange::All);
  ReplaySession* session = openReplay(dashboard, recording_);
  TimelineBar bar;
  bar.resize(1200, 40);
  bar.setSession(session);
  bar.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&bar));
  ASSERT_EQ(session->playheadNs(), eventNs(kEvents - 1));  // opened at the end

  QSlider* slider = bar.slider();
  QStyleOptionSlider option;
  option.initFrom(slider);
  option.orientation = slider->orientation();
  option.minimum = slider->minimum();
  option.maximum = slider->maximum();
  option.sliderPosition = slider->sliderPosition();
  option.sliderValue = slider->value();
  const QRect groove = slider->style()->subControlRect(QStyle::CC_Slider, &option, QStyle::SC_SliderGroove, slider);
  const QPoint quarter(groove.left() + groove.width() / 4, groove.center().y());
  QTest::mouseClick(slider, Qt::LeftButton, Qt::NoModifier, quarter);
  settle(dashboard, *session);

  // A quarter of the way in, give or take the handle's width, not one page (a twentieth) back
  // from the end.
  const double fraction =
      static_cast<double>(session->playheadNs() - eventNs(0)) / static_cast<double>(eventNs(kEvents - 1) - eventNs(0));
  EXPECT_NEAR(fraction, 0.25, 0.05);
  EXPECT_EQ(dashboard.eventLog().rowCount(), static_cast<int>((session->playheadNs() - eventNs(0)) / test::kSpacingNs) + 1);
}

TEST(TimelineBarTest, FormatsDurations) {
  EXPECT_EQ(TimelineBar::formatDuration(0), QStringLiteral("0:00.0"));
  EXPECT_EQ(TimelineBar::formatDuration(62'500'000'000), QStringLiteral("1:02.5"));
  EXPECT_EQ(TimelineBar::formatDuration(3'600'000'000'000), QStringLiteral("1:00:00.0"));
}

}  // namespace
}  // namespace livemon::ui

namespace livemon::ui {
namespace {

// Issue 30: the timeline had no step labels and no marks for eval events or alerts.
class TimelineTest : public test::ReplayTest {
 protected:
  // Opens `path` on the timeline of a window showing the whole run, with its marks up to date.
  const TimelineStrip* openOnTimeline(const QString& path) {
    window_ = std::make_unique<MainWindow>(options());
    window_->setTimeRange(TimeRange::All);
    window_->resize(1400, 900);
    window_->show();
    openReplay(window_->dashboard(), path);
    window_->timeline().updateMarks(window_->dashboard().registry(), &window_->dashboard().alertCentre().alerts(), true);
    return window_->timeline().strip();
  }

  std::unique_ptr<MainWindow> window_;
};

TEST_F(TimelineTest, LabelsStepsAndMarksEvalEvents) {
  const QString path = dir_.filePath(QStringLiteral("evals.mcap"));
  {
    transport::RecordingWriter writer(path.toStdString());
    const auto source = test::makeSource("train", 4242, std::nullopt, test::kT0Ms);
    uint64_t sequence = 0;
    const auto record = [&](Event event) { test::recordAsReceived(writer, source, std::move(event), sequence++); };
    for (int i = 0; i < test::kEvents; ++i) {
      Event window{std::string(kStatEventName), test::atMs(test::kT0Ms + 500.0 * i), {{"loss.mean", 1.0}}};
      window.step = 10 * i;
      record(std::move(window));
      if (i % 100 == 50) {  // an eval at steps 500, 1500, 2500, 3500
        Event eval{"eval", test::atMs(test::kT0Ms + 500.0 * i), {{"accuracy", 0.5}, {"loss", 1.5}}};
        eval.step = 10 * i;
        record(std::move(eval));
      }
    }
    writer.close();
  }
  const TimelineStrip* strip = openOnTimeline(path);
  ASSERT_NE(strip, nullptr);
  EXPECT_TRUE(strip->isVisible());
  // One mark per eval event (its two fields share it), at its time.
  ASSERT_EQ(strip->marks().marks.size(), 4U);
  EXPECT_EQ(strip->marks().marks[0].label, QStringLiteral("eval"));
  EXPECT_EQ(strip->marks().marks[0].ms, test::kT0Ms + 500.0 * 50);
  EXPECT_FALSE(strip->marks().marks[0].alert);
  EXPECT_TRUE(strip->toolTipAt(strip->xOf(test::kT0Ms + 500.0 * 150)).contains(QStringLiteral("eval at ")));
  EXPECT_TRUE(strip->toolTipAt(strip->xOf(test::kT0Ms + 500.0 * 150)).contains(QStringLiteral("step 1500")));
  EXPECT_TRUE(strip->toolTipAt(strip->xOf(test::kT0Ms + 500.0 * 100)).isEmpty());
  // Step labels along the recording, from its first step to its last.
  const auto labels = strip->stepLabels();
  ASSERT_GE(labels.size(), 3U);
  EXPECT_EQ(labels.front().second, QStringLiteral("step 0"));
  EXPECT_EQ(labels.back().second, QStringLiteral("step %1").arg(QLocale().toString(10 * (test::kEvents - 1))));
  EXPECT_LT(labels.front().first, labels.back().first);
}

}  // namespace
}  // namespace livemon::ui

namespace livemon::ui {
namespace {

// A replay runs no alert rules (each seek would raise them again), so its timeline had no alert
// marks to show: where a line became NaN, the moment the nan rule alerts on, gets a red mark.
TEST_F(TimelineTest, MarksWhereALineBecameNaN) {
  const QString path = dir_.filePath(QStringLiteral("nan.mcap"));
  constexpr int kNanFrom = 300;
  {
    transport::RecordingWriter writer(path.toStdString());
    const auto source = test::makeSource("train", 4242, std::nullopt, test::kT0Ms);
    for (int i = 0; i < test::kEvents; ++i) {
      const double loss = i >= kNanFrom ? std::numeric_limits<double>::quiet_NaN() : 1.0;
      Event window{std::string(kStatEventName), test::atMs(test::kT0Ms + 500.0 * i), {{"loss.mean", loss}, {"lr.value", 0.1}}};
      window.step = 10 * i;
      test::recordAsReceived(writer, source, std::move(window), static_cast<uint64_t>(i));
    }
    writer.close();
  }
  const TimelineStrip* strip = openOnTimeline(path);
  ASSERT_NE(strip, nullptr);
  ASSERT_EQ(strip->marks().marks.size(), 1U);
  const TimelineMark& mark = strip->marks().marks.front();
  EXPECT_TRUE(mark.alert);
  EXPECT_EQ(mark.ms, test::kT0Ms + 500.0 * kNanFrom);
  EXPECT_EQ(mark.label, QStringLiteral("loss.mean NaN"));
  EXPECT_TRUE(strip->toolTipAt(strip->xOf(mark.ms)).contains(QStringLiteral("loss.mean NaN")));
}

}  // namespace
}  // namespace livemon::ui
