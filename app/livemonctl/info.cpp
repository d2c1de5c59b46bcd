#include <livemonctl/info.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <vector>
#include <ostream>

#include <CLI/CLI.hpp>

#include <livemon/detail/json_writer.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

using namespace transport;

constexpr std::string_view kCommand = "info";

// The steps a set of events states (statedStep): how many carry one, the first and last in
// recording order, and the lowest and highest (which differ from those when a run restarted).
struct StepRange {
  uint64_t events = 0;
  int64_t first = 0;
  int64_t last = 0;
  int64_t lowest = 0;
  int64_t highest = 0;

  void add(int64_t step) {
    if (events++ == 0) {
      first = lowest = highest = step;
    }
    last = step;
    lowest = std::min(lowest, step);
    highest = std::max(highest, step);
  }
};

// Counted per source.
struct SourceCounts {
  uint64_t events = 0;
  StepRange steps;
};

// What reading every message found: events per source and per channel, and in all.
struct EventCounts {
  std::map<SourceInfo, SourceCounts> perSource;
  std::map<uint16_t, uint64_t> perChannel;
  uint64_t events = 0;
  StepRange steps;
  uint64_t undecodable = 0;  // messages
  int format = 1;            // the highest format version of a channel
};

// From the first event to the last; 0 without events.
double durationSeconds(const RecordingSummary& summary) {
  return summary.messageCount ? static_cast<double>(summary.endTimeNs - summary.startTimeNs) / 1e9 : 0.0;
}

// The number, or null when unset.
void writeOptional(detail::JsonWriter& json, const std::optional<int64_t>& value) {
  if (value) {
    json.integer(*value);
  } else {
    json.null();
  }
}

void writeSteps(detail::JsonWriter& json, const StepRange& steps) {
  const auto stated = [&](int64_t step) { return steps.events ? std::optional<int64_t>(step) : std::nullopt; };
  json.beginObject().key("events").integer(steps.events);
  writeOptional(json.key("first"), stated(steps.first));
  writeOptional(json.key("last"), stated(steps.last));
  writeOptional(json.key("min"), stated(steps.lowest));
  writeOptional(json.key("max"), stated(steps.highest));
  json.endObject();
}

// `info --json`: one object, spaced as it has always been.
std::string infoJson(const std::string& path, const RecordingReader& reader, const EventCounts& counts) {
  const RecordingSummary& summary = reader.summary();
  detail::JsonWriter json(detail::JsonWriter::Separators::Spaced);
  json.beginObject().key("path").string(path).key("bytes").integer(summary.fileSize);
  json.key("indexed").boolean(reader.indexed()).key("events").integer(counts.events);
  json.key("messages").integer(summary.messageCount).key("format").integer(counts.format);
  json.key("start_ns").integer(summary.startTimeNs).key("end_ns").integer(summary.endTimeNs);
  json.key("duration_s").number(durationSeconds(summary)).key("chunks").integer(summary.chunks.size());
  json.key("compressed_bytes").integer(summary.compressedBytes).key("uncompressed_bytes").integer(summary.uncompressedBytes);
  json.key("compression_ratio").number(compressionRatio(summary.uncompressedBytes, summary.compressedBytes));
  json.key("channels").beginArray();
  for (const auto& [id, channel] : summary.channels) {
    const auto messages = summary.messageCounts.count(id) ? summary.messageCounts.at(id) : 0;
    const auto events = counts.perChannel.count(id) ? counts.perChannel.at(id) : 0;
    json.beginObject().key("id").integer(id).key("topic").string(channel.topic);
    json.key("encoding").string(channel.messageEncoding).key("events").integer(events);
    json.key("messages").integer(messages).endObject();
  }
  json.endArray().key("sources").beginArray();
  for (const auto& [source, count] : counts.perSource) {
    json.beginObject().key("run").string(source.run).key("host").string(source.host).key("pid").integer(source.pid);
    writeOptional(json.key("rank"), source.rank);
    writeOptional(json.key("world_size"), source.worldSize);
    writeOptional(json.key("local_rank"), source.localRank);
    json.key("id").string(hex16(source.instanceId)).key("events").integer(count.events);
    writeSteps(json.key("steps"), count.steps);
    json.endObject();
  }
  json.endArray();
  writeSteps(json.key("steps"), counts.steps);
  json.key("undecodable").integer(counts.undecodable).key("problems").beginArray();
  for (const auto& problem : reader.problems()) {
    json.beginObject().key("offset").integer(problem.offset).key("what").string(problem.what).endObject();
  }
  json.endArray().key("unlisted_problems").integer(reader.unlistedProblems()).endObject();
  return json.take();
}

// "0 to 1200 in 980 events", with the extremes when they are not the ends.
std::string rangeText(const StepRange& steps) {
  std::string text = std::to_string(steps.first) + " to " + std::to_string(steps.last) + " in " +
                     std::to_string(steps.events) + (steps.events == 1 ? " event" : " events");
  if (steps.lowest != std::min(steps.first, steps.last) || steps.highest != std::max(steps.first, steps.last)) {
    text += " (lowest " + std::to_string(steps.lowest) + ", highest " + std::to_string(steps.highest) + ")";
  }
  return text;
}

