#include <livemonctl/tail.h>

#include <memory>
#include <ostream>

#include <CLI/CLI.hpp>

#include <livemon/transport/subscriber.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>

namespace livemon::livemonctl {

namespace {
constexpr std::string_view kCommand = "tail";
}  // namespace

int runTail(const TailOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] {
    using namespace transport;
    SubscriberOptions subscriberOptions;
    subscriberOptions.connect = options.endpoints;
    subscriberOptions.filters = options.filters;
    subscriberOptions.staleAfter = options.staleAfter;
    subscriberOptions.clock = options.clock;
    subscriberOptions.history = options.history;
    subscriberOptions.curve = options.curve;
    Subscriber subscriber(subscriberOptions);
    QuietEndpointNotice quietNotice(kCommand, options.clock != nullptr ? *options.clock : systemClock(),
                                    options.quietNotice);

    commandMessage(err, kCommand) << "listening to";
    for (const std::string& endpoint : options.endpoints) err << ' ' << endpoint;
    if (!options.filters.empty()) {
      err << " (events starting with";
      for (const std::string& filter : options.filters) err << " \"" << filter << '"';
      err << ')';
    }
    err << std::endl;

    uint64_t printed = 0;
    SubscriberCallbacks callbacks;
    callbacks.onEventView = [&](const ReceivedEventView& event) {
      if (options.maxEvents != 0 && printed >= options.maxEvents) return;
      out << (options.json ? formatEventJson(event) : formatEventText(event)) << '\n';
      ++printed;
    };
    callbacks.onSourceChange = [&](const SourceChange& change) {
      out << (options.json ? formatSourceChangeJson(change) : formatSourceChangeText(change)) << '\n';
    };
    callbacks.onGap = [&](const GapInfo& gap) { out << (options.json ? formatGapJson(gap) : formatGapText(gap)) << '\n'; };
    // Where the history ends and live begins: on `err`, so --json output stays events only.
    callbacks.onHistory = [&](const HistoryStatus& history) { commandMessage(err, kCommand) << formatHistoryText(history) << std::endl; };

    // What the subscriber had to give up, told once per poll at most: after a forgotten topic or
    // source, gaps on it go uncounted until it is heard again.
    SubscriberStats told;
    auto notice = [&](const SubscriberStats& now) {
      if (now.topicsEvicted != told.topicsEvicted || now.sourcesEvicted != told.sourcesEvicted) {
        commandMessage(err, kCommand) << "notice: forgot the sequence numbers of " << now.topicsEvicted - told.topicsEvicted
                                      << " topic(s) and " << now.sourcesEvicted - told.sourcesEvicted
                                      << " source(s) beyond the limits; they start afresh if heard again" << std::endl;
      }
      if (now.protocolErrors != told.protocolErrors) {
        commandMessage(err, kCommand)
            << "notice: reconnected " << now.protocolErrors - told.protocolErrors
            << " time(s) after ZeroMQ dropped a connection for breaking the protocol (a frame far beyond the limits)"
            << std::endl;
      }
      if (now.conflicts != told.conflicts) {
        commandMessage(err, kCommand) << "notice: " << now.conflicts - told.conflicts
                                      << " event(s) whose sequence numbers a message with other bytes had claimed"
                                         " (a peer posing as a source?)"
                                      << std::endl;
      }
      told = now;
    };

    while (!stop.load(std::memory_order_relaxed) && (options.maxEvents == 0 || printed < options.maxEvents)) {
      subscriber.poll(std::chrono::milliseconds(200), callbacks);
      out.flush();
      notice(subscriber.stats());
      quietNotice.check(subscriber, err);
    }

    commandMessage(err, kCommand) << formatReceiveSummary(subscriber.stats()) << std::endl;
    return 0;
  });
}

Command addTailCommand(CLI::App& app) {
  // What the options parse into, kept alive by the returned command.
  struct Parsed {
    TailOptions tail;
    double staleAfter = 3.0;
  };
  const auto parsed = std::make_shared<Parsed>();
  TailOptions& tail = parsed->tail;
  CLI::App* command = app.add_subcommand("tail", "Print the events of one or more publishers as they arrive");
  command->add_option("endpoints", tail.endpoints, "Endpoints to connect to")->capture_default_str();
  command->add_flag("--json", tail.json, "Print one JSON object per line");
  command->add_flag("--history", tail.history,
                    "First the run from its start (the history its publisher or relay keeps), then live");
  command->add_option("--filter", tail.filters, "Print only events whose name starts with PREFIX (repeatable)")
      ->option_text("PREFIX");
  command->add_option("--stale-after", parsed->staleAfter, "Report a source stale after this many silent seconds")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  command->add_option("--count", tail.maxEvents, "Exit after printing N events (0: run until Ctrl-C)")
      ->option_text("N");
  addClientCurveOptions(*command, tail.curve);

  return {command, [parsed](const CommandContext& context) {
            TailOptions options = parsed->tail;
            options.staleAfter = secondsToMs(parsed->staleAfter);
            return runTail(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
