// A folder of recordings as runs (RunFolder, ReplayController::openFolder): every recording under
// it, nested ones too, shown whole; recordings added while it is open; runs of different step
// rates overlaid by step; and the limits: corrupt files, too many files, symbolic link loops.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <QDir>
#include <QFile>
#include <QSignalSpy>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/model/step_points.h>
#include <livemon/ui/replay/folder_scan.h>
#include <livemon/ui/replay/run_folder.h>

#include "replay_test_support.h"
#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;
using test::kT0Ms;
using test::waitFor;

// `events` Stat windows of run `run` (pid `pid`), `spacingMs` apart, the i-th at step i × stepsPer
// with loss.mean = its step / 1000.
void writeRun(const QString& path, const std::string& run, int64_t pid, int events, double spacingMs = 500.0,
              int64_t stepsPer = 1) {
  transport::RecordingWriterOptions options;
  options.chunkBytes = 2048;  // many chunks: many slices
  transport::RecordingWriter writer(path.toStdString(), options);
  const auto source = test::makeSource(run, pid, std::nullopt, kT0Ms);
  for (int i = 0; i < events; ++i) {
    const int64_t step = i * stepsPer;
    Event event{std::string(kStatEventName), test::atMs(kT0Ms + spacingMs * i),
                {{"loss.mean", static_cast<double>(step) / 1000.0}}};
    event.step = step;
    test::recordAsReceived(writer, source, std::move(event), static_cast<uint64_t>(i));
  }
  writer.close();
}

class RunFolderTest : public test::ReplayTest {
 protected:
  void SetUp() override {
    ReplayTest::SetUp();
    folder_ = dir_.filePath(QStringLiteral("runs"));
    ASSERT_TRUE(QDir().mkpath(folder_ + QStringLiteral("/sub")));
  }

  QString inFolder(const QString& name) const { return QDir(folder_).filePath(name); }

  // Waits until the folder has finished every look at its files asked for, and read all it opened.
  static void settle(Dashboard& dashboard, RunFolder& folder) {
    ASSERT_TRUE(waitFor([&] {
      dashboard.refreshNow();  // asks the folder it opened for the next slice, as the refresh timer does
      folder.readMore();       // (and a folder of the test's own)
      return !folder.scanning() && !folder.busy() && !folder.hasMoreToRead();
    }));
    dashboard.refreshNow();
  }

  // The runs of the sources the dashboard shows, by run name, with their endpoints.
  static std::map<std::string, QString> runs(const Dashboard& dashboard) {
    std::map<std::string, QString> result;
    for (SourceId id = 0; id < dashboard.registry().sourceIdEnd(); ++id) {
      if (const SourceEntry* source = dashboard.registry().source(id)) result[source->info->run] = source->endpoint;
    }
    return result;
  }

  // The loss line of run `run`.
  static const SeriesEntry* loss(const Dashboard& dashboard, const std::string& run) {
    for (SeriesId id = 0; id < dashboard.registry().seriesIdEnd(); ++id) {
      const SeriesEntry* series = dashboard.registry().series(id);
      if (series == nullptr || series->stat != QLatin1String("loss")) continue;
      const SourceEntry* source = dashboard.registry().source(series->source);
      if (source != nullptr && source->info->run == run) return series;
    }
    return nullptr;
  }

  QString folder_;
};

TEST_F(RunFolderTest, OpensEveryRecordingUnderTheFolderNestedOnesTooAsRunsShownWhole) {
  writeRun(inFolder(QStringLiteral("lr-1e-3.mcap")), "lr-1e-3", 11, 300);
  writeRun(inFolder(QStringLiteral("sub/lr-3e-4.mcap")), "lr-3e-4", 12, 200);
  QFile notes(inFolder(QStringLiteral("notes.txt")));
  ASSERT_TRUE(notes.open(QIODevice::WriteOnly));
  notes.write("not a recording, and not named as one");
  notes.close();

  Dashboard dashboard(options());
  RunFolder* folder = dashboard.replays().openFolder(folder_);
  settle(dashboard, *folder);

  const std::map<std::string, QString> expected{
      {"lr-1e-3", RunFolder::endpointFor(inFolder(QStringLiteral("lr-1e-3.mcap")))},
      {"lr-3e-4", RunFolder::endpointFor(inFolder(QStringLiteral("sub/lr-3e-4.mcap")))}};
  EXPECT_EQ(runs(dashboard), expected);
  EXPECT_EQ(folder->runs().size(), 2U);
  EXPECT_EQ(folder->lastScan().found, 2U);
  EXPECT_EQ(folder->lastScan().leftOut, 0U);
  // Whole, whatever the time range: every window, first to last, though the range is 5 minutes
  // and neither run is as recent as the clock's now.
  const SeriesEntry* first = loss(dashboard, "lr-1e-3");
  const SeriesEntry* second = loss(dashboard, "lr-3e-4");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->store.appendedCount(), 300U);
  EXPECT_EQ(first->store.firstX(), kT0Ms);
  EXPECT_EQ(first->store.lastX(), kT0Ms + 500.0 * 299);
  EXPECT_EQ(second->store.appendedCount(), 200U);
  EXPECT_EQ(folder->eventsRead(), 500U);

  // Closing the folder takes its runs out with all their data.
  dashboard.replays().closeFolder();
  dashboard.refreshNow();
  EXPECT_EQ(dashboard.registry().sourceCount(), 0U);
  EXPECT_EQ(dashboard.registry().seriesCount(), 0U);
  EXPECT_EQ(dashboard.eventLog().rowCount(), 0);
}

