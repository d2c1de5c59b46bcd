#include <livemonctl/export.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
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

// Not thread-safe: one owner at a time. A recording opened for export, with the receive-time
// bounds resolved against its start.
struct OpenRecording {
  std::unique_ptr<RecordingReader> reader;
  uint64_t from = 0;
  uint64_t to = UINT64_MAX;
};

// Opens `path` and resolves --from/--to; on failure says why on `err` and returns the exit code.
int openRecording(const std::string& path, const ExportOptions& options, const std::atomic<bool>& stop,
                  std::ostream& err, OpenRecording& opened) {
  try {
    opened.reader = std::make_unique<RecordingReader>(path, RecordingReader::Progress{}, &stop);
  } catch (const RecordingStopped&) {
    commandMessage(err, kCommand) << "interrupted\n";
    return kInterruptedExitCode;
  } catch (const RecordingError& error) {
    commandMessage(err, kCommand) << printableText(error.what()) << '\n';
    return kFailedExitCode;
  }
  const uint64_t start = opened.reader->summary().startTimeNs;
  for (auto [flag, text, bound] :
       {std::tuple{"--from", &options.from, &opened.from}, std::tuple{"--to", &options.to, &opened.to}}) {
    if (text->empty()) continue;
    std::string why;
    const auto parsed = parseTimeBound(*text, start, &why);
    if (!parsed) {
      commandMessage(err, kCommand) << flag << ' ' << *text << ' ' << why << '\n';
      return kUsageExitCode;
    }
    *bound = *parsed;
  }
  return 0;
}

// Not thread-safe: one owner at a time (the command's thread). Writes the events of recordings, one
// after another, into one output.
class Exporter {
 public:
  Exporter(const ExportOptions& options, bool runColumn, const std::atomic<bool>& stop, StatusLine& status,
           std::ostream& sink)
      : options_(options), runColumn_(runColumn), stop_(stop), status_(status), sink_(sink) {}

  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

  // The first pass of a wide export: the union of the keys, so the header can come before the rows.
  void readKeys(const std::string& path, OpenRecording& recording) {
    RecordedEventDecoder keyDecoder(path);
    recording.reader->forEachMessage(
        recording.from, recording.to,
        [&](const RecordedMessage& message) {
          if (keyDecoder.decode(message, batch_)) {
            for (const ReceivedEvent& event : batch_) {
              for (const auto& field : event.event.data) columns_.add(field.first);
            }
          }
          return !stopped();
        },
        showProgress("reading keys"));
  }

  void writeHeader() {
    if (options_.format != ExportFormat::Csv) return;
    std::string line = runColumn_ ? "run," : "";
    if (!options_.wide) {
      sink_ << line << "time_ns,time,source,name,seq,key,type,value,step\n";
      return;
    }
    columns_.number();
    cells_.resize(columns_.index.size());
    line += "time_ns,time,source,name,step";
    for (const auto& entry : columns_.index) {
      line += ',';
      line += csvField(entry.first);
    }
    sink_ << line << '\n';
  }

  void writeRows(const std::string& path, OpenRecording& recording) {
    RecordedEventDecoder decoder(path);
    recording.reader->forEachMessage(
        recording.from, recording.to,
        [&](const RecordedMessage& message) {
          std::string error;
          if (!decoder.decode(message, batch_, &error)) {
            if (undecodable_++ == 0) firstDecodeError_ = error;
            return !stopped();
          }
          for (const ReceivedEvent& event : batch_) writeEvent(message, event);
          return !stopped();
        },
        showProgress("exporting"));
  }

  uint64_t exported() const { return exported_; }
  uint64_t undecodable() const { return undecodable_; }
  const std::string& firstDecodeError() const { return firstDecodeError_; }
  const WideColumns& columns() const { return columns_; }

 private:
  RecordingReader::Progress showProgress(const char* what) {
    return [this, what](uint64_t done, uint64_t total) {
      status_.show(std::string(what) + ": " +
                   fixedDecimals(100.0 * static_cast<double>(done) / static_cast<double>(std::max<uint64_t>(total, 1)), 0) +
                   " %, " + std::to_string(exported_) + " events");
    };
  }

  void writeEvent(const RecordedMessage& message, const ReceivedEvent& event) {
    const std::string run = runColumn_ ? csvField(event.source->run) + "," : std::string();
    if (options_.format == ExportFormat::JsonLines) {
      sink_ << formatEventJson(event) << '\n';
    } else if (options_.wide) {
      line_ = run + std::to_string(message.logTimeNs) + "," + csvField(utcText(message.logTimeNs)) + "," +
              csvField(describe(*event.source)) + "," + csvField(event.event.name) + "," + stepCell(event.event);
      std::fill(cells_.begin(), cells_.end(), nullptr);
      for (const auto& field : event.event.data) {
        const auto column = columns_.index.find(field.first);
        if (column != columns_.index.end()) cells_[column->second] = &field.second;
      }
      for (const DataValue* cell : cells_) {
        line_ += ',';
        if (cell) line_ += csvValue(*cell);
      }
      sink_ << line_ << '\n';
    } else {
      const std::string prefix = run + std::to_string(message.logTimeNs) + "," + csvField(utcText(message.logTimeNs)) +
                                 "," + csvField(describe(*event.source)) + "," + csvField(event.event.name) + "," +
                                 std::to_string(event.sequence) + ",";
      std::vector<const std::pair<const std::string, DataValue>*> fields;
      for (const auto& field : event.event.data) fields.push_back(&field);
      std::sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->first < b->first; });
      const std::string step = stepCell(event.event);
      for (const auto* field : fields) {
        line_ = prefix + csvField(field->first) + ",";
        const DataValue& value = field->second;
        switch (value.index()) {
          case 0: line_ += "string,"; break;
          case 1: line_ += "double,"; break;
          case 2: line_ += "int,"; break;
          default: line_ += "bool,"; break;
        }
        line_ += csvValue(value) + "," + step;
        sink_ << line_ << '\n';
      }
    }
    ++exported_;
  }

  const ExportOptions& options_;
  const bool runColumn_;
  const std::atomic<bool>& stop_;
  StatusLine& status_;
  std::ostream& sink_;
  WideColumns columns_;
  std::vector<const DataValue*> cells_;
  std::vector<ReceivedEvent> batch_;  // the events of one message
  std::string line_;
  uint64_t exported_ = 0;
  uint64_t undecodable_ = 0;  // messages
  std::string firstDecodeError_;
};

