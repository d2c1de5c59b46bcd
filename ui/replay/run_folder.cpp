#include <livemon/ui/replay/run_folder.h>

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <utility>

#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QSet>
#include <QTimer>

#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemon/ui/ingest/ingest_worker.h>

namespace livemon::ui {

namespace {

// Events converted and staged at once: bounds what a read holds before staging it.
constexpr std::size_t kEventsPerBatch = 16384;

// Marks a folder run's instance id, so a recording of a publisher also seen live (or replayed) is
// a source of its own.
constexpr uint64_t kFolderInstanceMark = 0x464f4c444552ULL;  // "FOLDER"

// Where each slice of a recording starts (log time): at each chunk's start, so a slice of a file
// written in time order is one chunk. A file whose chunks overlap in time would have its chunks
// read again for every slice they overlap: more than twice the work of one pass makes it one
// slice.
std::vector<uint64_t> sliceStarts(const std::vector<transport::RecordingChunk>& chunks) {
  std::vector<uint64_t> starts;
  starts.reserve(chunks.size());
  for (const transport::RecordingChunk& chunk : chunks) starts.push_back(chunk.startTimeNs);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  uint64_t reads = 0;
  for (const transport::RecordingChunk& chunk : chunks) {
    const auto first = std::lower_bound(starts.begin(), starts.end(), chunk.startTimeNs);
    const auto last = std::upper_bound(starts.begin(), starts.end(), chunk.endTimeNs);
    reads += static_cast<uint64_t>(std::max<std::ptrdiff_t>(1, last - first));
  }
  if (reads > 2 * chunks.size() + 16) return {0};
  return starts;
}

}  // namespace

struct RunFolder::File {
  enum class State { Waiting, Open, Done, Failed, Replaced };
  State state = State::Waiting;
  FoundRecording seen;  // its size and time when last looked at
  std::chrono::steady_clock::time_point unchangedSince;
  QString endpoint;
  std::unique_ptr<transport::RecordingReader> reader;
  std::unique_ptr<transport::RecordedEventDecoder> decoder;
  // The recording's sources (as decoded) and the sources the dashboard sees for them.
  std::map<const transport::SourceInfo*, std::shared_ptr<const transport::SourceInfo>> sources;
  std::vector<uint64_t> slices;
  std::size_t nextSlice = 0;
  // Where a slice stopped for the read's budget (the message's chunk offset and its offset in the
  // chunk, in file order): the next read of it goes on after it.
  std::optional<std::pair<uint64_t, uint64_t>> resumeAfter;
  bool started = false;  // its first events have been read
  std::size_t problemsReported = 0;

  const std::shared_ptr<const transport::SourceInfo>& keptApart(const std::shared_ptr<const transport::SourceInfo>& source) {
    auto found = sources.find(source.get());
    if (found != sources.end()) return found->second;
    transport::SourceInfo info = *source;
    if (info.run.empty()) info.run = QFileInfo(seen.path).completeBaseName().toStdString();
    info.instanceId ^= kFolderInstanceMark;
    return sources.emplace(source.get(), std::make_shared<const transport::SourceInfo>(std::move(info))).first->second;
  }

  void close() {
    reader.reset();
    decoder.reset();
    sources.clear();
  }
};

struct RunFolder::Worker {
  std::map<QString, File> files;  // by path: every recording looked at
  std::vector<QString> reading;   // those open with slices left, in the order opened
};

RunFolder::RunFolder(IngestWorker& ingest, RunFolderLimits limits, Clock* clock, QObject* parent)
    : QObject(parent), ingest_(ingest), clock_(clock != nullptr ? clock : &systemClock()), limits_(limits),
      worker_(std::make_unique<Worker>()) {
  thread_ = std::thread([this] { run(); });
}

RunFolder::~RunFolder() { stopReader(); }

void RunFolder::stopReader() {
  if (!thread_.joinable()) return;
  abandoned_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    jobs_.clear();
  }
  wake_.notify_all();
  thread_.join();
  if (rescanTimer_ != nullptr) rescanTimer_->stop();
}

std::vector<QString> RunFolder::close() {
  stopReader();
  // The reader is gone: its state is this thread's now.
  std::vector<QString> endpoints;
  for (const auto& [path, file] : worker_->files) {
    if (file.state != File::State::Waiting && file.state != File::State::Failed) endpoints.push_back(file.endpoint);
  }
  return endpoints;
}

