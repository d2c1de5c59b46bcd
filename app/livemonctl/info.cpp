#include <livemonctl/info.h>

#include <algorithm>
#include <map>
#include <memory>
#include <ostream>

#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

using namespace transport;

constexpr std::string_view kCommand = "info";

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
  std::map<SourceInfo, uint64_t> perSource;
  uint64_t undecodable = 0;
  std::string firstDecodeError;
  ReceivedEvent event;
  reader->forEachMessage(
      0, UINT64_MAX,
      [&](const RecordedMessage& message) {
        std::string error;
        if (decoder.decode(message, event, &error)) {
          ++perSource[*event.source];
        } else {
          if (undecodable++ == 0) firstDecodeError = error;
        }
        return true;
      },
      [&](uint64_t done, uint64_t total) {
        status.show("reading: chunk " + std::to_string(done) + " of " + std::to_string(total));
      });
  if (stop.load(std::memory_order_relaxed)) return interrupted();
  status.finish();

  const double duration =
      summary.messageCount ? static_cast<double>(summary.endTimeNs - summary.startTimeNs) / 1e9 : 0.0;
  const double compression = compressionRatio(summary.uncompressedBytes, summary.compressedBytes);
  if (options.json) {
    out << "{\"path\": " << jsonString(options.path) << ", \"bytes\": " << summary.fileSize
        << ", \"indexed\": " << (reader->indexed() ? "true" : "false") << ", \"events\": " << summary.messageCount
        << ", \"start_ns\": " << summary.startTimeNs << ", \"end_ns\": " << summary.endTimeNs
        << ", \"duration_s\": " << exactDouble(duration) << ", \"chunks\": " << summary.chunks.size()
        << ", \"compressed_bytes\": " << summary.compressedBytes
        << ", \"uncompressed_bytes\": " << summary.uncompressedBytes
        << ", \"compression_ratio\": " << exactDouble(compression) << ", \"channels\": [";
    bool first = true;
    for (const auto& [id, channel] : summary.channels) {
      const auto count = summary.messageCounts.count(id) ? summary.messageCounts.at(id) : 0;
      out << (first ? "" : ", ") << "{\"id\": " << id << ", \"topic\": " << jsonString(channel.topic)
          << ", \"encoding\": " << jsonString(channel.messageEncoding) << ", \"events\": " << count << "}";
      first = false;
    }
    out << "], \"sources\": [";
    first = true;
    for (const auto& [source, count] : perSource) {
      out << (first ? "" : ", ") << "{\"run\": " << jsonString(source.run) << ", \"host\": " << jsonString(source.host)
          << ", \"pid\": " << source.pid << ", \"rank\": " << (source.rank ? std::to_string(*source.rank) : "null")
          << ", \"id\": \"" << hex16(source.instanceId) << "\", \"events\": " << count << "}";
      first = false;
    }
    out << "], \"undecodable\": " << undecodable << ", \"problems\": [";
    first = true;
    for (const auto& problem : reader->problems()) {
      out << (first ? "" : ", ") << "{\"offset\": " << problem.offset << ", \"what\": " << jsonString(problem.what) << "}";
      first = false;
    }
    out << "], \"unlisted_problems\": " << reader->unlistedProblems() << "}" << std::endl;
    return 0;
  }

  out << "file         " << printableText(options.path) << " (" << humanBytes(summary.fileSize) << ", "
      << (reader->indexed() ? "closed cleanly" : "not closed cleanly: read by scanning") << ")\n";
  if (summary.messageCount) {
    out << "duration     " << fixedDecimals(duration, 3) << " s, " << utcText(summary.startTimeNs) << " to "
        << utcText(summary.endTimeNs) << '\n';
  }
  out << "events       " << summary.messageCount << '\n';
  out << "chunks       " << summary.chunks.size() << ", compression " << fixedDecimals(compression, 1) << "x ("
      << humanBytes(summary.uncompressedBytes) << " in " << humanBytes(summary.compressedBytes) << ")\n";
  out << "by name\n";
  for (const auto& [id, channel] : summary.channels) {
    const auto count = summary.messageCounts.count(id) ? summary.messageCounts.at(id) : 0;
    const std::string topic = printableText(channel.topic);
    out << "  " << topic << std::string(topic.size() < 40 ? 40 - topic.size() : 1, ' ') << count << '\n';
  }
  out << "by source\n";
  for (const auto& [source, count] : perSource) {
    const std::string name = printableText(describe(source));
    out << "  " << name << std::string(name.size() < 40 ? 40 - name.size() : 1, ' ') << count << '\n';
  }
  if (undecodable) out << "undecodable  " << undecodable << " events (first: " << printableText(firstDecodeError) << ")\n";
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

}  // namespace livemon::livemonctl
