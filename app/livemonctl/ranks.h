#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <livemon/clock.h>
#include <livemon/rank_scores.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/wire_format.h>
#include <livemonctl/command_line.h>

// `livemonctl ranks`: the ranks of each run side by side, scored against their median every
// window, for finding a straggler from a terminal (a `top` of ranks).
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
struct RanksOptions {
  std::vector<std::string> endpoints{std::string(transport::kDefaultEndpoint)};
  std::string stat{kDefaultRankScoreKey};  // the value key scored (RankScorerOptions::key)
  RankScoreDirection direction = RankScoreDirection::LowerIsFaster;
  double threshold = 0.8;
  uint32_t windows = 3;
  std::chrono::milliseconds window{1000};  // how often the ranks are scored and printed
  std::chrono::milliseconds duration{0};   // 0: until stopped
  bool json = false;
  // Text only: redraw the table in place each window (a terminal), and at most this many ranks
  // per run, worst first (0: all).
  bool redraw = false;
  std::size_t rows = 0;
  // As TailOptions::quietNotice.
  std::chrono::milliseconds quietNotice{5000};
  // Windows, staleness and the notices; nullptr means livemon::systemClock(). Must outlive runRanks.
  Clock* clock = nullptr;
  // CURVE (transport::CurveOptions): --curve-client, --curve-server, --require-curve.
  transport::CurveOptions curve;
};

// Subscribes to every endpoint and, every window, scores each run's ranks by `stat` (RankScorer)
// and prints them to `out` worst first: a table per run, or one JSON object per run and window.
// Runs until `stop` or `duration`; then a summary to `err`. Returns the exit code: 0, or
// kFailedExitCode for a bad option or an endpoint that cannot be used (`err` names it).
int runRanks(const RanksOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// {"time": ISO-8601 UTC, "ts": ns, "run", "stat", "median", "threshold", "windows", "ranks":
// [{"rank", "value", "score", "flagged", "below", "stale", "host", "pid", "id"}...] worst first,
// "flagged": [ranks]}. Scores and values that are NaN or ±Inf are the strings "NaN", "Infinity",
// "-Infinity". No newline.
std::string formatRankWindowJson(const RankWindow& window, const RankScorerOptions& scoring);
// A header line and a table (RANK SCORE VALUE FLAG HOST PID), at most `rows` ranks (0: all);
// text from peers made printable. Ends with a newline.
std::string formatRankWindowText(const RankWindow& window, const RankScorerOptions& scoring, std::size_t rows = 0);

// Adds `ranks` and its options to `app` (command_line.h).
Command addRanksCommand(CLI::App& app);

}  // namespace livemon::livemonctl
