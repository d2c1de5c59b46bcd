// MetricsExporter in a build without Prometheus (LIVEMON_WITH_PROMETHEUS=OFF): one cannot be
// made, so a metricsPort, `livemonctl demo --metrics-port` and `relay --metrics-port` fail with
// this reason instead of serving nothing.
#include <livemon/transport/metrics_exporter.h>

#include <stdexcept>

namespace livemon::transport {

struct MetricsExporter::State {};
struct MetricsExporter::Server {};

MetricsExporter::MetricsExporter(Options) {
  throw std::invalid_argument("MetricsExporter: this livemon was built without Prometheus (LIVEMON_WITH_PROMETHEUS=OFF)");
}

// Never reached: no MetricsExporter exists.
MetricsExporter::~MetricsExporter() = default;
void MetricsExporter::observe(const SourceInfo&, const Event&) {}
void MetricsExporter::observe(const WireMessage&) {}
void MetricsExporter::observe(const EventBatchView&) {}
void MetricsExporter::observe(const ReceivedEvent&) {}
void MetricsExporter::observe(const SourceChange&) {}
void MetricsExporter::sourceAlive(const SourceInfo&) {}
void MetricsExporter::sourceGone(const SourceInfo&) {}
void MetricsExporter::setCounter(const std::string&, const std::string&, double) {}
uint16_t MetricsExporter::port() const noexcept { return 0; }
std::string MetricsExporter::text() const { return {}; }
MetricsExporterStats MetricsExporter::stats() const { return {}; }

}  // namespace livemon::transport
