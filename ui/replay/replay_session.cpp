#include <livemon/ui/replay/replay_session.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <utility>

#include <QFileInfo>

#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/ui/ingest/ingest_worker.h>

namespace livemon::ui {

namespace {

// Events converted and staged at once: bounds the memory a read holds before staging it.
constexpr std::size_t kEventsPerBatch = 16384;
// Events held back for stamping a time after the playhead, at most; beyond it they are shown.
constexpr std::size_t kMaxHeldBack = 4 * kEventsPerBatch;

int64_t eventTimeNs(const transport::ReceivedEvent& event) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(event.event.timestamp.time_since_epoch()).count();
}

// Marks a replayed source's instance id, so a recording of a publisher that is also live is still
// a source of its own.
constexpr uint64_t kReplayInstanceMark = 0x5245504c4159ULL;  // "REPLAY"

}  // namespace

QString describeProblem(const transport::RecordingProblem& problem) {
  return QStringLiteral("byte %1: %2").arg(problem.offset).arg(QString::fromStdString(problem.what));
}

RecordingInfo describeRecording(const QString& path, const transport::RecordingReader& reader) {
  const transport::RecordingSummary& summary = reader.summary();
  RecordingInfo info;
  info.path = path;
  // Receive times are unsigned in the file; the timeline's are signed. A time beyond the signed
  // range (a crafted file, or a recorder whose clock read before 1970) is held at its end, so
  // the timeline never ends before it starts and its arithmetic cannot overflow.
  constexpr uint64_t kLatest = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  info.startNs = static_cast<int64_t>(std::min(summary.startTimeNs, kLatest));
  info.endNs = std::max(info.startNs, static_cast<int64_t>(std::min(summary.endTimeNs, kLatest)));
  info.messages = summary.messageCount;
  // Messages hold one event each before version 2, a batch as received from then on.
  info.events = transport::recordingFormatVersion(summary) == 1 ? summary.messageCount : 0;
  info.chunks = summary.chunks.size();
  info.indexed = reader.indexed();
  for (const transport::RecordingProblem& problem : reader.problems()) info.problems << describeProblem(problem);
  return info;
}

struct ReplaySession::Worker {
  std::unique_ptr<transport::RecordingReader> reader;
  std::unique_ptr<transport::RecordedEventDecoder> decoder;
  ReplayMode mode = ReplayMode::Replay;
  QString path;
  // The recording's sources (as decoded) and the sources the dashboard sees for them.
  std::map<const transport::SourceInfo*, std::shared_ptr<const transport::SourceInfo>> sources;
  std::size_t problemsReported = 0;
  uint64_t undecodable = 0;
  int64_t endNs = 0;  // the timeline's end (RecordingInfo::endNs)
  // Read, but stamped after the playhead: shown once it passes their time. Of one generation.
  std::vector<transport::ReceivedEvent> heldBack;
  uint64_t heldGeneration = 0;

  const std::shared_ptr<const transport::SourceInfo>& keptApart(const std::shared_ptr<const transport::SourceInfo>& source) {
    auto found = sources.find(source.get());
    if (found != sources.end()) return found->second;
    transport::SourceInfo info = *source;
    if (mode == ReplayMode::Baseline) {
      info.run = "baseline: " + (info.run.empty() ? std::string("pid ") + std::to_string(info.pid) : info.run);
    }
    info.instanceId ^= kReplayInstanceMark;
    return sources.emplace(source.get(), std::make_shared<const transport::SourceInfo>(std::move(info))).first->second;
  }
};

ReplaySession::ReplaySession(IngestWorker& ingest, Clock* clock, QObject* parent)
    : QObject(parent), ingest_(ingest), clock_(clock != nullptr ? clock : &systemClock()),
      worker_(std::make_unique<Worker>()) {
  thread_ = std::thread([this] { run(); });
}

ReplaySession::~ReplaySession() {
  abandoned_.store(true, std::memory_order_relaxed);  // ends a scan of the file in progress
  currentGeneration_.store(UINT64_MAX, std::memory_order_relaxed);  // abandons a read in progress
  requests_.stop();
  thread_.join();
}

