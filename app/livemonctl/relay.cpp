#include <livemonctl/relay.h>

#include <memory>
#include <optional>
#include <ostream>
#include <thread>

#include <livemonctl/command.h>
#include <livemonctl/relay_recorder.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kCommand = "relay";
// How often the command looks at the stop flag and the recorder.
constexpr std::chrono::milliseconds kCheckInterval{50};

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

  transport::RelayOptions relayOptions;
  relayOptions.listen = options.listen;
  relayOptions.serve = options.serve;
  relayOptions.upstream = options.upstream;
  relayOptions.highWaterMark = options.highWaterMark;
  if (recorder || options.onMessage) {
    // Runs on the relay's worker thread; the recorder is touched here only until relay.stop().
    relayOptions.onMessage = [&recorder, &options](std::string_view topic, const transport::WireMessage& message) {
      if (recorder) recorder->write(topic, message);
      if (options.onMessage) options.onMessage(topic, message);
    };
  }
  transport::Relay relay(relayOptions);

  commandMessage(out, kCommand) << "publishers connect to " << relay.listenEndpoint() << ", subscribers to "
                                << relay.serveEndpoint() << '\n';
  for (const std::string& endpoint : options.upstream) out << "  forwarding to the relay at " << endpoint << '\n';
  if (recorder) out << "  recording into " << options.recordDir << '\n';
  out << "  publish into it with LIVEMON_CONNECT=" << relay.listenEndpoint() << " or --connect; watch with: livemonctl tail "
      << relay.serveEndpoint() << "; Ctrl-C stops it" << std::endl;

  const auto started = SteadyClock::now();
  int exitCode = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    if (options.duration.count() > 0 && SteadyClock::now() - started >= options.duration) break;
    std::this_thread::sleep_for(kCheckInterval);
  }
  relay.stop();
  const transport::RelayStats stats = relay.stats();
  out << "forwarded " << stats.downMessages << " messages (" << humanBytes(stats.downBytes) << ") from publishers and "
      << stats.upMessages << " subscription messages" << std::endl;
  if (recorder) {
    recorder->close();
    out << "recorded " << recorder->eventCount() << " events in " << recorder->files().size() << " file"
        << (recorder->files().size() == 1 ? "" : "s") << " in " << options.recordDir;
    if (recorder->droppedCount() > 0) out << "; " << recorder->droppedCount() << " events not recorded (too many names)";
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

}  // namespace livemon::livemonctl
