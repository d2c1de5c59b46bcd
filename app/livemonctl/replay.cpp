#include <livemonctl/replay.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

using namespace transport;
using SteadyClock = std::chrono::steady_clock;

constexpr std::string_view kCommand = "replay";
// Notices of cut gaps a replay prints; later ones are only counted.
constexpr uint64_t kMaxGapNotices = 10;

// b - a, or 0 when b is earlier: what a file claims may be in any order.
uint64_t after(uint64_t a, uint64_t b) { return b > a ? b - a : 0; }

}  // namespace

ReplayPacer::ReplayPacer(double speed, std::chrono::nanoseconds maxGap) : speed_(speed), maxGap_(maxGap) {
  if (!std::isfinite(speed) || speed <= 0) throw std::invalid_argument("replay speed must be a positive number");
  if (maxGap.count() < 0) throw std::invalid_argument("replay maxGap must not be negative");
}

std::chrono::nanoseconds ReplayPacer::next(uint64_t logTimeNs) {
  recordedGap_ = previous_ ? after(*previous_, logTimeNs) : 0;
  previous_ = logTimeNs;
  // In double, then compared with the cap before it becomes an integer again.
  const double wait = static_cast<double>(recordedGap_) / speed_;
  cut_ = wait > static_cast<double>(maxGap_.count());
  if (!cut_) return std::chrono::nanoseconds(static_cast<int64_t>(wait));
  ++cutCount_;
  return maxGap_;
}

