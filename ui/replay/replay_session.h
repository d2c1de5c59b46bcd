#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <QObject>
#include <QString>
#include <QStringList>

#include <livemon/clock.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/replay/replay_requests.h>

namespace livemon::transport {
class RecordingReader;
struct RecordingProblem;
}  // namespace livemon::transport

namespace livemon::ui {

class IngestWorker;

// Thread-safety: a plain value type.
// What opening a recording found.
struct RecordingInfo {
  QString path;
  int64_t startNs = 0;  // the first event's receive time, ns since the Unix epoch
  int64_t endNs = 0;    // the last event's
  uint64_t messages = 0;
  uint64_t events = 0;  // as many as messages in a version-1 recording; 0 (unknown until read) in later ones
  uint64_t chunks = 0;
  bool indexed = false;  // closed cleanly (else it was scanned)
  QStringList problems;  // damage found on opening, each naming its byte offset
};

// What `reader` (opened from `path`) found on opening, its damage described as describeProblem().
RecordingInfo describeRecording(const QString& path, const transport::RecordingReader& reader);
// "byte N: what is wrong".
QString describeProblem(const transport::RecordingProblem& problem);

// GUI thread only: every public member. A worker thread owns the RecordingReader (which is not
// thread-safe); requests reach it through a queue (ReplayRequests), its results come back as
// queued signals, and the events it reads go into the IngestWorker's staging buffer.
//
// A recording opened for replay, with a playhead on the recording's receive clock: the one time
// base of the timeline, the charts and the log. The dashboard shows exactly the events received
// at or before the playhead whose own time is not after it either (an event stamped later by a
// publisher whose clock runs ahead is held back until the playhead passes its time, or reaches
// the recording's end), over the time window its charts show (`setWindow`); the log reaches
// further back, as far as its capacity (`setLogBackfill`). Moving the playhead anywhere other than forward (a seek) starts a new
// generation: the dashboard clears what it showed of this recording, and only the window before
// the new playhead is read, through the chunk index, so seeking costs the same at any point of a
// file of any size. Playing moves the playhead by the clock's elapsed time × speed on each tick()
// and reads only the stretch it passed.
//
// Events are converted and staged by the IngestWorker (stageReplayed), as live events are, so the
// charts and the log treat them alike and one refresh applies both. Each source of the recording
// is kept apart from live publishers, even the same one seen live.
class ReplaySession : public QObject {
  Q_OBJECT

 public:
  static constexpr double kMinSpeed = 0.25;
  static constexpr double kMaxSpeed = 64.0;

  // `clock` drives play (its monotonic time); nullptr: the system clock. It must outlive this.
  explicit ReplaySession(IngestWorker& ingest, Clock* clock = nullptr, QObject* parent = nullptr);
  // Stops the worker (abandoning a read in progress) and joins it.
  ~ReplaySession() override;

  // Opens `path` in the background: opened() or openFailed(text) follows. The playhead starts at
  // the end, showing the run as it finished, unless setStartAt() said otherwise. A session opens
  // one file, once.
  void open(const QString& path, ReplayMode mode = ReplayMode::Replay);
  bool isOpen() const noexcept { return open_; }
  ReplayMode mode() const noexcept { return mode_; }
  const RecordingInfo& info() const noexcept { return info_; }
  // The endpoint the recording's sources carry in the dashboard (SourceEntry::endpoint).
  const QString& endpointLabel() const noexcept { return endpointLabel_; }

  int64_t playheadNs() const noexcept { return playheadNs_; }
  // Where the playhead starts on opening, as time from the recording's start (clamped to it);
  // std::nullopt: at its end. Call before open().
  void setStartAt(std::optional<std::chrono::nanoseconds> fromStart) { startAt_ = fromStart; }
  // How much history before the playhead to show; std::nullopt: everything from the start.
  // A longer window than before reloads it.
  void setWindow(std::optional<std::chrono::nanoseconds> window);
  std::optional<std::chrono::nanoseconds> window() const noexcept { return window_; }
  // After a seek, the log shows the events before the window too, up to `rows` in all (the log's
  // capacity); their samples are not read into the charts. 0: the window's events only.
  void setLogBackfill(std::size_t rows) { logBackfill_ = rows; }
  // Moves the playhead (clamped to the recording) and reloads the window before it.
  void seek(int64_t ns);
  // Moves the playhead to `ns` (clamped): forward reads only what it passes, backward is a seek.
  void moveTo(int64_t ns);
  // Moves by `steps` × stepSize (negative: backwards). Stepping forward reads only what it passes.
  void step(int steps);
  void setStepSize(std::chrono::nanoseconds size) { stepSize_ = size; }
  std::chrono::nanoseconds stepSize() const noexcept { return stepSize_; }

