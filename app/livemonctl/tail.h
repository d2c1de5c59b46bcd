#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/wire_format.h>
#include <livemonctl/command_line.h>

// `livemonctl tail`: prints what publishers send, readably or as JSON lines.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct TailOptions {
  std::vector<std::string> endpoints{std::string(transport::kDefaultEndpoint)};
  std::vector<std::string> filters;  // event-name prefixes; empty prints every event
  bool json = false;
  std::chrono::milliseconds staleAfter{3000};
  uint64_t maxEvents = 0;  // stop after this many events; 0: until stopped
  // First the run from its start (the history the publisher or relay keeps), then live.
  bool history = false;
  // After this long without a single message from an endpoint, say so once on `err` (a user
  // tailing the wrong endpoint would otherwise wait in silence); 0: never.
  std::chrono::milliseconds quietNotice{5000};
  // Measures staleness and quietNotice; nullptr means livemon::systemClock(). Must outlive runTail.
  Clock* clock = nullptr;
  // CURVE (transport::CurveOptions): --curve-client, --curve-server, --require-curve.
  transport::CurveOptions curve;
};

// Subscribes to every endpoint and prints each event, each source joining, going stale, coming
// back or saying goodbye, and each gap, to `out` until `stop` becomes true or maxEvents have been
// printed; then a summary to `err` (event_format.h). Returns the exit code: 0, or
// kFailedExitCode when an endpoint cannot be used (`err` names it).
int runTail(const TailOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// Adds `tail` and its options to `app` (command_line.h).
Command addTailCommand(CLI::App& app);

}  // namespace livemon::livemonctl
