#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <QObject>
#include <QString>

#include <livemon/clock.h>
#include <livemon/ui/replay/folder_scan.h>
#include <livemon/ui/replay/replay_session.h>

class QFileSystemWatcher;
class QTimer;

namespace livemon::ui {

class IngestWorker;

// Thread-safety: a plain value type.
// What a RunFolder opens and reads at most, and how it paces itself.
struct RunFolderLimits {
  // Recordings opened as runs, at most: the newest (by modification time) when there are more.
  std::size_t maxRuns = 256;
  FolderScanLimits scan;
  // Events one read stages at most (a message's events are staged together): the runs are read
  // a slice per refresh, each applied by the next refreshes in a few milliseconds, so the window
  // stays responsive however much there is to read.
  std::size_t eventsPerRead = 4096;
  // Events of each run read before any run is read on (its sources and its config come first);
  // 0: each run is read whole in turn.
  std::size_t firstEvents = 64;
  // A recording without a summary (still being written, or its recorder was killed) is opened
  // once its size and modification time have not changed for this long.
  std::chrono::milliseconds settle{10'000};
  // How often the folder is looked at again, besides when the watcher reports a change.
  std::chrono::milliseconds rescanInterval{5'000};
  // Directories watched at most (inotify watches are limited per user); the rescan covers the rest.
  std::size_t maxWatchedDirectories = 256;
};

// Thread-safety: a plain value type.
// A recording of the folder, opened as a run.
struct FolderRun {
  QString path;
  QString endpoint;  // its sources' SourceEntry::endpoint: "folder: PATH"
  RecordingInfo info;
};

// Thread-safety: a plain value type.
// What a look at the folder found.
struct FolderScanReport {
  QString folder;
  std::size_t found = 0;    // recordings under it
  std::size_t runs = 0;     // open as runs
  std::size_t leftOut = 0;  // not opened: beyond RunFolderLimits::maxRuns
  std::size_t waiting = 0;  // still being written: opened once complete
  std::size_t failed = 0;   // refused, each reported by problemFound
  bool truncated = false;   // the listing's limits left part of the folder unvisited
  std::size_t loops = 0;    // directories reached again through a symbolic link

  friend bool operator==(const FolderScanReport&, const FolderScanReport&) = default;
};

// GUI thread only: every public member. A reader thread of its own lists the folder, opens the
// recordings and reads them; requests reach it through a queue, its findings come back as queued
// calls and signals, and the events it reads go into the IngestWorker's staging buffer.
//
// Every recording (*.mcap) under a folder, its subfolders too, as runs beside the live ones, like
// `tensorboard --logdir`: each is shown whole, not up to a playhead, so runs overlay on the
// charts (by step on the Step axis). Its sources keep their run names, marked apart from the same
// publishers seen live; a run without a name is named after its file.
//
// Opening reads each file's summary (its chunk index) only. The events are read on demand: each
// readMore() (the ReplayController calls it on every refresh) reads at most eventsPerRead events:
// first the first few of every run, so every run and its config are listed at once, then the
// rest, run by run, a chunk's time range (a slice) at a time. A read that stops inside a slice
// goes on after the last message it read, so a chunk of any size costs a bounded read each time.
// A file whose chunks overlap in time is one slice.
//
// New recordings are added while it is open: a QFileSystemWatcher on the folders reports new
// files, and a timer looks again every rescanInterval (a watch can be missed or refused). A
// recording still being written (no summary yet) is added once it is complete: closed, or left
// unchanged for `settle` (its recorder was killed: read as far as its last complete chunk). A run
// whose file changes after it was added (replaced) is removed (runReplaced) and added again once
// complete. A recording that cannot be read is reported (problemFound: which file, which byte)
// and the others open; it is not tried again until it changes.
class RunFolder : public QObject {
  Q_OBJECT

 public:
  // `clock` times `settle` (its monotonic time); nullptr: the system clock. It and `ingest` must
  // outlive this.
  explicit RunFolder(IngestWorker& ingest, RunFolderLimits limits = {}, Clock* clock = nullptr,
                     QObject* parent = nullptr);
  // Stops the reader thread (abandoning a read in progress) and joins it.
  ~RunFolder() override;

  // Starts looking at `folder` (once): scanned() follows, with runOpened() for each run.
  void open(const QString& folder);
  const QString& folder() const noexcept { return folder_; }
  // Looks at the folder again (coalesced with a look already asked for).
  void rescan();
  // Reads the next slice of what the runs hold, unless a read is under way or nothing is left.
  void readMore();
  // A look at the folder asked for has not reported yet (scanned()).
  bool scanning() const noexcept { return scanQueued_; }
  // Requests not finished yet.
  bool busy() const;
  // Whether some run has events not read yet (as of the last request finished).
  bool hasMoreToRead() const noexcept { return moreToRead_.load(std::memory_order_relaxed); }
  // The runs opened, in the order opened; the latest look at the folder.
  const std::vector<FolderRun>& runs() const noexcept { return runs_; }
  const FolderRun* run(const QString& endpoint) const;
  const FolderScanReport& lastScan() const noexcept { return lastScan_; }
  // Stops reading for good, joining the reader thread, and returns the endpoints of every run it
  // opened, those whose opening has not been reported here yet (runOpened) included: what the
  // dashboard may hold of the folder.
  std::vector<QString> close();
  // After runReplaced: its sources are gone from the dashboard, so the file may be added anew.
  void forget(const QString& endpoint);
  // Instrumentation: events read from the files so far.
  uint64_t eventsRead() const noexcept { return eventsRead_.load(std::memory_order_relaxed); }

  // The endpoint a recording's sources carry in the dashboard.
  static QString endpointFor(const QString& path) { return QStringLiteral("folder: %1").arg(path); }

 signals:
  void scanned(const FolderScanReport& report);
  void runOpened(const FolderRun& run);
  // The run's file changed: its sources must be removed, then forget(endpoint) called.
  void runReplaced(const QString& endpoint);
  // A read finished: what it staged is applied by the next refresh.
  void loaded();
  // A recording refused, or damage found in one, naming the file and the byte.
  void problemFound(const QString& message);

 private:
  struct Job {
    enum class Kind { Scan, Read, Forget } kind = Kind::Read;
    QString path;  // Scan: the folder; Forget: the file
  };
  struct File;
  struct Worker;

  void post(Job job);
  void run();
  void stopReader();
  // On the reader thread.
  void handleScan(const QString& folder);
  void handleRead();
  // Opens the file from its summary (scanning it when `scanWithoutSummary`): Open, Waiting (no
  // summary yet) or Failed (reported).
  void openFile(File& file, bool scanWithoutSummary);
  // Reads the file's next slice, or `budget` events of it (then the next read goes on from
  // there); returns the events staged.
  std::size_t readSlice(File& file, std::size_t budget);
  void reportProblems(File& file);
  // Back on the GUI thread.
  void finishScan(const FolderScanReport& report, const QStringList& directories);
  void addRun(const FolderRun& run);

  IngestWorker& ingest_;
  Clock* clock_;
  RunFolderLimits limits_;

  // GUI-thread state.
  QString folder_;
  std::vector<FolderRun> runs_;
  FolderScanReport lastScan_;
  QFileSystemWatcher* watcher_ = nullptr;
  QTimer* rescanTimer_ = nullptr;
  bool scanQueued_ = false;   // a scan asked for and not reported yet
  bool rescanAgain_ = false;  // another was asked for meanwhile
  bool readQueued_ = false;   // a read asked for and not finished yet

  // Shared with the reader thread.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;   // guarded by mutex_
  int inFlight_ = 0;       // guarded by mutex_: queued or being handled
  bool stopping_ = false;  // guarded by mutex_
  std::atomic<bool> abandoned_{false};  // set by the destructor: reading stops
  std::atomic<bool> moreToRead_{false};
  std::atomic<uint64_t> eventsRead_{0};
  std::unique_ptr<Worker> worker_;  // the reader thread's only
  std::thread thread_;
};

}  // namespace livemon::ui
