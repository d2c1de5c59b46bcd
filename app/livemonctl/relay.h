#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/transport/curve.h>
#include <livemon/transport/relay.h>
#include <livemon/transport/wire_format.h>
#include <livemonctl/command_line.h>

// `livemonctl relay`: publishers connect to it, subscribers connect to it, and it may record what
// passes through.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct RelayCommandOptions {
  std::string listen{transport::kDefaultRelayListenEndpoint};  // publishers connect here
  std::string serve{transport::kDefaultEndpoint};              // subscribers connect here
  std::vector<std::string> upstream;                           // other relays' listen endpoints
  int highWaterMark = 10000;  // messages queued per connection each way (RelayOptions::highWaterMark)
  uint64_t maxQueuedMb = transport::RelayOptions{}.maxQueuedBytes / (1024 * 1024);  // RelayOptions::maxQueuedBytes
  std::size_t maxPublishers = transport::RelayOptions{}.maxPublisherConnections;   // RelayOptions::maxPublisherConnections
  std::chrono::milliseconds maxStall = transport::RelayOptions{}.maxStall;        // RelayOptions::maxStall; 0: never
  std::string recordDir;     // empty: no recording
  uint64_t rotateMb = 256;
  double rotateMinutes = 60;
  std::chrono::milliseconds duration{0};  // 0: until stopped
  // Serves the latest value of every Stat aggregation that passes, and the relay's own counters,
  // for Prometheus at http://metricsAddress:metricsPort/metrics (transport::MetricsExporter).
  // 0: off.
  uint16_t metricsPort = 0;
  // History for late subscribers (RelayOptions::historyBytes, RelayOptions::history).
  uint64_t historyMb = transport::kDefaultRelayHistoryBytes / (1024 * 1024);
  std::string history;  // empty: the default beside --serve
  std::string metricsAddress = "127.0.0.1";
  // Called on the relay's worker thread with every message forwarded from publishers to
  // subscribers, beside the recorder: where a metrics exporter (--metrics-port) plugs in.
  std::function<void(std::string_view topic, const transport::WireMessage& message)> onMessage;
  // CURVE (transport::CurveOptions): --curve-secret, --curve-allow, --curve-server, --require-curve.
  transport::CurveOptions curve;
  // --curve-allow-publish DIR (RelayOptions::curveAllowPublish): who may publish into the relay.
  // Empty: curve.allow admits publishers and watchers alike.
  std::string curveAllowPublish;
};

// Runs a relay until `stop` (Ctrl-C, SIGTERM) or `duration`; prints where it listens and serves
// to `out` first and what it forwarded and recorded at the end. Returns the exit code: 0, or
// kFailedExitCode when an endpoint cannot be bound or a recording cannot be written (`err`
// names it; what was recorded up to then stays readable).
int runRelay(const RelayCommandOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// Adds `relay` and its options to `app` (command_line.h).
Command addRelayCommand(CLI::App& app);

}  // namespace livemon::livemonctl
