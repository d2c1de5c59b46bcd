#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <QObject>
#include <QString>

#include <livemon/clock.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/model/time_view.h>
#include <livemon/ui/replay/replay_session.h>
#include <livemon/ui/replay/run_folder.h>

namespace livemon::ui {

class DashboardSettings;
class IngestWorker;
class StatRegistry;

// Thread-safety: a plain value type.
// How a ReplayController starts.
struct ReplayControllerOptions {
  // Drives playback and measures the live run's elapsed time; nullptr: the system clock. Must
  // outlive the controller.
  Clock* clock = nullptr;
  // Log rows a replay reads from before its window after a seek (the log's capacity).
  std::size_t logBackfill = 0;
  bool baselinesFollowLive = false;
  // What a folder of runs opens and reads at most (openFolder).
  RunFolderLimits folderLimits{};
};

// GUI thread only. Each ReplaySession it opens reads its recording on a thread of its own and
// stages what it reads through the IngestWorker, as live events are.
//
// The recordings the dashboard shows, and their life: the one on the timeline (replay()), the one
// being opened to replace it (openingReplay()), the baselines beside the live runs, and a folder
// of recorded runs (folder()), read by a thread of its own too. A file
// refused (not a recording, unreadable) is reported (errorReported) and changes nothing: the
// dashboard stays live, empty, or on the recording it was replaying. A replay that opens replaces
// the one before it.
//
// What the recordings show lives in the pipeline they feed (the Dashboard's registry, log and
// ranges), which does what the controller asks through two signals, each handled at once (a
// direct connection): recordingCleared (a seek: apply what is staged, then clear what the
// recording shows) and recordingClosed (apply what is staged, then remove the recording's
// sources with all their data).
class ReplayController : public QObject {
  Q_OBJECT

 public:
  // `ingest` stages the sessions' events and `registry` holds their sources; both, and
  // `settings` (baselinesFollowLive is saved there), must outlive the controller.
  ReplayController(IngestWorker& ingest, const StatRegistry& registry, DashboardSettings& settings,
                   ReplayControllerOptions options = {}, QObject* parent = nullptr);
  // Destroys the sessions, joining their threads: nothing is staged by them afterwards.
  ~ReplayController() override;

  // Opens a recording (asynchronously: the session's opened() or openFailed() follows). Replay:
  // on the timeline once it has opened (its first generation starts), replacing one replayed
  // before; Baseline: its runs join as "baseline: RUN" sources. Returns the session; a refused
  // one stays valid until the next call.
  ReplaySession* openRecording(const QString& path, ReplayMode mode = ReplayMode::Replay);
  // The recording on the timeline, if any (one still being opened is not, until it opens).
  ReplaySession* replay() const noexcept { return replay_.get(); }
  // The recording being opened for the timeline, if any.
  ReplaySession* openingReplay() const noexcept { return openingReplay_.get(); }
  // Stops replaying, and abandons a recording still being opened for the timeline: the
  // recording's sources leave with all their data; opened again, they return as new sources.
  void closeReplay();
  // The replay's playhead in ms since the Unix epoch, while a replay is open.
  std::optional<double> playheadMs() const;
  // The same on the "Since run start" axis: seconds since the start of the recording's earliest
  // run (the registry's transform); std::nullopt until its sources are known.
  std::optional<double> playheadSinceRunStart() const;
  // The playhead of the recording (replay or baseline) `source` comes from, in ms since the Unix
  // epoch; std::nullopt for a live source.
  std::optional<double> playheadMsOf(SourceId source) const;

  // The recordings opened as baselines, those still opening included, in the order opened.
  std::vector<ReplaySession*> baselines() const;
  // Closes a baseline (one of baselines(); others are ignored): its sources leave with all their
  // data, as a closed replay's do.
  void closeBaseline(ReplaySession* baseline);
  // Following: each baseline's playhead is its run's start plus the live run's elapsed time (the
  // newest live source's time since its start, on the options' clock), so both runs are compared
  // at the same age; without a live source, and not following, a baseline shows up to its end.
  // Either way a baseline holds only the time range before its playhead, as a replay does.
  // Saved in the settings.
  bool baselinesFollowLive() const noexcept { return baselinesFollowLive_; }
  void setBaselinesFollowLive(bool follow);
  // The live run's elapsed time as following baselines use it; std::nullopt without a live source.
  std::optional<std::chrono::nanoseconds> liveElapsed() const;