int exportRecording(const ExportOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  if (options.wide && options.format != ExportFormat::Csv) {
    commandMessage(err, kCommand) << "--wide needs --format csv\n";
    return kUsageExitCode;
  }
  std::vector<std::string> paths{options.path};
  paths.insert(paths.end(), options.morePaths.begin(), options.morePaths.end());
  StatusLine status(err, options.progress);
  // The first recording is opened before the output is created, so a file that is no recording
  // leaves no output behind; the others as their turn comes (one open file at a time).
  OpenRecording first;
  if (const int failed = openRecording(paths.front(), options, stop, err, first); failed != 0) return failed;
  std::ofstream file;
  if (!options.output.empty()) {
    file.open(options.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      commandMessage(err, kCommand) << "cannot create " << options.output << ": " << std::strerror(errno) << '\n';
      return kFailedExitCode;
    }
  }
  std::ostream& sink = options.output.empty() ? out : file;
  Exporter exporter(options, options.runColumn || paths.size() > 1, stop, status, sink);
  int exitCode = 0;
  // Each recording in turn, opened again unless it is the first: on a failure the exit code says so
  // and the others are exported all the same.
  const auto eachRecording = [&](const std::function<void(const std::string&, OpenRecording&)>& body) {
    for (std::size_t i = 0; i < paths.size() && !exporter.stopped(); ++i) {
      OpenRecording again;
      if (i > 0 || !first.reader) {
        if (const int failed = openRecording(paths[i], options, stop, err, again); failed != 0) {
          if (failed == kInterruptedExitCode) return;
          exitCode = std::max(exitCode, failed);
          continue;
        }
      }
      OpenRecording& recording = i > 0 || !first.reader ? again : first;
      body(paths[i], recording);
      if (i == 0 && paths.size() > 1) first.reader.reset();  // opened again for the next pass
    }
  };
  if (options.wide) eachRecording([&](const std::string& path, OpenRecording& r) { exporter.readKeys(path, r); });
  if (!exporter.stopped()) exporter.writeHeader();
  std::vector<std::pair<std::string, std::vector<RecordingProblem>>> problems;
  eachRecording([&](const std::string& path, OpenRecording& r) {
    exporter.writeRows(path, r);
    problems.emplace_back(path, r.reader->problems());
  });
  sink.flush();
  status.finish();
  if (exporter.stopped()) {
    commandMessage(err, kCommand) << "interrupted after " << exporter.exported() << " events\n";
    return kInterruptedExitCode;
  }
  if (!sink) {
    commandMessage(err, kCommand) << "writing " << (options.output.empty() ? "the output" : options.output)
                                  << " failed\n";
    return kFailedExitCode;
  }
  err << "exported " << exporter.exported() << " events" << (options.output.empty() ? "" : " to " + options.output);
  if (paths.size() > 1) err << " from " << paths.size() << " recordings";
  if (exporter.undecodable()) err << " (" << exporter.undecodable() << " undecodable skipped)";
  err << '\n';
  if (exporter.undecodable()) {
    commandMessage(err, kCommand) << "skipped " << exporter.undecodable() << " undecodable message(s), the first: "
                                  << printableText(exporter.firstDecodeError()) << '\n';
  }
  const WideColumns& columns = exporter.columns();
  if (columns.leftOutCount > 0) {
    commandMessage(err, kCommand) << columns.leftOutCount << (columns.leftOut.size() < kMaxWideColumns ? "" : " or more")
                                  << " data key(s) beyond the limit of " << kMaxWideColumns
                                  << " columns left out\n";
  }
  for (const auto& [path, found] : problems) {
    for (const auto& problem : found) {
      commandMessage(err, kCommand) << printableText(path) << ": byte " << problem.offset << ": "
                                    << printableText(problem.what) << '\n';
    }
  }
  return exitCode;
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
    std::vector<std::string> files;
  };
  const auto parsed = std::make_shared<Parsed>();
  ExportOptions& exportOptions = parsed->exportOptions;
  CLI::App* command = app.add_subcommand("export", "Write a recording's events as JSON lines or CSV");
  command->add_option("files", parsed->files,
                      "The recordings: several are written one after another into one table, with a run column")
      ->required()
      ->check(CLI::ExistingFile);
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
  command->add_flag("--run-column", exportOptions.runColumn,
                    "With --format csv: a first column run (the source's run), as several recordings always have");
  command->add_flag("--wide", exportOptions.wide,
                    "With --format csv: one row per event, a column per data key "
                    "(time_ns,time,source,name,step,<key>...)");

  return {command, [parsed](const CommandContext& context) {
            ExportOptions options = parsed->exportOptions;
            options.path = parsed->files.front();
            options.morePaths.assign(parsed->files.begin() + 1, parsed->files.end());
            options.format = parsed->format == "csv" ? ExportFormat::Csv : ExportFormat::JsonLines;
            options.progress = context.errIsTerminal;
            return runExport(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
