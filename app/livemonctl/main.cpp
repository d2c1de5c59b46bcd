// livemonctl: headless livemon tools. This file only parses arguments and dispatches; each
// command lives in a file pair of its own beside it (livemonctl_commands).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include <livemonctl/command.h>
#include <livemonctl/demo.h>
#include <livemonctl/export.h>
#include <livemonctl/info.h>
#include <livemonctl/keygen.h>
#include <livemonctl/ranks.h>
#include <livemonctl/record.h>
#include <livemonctl/relay.h>
#include <livemonctl/replay.h>
#include <livemonctl/tail.h>
#include <livemonctl/time_bound.h>
#include <livemonctl/watch.h>

namespace {

namespace ctl = livemon::livemonctl;

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
  // Past a file-size limit (ulimit -f), write(2) then fails with EFBIG and the recorder reports
  // it, instead of the process dying from SIGXFSZ with the file half written.
  signal(SIGXFSZ, SIG_IGN);
}

// Checks a --from/--to value as far as it can before the recording is read: its form, and that it
// can name a time at all (seconds from the start must still fit after a start at the epoch).
const CLI::Validator kTimeBound(
    [](std::string& text) {
      std::string why;
      return ctl::parseTimeBound(text, 0, &why) ? std::string() : text + ' ' + why;
    },
    "T", "time bound");

// Checks a --rule before anything runs, so a bad one is a usage error naming the rule.
const CLI::Validator kAlertRule(
    [](std::string& text) {
      livemon::AlertRuleError error;
      return livemon::parseAlertRule(text, &error) ? std::string() : livemon::describeAlertRuleError(text, error);
    },
    "RULE", "alert rule");

// A positive, finite number (a factor).
const CLI::Validator kPositiveFactor(
    [](std::string& text) {
      double value = 0;
      return CLI::detail::lexical_cast(text, value) && std::isfinite(value) && value > 0 && value <= 1000
                 ? std::string()
                 : "must be a number above 0 and at most 1000, got " + text;
    },
    "F", "positive factor");

// CURVE options of a command that binds (demo, relay, replay); `connects`: it may also connect
// (to a relay), as a CURVE client of --curve-server. Each falls back to its environment variable.
void addPublisherCurveOptions(CLI::App* command, livemon::transport::CurveOptions& curve, bool connects) {
  command->add_option("--curve-secret", curve.certificate,
                      "Encrypt and authenticate with CURVE: this side's NAME.key_secret (livemonctl keygen)")
      ->option_text("FILE")
      ->envname(std::string(livemon::transport::kCurveSecretEnvironmentVariable))
      ->check(CLI::ExistingFile);
  command->add_option("--curve-allow", curve.allow, "With --curve-secret: admit only the clients whose NAME.key is in DIR")
      ->option_text("DIR")
      ->envname(std::string(livemon::transport::kCurveAllowEnvironmentVariable))
      ->check(CLI::ExistingDirectory);
  if (connects) {
    command->add_option("--curve-server", curve.serverCertificate,
                        "With --curve-secret, connecting: the NAME.key of the relay connected to")
        ->option_text("FILE")
        ->envname(std::string(livemon::transport::kCurveServerEnvironmentVariable))
        ->check(CLI::ExistingFile);
  }
  command->add_flag("--require-curve", curve.require, "Refuse to bind an address beyond loopback without CURVE")
      ->envname(std::string(livemon::transport::kRequireCurveEnvironmentVariable));
}

// CURVE options of a command that connects to publishers or relays (tail, record, watch, ranks).
void addClientCurveOptions(CLI::App* command, livemon::transport::CurveOptions& curve) {
  command->add_option("--curve-server", curve.serverCertificate,
                      "Encrypt and authenticate with CURVE: the publisher's or relay's NAME.key")
      ->option_text("FILE")
      ->envname(std::string(livemon::transport::kCurveServerEnvironmentVariable))
      ->check(CLI::ExistingFile);
  command->add_option("--curve-client", curve.certificate,
                      "With --curve-server: this side's NAME.key_secret (its NAME.key in the server's allow list)")
      ->option_text("FILE")
      ->envname(std::string(livemon::transport::kCurveClientEnvironmentVariable))
      ->check(CLI::ExistingFile);
}

