#include <livemonctl/export.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <ostream>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>

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

// A text cell. One a spreadsheet would run as a formula (starting with = + - @, or a tab or CR
// that it skips before one) starts with a ' inside quotes, so it shows as the text it is; numbers
// are written by csvValue() and stay numbers.
std::string csvField(std::string_view text) {
  const bool formula = !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
  if (!formula && text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = formula ? "\"'" : "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csvValue(const DataValue& value) {
  switch (value.index()) {
    case 0: return csvField(std::get<std::string>(value));
    case 1: return exactDouble(std::get<double>(value));
    case 2: return std::to_string(std::get<int64_t>(value));
    default: return std::get<bool>(value) ? "true" : "false";
  }
}

// The step column: the event's step, else its data field "step" whatever its type.
std::string stepCell(const Event& event) {
  if (event.step) return std::to_string(*event.step);
  const auto field = event.data.find(std::string(kStepKey));
  return field == event.data.end() ? std::string() : csvValue(field->second);
}

// The columns of a wide export: every data key but "step", in byte order, at most
// kMaxWideColumns; keys beyond are counted once each.
struct WideColumns {
  std::map<std::string, std::size_t> index;  // key -> column, filled in order once complete
  std::set<std::string> leftOut;             // distinct keys beyond the cap (only their count is kept)
  uint64_t leftOutCount = 0;

  void add(const std::string& key) {
    if (key == kStepKey || index.contains(key)) return;
    if (index.size() < kMaxWideColumns) {
      index.emplace(key, 0);
      return;
    }
    // A key that sorts before the last one kept displaces it, so the columns are the first
    // kMaxWideColumns keys in byte order whatever order the events come in.
    if (key < index.rbegin()->first) {
      auto last = std::prev(index.end());
      countLeftOut(last->first);
      index.erase(last);
      index.emplace(key, 0);
    } else {
      countLeftOut(key);
    }
  }
  void countLeftOut(const std::string& key) {
    // Counting distinct keys without keeping them all: a bounded set, then an upper estimate.
    if (leftOut.size() < kMaxWideColumns) {
      if (leftOut.insert(key).second) ++leftOutCount;
    } else if (!leftOut.contains(key)) {
      ++leftOutCount;
    }
  }
  void number() {
    std::size_t column = 0;
    for (auto& [key, at] : index) at = column++;
  }
};

int exportRecording(const ExportOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  if (options.wide && options.format != ExportFormat::Csv) {
    commandMessage(err, kCommand) << "--wide needs --format csv\n";
    return kUsageExitCode;
  }
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
  if (options.format == ExportFormat::Csv && !options.wide) sink << "time_ns,time,source,name,seq,key,type,value,step\n";

  RecordedEventDecoder decoder(options.path);
  std::vector<ReceivedEvent> batch;  // the events of one message
  uint64_t exported = 0;
  uint64_t undecodable = 0;  // messages
  std::string firstDecodeError;
  std::string line;
  auto showProgress = [&](const char* what) {
    return [&status, &exported, what](uint64_t done, uint64_t total) {
      status.show(std::string(what) + ": " +
                  fixedDecimals(100.0 * static_cast<double>(done) / static_cast<double>(std::max<uint64_t>(total, 1)), 0) +
                  " %, " + std::to_string(exported) + " events");
    };
  };
  WideColumns columns;
  std::vector<const DataValue*> cells;
  if (options.wide) {
    // First pass: the union of the keys, so the header can come before the rows.
    RecordedEventDecoder keyDecoder(options.path);
    reader->forEachMessage(
        from, to,
        [&](const RecordedMessage& message) {
          if (keyDecoder.decode(message, batch)) {
            for (const ReceivedEvent& event : batch) {
              for (const auto& field : event.event.data) columns.add(field.first);
            }
          }
          return !stop.load(std::memory_order_relaxed);
        },
        showProgress("reading keys"));
    columns.number();
    cells.resize(columns.index.size());
    line = "time_ns,time,source,name,step";
    for (const auto& entry : columns.index) {
      line += ',';
      line += csvField(entry.first);
    }
    if (!stop.load(std::memory_order_relaxed)) sink << line << '\n';
  }
  if (!stop.load(std::memory_order_relaxed)) reader->forEachMessage(
      from, to,
      [&](const RecordedMessage& message) {
        std::string error;
        if (!decoder.decode(message, batch, &error)) {
          if (undecodable++ == 0) firstDecodeError = error;
          return !stop.load(std::memory_order_relaxed);
        }
        for (const ReceivedEvent& event : batch) {
          if (options.format == ExportFormat::JsonLines) {
            sink << formatEventJson(event) << '\n';
          } else if (options.wide) {
            line = std::to_string(message.logTimeNs) + "," + csvField(utcText(message.logTimeNs)) + "," +
                   csvField(describe(*event.source)) + "," + csvField(event.event.name) + "," + stepCell(event.event);
            std::fill(cells.begin(), cells.end(), nullptr);
            for (const auto& field : event.event.data) {
              const auto column = columns.index.find(field.first);
              if (column != columns.index.end()) cells[column->second] = &field.second;
            }
            for (const DataValue* cell : cells) {
              line += ',';
              if (cell) line += csvValue(*cell);
            }
            sink << line << '\n';
          } else {
            const std::string prefix = std::to_string(message.logTimeNs) + "," + csvField(utcText(message.logTimeNs)) +
                                       "," + csvField(describe(*event.source)) + "," + csvField(event.event.name) + "," +
                                       std::to_string(event.sequence) + ",";
            std::vector<const std::pair<const std::string, DataValue>*> fields;
            for (const auto& field : event.event.data) fields.push_back(&field);
            std::sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->first < b->first; });
            const std::string step = stepCell(event.event);
            for (const auto* field : fields) {
              line = prefix + csvField(field->first) + ",";
              const DataValue& value = field->second;
              switch (value.index()) {
                case 0: line += "string,"; break;
                case 1: line += "double,"; break;
                case 2: line += "int,"; break;
                default: line += "bool,"; break;
              }
              line += csvValue(value) + "," + step;
              sink << line << '\n';
            }
          }
          ++exported;
        }
        return !stop.load(std::memory_order_relaxed);
      },
      showProgress("exporting"));
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
  if (undecodable) {
    commandMessage(err, kCommand) << "skipped " << undecodable << " undecodable message(s), the first: "
                                  << printableText(firstDecodeError) << '\n';
  }
  if (columns.leftOutCount > 0) {
    commandMessage(err, kCommand) << columns.leftOutCount << (columns.leftOut.size() < kMaxWideColumns ? "" : " or more")
                                  << " data key(s) beyond the limit of " << kMaxWideColumns
                                  << " columns left out\n";
  }
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

