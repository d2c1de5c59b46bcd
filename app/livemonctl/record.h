#pragma once

#include <atomic>
#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

#include <livemon/transport/curve.h>
#include <livemon/transport/wire_format.h>
#include <livemonctl/command_line.h>

// `livemonctl record`: records what publishers send into an MCAP file.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct RecordOptions {
  std::vector<std::string> endpoints{std::string(transport::kDefaultEndpoint)};
  std::string output{};
  std::vector<std::string> filters{};    // event-name prefixes; empty records everything
  std::chrono::milliseconds duration{0};  // 0: until stopped
  bool progress = false;                 // a status line on `err`, rewritten in place (a terminal)
  // First the run so far, from the history the publisher or relay keeps (its config among it),
  // then live: a recording started late still holds the run from its start.
  bool history = false;
  // CURVE (transport::CurveOptions): --curve-client, --curve-server, --require-curve.
  transport::CurveOptions curve;
};

// Subscribes to the endpoints and records every event into `output` until `stop` or `duration`,
// then closes the file and prints what it wrote. Events whose names do not fit in the recording
// (kMaxRecordingChannels) are counted and reported, and recording goes on. Returns the exit
// code: 0, or kFailedExitCode when an endpoint cannot be used or the file could not be written
// (`err` names it; what was written up to then stays readable).
int runRecord(const RecordOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// Adds `record` and its options to `app` (command_line.h).
Command addRecordCommand(CLI::App& app);

}  // namespace livemon::livemonctl
