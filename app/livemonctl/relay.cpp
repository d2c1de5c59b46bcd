#include <livemonctl/relay.h>

#include <sys/resource.h>

#include <memory>
#include <optional>
#include <ostream>
#include <thread>

#include <CLI/CLI.hpp>

#include <livemon/transport/metrics_exporter.h>
#include <livemon/transport/recording_history.h>

#include <livemonctl/command.h>
#include <livemonctl/relay_recorder.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kCommand = "relay";
// How often the command looks at the stop flag and the recorder.
constexpr std::chrono::milliseconds kCheckInterval{50};

// The relay's own counters beside the Stats it passes on, so a Prometheus sees the relay too.
void publishRelayCounters(transport::MetricsExporter& metrics, const transport::RelayStats& stats, bool curve) {
  metrics.setCounter("livemon_relay_down_messages_total", "Messages forwarded from publishers to subscribers",
                     static_cast<double>(stats.downMessages));
  metrics.setCounter("livemon_relay_down_bytes_total", "Bytes forwarded from publishers to subscribers",
                     static_cast<double>(stats.downBytes));
  metrics.setCounter("livemon_relay_up_messages_total", "Subscription messages forwarded toward publishers",
                     static_cast<double>(stats.upMessages));
  metrics.setCounter("livemon_relay_up_bytes_total", "Subscription bytes forwarded toward publishers",
                     static_cast<double>(stats.upBytes));
  metrics.setCounter("livemon_relay_refused_messages_total",
                     "Messages dropped for their shape: from subscribers other than subscriptions, from publishers "
                     "other than a topic and a payload",
                     static_cast<double>(stats.downRefused + stats.upRefused));
  metrics.setCounter("livemon_relay_queue_dropped_total", "Messages dropped to keep the queues within --max-queued-mb",
                     static_cast<double>(stats.queueDropped));
  metrics.setCounter("livemon_relay_publishers_refused_total",
                     "Publisher connections reset beyond --max-publishers", static_cast<double>(stats.publishersRefused));
  metrics.setCounter("livemon_relay_subscribers_cut_total",
                     "Subscriber connections reset after taking nothing for --max-stall-seconds",
                     static_cast<double>(stats.subscribersCut));
  if (curve) {
    metrics.setCounter("livemon_relay_curve_refused_total",
                       "CURVE peers refused: their key is not (or no longer) in their allow list",
                       static_cast<double>(stats.curveRefused));
  }
}