namespace {

int replay(const ReplayOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  std::unique_ptr<RecordingReader> reader;
  try {
    reader = std::make_unique<RecordingReader>(options.path, RecordingReader::Progress{}, &stop);
  } catch (const RecordingStopped&) {
    return 0;
  } catch (const RecordingError& error) {
    commandMessage(err, kCommand) << printableText(error.what()) << '\n';
    return kFailedExitCode;
  }
  const RecordingSummary& summary = reader->summary();
  if (summary.messageCount == 0) {
    commandMessage(err, kCommand) << printableText(options.path) << " holds no events\n";
    return kFailedExitCode;
  }
  auto reportProblems = [&, reported = std::size_t{0}]() mutable {
    for (; reported < reader->problems().size(); ++reported) {
      const RecordingProblem& problem = reader->problems()[reported];
      commandMessage(err, kCommand) << printableText(options.path) << ": byte " << problem.offset << ": "
          << printableText(problem.what) << '\n';
    }
  };
  reportProblems();
  Clock& clock = options.clock ? *options.clock : systemClock();
  const std::function<void(SteadyClock::time_point)> sleepUntil =
      options.sleepUntil ? options.sleepUntil : [](SteadyClock::time_point t) { std::this_thread::sleep_until(t); };
  ReplayPacer pacer(options.speed, options.maxGap);  // checks the options before the publisher opens

  // What the summary claims about the time range is shown, never waited for.
  const uint64_t recordedNs = after(summary.startTimeNs, summary.endTimeNs);
  const double recordedSeconds = static_cast<double>(recordedNs) / 1e9;
  PayloadPublisherOptions publisherOptions;
  (options.connect ? publisherOptions.connect : publisherOptions.bind) = {options.endpoint};
  // One message per event: room for the bursts a fast replay sends.
  publisherOptions.sendHighWaterMark = 100000;
  publisherOptions.curve = options.curve;
  PayloadPublisher publisher(publisherOptions);
  out << "replaying " << printableText(options.path) << " (" << summary.messageCount
      << (recordingFormatVersion(summary) == 1 ? " events, " : " messages, ")
      << fixedDecimals(recordedSeconds, 1) << " s) on " << publisher.endpoints().front() << " at " << options.speed << "x"
      << (options.loop ? ", looping" : "") << " (Ctrl-C stops)" << std::endl;
  if (options.waitForSubscriber.count() > 0 && !publisher.waitForSubscriber(options.waitForSubscriber, stop)) {
    commandMessage(err, kCommand) << "no subscriber after " << options.waitForSubscriber.count()
        << " ms; replaying anyway\n";
  }

  StatusLine status(err, options.progress);
  RecordedEventDecoder decoder(options.path);
  std::vector<ReceivedEvent> batch;  // the events of one message
  std::vector<Event> events;
  uint64_t sent = 0;
  for (uint64_t pass = 0; !stop.load(std::memory_order_relaxed); ++pass) {
    struct ReplayedSource {
      SourceInfo identity;  // as replayed in this pass
      uint64_t heartbeats = 0;
      uint64_t events = 0;
    };
    std::map<SourceInfo, ReplayedSource> sources;
    auto replayedIdentity = [&](const SourceInfo& original) -> ReplayedSource& {
      auto [it, inserted] = sources.try_emplace(original);
      if (inserted) {
        it->second.identity = original;
        if (pass > 0) {
          // Each pass looks like a restarted job: a new instance of the same run, started one
          // recording later per pass (saturating: the summary's times are the file's word).
          it->second.identity.instanceId = original.instanceId ^ (0x9E3779B97F4A7C15ULL * pass);
          if (it->second.identity.instanceId == 0) it->second.identity.instanceId = 1;
          int64_t shift = 0;
          int64_t start = toWireTime(original.startTime);
          if (__builtin_mul_overflow(static_cast<int64_t>(std::min<uint64_t>(recordedNs, INT64_MAX)),
                                     static_cast<int64_t>(std::min<uint64_t>(pass, INT64_MAX)), &shift) ||
              __builtin_add_overflow(start, shift, &start)) {
            start = std::numeric_limits<int64_t>::max();
          }
          it->second.identity.startTime = fromWireTime(start);
        }
      }
      return it->second;
    };
    auto sendHeartbeats = [&](MessageKind kind) {
      for (auto& [original, state] : sources) {
        PublisherCounters counters;
        counters.timestamp = std::chrono::system_clock::now();
        counters.interval = std::chrono::milliseconds(1000);
        counters.published = state.events;
        publisher.send(kHeartbeatTopic, encodeHeartbeatPayload(kind, state.identity, state.heartbeats++, counters));
      }
    };
    ReplayPacer passPacer = pacer;
    auto due = clock.now();
    auto nextHeartbeat = due;
    const uint64_t sentBefore = sent;
    reader->forEachMessage([&](const RecordedMessage& message) {
      due += passPacer.next(message.logTimeNs);
      if (passPacer.cut() && passPacer.cutCount() <= kMaxGapNotices) {
        commandMessage(err << (options.progress ? kClearStatusLine : ""), kCommand)
            << fixedDecimals(static_cast<double>(passPacer.recordedGapNs()) / 1e9, 1) << " s without events before "
            << utcText(message.logTimeNs) << " cut to " << shortestDouble(std::chrono::duration<double>(options.maxGap).count())
            << " s" << (passPacer.cutCount() == kMaxGapNotices ? " (further long gaps are cut without a notice)" : "")
            << '\n';
      }
      while (!stop.load(std::memory_order_relaxed)) {
        const auto now = clock.now();
        if (now >= nextHeartbeat) {
          sendHeartbeats(MessageKind::Heartbeat);
          nextHeartbeat = now + std::chrono::milliseconds(1000);
        }
        if (now >= due) break;
        sleepUntil(std::min({due, nextHeartbeat, now + std::chrono::milliseconds(50)}));
      }
      if (stop.load(std::memory_order_relaxed)) return false;
      if (!decoder.decode(message, batch)) return true;
      ReplayedSource& source = replayedIdentity(*batch.front().source);
      source.events += batch.size();
      // A message goes out as it was recorded: one event, or a batch as it was received.
      if (pass == 0) {
        publisher.send(message.channel->topic, message.payload);
      } else {
        events.clear();
        for (ReceivedEvent& event : batch) events.push_back(std::move(event.event));
        publisher.send(message.channel->topic,
                       encodeEventsPayload(source.identity, batch.front().sequence, message.channel->topic, events));
      }
      sent += batch.size();
      const double at = static_cast<double>(after(summary.startTimeNs, message.logTimeNs)) / 1e9;
      status.show("replaying: " + fixedDecimals(at, 1) + " / " + fixedDecimals(recordedSeconds, 1) + " s (" +
                  fixedDecimals(recordedSeconds > 0 ? std::min(100.0, 100.0 * at / recordedSeconds) : 100.0, 0) + " %), " +
                  std::to_string(sent) + " events" + (pass > 0 ? ", pass " + std::to_string(pass + 1) : ""));
      return true;
    });
    reportProblems();
    const bool again = options.loop && !stop.load() && sent > sentBefore;
    sendHeartbeats(again ? MessageKind::Heartbeat : MessageKind::Goodbye);
    if (options.loop && sent == sentBefore && !stop.load()) {
      // Nothing readable: another pass would only spin.
      status.finish();
      commandMessage(err, kCommand) << "no event of " << printableText(options.path) << " could be replayed\n";
      return kFailedExitCode;
    }
    if (!again) break;
  }
  status.finish();
  out << "replayed " << sent << " events" << std::endl;
  return 0;
}

}  // namespace

int runReplay(const ReplayOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] { return replay(options, stop, out, err); });
}

Command addReplayCommand(CLI::App& app) {
  // What the options parse into, kept alive by the returned command.
  struct Parsed {
    ReplayOptions replay;
    double maxGap = 60.0;
  };
  const auto parsed = std::make_shared<Parsed>();
  ReplayOptions& replay = parsed->replay;
  CLI::App* command = app.add_subcommand("replay", "Republish a recording with its original timing");
  command->add_option("file", replay.path, "The recording")->required()->check(CLI::ExistingFile);
  command->add_option("--publish", replay.endpoint, "Endpoint to bind and publish on")->capture_default_str();
  command->add_option("--speed", replay.speed, "Play X times as fast as recorded")
      ->check(CLI::Range(0.01, 10000.0))
      ->capture_default_str()
      ->option_text("X");
  command->add_flag("--loop", replay.loop, "Start over at the end");
  command->add_option("--max-gap", parsed->maxGap, "Cut longer waits between events (after --speed) to S seconds")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str()
      ->option_text("S");
  addPublisherCurveOptions(*command, replay.curve, false);

  return {command, [parsed](const CommandContext& context) {
            ReplayOptions options = parsed->replay;
            options.progress = context.errIsTerminal;
            options.maxGap =
                std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(parsed->maxGap));
            return runReplay(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