  // Opens every recording under `folder` as runs (RunFolder), shown whole, in place of a folder
  // opened before; recordings added to it later join. What it found is said in message(), damage
  // in problemFound().
  RunFolder* openFolder(const QString& folder);
  // The folder of runs open, if any.
  RunFolder* folder() const noexcept { return folder_.get(); }
  // Closes the folder: its runs' sources leave with all their data.
  void closeFolder();

  // The time range the charts show: each recording reads this much before its playhead (a
  // folder's runs are shown whole).
  void setTimeRange(TimeRange range);
  TimeRange timeRange() const noexcept { return timeRange_; }
  // Called by each refresh before what is staged is applied: plays the replay on, and moves the
  // baselines where following puts them.
  void tick();

 signals:
  // A recording went on the timeline, or left it (nullptr).
  void replayChanged(ReplaySession* session);
  // A baseline was opened, refused or closed (baselines()).
  void baselinesChanged();
  // A folder of runs was opened, or closed (nullptr).
  void folderChanged(RunFolder* folder);
  // A recording (its sources carry `endpoint`) started a new generation: apply what is staged,
  // then clear its samples, range values and log rows; its sources and series stay, as the window
  // read next brings them straight back.
  void recordingCleared(const QString& endpoint);
  // A recording left, its session joined: apply what is staged (so nothing of it turns up after),
  // then remove its sources with every line, chart, range row and log row of theirs.
  void recordingClosed(const QString& endpoint, ReplayMode mode);
  // A requested window was read in full: to be shown at once, not on the next refresh.
  void windowLoaded();
  // A passing note for the status bar, shown for `timeoutMs`.
  void message(const QString& text, int timeoutMs);
  // Damage found in a recording; errorReported: a recording refused, which the user must acknowledge.
  void problemFound(const QString& message);
  void errorReported(const QString& title, const QString& message);

 private:
  // The recording being opened has opened: it replaces the one on the timeline.
  void promoteOpeningReplay();
  void closeShownReplay();
  // Keeps a refused session (the sender of openFailed) aside until the next openRecording.
  void setAsideRefused(ReplaySession* session);
  std::optional<std::chrono::nanoseconds> window() const;
  // Moves each open baseline's playhead where baselinesFollowLive() puts it.
  void moveBaselines();
  // Where a baseline's playhead goes now (receive time, ns since the Unix epoch).
  int64_t baselineTarget(const ReplaySession& baseline, std::optional<std::chrono::nanoseconds> elapsed) const;
  // Says what a look at the folder found, when it changed.
  void reportFolderScan(const FolderScanReport& report);
  // The earliest (or latest) start of the sources whose endpoint is `endpoint`, in ms.
  std::optional<double> runStartMs(const QString& endpoint) const;

  IngestWorker& ingest_;
  const StatRegistry& registry_;
  DashboardSettings& settings_;
  ReplayControllerOptions options_;
  TimeRange timeRange_ = TimeRange::All;
  bool baselinesFollowLive_ = false;
  std::unique_ptr<ReplaySession> replay_;
  // Until it opens, what the dashboard shows is left as it is: a refused file changes nothing.
  std::unique_ptr<ReplaySession> openingReplay_;
  std::vector<std::unique_ptr<ReplaySession>> baselines_;
  // The last refused session: not deleted inside its own signal, and callers may still hold it.
  std::unique_ptr<ReplaySession> refused_;
  std::unique_ptr<RunFolder> folder_;
  FolderScanReport folderReport_;  // the last said in message()
};

}  // namespace livemon::ui
