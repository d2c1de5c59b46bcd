#include <livemonctl/runs.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include <CLI/CLI.hpp>

#include <livemon/detail/json_writer.h>
#include <livemonctl/command.h>
#include <livemonctl/event_format.h>
#include <livemonctl/run_index.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

constexpr std::string_view kCommand = "runs";
// The widest a table cell gets; longer text is cut with "...".
constexpr std::size_t kMaxCellBytes = 40;

double durationSeconds(const RunRow& run) { return static_cast<double>(run.endNs - run.startNs) / 1e9; }

// "12.3 s", "5m 02s", "2h 05m".
std::string durationText(double seconds) {
  char text[32];
  if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  } else if (seconds < 3600) {
    std::snprintf(text, sizeof text, "%dm %02ds", static_cast<int>(seconds / 60), static_cast<int>(seconds) % 60);
  } else {
    std::snprintf(text, sizeof text, "%dh %02dm", static_cast<int>(seconds / 3600), static_cast<int>(seconds / 60) % 60);
  }
  return text;
}

// Six significant digits: what a table of losses and accuracies needs.
std::string valueText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string configText(const DataValue& value) {
  switch (value.index()) {
    case 0: return printableText(std::get<std::string>(value));
    case 1: {
      // The shortest text that reads back the same, in %g's notation: a column of learning rates
      // reads 0.0001, 0.0003, 0.001 rather than 1e-04 beside 0.001.
      char text[64];
      const auto end = std::to_chars(text, text + sizeof text, std::get<double>(value), std::chars_format::general);
      return std::string(text, end.ptr);
    }
    case 2: return std::to_string(std::get<int64_t>(value));
    default: return std::get<bool>(value) ? "true" : "false";
  }
}