  bool isPlaying() const noexcept { return playing_; }
  // Playing from the end starts over from the beginning.
  void setPlaying(bool playing);
  double speed() const noexcept { return speed_; }
  // Clamped to [kMinSpeed, kMaxSpeed].
  void setSpeed(double speed);
  // While playing: moves the playhead by the clock's time since the last tick × speed. At the
  // end it stops playing.
  void tick();
  // Moves the playhead forward by `elapsed` × speed, reading what it passes.
  void advance(std::chrono::nanoseconds elapsed);

  // Changes with every seek: what the dashboard shows of this recording must then be cleared.
  uint64_t generation() const noexcept { return generation_; }
  // Requests the worker has not finished.
  bool busy() const;

  // Instrumentation: chunks and messages read from the file since it was opened.
  uint64_t chunksRead() const noexcept { return chunksRead_.load(std::memory_order_relaxed); }
  uint64_t messagesRead() const noexcept { return messagesRead_.load(std::memory_order_relaxed); }

 signals:
  void opened();
  void openFailed(const QString& message);
  // Long work (scanning a file without an index, reading a long window): `done` of `total`.
  void progress(const QString& what, qint64 done, qint64 total);
  // A requested stretch has been read and its batches can be taken.
  void loaded();
  // A seek started a new generation. Emitted on the GUI thread, before the new window is read and
  // once nothing of the old generation can be staged any more: a receiver applies what is staged
  // and then clears what it shows of this recording (endpointLabel()).
  void generationStarted();
  // Damage found while reading, naming the byte offset.
  void problemFound(const QString& message);
  void playheadChanged(qint64 ns);
  void playingChanged(bool playing);

 private:
  using Request = ReplayRequest;
  // Worker-side state the GUI never touches.
  struct Worker;

  // Starts a new generation: reads of older ones stage nothing more.
  void startGeneration();
  // Asks the reader for the window that ends at the playhead, as the view shows it after an open
  // or a seek.
  void readWindowAtPlayhead();
  void finishOpen(RecordingInfo info);
  void forwardTo(int64_t ns);
  void run();
  void handleOpen(const Request& request);
  void handleRead(const Request& request);
  // Stages the log rows of up to request.backfill events before request.fromNs.
  void backfillLog(const Request& request);
  int64_t windowStart(int64_t playhead) const;

  IngestWorker& ingest_;
  Clock* clock_;

  // GUI-thread state.
  RecordingInfo info_;
  QString path_;
  QString endpointLabel_;
  ReplayMode mode_ = ReplayMode::Replay;
  bool open_ = false;
  int64_t playheadNs_ = 0;
  std::optional<std::chrono::nanoseconds> window_ = std::chrono::minutes(5);
  std::optional<std::chrono::nanoseconds> startAt_;
  std::size_t logBackfill_ = 0;
  std::chrono::nanoseconds stepSize_ = std::chrono::seconds(1);
  bool playing_ = false;
  double speed_ = 1.0;
  std::chrono::steady_clock::time_point lastTick_;
  uint64_t generation_ = 0;

  // Shared with the worker.
  std::atomic<uint64_t> currentGeneration_{0};  // a read of an older generation stops early
  // Held while the worker stages a batch and while the GUI starts a generation, so that nothing
  // of an older generation is staged after generationStarted().
  std::mutex stageMutex_;
  std::atomic<bool> abandoned_{false};  // set by the destructor: the worker stops reading
  std::atomic<uint64_t> chunksRead_{0};
  std::atomic<uint64_t> messagesRead_{0};
  ReplayRequests requests_;
  std::unique_ptr<Worker> worker_;  // used by the worker thread only
  std::thread thread_;
};

}  // namespace livemon::ui