TEST_F(RunFolderTest, ClosingTakesOutARunReadBeforeItsOpeningWasReported) {
  writeRun(inFolder(QStringLiteral("early.mcap")), "early", 13, 40);
  Dashboard dashboard(options());
  RunFolder* folder = dashboard.replays().openFolder(folder_);
  // No event processed meanwhile: the run is read and shown before runOpened reaches the folder.
  const auto deadline = std::chrono::steady_clock::now() + test::kDeadline;
  while (!folder->hasMoreToRead() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  folder->readMore();
  while (folder->busy() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  dashboard.refreshNow();
  ASSERT_TRUE(folder->runs().empty());
  ASSERT_EQ(dashboard.registry().sourceCount(), 1U);

  dashboard.replays().closeFolder();
  dashboard.refreshNow();
  EXPECT_EQ(dashboard.registry().sourceCount(), 0U);
}

TEST_F(RunFolderTest, TwoRunsOfDifferentStepRatesOverlayByStepExactly) {
  // "fast" makes 10 steps a window, one every 100 ms; "slow" one step a window, one a second.
  writeRun(inFolder(QStringLiteral("fast.mcap")), "fast", 21, 100, 100.0, 10);
  writeRun(inFolder(QStringLiteral("sub/slow.mcap")), "slow", 22, 1000, 1000.0, 1);
  Dashboard dashboard(options());
  RunFolder* folder = dashboard.replays().openFolder(folder_);
  settle(dashboard, *folder);

  for (const std::string run : {"fast", "slow"}) {
    const SeriesEntry* series = loss(dashboard, run);
    ASSERT_NE(series, nullptr) << run;
    const StepPoints points(series->store, XRange{*series->store.firstX(), *series->store.lastX()});
    // On the Step axis the transform is the identity: x is the step.
    const PlotTransform transform = dashboard.registry().transform(*series, TimeAxisMode::Step);
    std::map<double, double> byStep;
    points.visitFrom(0.0, 0, [&](double x, double y, bool) {
      byStep[transform.apply(x)] = y;
      return true;
    });
    for (const double step : {0.0, 10.0, 500.0, 990.0}) {
      ASSERT_TRUE(byStep.contains(step)) << run << " has no point at x = " << step;
      EXPECT_EQ(byStep[step], step / 1000.0) << run;
    }
  }
}

TEST_F(RunFolderTest, ARecordingAddedToTheOpenFolderAppears) {
  writeRun(inFolder(QStringLiteral("first.mcap")), "first", 31, 50);
  Dashboard dashboard(options());
  RunFolder* folder = dashboard.replays().openFolder(folder_);
  QSignalSpy opened(folder, &RunFolder::runOpened);
  settle(dashboard, *folder);
  ASSERT_EQ(opened.count(), 1);

  // Moved in whole, as a finished recording is copied in: the watcher sees the folder change.
  const QString outside = dir_.filePath(QStringLiteral("second.mcap"));
  writeRun(outside, "second", 32, 50);
  ASSERT_TRUE(QFile::rename(outside, inFolder(QStringLiteral("sub/second.mcap"))));
  ASSERT_TRUE(waitFor([&] { return opened.count() == 2; }));
  settle(dashboard, *folder);
  EXPECT_EQ(runs(dashboard).size(), 2U);
  ASSERT_NE(loss(dashboard, "second"), nullptr);
  EXPECT_EQ(loss(dashboard, "second")->store.appendedCount(), 50U);
  // The first run was read once: adding one does not read the others again.
  EXPECT_EQ(loss(dashboard, "first")->store.appendedCount(), 50U);
}

TEST_F(RunFolderTest, ARecordingStillBeingWrittenIsAddedOnceComplete) {
  Dashboard dashboard(options());
  RunFolder* folder = dashboard.replays().openFolder(folder_);
  settle(dashboard, *folder);

  // A recorder at work: complete chunks, no summary yet.
  const auto source = test::makeSource("live-run", 41, std::nullopt, kT0Ms);
  {
    transport::RecordingWriterOptions writerOptions;
    writerOptions.chunkBytes = 1024;
    transport::RecordingWriter writer(inFolder(QStringLiteral("writing.mcap")).toStdString(), writerOptions);
    for (int i = 0; i < 40; ++i) {
      test::recordAsReceived(writer, source,
                             Event{std::string(kStatEventName), test::atMs(kT0Ms + 500.0 * i), {{"loss.mean", 1.0}}},
                             static_cast<uint64_t>(i));
    }
    writer.flush();
    folder->rescan();
    settle(dashboard, *folder);
    EXPECT_EQ(folder->lastScan().waiting, 1U);
    EXPECT_TRUE(folder->runs().empty());
    EXPECT_EQ(dashboard.registry().sourceCount(), 0U);
    writer.close();
  }
  folder->rescan();
  settle(dashboard, *folder);
  EXPECT_EQ(folder->lastScan().waiting, 0U);
  ASSERT_EQ(folder->runs().size(), 1U);
  ASSERT_NE(loss(dashboard, "live-run"), nullptr);
  EXPECT_EQ(loss(dashboard, "live-run")->store.appendedCount(), 40U);
}

TEST_F(RunFolderTest, ARecordingWhoseRecorderWasKilledIsAddedOnceItStopsChanging) {
  // Cut off after its third chunk: no summary, and never one.
  const QString whole = dir_.filePath(QStringLiteral("whole.mcap"));
  writeRun(whole, "killed", 51, 300);
  transport::RecordingReader reader(whole.toStdString());
  ASSERT_GT(reader.summary().chunks.size(), 4U);
  const uint64_t cut = reader.summary().chunks[3].offset;
  QFile in(whole);
  ASSERT_TRUE(in.open(QIODevice::ReadOnly));
  QFile out(inFolder(QStringLiteral("killed.mcap")));
  ASSERT_TRUE(out.open(QIODevice::WriteOnly));
  out.write(in.read(static_cast<qint64>(cut)));
  out.close();

  Dashboard dashboard(options());
  RunFolder* folder = dashboard.replays().openFolder(folder_);
  settle(dashboard, *folder);
  EXPECT_EQ(folder->lastScan().waiting, 1U);
  clock_.advance(RunFolderLimits{}.settle);
  folder->rescan();
  settle(dashboard, *folder);
  ASSERT_EQ(folder->runs().size(), 1U);
  EXPECT_FALSE(folder->runs().front().info.indexed);
  ASSERT_NE(loss(dashboard, "killed"), nullptr);
  EXPECT_GT(loss(dashboard, "killed")->store.appendedCount(), 0U);
  EXPECT_LT(loss(dashboard, "killed")->store.appendedCount(), 300U);
}

TEST_F(RunFolderTest, ARunWhoseFileIsReplacedIsReadAgainWhole) {
  const QString path = inFolder(QStringLiteral("again.mcap"));
  writeRun(path, "again", 55, 50);
  Dashboard dashboard(options());
  RunFolder* folder = dashboard.replays().openFolder(folder_);
  settle(dashboard, *folder);
  ASSERT_NE(loss(dashboard, "again"), nullptr);
  ASSERT_EQ(loss(dashboard, "again")->store.appendedCount(), 50U);

  QSignalSpy replaced(folder, &RunFolder::runReplaced);
  writeRun(path, "again", 55, 80);  // a new recording under the same name
  folder->rescan();
  ASSERT_TRUE(waitFor([&] { return replaced.count() == 1 && folder->runs().size() == 1; }));
  settle(dashboard, *folder);
  // Its old data went with its old sources: the line holds the new recording's windows only.
  EXPECT_EQ(dashboard.registry().sourceCount(), 1U);
  ASSERT_NE(loss(dashboard, "again"), nullptr);
  EXPECT_EQ(loss(dashboard, "again")->store.appendedCount(), 80U);
}

TEST_F(RunFolderTest, ACorruptRecordingIsReportedAndTheOthersStillOpen) {
  writeRun(inFolder(QStringLiteral("good.mcap")), "good", 61, 100);
  // Not a recording at all.
  QFile garbage(inFolder(QStringLiteral("garbage.mcap")));
  ASSERT_TRUE(garbage.open(QIODevice::WriteOnly));
  garbage.write(QByteArray(4096, 'x'));
  garbage.close();
  // A recording closed cleanly, with a chunk damaged since.
  const QString damagedPath = inFolder(QStringLiteral("sub/damaged.mcap"));
  writeRun(damagedPath, "damaged", 62, 300);
  const uint64_t chunkAt = transport::RecordingReader(damagedPath.toStdString()).summary().chunks[2].offset;
  QFile damaged(damagedPath);
  ASSERT_TRUE(damaged.open(QIODevice::ReadWrite));
  ASSERT_TRUE(damaged.seek(static_cast<qint64>(chunkAt) + 80));
  damaged.write(QByteArray(16, '\xff'));
  damaged.close();

  Dashboard dashboard(options());
  RunFolder* folder = dashboard.replays().openFolder(folder_);
  QSignalSpy problems(&dashboard.replays(), &ReplayController::problemFound);
  settle(dashboard, *folder);
  // A file that is no recording yet may be one being created: it gets `settle` to become one.
  clock_.advance(RunFolderLimits{}.settle);
  folder->rescan();
  settle(dashboard, *folder);

  QStringList reported;
  for (const QList<QVariant>& problem : problems) reported << problem.front().toString();
  const auto mentions = [&](const QString& path) {
    for (const QString& text : reported) {
      if (text.contains(path) && text.contains(QLatin1String("byte"))) return true;
    }
    return false;
  };
  EXPECT_TRUE(mentions(inFolder(QStringLiteral("garbage.mcap")))) << reported.join(QLatin1Char('\n')).toStdString();
  EXPECT_TRUE(mentions(damagedPath)) << reported.join(QLatin1Char('\n')).toStdString();
  EXPECT_EQ(folder->lastScan().failed, 1U);
  // The others open: the good one whole, the damaged one but for its damaged chunk.
  ASSERT_NE(loss(dashboard, "good"), nullptr);
  EXPECT_EQ(loss(dashboard, "good")->store.appendedCount(), 100U);
  ASSERT_NE(loss(dashboard, "damaged"), nullptr);
  EXPECT_GT(loss(dashboard, "damaged")->store.appendedCount(), 200U);
  EXPECT_LT(loss(dashboard, "damaged")->store.appendedCount(), 300U);
}

TEST_F(RunFolderTest, OpensAtMostMaxRunsTheNewestAndSaysHowManyWereLeftOut) {
  for (int i = 0; i < 5; ++i) {
    writeRun(inFolder(QStringLiteral("run%1.mcap").arg(i)), "run" + std::to_string(i), 70 + i, 10);
    // The newest is the last written.
    QFile file(inFolder(QStringLiteral("run%1.mcap").arg(i)));
    ASSERT_TRUE(file.open(QIODevice::ReadWrite));
    ASSERT_TRUE(file.setFileTime(QDateTime::fromSecsSinceEpoch(1'700'000'000 + i), QFileDevice::FileModificationTime));
  }
  Dashboard dashboard(options());
  RunFolderLimits limits;
  limits.maxRuns = 2;
  RunFolder folder(dashboard.ingest(), limits, &clock_);
  folder.open(folder_);
  settle(dashboard, folder);
  EXPECT_EQ(folder.lastScan().found, 5U);
  EXPECT_EQ(folder.lastScan().runs, 2U);
  EXPECT_EQ(folder.lastScan().leftOut, 3U);
  EXPECT_EQ((std::map<std::string, QString>{{"run3", RunFolder::endpointFor(inFolder(QStringLiteral("run3.mcap")))},
                                            {"run4", RunFolder::endpointFor(inFolder(QStringLiteral("run4.mcap")))}}),
            runs(dashboard));
}

TEST_F(RunFolderTest, ABigChunkIsReadABoundedSliceAtATimeEveryEventOnce) {
  // One chunk of 300 windows, read 7 events a time: each read goes on where the last stopped.
  {
    transport::RecordingWriter writer(inFolder(QStringLiteral("one-chunk.mcap")).toStdString());
    const auto source = test::makeSource("big", 91, std::nullopt, kT0Ms);
    for (int i = 0; i < 300; ++i) {
      Event event{std::string(kStatEventName), test::atMs(kT0Ms + 500.0 * i), {{"loss.mean", static_cast<double>(i)}}};
      event.step = i;
      test::recordAsReceived(writer, source, std::move(event), static_cast<uint64_t>(i));
    }
  }
  ASSERT_EQ(transport::RecordingReader(inFolder(QStringLiteral("one-chunk.mcap")).toStdString()).summary().chunks.size(), 1U);
  Dashboard dashboard(options());
  RunFolderLimits limits;
  limits.eventsPerRead = 7;
  RunFolder folder(dashboard.ingest(), limits, &clock_);
  QSignalSpy reads(&folder, &RunFolder::loaded);
  folder.open(folder_);
  settle(dashboard, folder);
  EXPECT_GE(reads.count(), 300 / 7);
  const SeriesEntry* series = loss(dashboard, "big");
  ASSERT_NE(series, nullptr);
  EXPECT_EQ(series->store.appendedCount(), 300U);
  EXPECT_EQ(series->store.lateDroppedCount(), 0U);
  EXPECT_EQ(series->store.firstX(), kT0Ms);
  EXPECT_EQ(series->store.lastX(), kT0Ms + 500.0 * 299);
  EXPECT_EQ(folder.eventsRead(), 300U);
}

TEST_F(RunFolderTest, TheControllerSaysInTheStatusBarWhatWasLeftOut) {
  for (int i = 0; i < 3; ++i) writeRun(inFolder(QStringLiteral("run%1.mcap").arg(i)), "run" + std::to_string(i), 80 + i, 10);
  Dashboard dashboard(options());
  ReplayControllerOptions limited;
  limited.folderLimits.maxRuns = 2;
  ReplayController controller(dashboard.ingest(), dashboard.registry(), dashboard.settings(), limited);
  QSignalSpy messages(&controller, &ReplayController::message);
  RunFolder* folder = controller.openFolder(folder_);
  ASSERT_TRUE(waitFor([&] { return !folder->scanning(); }));
  ASSERT_FALSE(messages.isEmpty());
  EXPECT_EQ(messages.back().front().toString(),
            QStringLiteral("%1: 2 runs; left out: 1 (only the newest 2 are opened)").arg(folder_));
  // Said once, not on every look at the folder.
  folder->rescan();
  ASSERT_TRUE(waitFor([&] { return !folder->scanning(); }));
  EXPECT_EQ(messages.size(), 1);
}

TEST(FolderScanTest, FindsRecordingsInSubfoldersAndEndsOnASymbolicLinkLoop) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString root = dir.filePath(QStringLiteral("runs"));
  ASSERT_TRUE(QDir().mkpath(root + QStringLiteral("/a/b")));
  for (const QString& name : {QStringLiteral("x.mcap"), QStringLiteral("a/y.MCAP"), QStringLiteral("a/b/z.mcap"),
                              QStringLiteral("a/notes.txt")}) {
    QFile file(QDir(root).filePath(name));
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  }
  // a/b/up -> the folder itself, and a/twice.mcap -> x.mcap: a loop, and a recording reached twice.
  ASSERT_TRUE(QFile::link(root, root + QStringLiteral("/a/b/up")));
  ASSERT_TRUE(QFile::link(root + QStringLiteral("/x.mcap"), root + QStringLiteral("/a/twice.mcap")));

  const FolderListing listing = listRecordings(root);
  std::vector<QString> found;
  for (const FoundRecording& recording : listing.recordings) found.push_back(QDir(root).relativeFilePath(recording.path));
  // The recording reached through the link is the same file as x.mcap: listed once.
  EXPECT_EQ(found.size(), 3U);
  EXPECT_EQ(found[0], QStringLiteral("a/b/z.mcap"));
  EXPECT_EQ(listing.loops, 1U);
  EXPECT_FALSE(listing.truncated);
  EXPECT_EQ(listing.directories.size(), 3);

  FolderScanLimits few;
  few.maxEntries = 2;
  EXPECT_TRUE(listRecordings(root, few).truncated);
  FolderScanLimits shallow;
  shallow.maxDepth = 1;
  const FolderListing top = listRecordings(root, shallow);
  EXPECT_TRUE(top.truncated);
  EXPECT_EQ(top.recordings.size(), 2U);  // x.mcap, a/y.MCAP (and x.mcap again through a/twice.mcap)
}

}  // namespace
}  // namespace livemon::ui