// `text` cut to kMaxCellBytes, never inside a UTF-8 sequence.
std::string cell(std::string text) {
  if (text.size() <= kMaxCellBytes) return text;
  std::size_t end = kMaxCellBytes - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

void writeConfigValue(detail::JsonWriter& json, const DataValue& value) {
  switch (value.index()) {
    case 0: json.string(std::get<std::string>(value)); break;
    case 1: json.number(std::get<double>(value)); break;
    case 2: json.integer(std::get<int64_t>(value)); break;
    default: json.boolean(std::get<bool>(value)); break;
  }
}

template <typename T>
void writeOptional(detail::JsonWriter& json, const std::optional<T>& value) {
  if (!value) {
    json.null();
  } else if constexpr (std::is_same_v<T, double>) {
    json.number(*value);
  } else {
    json.integer(*value);
  }
}

std::string runsJson(const std::vector<RunRow>& runs, const RunsOptions& options) {
  detail::JsonWriter json(detail::JsonWriter::Separators::Spaced);
  json.beginObject().key("runs").beginArray(detail::JsonWriter::ArrayLayout::OnePerLine);
  for (const RunRow& run : runs) {
    json.beginObject().key("name").string(run.name).key("file").string(run.files.front()).key("files").beginArray();
    for (const std::string& file : run.files) json.string(file);
    json.endArray().key("state").string(run.finished ? "finished" : "incomplete");
    json.key("start").string(isoUtc(std::chrono::system_clock::time_point(std::chrono::nanoseconds(run.startNs))));
    json.key("start_ns").integer(run.startNs).key("duration_s").number(durationSeconds(run));
    writeOptional(json.key("last_step"), run.lastStep);
    json.key("config").beginObject();
    for (const auto& [key, value] : run.config) writeConfigValue(json.key(key), value);
    json.endObject().key("summary").beginObject();
    for (const std::string& key : options.keys) {
      const auto found = run.summary.find(key);
      if (found == run.summary.end()) continue;
      const KeySummary& values = found->second;
      json.key(key).beginObject().key("count").integer(values.count).key("last").number(values.last);
      writeOptional(json.key("min"), values.min);
      writeOptional(json.key("max"), values.max);
      writeOptional(json.key("best"), values.best(options.bestMax));
      writeOptional(json.key("best_step"), values.bestStep(options.bestMax));
      json.endObject();
    }
    json.endObject().endObject();
  }
  json.endArray().endObject();
  return json.take();
}

void printTable(const std::vector<RunRow>& runs, const RunsOptions& options, std::ostream& out) {
  std::set<std::string> configKeys;
  for (const RunRow& run : runs) {
    for (const auto& entry : run.config) configKeys.insert(entry.first);
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"RUN", "START (UTC)", "DURATION", "STEP", "STATE"};
  for (const std::string& key : configKeys) header.push_back(cell(printableText(key)));
  for (const std::string& key : options.keys) {
    const std::string name = cell(printableText(key));
    for (const char* column : {" last", " min", " max", " best at step"}) header.push_back(name + column);
  }
  rows.push_back(std::move(header));
  for (const RunRow& run : runs) {
    std::vector<std::string> row{cell(printableText(run.name)), utcText(run.startNs).substr(0, 19),
                                 durationText(durationSeconds(run)), run.lastStep ? std::to_string(*run.lastStep) : "-",
                                 run.finished ? "finished" : "incomplete"};
    for (const std::string& key : configKeys) {
      const auto value = run.config.find(key);
      row.push_back(value == run.config.end() ? "-" : cell(configText(value->second)));
    }
    for (const std::string& key : options.keys) {
      const auto found = run.summary.find(key);
      if (found == run.summary.end()) {
        row.insert(row.end(), {"-", "-", "-", "-"});
        continue;
      }
      const KeySummary& values = found->second;
      const auto step = values.bestStep(options.bestMax);
      row.push_back(valueText(values.last));
      row.push_back(values.min ? valueText(*values.min) : "-");
      row.push_back(values.max ? valueText(*values.max) : "-");
      row.push_back(step ? std::to_string(*step) : "-");
    }
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> widths(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out << line << '\n';
  }
  out << std::flush;
}

int runs(const RunsOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  StatusLine status(err, options.progress);
  const FoundRecordings found = findRecordings(options.paths);
  for (const std::string& problem : found.problems) commandMessage(err, kCommand) << printableText(problem) << '\n';
  std::vector<RecordingRuns> recordings;
  std::size_t readable = 0;
  for (std::size_t i = 0; i < found.files.size(); ++i) {
    status.show("reading recordings: " + std::to_string(i + 1) + " of " + std::to_string(found.files.size()));
    RecordingRuns recording = readRecordingRuns(found.files[i], options.keys, &stop);
    if (stop.load(std::memory_order_relaxed)) {
      status.finish();
      commandMessage(err, kCommand) << "interrupted\n";
      return kInterruptedExitCode;
    }
    readable += recording.readable ? 1 : 0;
    if (!recording.problems.empty()) {
      status.finish();
      for (const std::string& problem : recording.problems) {
        commandMessage(err, kCommand) << printableText(problem) << '\n';
      }
    }
    recordings.push_back(std::move(recording));
  }
  status.finish();
  if (readable == 0) {
    commandMessage(err, kCommand) << (found.files.empty() ? "no recordings (*.mcap) found" : "no recording could be read")
                                  << '\n';
    return kFailedExitCode;
  }
  std::vector<RunRow> rows = mergeRuns(recordings);
  sortRuns(rows, options.keys.empty() ? std::nullopt : std::optional(options.keys.front()), options.bestMax);
  if (options.json) {
    out << runsJson(rows, options) << std::endl;
  } else {
    printTable(rows, options, out);
  }
  return 0;
}

}  // namespace

int runRuns(const RunsOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] { return runs(options, stop, out, err); });
}

Command addRunsCommand(CLI::App& app) {
  // What the options parse into, kept alive by the returned command.
  struct Parsed {
    RunsOptions runs;
    std::string best = "min";
  };
  const auto parsed = std::make_shared<Parsed>();
  RunsOptions& runs = parsed->runs;
  CLI::App* command = app.add_subcommand(
      "runs", "List the runs in folders of recordings: config, duration, last step, and a summary of a key");
  command->add_option("paths", runs.paths, "Directories (searched recursively for *.mcap) and recordings")
      ->required()
      ->check(CLI::ExistingPath);
  command->add_option("--key", runs.keys,
                      "Summarise KEY per run (last, min, max, step at the best): a Stat's train.loss.mean or an "
                      "event's eval.accuracy (repeatable; the first sorts the runs)")
      ->option_text("KEY");
  command->add_option("--best", parsed->best, "Whether the best value of a key is its max or its min")
      ->check(CLI::IsMember({"max", "min"}))
      ->capture_default_str();
  command->add_flag("--json", runs.json, "Print one JSON object: {\"runs\": [...]}");

  return {command, [parsed](const CommandContext& context) {
            RunsOptions options = parsed->runs;
            options.bestMax = parsed->best == "max";
            options.progress = context.errIsTerminal;
            return runRuns(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