// Every publisher connection takes a descriptor: the soft limit (often 1024) goes up to the hard one,
// so 1024 ranks and more fit beside the subscribers, the history and the recording.
void raiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int relay(const RelayCommandOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  if (options.rotateMb < 1) throw std::invalid_argument("--rotate-mb must be at least 1");
  if (!(options.rotateMinutes > 0)) throw std::invalid_argument("--rotate-minutes must be positive");

  std::unique_ptr<RelayRecorder> recorder;
  if (!options.recordDir.empty()) {
    RelayRecorderOptions recorderOptions;
    recorderOptions.dir = options.recordDir;
    recorderOptions.rotateBytes = options.rotateMb * 1024 * 1024;
    recorderOptions.rotateAfter =
        std::chrono::milliseconds(static_cast<int64_t>(options.rotateMinutes * 60'000.0 + 0.5));
    try {
      recorder = std::make_unique<RelayRecorder>(recorderOptions);
    } catch (const transport::RecordingError& error) {
      commandMessage(err, kCommand) << error.what() << '\n';
      return kFailedExitCode;
    }
  }

  std::unique_ptr<transport::MetricsExporter> metrics;
  if (options.metricsPort != 0) {
    transport::MetricsExporterOptions metricsOptions;
    metricsOptions.bindAddress = options.metricsAddress;
    metricsOptions.port = options.metricsPort;
    try {
      metrics = std::make_unique<transport::MetricsExporter>(metricsOptions);
    } catch (const std::exception& error) {
      commandMessage(err, kCommand) << "cannot serve metrics on " << options.metricsAddress << ':' << options.metricsPort
                                    << ": " << error.what() << '\n';
      return kFailedExitCode;
    }
  }

  raiseDescriptorLimit();
  transport::RelayOptions relayOptions;
  relayOptions.listen = options.listen;
  relayOptions.serve = options.serve;
  relayOptions.upstream = options.upstream;
  relayOptions.highWaterMark = options.highWaterMark;
  relayOptions.maxQueuedBytes = static_cast<std::size_t>(options.maxQueuedMb) * 1024 * 1024;
  relayOptions.maxPublisherConnections = options.maxPublishers;
  relayOptions.maxStall = options.maxStall;
  relayOptions.historyBytes = static_cast<std::size_t>(options.historyMb) * 1024 * 1024;
  relayOptions.history = options.history;
  // What the history drops is answered from the recordings this relay writes, and no others: the
  // archive is told of each file the recorder opens, on the worker thread, as it writes.
  std::shared_ptr<transport::RecordingHistoryArchive> archive;
  std::size_t archived = 0;
  const auto tellArchive = [&archive, &archived, &recorder] {
    for (; archive && archived < recorder->files().size(); ++archived) archive->add(recorder->files()[archived]);
  };
  if (recorder) {
    archive = std::make_shared<transport::RecordingHistoryArchive>();
    tellArchive();
    relayOptions.historyArchive = archive;
  }
  relayOptions.curve = options.curve;
  relayOptions.curveAllowPublish = options.curveAllowPublish;
  if (recorder || metrics) {
    // Runs on the relay's worker thread; the recorder is touched here only until relay.stop().
    // Neither keeps events, so they read the message borrowed, not decoded into Events.
    relayOptions.onBatch = [&recorder, &metrics, &tellArchive](const transport::EventBatchView& batch) {
      if (recorder) {
        recorder->write(batch);
        tellArchive();
      }
      if (metrics) metrics->observe(batch);
    };
  }
  if (options.onMessage) relayOptions.onMessage = options.onMessage;
  transport::Relay relay(relayOptions);

  commandMessage(out, kCommand) << "publishers connect to " << relay.listenEndpoint() << ", subscribers to "
                                << relay.serveEndpoint() << '\n';
  for (const std::string& endpoint : options.upstream) out << "  forwarding to the relay at " << endpoint << '\n';
  if (recorder) out << "  recording into " << options.recordDir << ", a file per run\n";
  if (!relay.historyEndpoint().empty()) {
    out << "  keeping the newest " << options.historyMb << " MiB for late subscribers; history requests on "
        << relay.historyEndpoint() << '\n';
  } else if (!options.upstream.empty() && options.historyMb > 0) {
    out << "  keeping no history: the relay at the top of the chain does\n";
  }
  if (options.curve.enabled() && options.curveAllowPublish.empty()) {
    out << "  CURVE: only peers in " << options.curve.allow
        << " are admitted, to publish and to watch alike (--curve-allow-publish DIR: a list of publishers of its "
           "own)\n";
  } else if (options.curve.enabled()) {
    out << "  CURVE: publishers admitted from " << options.curveAllowPublish << ", watchers (serve, history) from "
        << options.curve.allow << '\n';
  }
  if (metrics) out << "  Prometheus metrics: http://" << options.metricsAddress << ':' << metrics->port() << "/metrics\n";
  out << "  publish into it with LIVEMON_CONNECT=" << relay.listenEndpoint() << " or --connect; watch with: livemonctl tail "
      << relay.serveEndpoint() << "; Ctrl-C stops it" << std::endl;

  const auto started = SteadyClock::now();
  int exitCode = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    if (options.duration.count() > 0 && SteadyClock::now() - started >= options.duration) break;
    if (metrics) publishRelayCounters(*metrics, relay.stats(), options.curve.enabled());
    std::this_thread::sleep_for(kCheckInterval);
  }
  relay.stop();
  const transport::RelayStats stats = relay.stats();
  out << "forwarded " << stats.downMessages << " messages (" << humanBytes(stats.downBytes) << ") from publishers and "
      << stats.upMessages << " subscription messages" << std::endl;
  if (stats.curveRefused > 0) out << "refused " << stats.curveRefused << " CURVE peers not in the allow list" << std::endl;
  if (stats.queueDropped > 0) out << "dropped " << stats.queueDropped << " messages beyond --max-queued-mb" << std::endl;
  if (stats.publishersRefused > 0) {
    out << "reset " << stats.publishersRefused << " publisher connections beyond --max-publishers" << std::endl;
  }
  if (stats.subscribersCut > 0) {
    out << "cut " << stats.subscribersCut << " subscriber connections that took nothing for --max-stall-seconds" << std::endl;
  }
  if (stats.historyRequests > 0) {
    out << "took " << stats.historyRequests << " history requests: " << stats.historyBusy << " told busy, "
        << stats.historyAbandoned << " ended early (reader gone or too slow)" << std::endl;
  }
  if (stats.upRefused + stats.downRefused > 0) {
    out << "dropped " << stats.upRefused << " messages from subscribers that were not subscriptions and "
        << stats.downRefused << " malformed ones from publishers" << std::endl;
  }
  if (recorder) {
    recorder->close();
    out << "recorded " << recorder->eventCount() << " events in " << recorder->files().size() << " file"
        << (recorder->files().size() == 1 ? "" : "s") << " in " << options.recordDir;
    if (recorder->sharedCount() > 0) {
      out << "; " << recorder->sharedCount() << " events of runs beyond the open files in the shared +shared-*.mcap";
    }
    if (recorder->droppedCount() > 0) out << "; " << recorder->droppedCount() << " events not recorded (too many names)";
    if (recorder->unrecordedCount() > 0) {
      out << "; " << recorder->unrecordedCount() << " events not recorded while no file could be written";
    }
    out << std::endl;
    if (!recorder->failure().empty()) {
      commandMessage(err, kCommand) << recorder->failure() << '\n';
      exitCode = kFailedExitCode;
    }
  }
  return exitCode;
}

}  // namespace

