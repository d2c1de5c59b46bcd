#include <livemonctl/export.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <ostream>
#include <tuple>
#include <vector>

#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>
#include <livemonctl/text_format.h>
#include <livemonctl/time_bound.h>

namespace livemon::livemonctl {

namespace {

using namespace transport;

constexpr std::string_view kCommand = "export";

std::string csvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

int exportRecording(const ExportOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  StatusLine status(err, options.progress);
  std::unique_ptr<RecordingReader> reader;
  try {
    reader = std::make_unique<RecordingReader>(options.path, RecordingReader::Progress{}, &stop);
  } catch (const RecordingStopped&) {
    commandMessage(err, kCommand) << "interrupted\n";
    return kInterruptedExitCode;
  } catch (const RecordingError& error) {
    commandMessage(err, kCommand) << printableText(error.what()) << '\n';
    return kFailedExitCode;
  }
  const uint64_t start = reader->summary().startTimeNs;
  uint64_t from = 0;
  uint64_t to = UINT64_MAX;
  for (auto [flag, text, bound] : {std::tuple{"--from", &options.from, &from}, std::tuple{"--to", &options.to, &to}}) {
    if (text->empty()) continue;
    std::string why;
    const auto parsed = parseTimeBound(*text, start, &why);
    if (!parsed) {
      commandMessage(err, kCommand) << flag << ' ' << *text << ' ' << why << '\n';
      return kUsageExitCode;
    }
    *bound = *parsed;
  }
  std::ofstream file;
  if (!options.output.empty()) {
    file.open(options.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      commandMessage(err, kCommand) << "cannot create " << options.output << ": " << std::strerror(errno) << '\n';
      return kFailedExitCode;
    }
  }
  std::ostream& sink = options.output.empty() ? out : file;
  if (options.format == ExportFormat::Csv) sink << "time_ns,time,source,name,seq,key,type,value\n";

  RecordedEventDecoder decoder(options.path);
  ReceivedEvent event;
  uint64_t exported = 0;
  uint64_t undecodable = 0;
  std::string line;
  reader->forEachMessage(
      from, to,
      [&](const RecordedMessage& message) {
        if (!decoder.decode(message, event)) {
          ++undecodable;
          return !stop.load(std::memory_order_relaxed);
        }
        if (options.format == ExportFormat::JsonLines) {
          sink << formatEventJson(event) << '\n';
        } else {
          const std::string prefix = std::to_string(message.logTimeNs) + "," + csvField(utcText(message.logTimeNs)) +
                                     "," + csvField(describe(*event.source)) + "," + csvField(event.event.name) + "," +
                                     std::to_string(event.sequence) + ",";
          std::vector<const std::pair<const std::string, DataValue>*> fields;
          for (const auto& field : event.event.data) fields.push_back(&field);
          std::sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->first < b->first; });
          for (const auto* field : fields) {
            line = prefix + csvField(field->first) + ",";
            const DataValue& value = field->second;
            switch (value.index()) {
              case 0: line += "string," + csvField(std::get<std::string>(value)); break;
              case 1: line += "double," + exactDouble(std::get<double>(value)); break;
              case 2: line += "int," + std::to_string(std::get<int64_t>(value)); break;
              default: line += std::string("bool,") + (std::get<bool>(value) ? "true" : "false"); break;
            }
            sink << line << '\n';
          }
        }
        ++exported;
        return !stop.load(std::memory_order_relaxed);
      },
      [&](uint64_t done, uint64_t total) {
        status.show("exporting: " + fixedDecimals(100.0 * static_cast<double>(done) / static_cast<double>(std::max<uint64_t>(total, 1)), 0) +
                    " %, " + std::to_string(exported) + " events");
      });
  sink.flush();
  status.finish();
  if (stop.load(std::memory_order_relaxed)) {
    commandMessage(err, kCommand) << "interrupted after " << exported << " events\n";
    return kInterruptedExitCode;
  }
  if (!sink) {
    commandMessage(err, kCommand) << "writing " << (options.output.empty() ? "the output" : options.output)
                                  << " failed\n";
    return kFailedExitCode;
  }
  err << "exported " << exported << " events" << (options.output.empty() ? "" : " to " + options.output);
  if (undecodable) err << " (" << undecodable << " undecodable skipped)";
  err << '\n';
  for (const auto& problem : reader->problems()) {
    commandMessage(err, kCommand) << printableText(options.path) << ": byte " << problem.offset << ": "
        << printableText(problem.what) << '\n';
  }
  return 0;
}


}  // namespace

int runExport(const ExportOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] { return exportRecording(options, stop, out, err); });
}

}  // namespace livemon::livemonctl
