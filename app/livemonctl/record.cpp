#include <livemonctl/record.h>

#include <map>
#include <memory>
#include <ostream>
#include <set>

#include <CLI/CLI.hpp>

#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/subscriber.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

using namespace transport;
using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kCommand = "record";
// Distinct sources `record` counts for its summary; a peer inventing identities cannot make the
// set grow beyond.
constexpr std::size_t kMaxCountedSources = 10000;

int record(const RecordOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  SubscriberOptions subscriberOptions;
  subscriberOptions.connect = options.endpoints;
  subscriberOptions.filters = options.filters;
  subscriberOptions.curve = options.curve;
  subscriberOptions.history = options.history;
  Subscriber subscriber(subscriberOptions);
  std::unique_ptr<RecordingWriter> writer;
  try {
    writer = std::make_unique<RecordingWriter>(options.output);
  } catch (const RecordingError& error) {
    commandMessage(err, kCommand) << error.what() << '\n';
    return kFailedExitCode;
  }
  std::string where;
  for (const auto& endpoint : options.endpoints) where += (where.empty() ? "" : ", ") + endpoint;
  ReceivedEventRecorder recorder(*writer);
  out << "recording " << where << " to " << options.output << " (Ctrl-C stops)" << std::endl;

  // Only names that were recorded: at most kMaxRecordingChannels.
  std::map<std::string, uint64_t, std::less<>> perName;
  std::set<SourceInfo> sources;
  SubscriberCallbacks callbacks;
  // Lent: a whole message is written as it arrived, its bytes never decoded into Events.
  callbacks.onEventView = [&](const ReceivedEventView& event) {
    if (!recorder.record(event)) return;
    const std::string_view name = event.event.name();
    if (auto found = perName.find(name); found != perName.end()) {
      ++found->second;
    } else {
      perName.emplace(std::string(name), 1);
    }
    if (event.source && sources.size() < kMaxCountedSources) sources.insert(*event.source);
  };
  callbacks.onSourceChange = [&](const SourceChange& change) {
    if (change.joined && change.source) {
      err << (options.progress ? kClearStatusLine : "") << "source joined: " << printableText(describe(*change.source))
          << '\n';
    }
  };
  StatusLine status(err, options.progress);
  const auto started = SteadyClock::now();
  int exitCode = 0;
  try {
    while (!stop.load(std::memory_order_relaxed)) {
      const auto elapsed = SteadyClock::now() - started;
      if (options.duration.count() > 0 && elapsed >= options.duration) break;
      subscriber.poll(std::chrono::milliseconds(100), callbacks);
      writer->flushIfDue();
      status.show("recording: " + std::to_string(recorder.events()) + " events, " +
                  humanBytes(writer->bytesWritten()) + ", " +
                  fixedDecimals(std::chrono::duration<double>(SteadyClock::now() - started).count(), 0) + " s" +
                  (recorder.notRecorded() ? ", " + std::to_string(recorder.notRecorded()) + " not recorded" : ""));
    }
    writer->close();
  } catch (const RecordingError& error) {
    status.finish();
    commandMessage(err, kCommand) << error.what() << '\n';
    exitCode = kFailedExitCode;
  }
  status.finish();
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
  out << (exitCode == 0 ? "wrote " : "stopped after ") << recorder.events() << " events (" << perName.size()
      << " event names, " << sources.size() << (sources.size() == kMaxCountedSources ? "+" : "") << " sources) in "
      << fixedDecimals(seconds, 1) << " s to " << options.output << ": " << humanBytes(writer->bytesWritten())
      << ", compression " << fixedDecimals(compressionRatio(writer->uncompressedBytes(), writer->compressedBytes()), 1)
      << "x";
  if (recorder.notRecorded() > 0) {
    out << "; " << recorder.notRecorded() << " events not recorded: a recording holds at most " << kMaxRecordingChannels
        << " event names of up to " << kMaxRecordingTopicBytes << " bytes";
  }
  out << std::endl;
  commandMessage(err, kCommand) << "received " << formatReceiveSummary(subscriber.stats()) << std::endl;
  return exitCode;
}

}  // namespace

int runRecord(const RecordOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] { return record(options, stop, out, err); });
}

Command addRecordCommand(CLI::App& app) {
  // What the options parse into, kept alive by the returned command.
  struct Parsed {
    RecordOptions record;
    double duration = 0.0;
  };
  const auto parsed = std::make_shared<Parsed>();
  RecordOptions& record = parsed->record;
  CLI::App* command = app.add_subcommand("record", "Record what publishers send into an MCAP file");
  command->add_option("endpoints", record.endpoints, "Endpoints to connect to")->capture_default_str();
  command->add_option("-o,--output", record.output, "The recording to write (FILE.mcap)")
      ->required()
      ->option_text("FILE");
  command->add_option("--filter", record.filters, "Record only events whose name starts with PREFIX (repeatable)")
      ->option_text("PREFIX");
  command->add_option("--duration", parsed->duration, "Stop after this many seconds (0: run until Ctrl-C)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  command->add_flag("--history", record.history,
                    "First the run from its start (the history its publisher or relay keeps, the run's config "
                    "among it), then live");
  addClientCurveOptions(*command, record.curve);

  return {command, [parsed](const CommandContext& context) {
            RecordOptions options = parsed->record;
            options.duration = secondsToMs(parsed->duration);
            options.progress = context.errIsTerminal;
            return runRecord(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
