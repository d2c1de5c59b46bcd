// The metrics sink every Publisher of a program that links livemon::exporters gets
// (livemon/transport/publisher_metrics.h): the Prometheus exporter itself.
#include <livemon/transport/publisher_metrics.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

#include <livemon/detail/fork_hooks.h>
#include <livemon/transport/metrics_exporter.h>

namespace livemon::transport {

namespace {

// LIVEMON_METRICS_PORT, plus the process's LOCAL_RANK when torchrun set one: the ranks of one node
// are separate processes, and each needs a port of its own (9100, 9101, ...). 0 for off.
uint16_t environmentMetricsPort() {
  const char* text = std::getenv("LIVEMON_METRICS_PORT");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value > 65535) {
    throw std::invalid_argument(std::string("LIVEMON_METRICS_PORT must be a port number 0..65535, got \"") + text +
                                "\"");
  }
  if (value == 0) return 0;
  if (const char* localRank = std::getenv("LOCAL_RANK")) {
    errno = 0;
    const long offset = std::strtol(localRank, &end, 10);
    if (errno == 0 && end != localRank && *end == '\0' && offset > 0) {
      if (offset > 65535 - value) {
        throw std::invalid_argument("LIVEMON_METRICS_PORT " + std::to_string(value) + " plus LOCAL_RANK " +
                                    std::to_string(offset) + " is beyond port 65535");
      }
      value += offset;
    }
  }
  return static_cast<uint16_t>(value);
}

// Thread-safe: members under `mutex`.
// The exporter shared by the Publishers whose port comes from LIVEMON_METRICS_PORT. One per fork
// generation: a forked child must not use its parent's (the HTTP threads are not in the child,
// and `mutex` may have been held by a thread that is not either).
struct SharedMetrics {
  explicit SharedMetrics(uint64_t forkGeneration) : generation(forkGeneration) {}
  const uint64_t generation;
  std::mutex mutex;
  std::weak_ptr<MetricsExporter> exporter;
  std::string address;
  uint16_t port = 0;
};

// Never destroyed: a child leaves its parent's in place and makes its own.
std::atomic<SharedMetrics*> g_sharedMetrics{nullptr};

SharedMetrics& sharedMetrics() {
  const uint64_t generation = livemon::detail::forkGeneration();
  SharedMetrics* current = g_sharedMetrics.load(std::memory_order_acquire);
  while (current == nullptr || current->generation != generation) {
    auto* fresh = new SharedMetrics(generation);
    if (g_sharedMetrics.compare_exchange_strong(current, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;  // another thread installed one; `current` now holds it
  }
  return *current;
}

std::shared_ptr<MetricsExporter> exporterFor(const PublisherOptions& options) {
  auto make = [&](uint16_t port) {
    MetricsExporterOptions metricsOptions;
    metricsOptions.bindAddress = options.metricsAddress;
    metricsOptions.port = port;
    return std::make_shared<MetricsExporter>(std::move(metricsOptions));
  };
  if (options.metricsPort != 0) return make(options.metricsPort);
  const uint16_t port = environmentMetricsPort();
  if (port == 0) return nullptr;
  SharedMetrics& shared = sharedMetrics();
  std::lock_guard lock(shared.mutex);
  if (std::shared_ptr<MetricsExporter> exporter = shared.exporter.lock();
      exporter && shared.port == port && shared.address == options.metricsAddress) {
    return exporter;
  }
  std::shared_ptr<MetricsExporter> exporter = make(port);
  shared.exporter = exporter;
  shared.address = options.metricsAddress;
  shared.port = port;
  return exporter;
}

}  // namespace

}  // namespace livemon::transport

extern "C" void livemon_exporters_publisher_metrics(const livemon::transport::PublisherOptions& options,
                                                    std::shared_ptr<livemon::transport::PublisherMetrics>& out) {
  using namespace livemon::transport;
  // The exporter is the sink: Publishers sharing LIVEMON_METRICS_PORT share it.
  out = exporterFor(options);
}
