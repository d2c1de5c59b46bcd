#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

// What every livemonctl command shares: its exit codes, how it reports a failure, and the status
// line it rewrites on a terminal.
namespace livemon::livemonctl {

// The exit codes of every command. 0: it did its work.
inline constexpr int kFailedExitCode = 1;  // it could not: the reason is on standard error
inline constexpr int kUsageExitCode = 2;   // a bad argument: the usage follows the reason
// Stopped by Ctrl-C (SIGINT) before it finished: 128 + SIGINT, as shells report it.
inline constexpr int kInterruptedExitCode = 130;

// Writes "livemonctl <command>: " to `stream` and returns it for the rest of the line. Every
// error and notice of a command, and each line where it says what it does, starts so, so that a
// user who runs several at once (a pipeline, a script) sees which one spoke.
std::ostream& commandMessage(std::ostream& stream, std::string_view command);

// Runs `body`, the work of `command`, and returns its exit code. A setup mistake it throws (a bad
// option: std::invalid_argument; an endpoint that cannot be used: transport::TransportError) ends
// the command with kFailedExitCode and the exception's message on `err`, through
// commandMessage(). Anything else is a defect and propagates, so that tests and the fuzz targets
// see it; the program reports it the same way as a last resort (reportUnexpected()).
int runCommand(std::string_view command, std::ostream& err, const std::function<int()>& body);

// For main(): reports an exception that escaped `command` and returns kFailedExitCode.
int reportUnexpected(std::string_view command, std::ostream& err, const std::exception& error);

// Not thread-safe: one owner at a time; one command's thread writes it. A progress line on `err`,
// rewritten in place on a terminal (at most 5 times a second unless forced); nothing when disabled,
// as when `err` is not a terminal. A line a command prints while the status shows must begin with
// kClearStatusLine.
class StatusLine {
 public:
  StatusLine(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}
  ~StatusLine() { finish(); }
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;

  void show(const std::string& text, bool force = false);
  // Ends the line the status is on, so what follows starts on a line of its own.
  void finish();

 private:
  std::ostream& err_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// Moves to the start of the terminal line and clears it.
inline constexpr std::string_view kClearStatusLine = "\r\033[K";

}  // namespace livemon::livemonctl
