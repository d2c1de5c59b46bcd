#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <QObject>
#include <QString>

#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/subscriber.h>
#include <livemon/alert_rules.h>
#include <livemon/clock.h>
#include <livemon/ui/ingest/alert_feed.h>
#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/data/history_note.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/ingest/staging_buffer.h>

namespace livemon::ui {

// Thread-safe: every member may be called from any thread. errorOccurred is emitted on the ingest
// thread, so receivers in the GUI thread get it queued.
// Receives events off the GUI thread. It owns a transport::Subscriber and a thread that polls it,
// converts each event (EventConverter) and leaves the results in a StagingBuffer for the GUI.
// Failures on that thread reach the GUI as errorOccurred(text), a queued signal; nothing here
// touches a widget.
//
// Alerts: the same thread runs the alert rules (AlertFeed: the built-in "nan", "silent" and
// "loss", and the user's) over every live or delivered event, gap, goodbye and heartbeat, looks
// for silent sources after every poll, and stages each alert behind the data that triggered it.
// Replayed events are not run through the rules: a seek reads the window before the playhead
// again, so the same crossing would be raised anew each time, and silence and loss say nothing
// about a file (the recording's gaps were counted when it was live).
//
// History (Options::history): on every endpoint it connects to, the subscriber first fetches the
// run so far from the source's history (transport::SubscriberOptions::history), which arrives as
// ordinary events, converted and staged like live ones; a long history is converted a few hundred
// messages per poll, and staged per poll, so the GUI takes it in slices. How it went is staged as
// a HistoryNote (IngestBatch::history) with the lowest step its events stated, behind a log row
// named kHistoryEventName from one of its sources (or, when none came with it, from the first
// source heard on that endpoint after it); an empty history (HistoryNote::empty) gets no row.
//
// Recording: between startRecording() and stopRecording() every event received (or delivered) is
// also appended to an MCAP recording by the thread that receives it, in the message it arrived in
// as it arrived (transport::ReceivedEventRecorder). A write that fails (disk
// full) ends the recording and is reported as recordingFailed(text); what was written up to then
// stays readable.
class IngestWorker : public QObject {
  Q_OBJECT

 public:
  // Thread-safety: a plain value type.
  struct Options {
    std::vector<std::string> endpoints;  // connected at construction
    std::chrono::milliseconds staleAfter{3000};
    std::chrono::milliseconds pollTimeout{50};  // bounds how long stop() waits
    StagingBuffer::Limits staging{};
    // What peers and recordings may make the dashboard hold (EventConverter).
    IngestLimits limits{};
    // The user's alert rules, run beside builtInAlertRules().
    std::vector<AlertRule> alertRules;
    // Measures the sources' silence (the subscriber's and the alert engine's clock); nullptr: the
    // system clock. Must outlive the worker.
    Clock* clock = nullptr;
    // Fetch each connected endpoint's history before its live events (see above).
    bool history = true;
    // CURVE toward every endpoint (transport::SubscriberOptions::curve); the default follows
    // LIVEMON_CURVE_CLIENT and LIVEMON_CURVE_SERVER.
    transport::CurveOptions curve = transport::clientCurveFromEnvironment();
    // Endpoints connected at construction with CURVE settings of their own instead of `curve`
    // (those the Connect dialog remembered).
    std::map<std::string, transport::CurveOptions> endpointCurves;
  };

  // Throws transport::TransportError naming the endpoint when one cannot be used. The thread
  // starts with start().
  explicit IngestWorker(Options options, QObject* parent = nullptr);
  // Stops the thread and joins it.
  ~IngestWorker() override;

  void start();
  void stop();

  StagingBuffer& staging() noexcept { return staging_; }
  const IngestLimits& limits() const noexcept { return options_.limits; }
  // What the limits refused so far, live and replayed.
  LimitDrops limitDrops() const;

  // Returns the endpoint as used. Throws transport::TransportError naming it and the reason, and
  // std::invalid_argument naming a certificate that cannot be used. With `curve`, the endpoint
  // uses those CURVE settings instead of Options::curve, and endpointCurves() remembers them.
  std::string addEndpoint(const std::string& endpoint, const std::optional<transport::CurveOptions>& curve = {});
  bool removeEndpoint(const std::string& endpoint);
  // The endpoints added with CURVE settings of their own (GUI thread, as addEndpoint).
  const std::map<std::string, transport::CurveOptions>& endpointCurves() const noexcept { return endpointCurves_; }
  std::vector<transport::EndpointStatus> endpoints() const;
  std::vector<transport::SourceStatus> sources() const;
  transport::SubscriberStats stats() const;