int runRelay(const RelayCommandOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] { return relay(options, stop, out, err); });
}

Command addRelayCommand(CLI::App& app) {
  // What the options parse into, kept alive by the returned command.
  struct Parsed {
    RelayCommandOptions relay;
    double duration = 0.0;
    double maxStall = std::chrono::duration<double>(transport::RelayOptions{}.maxStall).count();
  };
  const auto parsed = std::make_shared<Parsed>();
  RelayCommandOptions& relay = parsed->relay;
  CLI::App* command = app.add_subcommand(
      "relay", "Forward what publishers send to subscribers, and only subscriptions back; relays chain (--upstream)");
  command->add_option("--listen", relay.listen, "Endpoint to bind for publishers (they connect to it)")
      ->option_text("EP")
      ->capture_default_str();
  command->add_option("--serve", relay.serve, "Endpoint to bind for subscribers (dashboards, tail, record)")
      ->option_text("EP")
      ->capture_default_str();
  command->add_option("--upstream", relay.upstream, "Also forward into the relay listening at EP (repeatable)")
      ->option_text("EP");
  command->add_option("--high-water-mark", relay.highWaterMark,
                      "Messages queued per connection each way; a subscriber that falls further behind misses messages")
      ->option_text("N")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  command->add_option("--max-queued-mb", relay.maxQueuedMb,
                      "MiB a subscriber that stops reading may make the relay hold (all together: 4 times this); "
                      "messages beyond are dropped")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1024 * 1024}))
      ->capture_default_str();
  command->add_option("--max-publishers", relay.maxPublishers,
                      "Publisher connections to --listen; the newest beyond is reset")
      ->option_text("N")
      ->check(CLI::Range(std::size_t{1}, std::size_t{10'000'000}))
      ->capture_default_str();
  command->add_option("--max-stall-seconds", parsed->maxStall,
                      "Cut a subscriber that takes nothing of what waits for it for this long, so its queue is let "
                      "go; it reconnects and sees a gap (0: never)")
      ->option_text("S")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  command->add_option("--record", relay.recordDir, "Record the stream into MCAP files in DIR, one per run, named by run and start time")
      ->option_text("DIR");
  command->add_option("--rotate-mb", relay.rotateMb, "With --record: start a new file after this many MiB")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1'000'000}))
      ->capture_default_str();
  command->add_option("--rotate-minutes", relay.rotateMinutes, "With --record: start a new file after this many minutes")
      ->check(CLI::Range(0.001, 1e6))
      ->capture_default_str();
  command->add_option("--metrics-port", relay.metricsPort,
                      "Serve every Stat that passes, and the relay's counters, for Prometheus on PORT (0: off)")
      ->option_text("PORT")
      ->capture_default_str();
  command->add_option("--metrics-address", relay.metricsAddress, "With --metrics-port: the address to serve on")
      ->capture_default_str();
  command->add_option("--history-mb", relay.historyMb,
                      "Keep the newest MiB of the stream for subscribers that join late (0: off)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{1024 * 1024}));
  command->add_option("--history", relay.history,
                      "Endpoint to answer history requests on (default: tcp://127.0.0.1:5557 beside the default "
                      "--serve, else a free port on the --serve host); its heartbeats advertise it");
  command->add_option("--duration", parsed->duration, "Stop after this many seconds (0: run until Ctrl-C or SIGTERM)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  addPublisherCurveOptions(*command, relay.curve, true);
  command->get_option("--curve-allow")
      ->description("With --curve-secret: admit only the subscribers (serve, history) whose NAME.key is in DIR; "
                    "publishers too unless --curve-allow-publish");
  command->add_option("--curve-allow-publish", relay.curveAllowPublish,
                      "With --curve-secret: admit only the publishers (and downstream relays) whose NAME.key is in DIR")
      ->option_text("DIR")
      ->envname(std::string(transport::kCurveAllowPublishEnvironmentVariable))
      ->check(CLI::ExistingDirectory)
      ->needs("--curve-secret");

  return {command, [parsed](const CommandContext& context) {
            RelayCommandOptions options = parsed->relay;
            options.duration = secondsToMs(parsed->duration);
            options.maxStall = secondsToMs(parsed->maxStall);
            return runRelay(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