std::chrono::milliseconds secondsToMs(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000.0 + 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"livemonctl: headless tools for livemon, live monitoring of training runs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("livemonctl ") + LIVEMON_VERSION, "Print the version and exit");

  ctl::DemoOptions demo;
  double demoWindow = 1.0;
  double demoDuration = 0.0;
  CLI::App* demoCommand = app.add_subcommand("demo", "Run a synthetic training job that publishes its Stats and events");
  demoCommand->add_option("--endpoint", demo.endpoint, "Endpoint to bind (with --ranks, rank R binds the port R above)")
      ->capture_default_str();
  demoCommand->add_option("--connect", demo.connect, "Connect to EP (a relay's --listen) instead of binding")
      ->option_text("EP");
  demoCommand->add_option("--ranks", demo.ranks, "Run N ranks in this process, each its own publisher (ranks 0..N-1)")
      ->option_text("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}))
      ->capture_default_str();
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
  demoCommand->add_option("--diverge-at", demo.divergeAt,
                          "From this step the loss blows up and, 40 steps later, becomes NaN, to try alerts (0: never)")
      ->option_text("STEP")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000}))
      ->capture_default_str();
  demoCommand->add_option("--metrics-port", demo.metricsPort,
                          "Serve the demo's Stats for Prometheus at http://127.0.0.1:PORT/metrics (0: off)")
      ->option_text("PORT")
      ->capture_default_str();
  demoCommand->add_option("--metrics-address", demo.metricsAddress, "Address the metrics are served on")
      ->capture_default_str();
  demoCommand->add_option("--trace-dir", demo.traceDir,
                          "Run a profiler and write Chrome traces of the demo's ranges into this directory");
  int64_t straggler = -1;
  CLI::Option* stragglerOption =
      demoCommand->add_option("--straggler", straggler,
                              "With --ranks: rank R computes --straggler-factor times as long, and the others wait for "
                              "it in each step's allreduce (R in 0..N-1)")
          ->option_text("R")
          ->check(CLI::Range(int64_t{0}, int64_t{1023}));
  demoCommand->add_option("--straggler-factor", demo.stragglerFactor, "How many times as long the straggler computes (2)")
      ->option_text("F")
      ->check(kPositiveFactor)
      ->needs(stragglerOption)
      ->capture_default_str();
  std::vector<int64_t> traceSchedule{demo.traceWait, demo.traceWarmup, demo.traceActive, demo.traceRepeat};
  demoCommand->add_option("--trace-schedule", traceSchedule, "The profiler's WAIT WARMUP ACTIVE REPEAT steps")
      ->expected(4)
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000}))
      ->capture_default_str();
  addPublisherCurveOptions(demoCommand, demo.curve, true);

  ctl::RanksOptions ranks;
  double ranksWindow = 1.0;
  double ranksDuration = 0.0;
  bool higherIsFaster = false;
  CLI::App* ranksCommand = app.add_subcommand(
      "ranks", "Score the ranks of each run against their median every window and flag stragglers, like top");
  ranksCommand->add_option("endpoints", ranks.endpoints, "Endpoints to connect to (a relay's --serve, or every rank's)")
      ->capture_default_str();
  ranksCommand->add_option("--stat", ranks.stat,
                           "The value key to score, <stat>.<aggregation> (default train.compute_time_ms.mean: "
                           "in synchronous training every rank's step time is the same, its compute time is not)")
      ->option_text("KEY")
      ->check(CLI::Validator([](std::string& text) { return text.empty() ? std::string("must not be empty") : std::string(); },
                             "KEY", "value key"))
      ->capture_default_str();
  ranksCommand->add_flag("--higher-is-faster", higherIsFaster,
                         "KEY is a rate (samples/s): score = value / median instead of median / value");
  ranksCommand->add_option("--threshold", ranks.threshold, "Flag a rank whose score stays below X (0.8) ...")
      ->option_text("X")
      ->check(kPositiveFactor)
      ->capture_default_str();
  ranksCommand->add_option("--windows", ranks.windows, "... for K windows in a row (3)")
      ->option_text("K")
      ->check(CLI::Range(uint32_t{1}, uint32_t{1'000'000}))
      ->capture_default_str();
  ranksCommand->add_option("--window", ranksWindow, "Seconds between scorings (1)")
      ->option_text("S")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  ranksCommand->add_option("--duration", ranksDuration, "Stop after this many seconds (0: run until Ctrl-C)")
      ->option_text("S")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  ranksCommand->add_option("--rows", ranks.rows, "Show at most N ranks per run, worst first (0: all)")
      ->option_text("N")
      ->capture_default_str();
  ranksCommand->add_flag("--json", ranks.json, "Print one JSON object per run and window");
  addClientCurveOptions(ranksCommand, ranks.curve);

  ctl::TailOptions tail;
  double staleAfter = 3.0;
  CLI::App* tailCommand = app.add_subcommand("tail", "Print the events of one or more publishers as they arrive");
  tailCommand->add_option("endpoints", tail.endpoints, "Endpoints to connect to")->capture_default_str();
  tailCommand->add_flag("--json", tail.json, "Print one JSON object per line");
  tailCommand->add_flag("--history", tail.history,
                        "First the run from its start (the history its publisher or relay keeps), then live");
  tailCommand->add_option("--filter", tail.filters, "Print only events whose name starts with PREFIX (repeatable)")
      ->option_text("PREFIX");
  tailCommand->add_option("--stale-after", staleAfter, "Report a source stale after this many silent seconds")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  tailCommand->add_option("--count", tail.maxEvents, "Exit after printing N events (0: run until Ctrl-C)")
      ->option_text("N");
  addClientCurveOptions(tailCommand, tail.curve);

  ctl::WatchOptions watch;
  CLI::App* watchCommand = app.add_subcommand(
      "watch", "Apply alert rules to what publishers send; print each alert (exit status 3 with --exit-on-alert)");
  watchCommand->add_option("endpoints", watch.endpoints, "Endpoints to connect to")->capture_default_str();
  watchCommand
      ->add_option("--rule", watch.rules,
                   "An alert rule (repeatable): nan | silent [DURATION] | loss | KEY > X [for N] (also >=, <, <=). "
                   "Default: nan, silent, loss")
      ->option_text("RULE")
      ->allow_extra_args(false)
      ->check(kAlertRule);
  watchCommand->add_flag("--exit-on-alert", watch.exitOnAlert, "Exit with status 3 at the first alert");
  watchCommand->add_flag("--json", watch.json, "Print one JSON object per alert and line");
  addClientCurveOptions(watchCommand, watch.curve);

  const bool terminal = isatty(STDERR_FILENO) != 0;

  ctl::RecordOptions record;
  double recordDuration = 0.0;
  CLI::App* recordCommand = app.add_subcommand("record", "Record what publishers send into an MCAP file");
  recordCommand->add_option("endpoints", record.endpoints, "Endpoints to connect to")->capture_default_str();
  recordCommand->add_option("-o,--output", record.output, "The recording to write (FILE.mcap)")
      ->required()
      ->option_text("FILE");
  recordCommand->add_option("--filter", record.filters, "Record only events whose name starts with PREFIX (repeatable)")
      ->option_text("PREFIX");
  recordCommand->add_option("--duration", recordDuration, "Stop after this many seconds (0: run until Ctrl-C)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  addClientCurveOptions(recordCommand, record.curve);

  ctl::InfoOptions info;
  CLI::App* infoCommand = app.add_subcommand("info", "Summarise a recording: duration, events per name and source, compression");
  infoCommand->add_option("file", info.path, "The recording")->required()->check(CLI::ExistingFile);
  infoCommand->add_flag("--json", info.json, "Print one JSON object");

  ctl::ExportOptions exportOptions;
  std::string exportFormat = "jsonl";
  CLI::App* exportCommand = app.add_subcommand("export", "Write a recording's events as JSON lines or CSV");
  exportCommand->add_option("file", exportOptions.path, "The recording")->required()->check(CLI::ExistingFile);
  exportCommand->add_option("--format", exportFormat, "jsonl: one JSON object per event; csv: one row per field")
      ->check(CLI::IsMember({"jsonl", "csv"}))
      ->capture_default_str();
  exportCommand->add_option("-o,--output", exportOptions.output, "Write to FILE instead of standard output")
      ->option_text("FILE");
  exportCommand->add_option("--from", exportOptions.from,
                            "Start at T: seconds from the recording's start, or a UTC time like 2026-11-22T18:00:00Z")
      ->option_text("T")
      ->check(kTimeBound);
  exportCommand->add_option("--to", exportOptions.to, "End at T (same forms as --from)")
      ->option_text("T")
      ->check(kTimeBound);
  exportCommand->add_flag("--wide", exportOptions.wide,
                          "With --format csv: one row per event, a column per data key "
                          "(time_ns,time,source,name,step,<key>...)");

  ctl::ReplayOptions replay;
  CLI::App* replayCommand = app.add_subcommand("replay", "Republish a recording with its original timing");
  replayCommand->add_option("file", replay.path, "The recording")->required()->check(CLI::ExistingFile);
  replayCommand->add_option("--publish", replay.endpoint, "Endpoint to bind and publish on")->capture_default_str();
  replayCommand->add_option("--speed", replay.speed, "Play X times as fast as recorded")
      ->check(CLI::Range(0.01, 10000.0))
      ->capture_default_str()
      ->option_text("X");
  replayCommand->add_flag("--loop", replay.loop, "Start over at the end");
  double maxGap = 60.0;
  replayCommand->add_option("--max-gap", maxGap, "Cut longer waits between events (after --speed) to S seconds")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str()
      ->option_text("S");
  addPublisherCurveOptions(replayCommand, replay.curve, false);

  ctl::RelayCommandOptions relay;
  double relayDuration = 0.0;
  CLI::App* relayCommand = app.add_subcommand(
      "relay", "Forward what publishers send to subscribers, through ZeroMQ's proxy; relays chain (--upstream)");
  relayCommand->add_option("--listen", relay.listen, "Endpoint to bind for publishers (they connect to it)")
      ->option_text("EP")
      ->capture_default_str();
  relayCommand->add_option("--serve", relay.serve, "Endpoint to bind for subscribers (dashboards, tail, record)")
      ->option_text("EP")
      ->capture_default_str();
  relayCommand->add_option("--upstream", relay.upstream, "Also forward into the relay listening at EP (repeatable)")
      ->option_text("EP");
  relayCommand->add_option("--high-water-mark", relay.highWaterMark,
                           "Messages queued per connection each way; a subscriber that falls further behind misses messages")
      ->option_text("N")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  relayCommand->add_option("--record", relay.recordDir, "Record the stream into MCAP files in DIR, named by their start time")
      ->option_text("DIR");
  relayCommand->add_option("--rotate-mb", relay.rotateMb, "With --record: start a new file after this many MiB")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000}))
      ->capture_default_str();
  relayCommand->add_option("--rotate-minutes", relay.rotateMinutes, "With --record: start a new file after this many minutes")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  relayCommand->add_option("--metrics-port", relay.metricsPort,
                           "Serve every Stat that passes, and the relay's counters, for Prometheus on PORT (0: off)")
      ->option_text("PORT")
      ->capture_default_str();
  relayCommand->add_option("--metrics-address", relay.metricsAddress, "With --metrics-port: the address to serve on")
      ->capture_default_str();
  relayCommand->add_option("--history-mb", relay.historyMb,
                           "Keep the newest MiB of the stream for subscribers that join late (0: off)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{1024 * 1024}));
  relayCommand->add_option("--history", relay.history,
                           "Endpoint to answer history requests on (default: tcp://127.0.0.1:5557 beside the default "
                           "--serve, else a free port on the --serve host); its heartbeats advertise it");
  relayCommand->add_option("--duration", relayDuration, "Stop after this many seconds (0: run until Ctrl-C or SIGTERM)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  addPublisherCurveOptions(relayCommand, relay.curve, true);

  ctl::KeygenOptions keygen;
  CLI::App* keygenCommand = app.add_subcommand(
      "keygen", "Make a CURVE key pair: NAME.key (public) and NAME.key_secret (owner-only), ZeroMQ text certificates");
  keygenCommand->add_option("name", keygen.name, "The certificates' name")->required();
  keygenCommand->add_option("--dir", keygen.dir, "Write into DIR (e.g. ~/.config/livemon/keys)")
      ->option_text("DIR")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  keygenCommand->add_flag("--force", keygen.force, "Replace existing files");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    CLI::App* command = &app;
    for (CLI::App* sub : {demoCommand, tailCommand, recordCommand, infoCommand, exportCommand, replayCommand, watchCommand,
                          relayCommand, ranksCommand, keygenCommand}) {
      if (sub->parsed()) command = sub;
    }
    std::string message = e.what();
    if (command == &app && argc > 1 && argv[1][0] != '-') message = std::string("unknown command \"") + argv[1] + "\"";
    std::cerr << "livemonctl: " << message << "\n\n" << command->help();
    return ctl::kUsageExitCode;
  }
  // Checks that span options, which CLI11 validates one at a time.
  if (demoCommand->parsed() && straggler >= demo.ranks) {
    std::cerr << "livemonctl: --straggler: " << straggler << " is not a rank of --ranks " << demo.ranks << " (0.."
              << demo.ranks - 1 << ")\n\n"
              << demoCommand->help();
    return ctl::kUsageExitCode;
  }

  handleStopSignals();
  CLI::App* command = tailCommand;
  for (CLI::App* sub : {demoCommand, tailCommand, recordCommand, infoCommand, exportCommand, replayCommand, watchCommand,
                          relayCommand, ranksCommand, keygenCommand}) {
    if (sub->parsed()) command = sub;
  }
  try {
    if (command == keygenCommand) return ctl::runKeygen(keygen, std::cout, std::cerr);
    if (command == recordCommand) {
      record.duration = secondsToMs(recordDuration);
      record.progress = terminal;
      return ctl::runRecord(record, g_stop, std::cout, std::cerr);
    }
    if (command == infoCommand) {
      info.progress = terminal;
      return ctl::runInfo(info, g_stop, std::cout, std::cerr);
    }
    if (command == exportCommand) {
      exportOptions.format = exportFormat == "csv" ? ctl::ExportFormat::Csv : ctl::ExportFormat::JsonLines;
      exportOptions.progress = terminal;
      return ctl::runExport(exportOptions, g_stop, std::cout, std::cerr);
    }
    if (command == replayCommand) {
      replay.progress = terminal;
      replay.maxGap = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(maxGap));
      return ctl::runReplay(replay, g_stop, std::cout, std::cerr);
    }
    if (command == relayCommand) {
      relay.duration = secondsToMs(relayDuration);
      return ctl::runRelay(relay, g_stop, std::cout, std::cerr);
    }
    if (command == watchCommand) return ctl::runWatch(watch, g_stop, std::cout, std::cerr);
    if (command == ranksCommand) {
      ranks.window = secondsToMs(ranksWindow);
      ranks.duration = secondsToMs(ranksDuration);
      ranks.direction = higherIsFaster ? livemon::RankScoreDirection::HigherIsFaster : livemon::RankScoreDirection::LowerIsFaster;
      ranks.redraw = isatty(STDOUT_FILENO) != 0;
      return ctl::runRanks(ranks, g_stop, std::cout, std::cerr);
    }
    if (command == demoCommand) {
      demo.window = secondsToMs(demoWindow);
      demo.duration = secondsToMs(demoDuration);
      if (straggler >= 0) demo.straggler = straggler;
      demo.traceWait = traceSchedule[0];
      demo.traceWarmup = traceSchedule[1];
      demo.traceActive = traceSchedule[2];
      demo.traceRepeat = traceSchedule[3];
      return ctl::runDemo(demo, g_stop, std::cout, std::cerr);
    }
    tail.staleAfter = secondsToMs(staleAfter);
    return ctl::runTail(tail, g_stop, std::cout, std::cerr);
  } catch (const std::exception& error) {
    return ctl::reportUnexpected(command->get_name(), std::cerr, error);
  }
}