void RunFolder::open(const QString& folder) {
  if (!folder_.isEmpty()) return;
  folder_ = folder;
  watcher_ = new QFileSystemWatcher(this);
  connect(watcher_, &QFileSystemWatcher::directoryChanged, this, &RunFolder::rescan);
  rescanTimer_ = new QTimer(this);
  rescanTimer_->setInterval(static_cast<int>(limits_.rescanInterval.count()));
  connect(rescanTimer_, &QTimer::timeout, this, &RunFolder::rescan);
  rescanTimer_->start();
  rescan();
}

void RunFolder::rescan() {
  if (folder_.isEmpty() || !thread_.joinable()) return;
  if (scanQueued_) {
    rescanAgain_ = true;
    return;
  }
  scanQueued_ = true;
  post({Job::Kind::Scan, folder_});
}

void RunFolder::readMore() {
  if (readQueued_ || !hasMoreToRead() || !thread_.joinable()) return;
  readQueued_ = true;
  post({Job::Kind::Read, {}});
}

void RunFolder::forget(const QString& endpoint) {
  const QString prefix = endpointFor({});
  if (!endpoint.startsWith(prefix)) return;
  std::erase_if(runs_, [&](const FolderRun& run) { return run.endpoint == endpoint; });
  post({Job::Kind::Forget, endpoint.mid(prefix.size())});
  rescan();  // added again once complete
}

const FolderRun* RunFolder::run(const QString& endpoint) const {
  const auto found =
      std::find_if(runs_.begin(), runs_.end(), [&](const FolderRun& run) { return run.endpoint == endpoint; });
  return found == runs_.end() ? nullptr : &*found;
}

bool RunFolder::busy() const {
  std::lock_guard lock(mutex_);
  return inFlight_ > 0;
}

void RunFolder::post(Job job) {
  if (!thread_.joinable()) return;  // closed
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(std::move(job));
    ++inFlight_;
  }
  wake_.notify_one();
}

void RunFolder::run() {
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    switch (job.kind) {
      case Job::Kind::Scan:
        handleScan(job.path);
        break;
      case Job::Kind::Read:
        handleRead();
        QMetaObject::invokeMethod(this, [this] {
          readQueued_ = false;
          emit loaded();
        }, Qt::QueuedConnection);
        break;
      case Job::Kind::Forget:
        worker_->files.erase(job.path);
        break;
    }
    std::lock_guard lock(mutex_);
    --inFlight_;
  }
}

void RunFolder::handleScan(const QString& folder) {
  Worker& w = *worker_;
  const FolderListing listing = listRecordings(folder, limits_.scan);
  const auto now = clock_->now();
  std::vector<const FoundRecording*> fresh;
  for (const FoundRecording& found : listing.recordings) {
    auto known = w.files.find(found.path);
    if (known == w.files.end()) {
      fresh.push_back(&found);
      continue;
    }
    File& file = known->second;
    const bool changed = found.size != file.seen.size || found.modifiedMs != file.seen.modifiedMs;
    switch (file.state) {
      case File::State::Waiting:
        if (changed) {
          file.seen = found;
          file.unchangedSince = now;
          openFile(file, false);  // closed since?
        } else if (now - file.unchangedSince >= limits_.settle) {
          openFile(file, true);  // no longer written to: read as far as it is complete
        }
        break;
      case File::State::Open:
      case File::State::Done:
        if (!changed) break;
        // Replaced (or written to after it was closed): out with what was read of it, and in again
        // once complete, after the dashboard has removed its sources (forget()).
        file.state = File::State::Replaced;
        file.close();
        std::erase(w.reading, found.path);
        QMetaObject::invokeMethod(this, [this, endpoint = file.endpoint] { emit runReplaced(endpoint); },
                                  Qt::QueuedConnection);
        break;
      case File::State::Failed:
        if (!changed) break;
        w.files.erase(known);  // tried again as a new file
        fresh.push_back(&found);
        break;
      case File::State::Replaced:
        break;
    }
  }
  // A file gone before it was opened no longer counts; runs stay shown, gone or not.
  if (!listing.truncated) {
    QSet<QString> listed;
    for (const FoundRecording& found : listing.recordings) listed.insert(found.path);
    std::erase_if(w.files, [&](const auto& entry) {
      const File::State state = entry.second.state;
      return (state == File::State::Waiting || state == File::State::Failed) && !listed.contains(entry.first);
    });
  }
  const auto counted = static_cast<std::size_t>(
      std::count_if(w.files.begin(), w.files.end(), [](const auto& entry) { return entry.second.state != File::State::Failed; }));
  const std::size_t room = limits_.maxRuns > counted ? limits_.maxRuns - counted : 0;
  // The newest first: a day's experiments rather than last year's.
  std::stable_sort(fresh.begin(), fresh.end(),
                   [](const FoundRecording* a, const FoundRecording* b) { return a->modifiedMs > b->modifiedMs; });
  FolderScanReport report;
  report.folder = folder;
  report.found = listing.recordings.size();
  report.truncated = listing.truncated;
  report.loops = listing.loops;
  report.leftOut = fresh.size() > room ? fresh.size() - room : 0;
  fresh.resize(std::min(fresh.size(), room));
  for (const FoundRecording* found : fresh) {
    File& file = w.files[found->path];
    file.seen = *found;
    file.unchangedSince = now;
    file.endpoint = endpointFor(found->path);
    openFile(file, false);
    if (abandoned_.load(std::memory_order_relaxed)) return;
  }
  for (const auto& [path, file] : w.files) {
    report.runs += file.state == File::State::Open || file.state == File::State::Done ? 1 : 0;
    report.waiting += file.state == File::State::Waiting ? 1 : 0;
    report.failed += file.state == File::State::Failed ? 1 : 0;
  }
  moreToRead_.store(!w.reading.empty(), std::memory_order_relaxed);
  QMetaObject::invokeMethod(this, [this, report, directories = listing.directories] { finishScan(report, directories); },
                            Qt::QueuedConnection);
}