  // Converts events into the staging buffer as if they had been received: the ingest path for
  // synthetic feeds (benchmarks, tests). They are recorded too while recording. The events may
  // be moved from.
  void deliver(std::vector<transport::ReceivedEvent>& events);

  // Converts events from a recording being replayed with the same converter as live ones, so
  // their sources, names and series share its ids, and stages them behind everything converted
  // before (StagingBuffer::pushReplayed): descriptors precede their samples by construction, as
  // for live events. Not recorded. The events may be moved from.
  // `logOnly`: only their log rows (and the descriptors those need) are staged, not their
  // samples: a replay's log reaches further back than the time range its charts hold.
  void stageReplayed(std::vector<transport::ReceivedEvent>& events, bool logOnly = false);
  // The converter forgets sources the dashboard removed (EventConverter::forgetSources), so a
  // recording opened again comes back as new sources. Call it once nothing converts their events
  // any more (their ReplaySession is gone).
  void forgetSources(const std::vector<SourceId>& ids);

  // Replaces the user's alert rules (the built-in ones stay); every rule starts afresh.
  void setAlertRules(std::vector<AlertRule> rules);

  // Thread-safety: a plain value type.
  struct RecordingStatus {
    bool active = false;
    std::string path;
    uint64_t events = 0;  // recorded so far
    uint64_t bytes = 0;   // in the file so far (complete chunks)
    uint64_t notRecorded = 0;  // events whose names did not fit (transport::kMaxRecordingChannels)
  };
  // Starts recording into `path` (created or truncated), ending any recording in progress.
  // Throws transport::RecordingError naming the file when it cannot be created.
  void startRecording(const std::string& path, transport::RecordingWriterOptions options = {});
  // Writes the rest and closes the file. Returns the final status (inactive when nothing was
  // being recorded). Throws transport::RecordingError when the file cannot be completed.
  RecordingStatus stopRecording();
  RecordingStatus recordingStatus() const;

 signals:
  void errorOccurred(const QString& message);
  // Recording ended because the file could not be written; the text names the file and why.
  void recordingFailed(const QString& message);

 private:
  void run();

  Options options_;
  std::unique_ptr<transport::Subscriber> subscriber_;
  std::map<std::string, transport::CurveOptions> endpointCurves_;  // changed by addEndpoint/removeEndpoint
  StagingBuffer staging_;
  // The converter and the batch it fills are shared by the polling thread and deliver(); pushing
  // under the same lock keeps every descriptor ahead of the samples that use it.
  mutable std::mutex converterMutex_;
  EventConverter converter_;  // guarded by converterMutex_
  IngestBatch converted_;     // guarded by converterMutex_
  AlertFeed alertFeed_;       // guarded by converterMutex_
  // Runs the alert rules over the subscriber's source table and stages what they raised.
  void checkSources();
  std::chrono::steady_clock::time_point lastSourceCheck_{};  // the polling thread's

  // History, the polling thread's and under converterMutex_: per endpoint whose history is
  // coming, the lowest step and a source of its events (at most one entry per endpoint, gone when
  // its HistoryNote is staged); and notes whose endpoint had no source to log them from yet.
  struct HistoryProgress {
    std::optional<double> firstStep;
    std::shared_ptr<const transport::SourceInfo> source;
  };
  void historyEvent(const std::shared_ptr<const std::string>& endpoint,
                    const std::shared_ptr<const transport::SourceInfo>& source, std::optional<int64_t> step);
  void historyDone(const transport::HistoryStatus& status);
  // Logs the notes waiting for a source on the event's endpoint.
  void logWaitingNotes(const std::shared_ptr<const std::string>& endpoint,
                       const std::shared_ptr<const transport::SourceInfo>& source);
  void logNote(const HistoryNote& note, std::shared_ptr<const transport::SourceInfo> source);
  std::map<std::string, HistoryProgress> historyProgress_;
  std::vector<HistoryNote> unloggedNotes_;
  // Appends to the recording, if any; on failure ends it and emits recordingFailed.
  void record(const transport::ReceivedEvent& event);
  void record(const transport::ReceivedEventView& event);
  template <typename Received>
  void recordEvent(const Received& event);
  void flushRecordingIfDue();

  mutable std::mutex recorderMutex_;
  std::unique_ptr<transport::RecordingWriter> recorder_;  // guarded by recorderMutex_
  std::unique_ptr<transport::ReceivedEventRecorder> eventRecorder_;  // into recorder_; guarded by recorderMutex_
  RecordingStatus recorderStatus_;                        // guarded by recorderMutex_

  std::atomic<bool> stopRequested_{false};
  std::mutex stopMutex_;
  std::condition_variable stopSignal_;
  std::thread thread_;
};

}  // namespace livemon::ui
