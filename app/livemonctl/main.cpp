// livemonctl: headless livemon tools. Each command lives in a file pair of its own beside this one
// (livemonctl_commands) and declares its own options; main() registers them, parses and dispatches.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <livemonctl/command_line.h>
#include <livemonctl/demo.h>
#include <livemonctl/export.h>
#include <livemonctl/info.h>
#include <livemonctl/keygen.h>
#include <livemonctl/ranks.h>
#include <livemonctl/record.h>
#include <livemonctl/relay.h>
#include <livemonctl/replay.h>
#include <livemonctl/runs.h>
#include <livemonctl/tail.h>
#include <livemonctl/watch.h>

namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void onStopSignal(int) { g_stop.store(true, std::memory_order_relaxed); }

// SIGINT and SIGTERM ask the running command to stop and clean up (no SA_RESTART: a blocking wait
// returns at once). Past `ulimit -f`, write(2) fails with EFBIG and the recorder says so, instead
// of the process dying from SIGXFSZ with the file half written.
void handleStopSignals() {
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGXFSZ, SIG_IGN);
}

}  // namespace

int main(int argc, char** argv) {
  namespace ctl = livemon::livemonctl;
  CLI::App app{"livemonctl: headless tools for livemon, live monitoring of training runs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("livemonctl ") + LIVEMON_VERSION, "Print the version and exit");
  // In the order `livemonctl --help` lists them.
  const std::vector<ctl::Command> commands{
      ctl::addDemoCommand(app),   ctl::addRanksCommand(app),  ctl::addTailCommand(app),   ctl::addWatchCommand(app),
      ctl::addRecordCommand(app), ctl::addInfoCommand(app),   ctl::addRunsCommand(app),   ctl::addExportCommand(app),
      ctl::addReplayCommand(app), ctl::addRelayCommand(app),  ctl::addKeygenCommand(app)};
  const ctl::ParsedCommandLine parsed = ctl::parseCommandLine(app, commands, argc, argv, std::cout, std::cerr);
  if (parsed.command == nullptr) return parsed.exitCode;  // help, version or a usage error
  handleStopSignals();
  return ctl::dispatch(*parsed.command, ctl::processContext(g_stop));
}
