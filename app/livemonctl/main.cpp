// livemonctl: headless livemon tools. This file only parses arguments; the commands live in
// livemon::transport.
#include <signal.h>

#include <atomic>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <livemon/transport/demo.h>
#include <livemon/transport/error.h>
#include <livemon/transport/tail.h>

namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void onStopSignal(int) { g_stop.store(true, std::memory_order_relaxed); }

// SIGINT and SIGTERM ask the running command to stop and clean up. No SA_RESTART, so a blocking
// wait returns at once.
void handleStopSignals() {
  struct sigaction action {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::chrono::milliseconds secondsToMs(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0 + 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"livemonctl: headless tools for livemon, live monitoring of training runs"};
  app.require_subcommand(1);

  livemon::transport::DemoOptions demo;
  double demoWindow = 1.0;
  double demoDuration = 0.0;
  CLI::App* demoCommand = app.add_subcommand("demo", "Run a synthetic training job that publishes its Stats and events");
  demoCommand->add_option("--endpoint", demo.endpoint, "Endpoint to bind")->capture_default_str();
  demoCommand->add_option("--steps-per-second", demo.stepsPerSecond, "Training steps per second")
      ->check(CLI::Range(0.001, 100000.0))
      ->capture_default_str();
  demoCommand->add_option("--window", demoWindow, "Stat window in seconds")->check(CLI::Range(0.001, 86400.0))->capture_default_str();
  demoCommand->add_option("--duration", demoDuration, "Stop after this many seconds (0: run until Ctrl-C)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  demoCommand->add_option("--steps-per-epoch", demo.stepsPerEpoch, "Steps between eval events")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}))
      ->capture_default_str();
  demoCommand->add_option("--run", demo.runName, "Run name the demo publishes under")->capture_default_str();
  demoCommand->add_option("--seed", demo.seed, "Random seed (0: random)")->capture_default_str();

  livemon::transport::TailOptions tail;
  double staleAfter = 3.0;
  CLI::App* tailCommand = app.add_subcommand("tail", "Print the events of one or more publishers as they arrive");
  tailCommand->add_option("endpoints", tail.endpoints, "Endpoints to connect to")->capture_default_str();
  tailCommand->add_flag("--json", tail.json, "Print one JSON object per line");
  tailCommand->add_option("--filter", tail.filters, "Print only events whose name starts with PREFIX (repeatable)")
      ->option_text("PREFIX");
  tailCommand->add_option("--stale-after", staleAfter, "Report a source stale after this many silent seconds")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  tailCommand->add_option("--count", tail.maxEvents, "Exit after printing N events (0: run until Ctrl-C)")
      ->option_text("N");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    CLI::App* command = &app;
    for (CLI::App* sub : {demoCommand, tailCommand}) {
      if (sub->parsed()) command = sub;
    }
    std::string message = e.what();
    if (command == &app && argc > 1 && argv[1][0] != '-') message = std::string("unknown command \"") + argv[1] + "\"";
    std::cerr << "livemonctl: " << message << "\n\n" << command->help();
    return 2;
  }

  handleStopSignals();
  try {
    if (demoCommand->parsed()) {
      demo.window = secondsToMs(demoWindow);
      demo.duration = secondsToMs(demoDuration);
      return livemon::transport::runDemo(demo, g_stop, std::cout);
    }
    tail.staleAfter = secondsToMs(staleAfter);
    return livemon::transport::runTail(tail, g_stop, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "livemonctl " << (demoCommand->parsed() ? "demo" : "tail") << ": " << e.what() << '\n';
    return 1;
  }
}
