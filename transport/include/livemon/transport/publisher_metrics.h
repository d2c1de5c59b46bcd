#pragma once

#include <cstdint>
#include <memory>

#include <livemon/event.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/wire_format.h>

namespace livemon::transport {

// Thread-safe: one sink may serve every Publisher of a process, each calling it from its own I/O
// thread.
//
// Where a Publisher's Stat events go for a metrics server (PublisherOptions::metricsPort). The
// Publisher hands the sink the Stat events it is given as events, from its I/O thread: the logging
// threads only copy them into a bounded hand-off, so whatever the sink does (a lock, a map) never
// runs on them, and nothing decodes what the publisher sends. Transport only calls it and links no
// metrics library; livemon::exporters' Prometheus exporter (MetricsExporter) is one.
class PublisherMetrics {
 public:
  virtual ~PublisherMetrics() = default;
  // A Stat event (named livemon.Stat or torch.monitor.Stat: a window of a Stat, a few per second)
  // from `source`.
  virtual void observe(const SourceInfo& source, const Event& statEvent) = 0;
  // The publisher sent a heartbeat: its source is alive.
  virtual void sourceAlive(const SourceInfo& source) = 0;
  // The port the metrics are served on.
  virtual uint16_t port() const noexcept = 0;
};

}  // namespace livemon::transport

// The metrics sink of a Publisher made with `options` (null in `out` for none): its own for an
// explicit metricsPort, the process's shared one for LIVEMON_METRICS_PORT (see
// PublisherOptions::metricsPort). Throws what PublisherOptions::metricsPort documents.
//
// Defined by livemon::exporters; its CMake target has the linker take the definition, so every
// program that links livemon::exporters serves its Publishers' metrics, and one that links only
// livemon::transport serves none: a Publisher there refuses an explicit metricsPort, and says
// once on stderr that it ignores LIVEMON_METRICS_PORT.
extern "C" void livemon_exporters_publisher_metrics(const livemon::transport::PublisherOptions& options,
                                                    std::shared_ptr<livemon::transport::PublisherMetrics>& out);
