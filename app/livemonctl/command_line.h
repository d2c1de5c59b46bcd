#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <livemon/transport/curve.h>

namespace CLI {
class App;
class Validator;
}  // namespace CLI

// How the livemonctl commands meet the command line. Each command's file pair offers
// `Command add<Name>Command(CLI::App& app)`, which adds its subcommand and options to the program's
// CLI11 app and returns how to run it; main() only registers them, parses and dispatches.
namespace livemon::livemonctl {

// Thread-safety: a plain value type. What a command runs with.
struct CommandContext {
  const std::atomic<bool>& stop;  // set by SIGINT and SIGTERM
  std::ostream& out;
  std::ostream& err;
  bool outIsTerminal = false;  // `ranks` redraws its table in place
  bool errIsTerminal = false;  // progress lines, rewritten in place
};

// The context of the running process: standard output and error, and whether each is a terminal.
CommandContext processContext(const std::atomic<bool>& stop);

// Not thread-safe: one owner at a time; built, parsed and run on main()'s thread. A command added
// to an app: its subcommand, and how to run it once the command line has been parsed into the
// options `run` holds. Lives no longer than the app it was added to.
struct Command {
  CLI::App* cli = nullptr;
  std::function<int(const CommandContext&)> run;
};

// Thread-safety: a plain value type. What parseCommandLine() found.
struct ParsedCommandLine {
  const Command* command = nullptr;  // the command to run; none when the program is done
  int exitCode = 0;                  // without a command: 0 after --help or --version, else kUsageExitCode
};

// Parses `argv` into `app`, whose subcommands are `commands`. --help and --version print on `out`.
// A bad argument prints "livemonctl: <reason>" and the usage of the command it was given to (the
// program's own for an unknown command) on `err`, and ends the program with kUsageExitCode.
ParsedCommandLine parseCommandLine(CLI::App& app, const std::vector<Command>& commands, int argc,
                                   const char* const* argv, std::ostream& out, std::ostream& err);

// Runs `command` and returns its exit code; an exception that escapes it is reported as
// "livemonctl <command>: <what>" (reportUnexpected()) and ends it with kFailedExitCode.
int dispatch(const Command& command, const CommandContext& context);

// A bad argument found only once every option is parsed (one that depends on another): prints
// "livemonctl: <reason>" and the command's usage on `err`, as CLI11 does for the others, and returns
// kUsageExitCode.
int usageError(const CLI::App& command, const std::string& reason, std::ostream& err);

// Options shared by several commands.

// CURVE options of a command that binds (demo, relay, replay); `connects`: it may also connect
// (to a relay), as a CURVE client of --curve-server. Each falls back to its environment variable.
void addPublisherCurveOptions(CLI::App& command, transport::CurveOptions& curve, bool connects);
// CURVE options of a command that connects to publishers or relays (tail, record, watch, ranks).
void addClientCurveOptions(CLI::App& command, transport::CurveOptions& curve);
// Checks a positive, finite factor of at most 1000 (demo --straggler-factor, ranks --threshold).
const CLI::Validator& positiveFactor();

// Seconds, as the options take them, in whole milliseconds (rounded).
std::chrono::milliseconds secondsToMs(double seconds);

}  // namespace livemon::livemonctl