Command addExportCommand(CLI::App& app) {
  // Checks a --from/--to value as far as it can before the recording is read: its form, and that it
  // can name a time at all (seconds from the start must still fit after a start at the epoch).
  static const CLI::Validator timeBound(
      [](std::string& text) {
        std::string why;
        return parseTimeBound(text, 0, &why) ? std::string() : text + ' ' + why;
      },
      "T", "time bound");
  // What the options parse into, kept alive by the returned command.
  struct Parsed {
    ExportOptions exportOptions;
    std::string format = "jsonl";
  };
  const auto parsed = std::make_shared<Parsed>();
  ExportOptions& exportOptions = parsed->exportOptions;
  CLI::App* command = app.add_subcommand("export", "Write a recording's events as JSON lines or CSV");
  command->add_option("file", exportOptions.path, "The recording")->required()->check(CLI::ExistingFile);
  command->add_option("--format", parsed->format, "jsonl: one JSON object per event; csv: one row per field")
      ->check(CLI::IsMember({"jsonl", "csv"}))
      ->capture_default_str();
  command->add_option("-o,--output", exportOptions.output, "Write to FILE instead of standard output")
      ->option_text("FILE");
  command->add_option("--from", exportOptions.from,
                      "Start at T: seconds from the recording's start, or a UTC time like 2026-11-22T18:00:00Z")
      ->option_text("T")
      ->check(timeBound);
  command->add_option("--to", exportOptions.to, "End at T (same forms as --from)")
      ->option_text("T")
      ->check(timeBound);
  command->add_flag("--wide", exportOptions.wide,
                    "With --format csv: one row per event, a column per data key "
                    "(time_ns,time,source,name,step,<key>...)");

  return {command, [parsed](const CommandContext& context) {
            ExportOptions options = parsed->exportOptions;
            options.format = parsed->format == "csv" ? ExportFormat::Csv : ExportFormat::JsonLines;
            options.progress = context.errIsTerminal;
            return runExport(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