void ReplaySession::open(const QString& path, ReplayMode mode) {
  if (!path_.isEmpty()) return;
  path_ = path;
  mode_ = mode;
  endpointLabel_ = mode == ReplayMode::Replay ? path : QStringLiteral("baseline: %1").arg(path);
  Request request;
  request.kind = Request::Kind::Open;
  request.path = path.toStdString();
  request.mode = mode;
  requests_.post(std::move(request));
}

void ReplaySession::finishOpen(RecordingInfo info) {
  info_ = std::move(info);
  open_ = true;
  startGeneration();
  playheadNs_ = info_.endNs;
  if (startAt_ && startAt_->count() < info_.endNs - info_.startNs) {
    playheadNs_ = info_.startNs + std::max<int64_t>(0, startAt_->count());
  }
  readWindowAtPlayhead();
  emit opened();
  emit playheadChanged(playheadNs_);
}

void ReplaySession::readWindowAtPlayhead() {
  Request read;
  read.generation = generation_;
  read.fromNs = windowStart(playheadNs_);
  read.toNs = playheadNs_;
  read.backfill = logBackfill_;
  requests_.post(std::move(read));
}

void ReplaySession::startGeneration() {
  {
    std::lock_guard lock(stageMutex_);
    ++generation_;
    currentGeneration_.store(generation_, std::memory_order_relaxed);
  }
  emit generationStarted();
}

int64_t ReplaySession::windowStart(int64_t playhead) const {
  if (!window_) return info_.startNs;
  int64_t start = 0;
  if (__builtin_sub_overflow(playhead, static_cast<int64_t>(window_->count()), &start)) return info_.startNs;
  return std::max(info_.startNs, start);
}

void ReplaySession::setWindow(std::optional<std::chrono::nanoseconds> window) {
  const bool longer = (window_ && !window) || (window && window_ && *window > *window_);
  window_ = window;
  if (longer && open_) seek(playheadNs_);
}

void ReplaySession::moveTo(int64_t ns) {
  if (!open_) return;
  const int64_t target = std::clamp(ns, info_.startNs, info_.endNs);
  if (target > playheadNs_) {
    forwardTo(target);
  } else if (target < playheadNs_) {
    seek(target);
  }
}

void ReplaySession::seek(int64_t ns) {
  if (!open_) return;
  playheadNs_ = std::clamp(ns, info_.startNs, info_.endNs);
  startGeneration();
  readWindowAtPlayhead();
  emit playheadChanged(playheadNs_);
}

void ReplaySession::forwardTo(int64_t ns) {
  const int64_t next = std::min(ns, info_.endNs);
  if (next <= playheadNs_) return;
  Request read;
  read.generation = generation_;
  read.fromNs = playheadNs_ + 1;  // the range is inclusive: what is at the old playhead is shown
  read.toNs = next;
  playheadNs_ = next;
  requests_.post(std::move(read));
  emit playheadChanged(playheadNs_);
}

void ReplaySession::step(int steps) {
  if (!open_ || mode_ != ReplayMode::Replay || steps == 0) return;
  // Saturates: a step past either end of the time range lands at that end.
  int64_t distance = 0;
  int64_t target = 0;
  if (__builtin_mul_overflow(static_cast<int64_t>(steps), static_cast<int64_t>(stepSize_.count()), &distance) ||
      __builtin_add_overflow(playheadNs_, distance, &target)) {
    target = steps > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  if (steps > 0) {
    forwardTo(target);
  } else {
    seek(target);
  }
}

void ReplaySession::setPlaying(bool playing) {
  if (!open_ || mode_ != ReplayMode::Replay) playing = false;
  if (playing == playing_) return;
  if (playing && playheadNs_ >= info_.endNs) seek(info_.startNs);
  playing_ = playing;
  lastTick_ = clock_->now();
  emit playingChanged(playing_);
}

void ReplaySession::setSpeed(double speed) {
  if (!std::isfinite(speed)) return;
  speed_ = std::clamp(speed, kMinSpeed, kMaxSpeed);
}

void ReplaySession::tick() {
  if (!playing_) return;
  const auto now = clock_->now();
  const auto elapsed = now - lastTick_;
  lastTick_ = now;
  advance(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed));
}