void RunFolder::openFile(File& file, bool scanWithoutSummary) {
  const QString& path = file.seen.path;
  const auto refuse = [&](const QString& message) {
    file.state = File::State::Failed;
    file.close();
    QMetaObject::invokeMethod(this, [this, message] { emit problemFound(message); }, Qt::QueuedConnection);
  };
  try {
    if (scanWithoutSummary) {
      file.reader = std::make_unique<transport::RecordingReader>(path.toStdString(), transport::RecordingReader::Progress{},
                                                                 &abandoned_);
    } else {
      // Its summary only: one without (being written) waits.
      file.reader = std::make_unique<transport::RecordingReader>(path.toStdString(), transport::RecordingFileCheck{},
                                                                 transport::RecordingScanLater{});
      if (!file.reader->indexed()) {
        file.reader.reset();
        file.state = File::State::Waiting;
        return;
      }
    }
  } catch (const transport::RecordingStopped&) {
    return;  // the folder is being closed
  } catch (const std::exception& error) {
    // A file just created may not hold a whole header yet: it is given `settle` to be completed.
    if (!scanWithoutSummary) {
      file.reader.reset();
      file.state = File::State::Waiting;
      return;
    }
    refuse(QString::fromStdString(error.what()));  // it names the file and the byte
    return;
  }
  const RecordingInfo info = describeRecording(path, *file.reader);
  if (info.messages == 0 && !info.problems.isEmpty()) {
    refuse(tr("%1: no readable events (%2)").arg(path, info.problems.join(QStringLiteral("; "))));
    return;
  }
  file.decoder = std::make_unique<transport::RecordedEventDecoder>(file.endpoint.toStdString());
  file.slices = sliceStarts(file.reader->summary().chunks);
  file.nextSlice = 0;
  file.resumeAfter.reset();
  file.started = false;
  file.problemsReported = 0;
  file.state = File::State::Open;
  reportProblems(file);
  worker_->reading.push_back(path);
  QMetaObject::invokeMethod(this, [this, run = FolderRun{path, file.endpoint, info}] { addRun(run); },
                            Qt::QueuedConnection);
}

