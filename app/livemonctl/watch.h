#pragma once

#include <atomic>
#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

#include <livemon/alert_rules.h>
#include <livemon/clock.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/wire_format.h>
#include <livemonctl/command_line.h>

// `livemonctl watch`: applies alert rules to what publishers send, headless, so a script can stop
// a diverging job.
namespace livemon::livemonctl {

// The exit code of `watch --exit-on-alert` when a rule triggered.
inline constexpr int kAlertExitCode = 3;

// What watch applies when no rule is given.
inline const std::vector<std::string> kDefaultWatchRules{"nan", "silent", "loss"};

// Thread-safety: a plain value type.
struct WatchOptions {
  std::vector<std::string> endpoints{std::string(transport::kDefaultEndpoint)};
  std::vector<std::string> rules;  // alert_rules.h's texts; empty: kDefaultWatchRules
  bool exitOnAlert = false;
  bool json = false;
  // As TailOptions::quietNotice.
  std::chrono::milliseconds quietNotice{5000};
  // Measures silence; nullptr means livemon::systemClock(). Must outlive runWatch.
  Clock* clock = nullptr;
  // CURVE (transport::CurveOptions): --curve-client, --curve-server, --require-curve.
  transport::CurveOptions curve;
};

// Subscribes to every endpoint and prints each alert to `out` (one text line, or one JSON object
// per line) until `stop` becomes true, or, with exitOnAlert, after the first alert. Then a summary
// to `err`. Returns the exit code: 0; kAlertExitCode when exitOnAlert stopped it; kUsageExitCode
// for a bad rule (`err` names it, where and why); kFailedExitCode when an endpoint cannot be used.
int runWatch(const WatchOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

// "17:46:18.123 alert job@node:42 rank 0: train.loss.mean is NaN (rule "nan")", in local time;
// text from peers made printable. No newline.
std::string formatAlertText(const Alert& alert);
// {"time": ISO-8601 UTC, "ts": ns, "alert": "nan"|"silent"|"loss"|"threshold", "rule", "key" (when
// there is one), "value" (NaN and ±Inf as the strings "NaN", "Infinity", "-Infinity"), "message",
// "source": {"run", "host", "pid", "rank" (when set), "id"}}. No newline.
std::string formatAlertJson(const Alert& alert);

// Adds `watch` and its options to `app` (command_line.h).
Command addWatchCommand(CLI::App& app);

}  // namespace livemon::livemonctl
