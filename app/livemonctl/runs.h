#pragma once

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

#include <livemonctl/command_line.h>

// `livemonctl runs`: the runs in a folder of recordings, side by side, with their configs.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct RunsOptions {
  std::vector<std::string> paths{};  // directories (searched recursively for *.mcap) and files
  std::vector<std::string> keys{};   // summarised per run; the first sorts the rows
  bool bestMax = false;              // the best value is the highest (--best max), else the lowest
  bool json = false;
  bool progress = false;  // a status line on `err`, rewritten in place (a terminal)
};

// Lists one row per run (SourceInfo::run) found in the recordings under options.paths
// (readRecordingRuns, mergeRuns): name, start (UTC), duration, last step, state ("finished" when its
// newest recording was closed cleanly, else "incomplete"), its config values, and per key the
// last, min and max values and the step at the best. Sorted by the first key's best value, else by
// start. With `json`, one object {"runs": [{"name", "file", "files", "state", "start", "start_ns",
// "duration_s", "last_step", "config": {...}, "summary": {KEY: {"count", "last", "min", "max",
// "best", "best_step"}}}]}. A recording that cannot be read, and damage found in one, is reported
// on `err` (which file, where) and the others are listed. Returns 0, kFailedExitCode when no
// recording could be read (none found included), kInterruptedExitCode when `stop` became true.
int runRuns(const RunsOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// Adds `runs` and its options to `app` (command_line.h).
Command addRunsCommand(CLI::App& app);

}  // namespace livemon::livemonctl
