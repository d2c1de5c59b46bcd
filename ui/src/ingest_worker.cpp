#include <livemon/ui/ingest_worker.h>

#include <exception>
#include <utility>

namespace livemon::ui {

namespace {

transport::SubscriberOptions subscriberOptions(const IngestWorker::Options& options) {
  transport::SubscriberOptions subscriber;
  subscriber.connect = options.endpoints;
  subscriber.staleAfter = options.staleAfter;
  return subscriber;
}

}  // namespace

IngestWorker::IngestWorker(Options options, QObject* parent)
    : QObject(parent),
      options_(std::move(options)),
      subscriber_(std::make_unique<transport::Subscriber>(subscriberOptions(options_))),
      staging_(options_.staging) {}

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

std::string IngestWorker::addEndpoint(const std::string& endpoint) { return subscriber_->addEndpoint(endpoint); }

bool IngestWorker::removeEndpoint(const std::string& endpoint) { return subscriber_->removeEndpoint(endpoint); }

std::vector<transport::EndpointStatus> IngestWorker::endpoints() const { return subscriber_->endpoints(); }

std::vector<transport::SourceStatus> IngestWorker::sources() const { return subscriber_->sources(); }

transport::SubscriberStats IngestWorker::stats() const { return subscriber_->stats(); }

void IngestWorker::deliver(std::vector<transport::ReceivedEvent>& events) {
  std::lock_guard lock(converterMutex_);
  for (transport::ReceivedEvent& event : events) converter_.convert(event, converted_);
  staging_.push(std::move(converted_));
  converted_.clear();
}

void IngestWorker::run() {
  transport::SubscriberCallbacks callbacks;
  callbacks.onEvent = [this](transport::ReceivedEvent& event) {
    std::lock_guard lock(converterMutex_);
    converter_.convert(event, converted_);
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
    std::lock_guard lock(converterMutex_);
    if (!converted_.empty()) {
      staging_.push(std::move(converted_));
      converted_.clear();
    }
  }
}

}  // namespace livemon::ui
