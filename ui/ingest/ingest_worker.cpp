#include <livemon/ui/ingest/ingest_worker.h>

#include <exception>
#include <iterator>
#include <utility>

#include <livemon/event.h>
#include <livemon/transport/recorded_event.h>

namespace livemon::ui {

namespace {

transport::SubscriberOptions subscriberOptions(const IngestWorker::Options& options) {
  transport::SubscriberOptions subscriber;
  for (const std::string& endpoint : options.endpoints) {
    if (!options.endpointCurves.contains(endpoint)) subscriber.connect.push_back(endpoint);
  }
  subscriber.staleAfter = options.staleAfter;
  subscriber.clock = options.clock;
  subscriber.history = options.history;
  subscriber.curve = options.curve;
  // A recording stores messages as they arrived (docs/recording-format.md).

  return subscriber;
}

std::vector<AlertRule> withBuiltInRules(std::vector<AlertRule> user) {
  std::vector<AlertRule> rules = builtInAlertRules();
  rules.insert(rules.end(), std::make_move_iterator(user.begin()), std::make_move_iterator(user.end()));
  return rules;
}

// How often the source table is read for heartbeats and silence: often enough for an alert to
// follow within a refresh or two, rarely enough to cost nothing at 100 000 events a second.
constexpr std::chrono::milliseconds kSourceCheckInterval{100};

// Notes kept for an endpoint no source was heard on yet: one per endpoint added, so only a user
// adding endpoints that never answer, again and again, reaches it.
constexpr std::size_t kMaxUnloggedNotes = 64;

}  // namespace

IngestWorker::IngestWorker(Options options, QObject* parent)
    : QObject(parent),
      options_(std::move(options)),
      subscriber_(std::make_unique<transport::Subscriber>(subscriberOptions(options_))),
      staging_(options_.staging),
      converter_(options_.limits),
      alertFeed_(withBuiltInRules(options_.alertRules), options_.clock) {
  for (const std::string& endpoint : options_.endpoints) {
    if (const auto own = options_.endpointCurves.find(endpoint); own != options_.endpointCurves.end()) {
      addEndpoint(endpoint, own->second);
    }
  }
}

IngestWorker::~IngestWorker() { stop(); }

void IngestWorker::start() {
  if (thread_.joinable()) return;
  stopRequested_.store(false, std::memory_order_relaxed);
  thread_ = std::thread([this] { run(); });
}

void IngestWorker::stop() {
  {
    std::lock_guard lock(stopMutex_);
    stopRequested_.store(true, std::memory_order_relaxed);
  }
  stopSignal_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string IngestWorker::addEndpoint(const std::string& endpoint, const std::optional<transport::CurveOptions>& curve) {
  if (!curve) return subscriber_->addEndpoint(endpoint);
  std::string used = subscriber_->addEndpoint(endpoint, transport::EndpointMode::Connect, *curve);
  endpointCurves_[used] = *curve;
  return used;
}

bool IngestWorker::removeEndpoint(const std::string& endpoint) {
  endpointCurves_.erase(endpoint);
  return subscriber_->removeEndpoint(endpoint);
}

std::vector<transport::EndpointStatus> IngestWorker::endpoints() const { return subscriber_->endpoints(); }

std::vector<transport::SourceStatus> IngestWorker::sources() const { return subscriber_->sources(); }

transport::SubscriberStats IngestWorker::stats() const { return subscriber_->stats(); }

void IngestWorker::deliver(std::vector<transport::ReceivedEvent>& events) {
  for (const transport::ReceivedEvent& event : events) record(event);
  std::lock_guard lock(converterMutex_);
  for (transport::ReceivedEvent& event : events) {
    alertFeed_.event(event);
    converter_.convert(event, converted_);
  }
  alertFeed_.stage(converter_, converted_);
  converter_.finish(converted_);
  staging_.push(std::move(converted_));
  converted_.clear();
}

void IngestWorker::stageReplayed(std::vector<transport::ReceivedEvent>& events, bool logOnly) {
  IngestBatch replayed;
  std::lock_guard lock(converterMutex_);
  // What the polling thread converted so far holds older descriptors: it goes first.
  if (!converted_.empty()) {
    converter_.finish(converted_);
    staging_.push(std::move(converted_));
    converted_.clear();
  }
  for (transport::ReceivedEvent& event : events) converter_.convert(event, replayed);
  converter_.finish(replayed);
  if (logOnly) replayed.samples.clear();
  if (!replayed.empty()) staging_.pushReplayed(std::move(replayed));
}

LimitDrops IngestWorker::limitDrops() const {
  std::lock_guard lock(converterMutex_);
  return converter_.drops();
}

void IngestWorker::forgetSources(const std::vector<SourceId>& ids) {
  std::lock_guard lock(converterMutex_);
  converter_.forgetSources(ids);
}

void IngestWorker::setAlertRules(std::vector<AlertRule> rules) {
  std::lock_guard lock(converterMutex_);
  alertFeed_.setRules(withBuiltInRules(std::move(rules)));
}

void IngestWorker::checkSources() {
  const auto now = std::chrono::steady_clock::now();
  if (now - lastSourceCheck_ < kSourceCheckInterval) return;
  lastSourceCheck_ = now;
  const std::vector<transport::SourceStatus> sources = subscriber_->sources();
  std::lock_guard lock(converterMutex_);
  alertFeed_.sources(sources);
  alertFeed_.stage(converter_, converted_);
}

void IngestWorker::historyEvent(const std::shared_ptr<const std::string>& endpoint,
                                const std::shared_ptr<const transport::SourceInfo>& source,
                                std::optional<int64_t> step) {
  if (!endpoint) return;
  HistoryProgress& progress = historyProgress_[*endpoint];
  progress.source = source;
  if (step) {
    const double value = static_cast<double>(*step);
    if (!progress.firstStep || value < *progress.firstStep) progress.firstStep = value;
  }
}

void IngestWorker::historyDone(const transport::HistoryStatus& status) {
  HistoryNote note = historyNoteFrom(status);
  std::shared_ptr<const transport::SourceInfo> source;
  if (const auto found = historyProgress_.find(note.endpoint); found != historyProgress_.end()) {
    note.firstStep = found->second.firstStep;
    source = std::move(found->second.source);
    historyProgress_.erase(found);
  }
  if (note.empty()) {
    // Nothing to log: the dashboard was there before the run's first event.
  } else if (source) {
    logNote(note, std::move(source));
  } else {
    if (unloggedNotes_.size() == kMaxUnloggedNotes) unloggedNotes_.erase(unloggedNotes_.begin());
    unloggedNotes_.push_back(note);
  }
  converted_.history.push_back(std::move(note));
}

void IngestWorker::logWaitingNotes(const std::shared_ptr<const std::string>& endpoint,
                                   const std::shared_ptr<const transport::SourceInfo>& source) {
  if (!endpoint) return;
  std::erase_if(unloggedNotes_, [&](const HistoryNote& note) {
    if (note.endpoint != *endpoint) return false;
    logNote(note, source);
    return true;
  });
}

void IngestWorker::logNote(const HistoryNote& note, std::shared_ptr<const transport::SourceInfo> source) {
  // Strings only, so it charts nothing; converted like any row, so its source and name get the
  // ids the rest of the source's data has.
  transport::ReceivedEvent row;
  row.source = std::move(source);
  row.endpoint = std::make_shared<const std::string>(note.endpoint);
  row.event.name = std::string(kHistoryEventName);
  row.event.timestamp = options_.clock != nullptr ? options_.clock->wallNow() : std::chrono::system_clock::now();
  row.event.data.emplace("history", std::string(transport::historyOutcomeName(note.outcome)));
  row.event.data.emplace("message", describeHistory(note).toStdString());
  row.event.data.emplace("endpoint", note.endpoint);
  const uint64_t events = converted_.events;
  converter_.convert(row, converted_);
  converted_.events = events;  // not an event any peer sent
}

void IngestWorker::startRecording(const std::string& path, transport::RecordingWriterOptions options) {
  // Created here, on the caller's thread, so a path that cannot be written fails at once.
  auto writer = std::make_unique<transport::RecordingWriter>(path, std::move(options));
  std::unique_ptr<transport::RecordingWriter> previous;
  {
    std::lock_guard lock(recorderMutex_);
    previous = std::move(recorder_);
    recorder_ = std::move(writer);
    eventRecorder_ = std::make_unique<transport::ReceivedEventRecorder>(*recorder_);
    recorderStatus_ = RecordingStatus{true, path, 0, recorder_->bytesWritten()};
  }
  if (previous) {
    try {
      previous->close();
    } catch (const transport::RecordingError& error) {
      emit recordingFailed(QString::fromStdString(error.what()));
    }
  }
}

IngestWorker::RecordingStatus IngestWorker::stopRecording() {
  std::unique_ptr<transport::RecordingWriter> writer;
  RecordingStatus status;
  {
    std::lock_guard lock(recorderMutex_);
    writer = std::move(recorder_);
    eventRecorder_.reset();
    recorderStatus_.active = false;
    status = recorderStatus_;
  }
  if (writer) {
    writer->close();
    status.bytes = writer->bytesWritten();
    std::lock_guard lock(recorderMutex_);
    if (!recorder_) recorderStatus_ = status;
  }
  return status;
}

IngestWorker::RecordingStatus IngestWorker::recordingStatus() const {
  std::lock_guard lock(recorderMutex_);
  return recorderStatus_;
}

template <typename Received>
void IngestWorker::recordEvent(const Received& event) {
  std::lock_guard lock(recorderMutex_);
  if (!recorder_) return;
  try {
    eventRecorder_->record(event);
    recorderStatus_.events = eventRecorder_->events();
    recorderStatus_.bytes = recorder_->bytesWritten();
    recorderStatus_.notRecorded = eventRecorder_->notRecorded();
  } catch (const std::exception& error) {
    eventRecorder_.reset();
    recorder_.reset();  // the file stays readable up to its last complete chunk
    recorderStatus_.active = false;
    emit recordingFailed(QString::fromStdString(error.what()));
  }
}

void IngestWorker::record(const transport::ReceivedEvent& event) { recordEvent(event); }

void IngestWorker::record(const transport::ReceivedEventView& event) { recordEvent(event); }

void IngestWorker::flushRecordingIfDue() {
  std::lock_guard lock(recorderMutex_);
  if (!recorder_) return;
  try {
    recorder_->flushIfDue();
    recorderStatus_.bytes = recorder_->bytesWritten();
  } catch (const std::exception& error) {
    eventRecorder_.reset();
    recorder_.reset();
    recorderStatus_.active = false;
    emit recordingFailed(QString::fromStdString(error.what()));
  }
}

void IngestWorker::run() {
  transport::SubscriberCallbacks callbacks;
  // Lent: each event is read in place from the message it came in, never decoded into an Event.
  callbacks.onEventView = [this](const transport::ReceivedEventView& event) {
    record(event);
    std::lock_guard lock(converterMutex_);
    if (event.fromHistory) historyEvent(event.endpoint, event.source, event.event.statedStep());
    if (!unloggedNotes_.empty()) logWaitingNotes(event.endpoint, event.source);
    alertFeed_.event(event);
    converter_.convert(event, converted_);
  };
  callbacks.onGap = [this](const transport::GapInfo& gap) {
    std::lock_guard lock(converterMutex_);
    alertFeed_.gap(gap);
  };
  callbacks.onSourceChange = [this](const transport::SourceChange& change) {
    std::lock_guard lock(converterMutex_);
    alertFeed_.sourceChanged(change);
  };
  callbacks.onHistory = [this](const transport::HistoryStatus& status) {
    std::lock_guard lock(converterMutex_);
    historyDone(status);
  };
  while (!stopRequested_.load(std::memory_order_relaxed)) {
    try {
      subscriber_->poll(options_.pollTimeout, callbacks);
    } catch (const std::exception& error) {
      emit errorOccurred(QStringLiteral("Receiving failed: %1").arg(QString::fromStdString(error.what())));
      // Back off instead of spinning on a persistent failure, but stay stoppable.
      std::unique_lock lock(stopMutex_);
      stopSignal_.wait_for(lock, std::chrono::milliseconds(500),
                           [this] { return stopRequested_.load(std::memory_order_relaxed); });
    }
    flushRecordingIfDue();
    checkSources();
    std::lock_guard lock(converterMutex_);
    alertFeed_.stage(converter_, converted_);
    if (!converted_.empty()) {
      converter_.finish(converted_);
      staging_.push(std::move(converted_));
      converted_.clear();
    }
  }
}

}  // namespace livemon::ui