int info(const InfoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  StatusLine status(err, options.progress);
  std::unique_ptr<RecordingReader> reader;
  const auto interrupted = [&] {
    status.finish();
    commandMessage(err, kCommand) << "interrupted\n";
    return kInterruptedExitCode;
  };
  try {
    reader = std::make_unique<RecordingReader>(
        options.path,
        [&](uint64_t done, uint64_t total) {
          status.show("scanning: " +
                      fixedDecimals(100.0 * static_cast<double>(done) / static_cast<double>(std::max<uint64_t>(total, 1)), 0) + " %");
        },
        &stop);
  } catch (const RecordingStopped&) {
    return interrupted();
  } catch (const RecordingError& error) {
    status.finish();
    commandMessage(err, kCommand) << printableText(error.what()) << '\n';
    return kFailedExitCode;
  }
  if (stop.load(std::memory_order_relaxed)) return interrupted();
  const RecordingSummary& summary = reader->summary();
  // Sources are inside the payloads, so counting them reads every chunk.
  RecordedEventDecoder decoder(options.path);
  EventCounts counts;
  counts.format = recordingFormatVersion(summary);
  std::string firstDecodeError;
  std::vector<ReceivedEvent> events;
  reader->forEachMessage(
      0, UINT64_MAX,
      [&](const RecordedMessage& message) {
        std::string error;
        if (!decoder.decode(message, events, &error)) {
          if (counts.undecodable++ == 0) firstDecodeError = error;
          return true;
        }
        counts.events += events.size();
        counts.perChannel[message.channel->id] += events.size();
        SourceCounts& source = counts.perSource[*events.front().source];
        source.events += events.size();
        for (const ReceivedEvent& event : events) {
          if (const auto step = statedStep(event.event)) {
            source.steps.add(*step);
            counts.steps.add(*step);
          }
        }
        return true;
      },
      [&](uint64_t done, uint64_t total) {
        status.show("reading: chunk " + std::to_string(done) + " of " + std::to_string(total));
      });
  if (stop.load(std::memory_order_relaxed)) return interrupted();
  status.finish();

  if (options.json) {
    out << infoJson(options.path, *reader, counts) << std::endl;
    return 0;
  }

  const double duration = durationSeconds(summary);
  const double compression = compressionRatio(summary.uncompressedBytes, summary.compressedBytes);

  out << "file         " << printableText(options.path) << " (" << humanBytes(summary.fileSize) << ", "
      << (reader->indexed() ? "closed cleanly" : "not closed cleanly: read by scanning") << ")\n";
  if (summary.messageCount) {
    out << "duration     " << fixedDecimals(duration, 3) << " s, " << utcText(summary.startTimeNs) << " to "
        << utcText(summary.endTimeNs) << '\n';
  }
  out << "events       " << counts.events << '\n';
  if (summary.messageCount != counts.events) {
    out << "messages     " << summary.messageCount << " (as received; format " << counts.format << ")\n";
  }
  out << "chunks       " << summary.chunks.size() << ", compression " << fixedDecimals(compression, 1) << "x ("
      << humanBytes(summary.uncompressedBytes) << " in " << humanBytes(summary.compressedBytes) << ")\n";
  out << "steps        " << (counts.steps.events ? rangeText(counts.steps) : "none (no steps in any event)") << '\n';
  out << "by name\n";
  for (const auto& [id, channel] : summary.channels) {
    const auto count = counts.perChannel.count(id) ? counts.perChannel.at(id) : 0;
    const std::string topic = printableText(channel.topic);
    out << "  " << topic << std::string(topic.size() < 40 ? 40 - topic.size() : 1, ' ') << count << '\n';
  }
  out << "by source\n";
  for (const auto& [source, count] : counts.perSource) {
    const std::string name = printableText(describe(source));
    out << "  " << name << std::string(name.size() < 40 ? 40 - name.size() : 1, ' ') << count.events << '\n';
    out << "    " << (count.steps.events ? "steps " + rangeText(count.steps) : "no steps") << '\n';
  }
  if (counts.undecodable) out << "undecodable  " << counts.undecodable << " messages (first: " << printableText(firstDecodeError) << ")\n";
  if (!reader->problems().empty()) {
    out << "problems\n";
    for (const auto& problem : reader->problems()) {
      out << "  byte " << problem.offset << ": " << printableText(problem.what) << '\n';
    }
    if (reader->unlistedProblems() > 0) out << "  and " << reader->unlistedProblems() << " more\n";
  }
  out << std::flush;
  return 0;
}


}  // namespace

int runInfo(const InfoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] { return info(options, stop, out, err); });
}

int runInfo(const InfoOptions& options, std::ostream& out, std::ostream& err) {
  const std::atomic<bool> never{false};
  return runInfo(options, never, out, err);
}

Command addInfoCommand(CLI::App& app) {
  const auto options = std::make_shared<InfoOptions>();
  CLI::App* command =
      app.add_subcommand("info", "Summarise a recording: duration, events per name and source, compression");
  command->add_option("file", options->path, "The recording")->required()->check(CLI::ExistingFile);
  command->add_flag("--json", options->json, "Print one JSON object");

  return {command, [options](const CommandContext& context) {
            InfoOptions info = *options;
            info.progress = context.errIsTerminal;
            return runInfo(info, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