void RunFolder::handleRead() {
  Worker& w = *worker_;
  std::size_t staged = 0;
  const auto left = [&] { return limits_.eventsPerRead > staged ? limits_.eventsPerRead - staged : 0; };
  const auto stop = [&] { return left() == 0 || abandoned_.load(std::memory_order_relaxed); };
  // The first events of every run first (its sources and its config, sent as it starts): every
  // run is listed before any is read on.
  for (const QString& path : w.reading) {
    if (stop() || limits_.firstEvents == 0) break;
    File& file = w.files[path];
    if (file.state != File::State::Open || file.started) continue;
    file.started = true;
    staged += readSlice(file, std::min(left(), limits_.firstEvents));
  }
  for (const QString& path : w.reading) {
    File& file = w.files[path];
    while (file.state == File::State::Open && !stop()) staged += readSlice(file, left());
    if (stop()) break;
  }
  std::erase_if(w.reading, [&](const QString& path) { return w.files[path].state != File::State::Open; });
  moreToRead_.store(!w.reading.empty() && !abandoned_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

std::size_t RunFolder::readSlice(File& file, std::size_t budget) {
  if (file.nextSlice >= file.slices.size()) {
    file.state = File::State::Done;
    file.close();
    return 0;
  }
  const std::size_t slice = file.nextSlice;
  const uint64_t from = file.slices[slice];
  const uint64_t to = slice + 1 < file.slices.size() ? file.slices[slice + 1] - 1 : UINT64_MAX;
  std::vector<transport::ReceivedEvent> events;
  std::vector<transport::ReceivedEvent> batch;  // the events of one message
  std::size_t staged = 0;
  const auto hand = [&] {
    staged += events.size();
    if (!events.empty()) ingest_.stageReplayed(events);
    events.clear();
  };
  uint64_t undecodable = 0;
  std::string firstError;
  bool stopped = false;
  file.reader->forEachMessage(from, to, [&](const transport::RecordedMessage& message) {
    if (abandoned_.load(std::memory_order_relaxed)) return false;
    const std::pair<uint64_t, uint64_t> at{message.chunkOffset, message.offsetInChunk};
    if (file.resumeAfter && at <= *file.resumeAfter) return true;  // read before
    if (staged + events.size() >= budget) {
      stopped = true;
      return false;
    }
    file.resumeAfter = at;
    std::string error;
    if (!file.decoder->decode(message, batch, &error)) {
      if (undecodable++ == 0) firstError = error;
      return true;
    }
    for (transport::ReceivedEvent& event : batch) {
      event.source = file.keptApart(event.source);
      events.push_back(std::move(event));
    }
    if (events.size() >= kEventsPerBatch) hand();
    return true;
  });
  hand();
  eventsRead_.fetch_add(staged, std::memory_order_relaxed);
  reportProblems(file);
  if (undecodable > 0) {
    const QString message = tr("%1: %2 recorded messages could not be decoded (%3)")
                                .arg(file.seen.path)
                                .arg(undecodable)
                                .arg(QString::fromStdString(firstError));
    QMetaObject::invokeMethod(this, [this, message] { emit problemFound(message); }, Qt::QueuedConnection);
  }
  if (!stopped && !abandoned_.load(std::memory_order_relaxed)) {
    ++file.nextSlice;
    file.resumeAfter.reset();
    if (file.nextSlice >= file.slices.size()) {
      file.state = File::State::Done;
      file.close();
    }
  }
  return staged;
}

void RunFolder::reportProblems(File& file) {
  const auto& problems = file.reader->problems();
  for (; file.problemsReported < problems.size(); ++file.problemsReported) {
    const QString message = QStringLiteral("%1: %2").arg(file.seen.path, describeProblem(problems[file.problemsReported]));
    QMetaObject::invokeMethod(this, [this, message] { emit problemFound(message); }, Qt::QueuedConnection);
  }
}

void RunFolder::addRun(const FolderRun& run) {
  runs_.push_back(run);
  emit runOpened(runs_.back());
}

void RunFolder::finishScan(const FolderScanReport& report, const QStringList& directories) {
  lastScan_ = report;
  QStringList unwatched;
  const QStringList watched = watcher_->directories();
  const QSet<QString> known(watched.begin(), watched.end());
  for (const QString& directory : directories) {
    if (static_cast<std::size_t>(watched.size() + unwatched.size()) >= limits_.maxWatchedDirectories) break;
    if (!known.contains(directory)) unwatched << directory;
  }
  if (!unwatched.isEmpty()) watcher_->addPaths(unwatched);
  scanQueued_ = false;
  emit scanned(lastScan_);
  if (rescanAgain_) {
    rescanAgain_ = false;
    rescan();
  }
  readMore();
}

}  // namespace livemon::ui