void ReplaySession::advance(std::chrono::nanoseconds elapsed) {
  if (!open_ || mode_ != ReplayMode::Replay || elapsed.count() <= 0) return;
  const double moved = static_cast<double>(elapsed.count()) * speed_;
  const auto room = static_cast<double>(info_.endNs - playheadNs_);
  forwardTo(moved >= room ? info_.endNs : playheadNs_ + static_cast<int64_t>(moved));
  if (playing_ && playheadNs_ >= info_.endNs) {
    playing_ = false;
    emit playingChanged(false);
  }
}

bool ReplaySession::busy() const { return requests_.busy(); }

void ReplaySession::run() {
  while (std::optional<Request> request = requests_.take()) {
    if (request->kind == Request::Kind::Open) {
      handleOpen(*request);
    } else {
      handleRead(*request);
    }
    requests_.finished();
    if (request->kind == Request::Kind::Read) emit loaded();
  }
}

void ReplaySession::handleOpen(const Request& request) {
  Worker& w = *worker_;
  w.mode = request.mode;
  w.path = QString::fromStdString(request.path);
  const QString name = QFileInfo(QString::fromStdString(request.path)).fileName();
  try {
    w.reader = std::make_unique<transport::RecordingReader>(request.path, [&](uint64_t done, uint64_t total) {
      emit progress(tr("Scanning %1").arg(name), static_cast<qint64>(done), static_cast<qint64>(total));
    }, &abandoned_);
  } catch (const transport::RecordingStopped&) {
    return;  // the session is going away
  } catch (const std::exception& error) {
    const QString message = QString::fromStdString(error.what());
    QMetaObject::invokeMethod(this, [this, message] { emit openFailed(message); }, Qt::QueuedConnection);
    return;
  }
  w.decoder = std::make_unique<transport::RecordedEventDecoder>(
      request.mode == ReplayMode::Replay ? request.path : "baseline: " + request.path);
  RecordingInfo info = describeRecording(QString::fromStdString(request.path), *w.reader);
  w.endNs = info.endNs;
  w.problemsReported = w.reader->problems().size();
  if (info.messages == 0 && !info.problems.isEmpty()) {
    const QString message = tr("%1: no readable events (%2)").arg(info.path, info.problems.join(QStringLiteral("; ")));
    QMetaObject::invokeMethod(this, [this, message] { emit openFailed(message); }, Qt::QueuedConnection);
    return;
  }
  QMetaObject::invokeMethod(this, [this, info = std::move(info)]() mutable { finishOpen(std::move(info)); },
                            Qt::QueuedConnection);
}

void ReplaySession::handleRead(const Request& request) {
  Worker& w = *worker_;
  if (!w.reader || request.fromNs > request.toNs) return;
  const uint64_t generation = request.generation;
  if (w.heldGeneration != generation) {
    w.heldBack.clear();
    w.heldGeneration = generation;
  }
  if (request.backfill > 0) backfillLog(request);
  std::vector<transport::ReceivedEvent> events;
  events.reserve(kEventsPerBatch);
  const auto hand = [&] {
    if (events.empty()) return;
    {
      std::lock_guard lock(stageMutex_);
      // A seek since: these would show what is no longer asked for.
      if (currentGeneration_.load(std::memory_order_relaxed) == generation) ingest_.stageReplayed(events);
    }
    events.clear();
  };
  // At the timeline's end everything recorded is shown, whatever its stamp.
  const bool toEnd = request.toNs >= w.endNs;
  const auto due = [&](const transport::ReceivedEvent& event) { return toEnd || eventTimeNs(event) <= request.toNs; };
  // What earlier reads held back and is now due goes first: it was received first.
  const auto stillHeld = std::stable_partition(w.heldBack.begin(), w.heldBack.end(), due);
  for (auto it = w.heldBack.begin(); it != stillHeld; ++it) events.push_back(std::move(*it));
  w.heldBack.erase(w.heldBack.begin(), stillHeld);
  std::vector<transport::ReceivedEvent> batch;  // the events of one message
  std::string firstError;
  uint64_t undecodable = 0;
  uint64_t chunks = 0;
  const QString what = w.mode == ReplayMode::Replay ? tr("Reading") : tr("Loading baseline");
  w.reader->forEachMessage(
      static_cast<uint64_t>(std::max<int64_t>(0, request.fromNs)),
      // The timeline's end also holds what lies beyond it (see handleOpen).
      request.toNs == std::numeric_limits<int64_t>::max() ? UINT64_MAX : static_cast<uint64_t>(request.toNs),
      [&](const transport::RecordedMessage& message) {
        if (currentGeneration_.load(std::memory_order_relaxed) != generation) return false;
        std::string error;
        if (!w.decoder->decode(message, batch, &error)) {
          if (undecodable++ == 0) firstError = error;
          return true;
        }
        messagesRead_.fetch_add(1, std::memory_order_relaxed);
        for (transport::ReceivedEvent& event : batch) {
          event.source = w.keptApart(event.source);
          if (!due(event) && w.heldBack.size() < kMaxHeldBack) {
            w.heldBack.push_back(std::move(event));
            continue;
          }
          events.push_back(std::move(event));
          if (events.size() >= kEventsPerBatch) hand();
        }
        return true;
      },
      [&](uint64_t done, uint64_t total) {
        chunks = done;
        // Only long reads are worth a progress line.
        if (total >= 16) emit progress(what, static_cast<qint64>(done), static_cast<qint64>(total));
      });
  chunksRead_.fetch_add(chunks, std::memory_order_relaxed);
  hand();
  const auto& problems = w.reader->problems();
  for (; w.problemsReported < problems.size(); ++w.problemsReported) {
    emit problemFound(QStringLiteral("%1: %2").arg(w.path, describeProblem(problems[w.problemsReported])));
  }
  if (undecodable > 0) {
    w.undecodable += undecodable;
    emit problemFound(tr("%1: %2 recorded messages could not be decoded (%3)")
                          .arg(w.path)
                          .arg(undecodable)
                          .arg(QString::fromStdString(firstError)));
  }
}

