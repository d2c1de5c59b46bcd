#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <QObject>
#include <QString>

#include <livemon/transport/subscriber.h>
#include <livemon/ui/event_converter.h>
#include <livemon/ui/staging_buffer.h>

namespace livemon::ui {

// Thread-safe: every member may be called from any thread. errorOccurred is emitted on the ingest
// thread, so receivers in the GUI thread get it queued.
// Receives events off the GUI thread. It owns a transport::Subscriber and a thread that polls it,
// converts each event (EventConverter) and leaves the results in a StagingBuffer for the GUI.
// Failures on that thread reach the GUI as errorOccurred(text), a queued signal; nothing here
// touches a widget.
class IngestWorker : public QObject {
  Q_OBJECT

 public:
  struct Options {
    std::vector<std::string> endpoints;  // connected at construction
    std::chrono::milliseconds staleAfter{3000};
    std::chrono::milliseconds pollTimeout{50};  // bounds how long stop() waits
    StagingBuffer::Limits staging{};
  };

  // Throws transport::TransportError naming the endpoint when one cannot be used. The thread
  // starts with start().
  explicit IngestWorker(Options options, QObject* parent = nullptr);
  // Stops the thread and joins it.
  ~IngestWorker() override;

  void start();
  void stop();

  StagingBuffer& staging() noexcept { return staging_; }

  // Returns the endpoint as used. Throws transport::TransportError naming it and the reason.
  std::string addEndpoint(const std::string& endpoint);
  bool removeEndpoint(const std::string& endpoint);
  std::vector<transport::EndpointStatus> endpoints() const;
  std::vector<transport::SourceStatus> sources() const;
  transport::SubscriberStats stats() const;

  // Converts events into the staging buffer as if they had been received: the ingest path for
  // synthetic feeds (benchmarks, tests). The events may be moved from.
  void deliver(std::vector<transport::ReceivedEvent>& events);

 signals:
  void errorOccurred(const QString& message);

 private:
  void run();

  Options options_;
  std::unique_ptr<transport::Subscriber> subscriber_;
  StagingBuffer staging_;
  // The converter and the batch it fills are shared by the polling thread and deliver(); pushing
  // under the same lock keeps every descriptor ahead of the samples that use it.
  std::mutex converterMutex_;
  EventConverter converter_;  // guarded by converterMutex_
  IngestBatch converted_;     // guarded by converterMutex_
  std::atomic<bool> stopRequested_{false};
  std::mutex stopMutex_;
  std::condition_variable stopSignal_;
  std::thread thread_;
};

}  // namespace livemon::ui
