#pragma once

#include <atomic>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include <livemonctl/command_line.h>

// `livemonctl export`: a recording's events as JSON lines or CSV.
namespace livemon::livemonctl {

enum class ExportFormat { JsonLines, Csv };

// Thread-safety: a plain value type.
struct ExportOptions {
  std::string path{};
  ExportFormat format = ExportFormat::JsonLines;
  std::string output{};  // empty: `out`
  // Bounds on the receive time: seconds from the recording's start ("90", "1.5") or an absolute
  // UTC time ("2026-11-22T18:00:00Z", fractions allowed); see parseTimeBound(). Empty: unbounded.
  std::string from{};
  std::string to{};
  bool progress = false;  // a status line on `err`, rewritten in place (a terminal)
  bool wide = false;      // CSV only: a row per event and a column per data key
  std::vector<std::string> morePaths{};  // recordings exported after `path`, in turn, into the same output
  bool runColumn = false;  // CSV only: a first column "run"; always there with morePaths
};

// The most data-key columns of `export --format csv --wide`; further keys are left out and
// counted, so a file with endless distinct keys cannot make the header grow without bound.
inline constexpr std::size_t kMaxWideColumns = 4096;

// Writes a recording's events as JSON lines (the objects of `livemonctl tail --json`) or as CSV
// with one row per data field: time_ns,time,source,name,seq,key,type,value,step (step empty for
// an event without one). With `wide`, one CSV row per event instead:
// time_ns,time,source,name,step,<key>... with a column per data key in byte order (the union
// over the exported events, at most kMaxWideColumns) and an empty cell where an event lacks the
// key; a data field "step" is the step column. Wide export reads the file twice (keys, then
// rows), so its memory holds the key names, never the rows. With morePaths, the recordings are
// written one after another into one output (JSON lines, or one CSV table whose wide columns are
// the union over all of them), and a CSV table starts with a column "run", the event's source's run
// (runColumn asks for it with one recording; without, one recording's output is as it always was);
// --from and --to count from each recording's own start. A recording after the first that cannot be
// read is reported and the others exported. Returns 0,
// kFailedExitCode when a file cannot be read or written, kUsageExitCode for a bad --from/--to,
// kInterruptedExitCode when `stop` became true first (what was written until then stays, ending
// with a whole event).
int runExport(const ExportOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// Adds `export` and its options to `app` (command_line.h).
Command addExportCommand(CLI::App& app);

}  // namespace livemon::livemonctl