void ReplaySession::backfillLog(const Request& request) {
  Worker& w = *worker_;
  const uint64_t generation = request.generation;
  const auto current = [&] { return currentGeneration_.load(std::memory_order_relaxed) == generation; };
  const uint64_t start = w.reader->summary().startTimeNs;
  const auto before = static_cast<uint64_t>(std::max<int64_t>(0, request.fromNs));
  if (before <= start) return;
  // First where the rows wanted begin: stretches further and further back, from the window's
  // length (a second at least), each twice the last, counting messages (without decoding them) and
  // keeping the times of the newest `backfill`, so the work is about what the rows need, wherever
  // the playhead is.
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> newest;
  uint64_t span = std::max<uint64_t>(static_cast<uint64_t>(request.toNs - request.fromNs), 1'000'000'000);
  uint64_t chunks = 0;
  const auto countChunks = [&chunks](uint64_t done, uint64_t) { chunks = done; };
  for (uint64_t high = before - 1;;) {
    const uint64_t low = high - start > span ? high - span : start;
    w.reader->forEachMessage(low, high, [&](const transport::RecordedMessage& message) {
      if (!current()) return false;
      newest.push(message.logTimeNs);
      if (newest.size() > request.backfill) newest.pop();
      return true;
    }, countChunks);
    chunksRead_.fetch_add(chunks, std::memory_order_relaxed);
    if (!current()) return;
    if (newest.size() >= request.backfill || low <= start) break;
    high = low - 1;
    span = span > UINT64_MAX / 2 ? UINT64_MAX : span * 2;
  }
  if (newest.empty()) return;
  // Then their log rows, in order, through the converter as every replayed event.
  std::vector<transport::ReceivedEvent> events;
  std::vector<transport::ReceivedEvent> batch;  // the events of one message
  const auto hand = [&] {
    std::lock_guard lock(stageMutex_);
    if (current()) ingest_.stageReplayed(events, true);
    events.clear();
  };
  w.reader->forEachMessage(newest.top(), before - 1, [&](const transport::RecordedMessage& message) {
    if (!current()) return false;
    if (!w.decoder->decode(message, batch, nullptr)) return true;  // the window's read reports damage
    messagesRead_.fetch_add(1, std::memory_order_relaxed);
    for (transport::ReceivedEvent& event : batch) {
      event.source = w.keptApart(event.source);
      events.push_back(std::move(event));
      if (events.size() >= kEventsPerBatch) hand();
    }
    return true;
  }, countChunks);
  chunksRead_.fetch_add(chunks, std::memory_order_relaxed);
  if (!events.empty()) hand();
}

}  // namespace livemon::ui
