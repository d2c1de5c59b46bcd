#include <livemonctl/run_index.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <system_error>
#include <utility>

#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/wire_format.h>

namespace livemon::livemonctl {

namespace {

using namespace transport;

// Chunk ranges read one by one; a (crafted) file that needs more is read whole in one pass.
constexpr std::size_t kMaxChunkRanges = 32;

// `key` names a value of events on `topic`: every key of a Stat window, or "<topic>.<field>".
bool keyMayBeOn(const std::string& topic, const std::string& key) {
  if (topic == kStatEventName || topic == kTorchStatEventName) return true;
  return key.size() > topic.size() + 1 && key.compare(0, topic.size(), topic) == 0 && key[topic.size()] == '.';
}

// The number `key` names in `event`, if it holds one.
std::optional<double> valueOf(const Event& event, const std::string& key) {
  const DataValue* value = nullptr;
  if (event.name == kStatEventName || event.name == kTorchStatEventName) {
    const auto found = event.data.find(key);
    if (found != event.data.end()) value = &found->second;
  } else if (keyMayBeOn(event.name, key)) {
    const auto found = event.data.find(key.substr(event.name.size() + 1));
    if (found != event.data.end()) value = &found->second;
  }
  if (value == nullptr) return std::nullopt;
  if (const auto* d = std::get_if<double>(value)) return *d;
  if (const auto* i = std::get_if<int64_t>(value)) return static_cast<double>(*i);
  return std::nullopt;
}

std::string where(const std::string& path, uint64_t offset, const std::string& what) {
  return path + ": byte " + std::to_string(offset) + ": " + what;
}

// The time ranges of the chunks worth reading (see readRecordingRuns), merged; empty when the
// whole file is to be read in one pass. `chosen` gets the offsets of those chunks.
std::vector<std::pair<uint64_t, uint64_t>> chunkRanges(const RecordingSummary& summary,
                                                       const std::set<uint16_t>& channels,
                                                       std::set<uint64_t>& chosen) {
  const auto& chunks = summary.chunks;
  // A chunk's channels: from the chunk index, or counted by a scan.
  const auto holds = [](const RecordingChunk& chunk, uint16_t channel) {
    return chunk.channels.contains(channel) || chunk.messageCounts.contains(channel);
  };
  const bool channelsKnown = std::all_of(chunks.begin(), chunks.end(), [](const RecordingChunk& c) {
    return !c.channels.empty() || !c.messageCounts.empty();
  });
  if (!channelsKnown) return {};
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const RecordingChunk& chunk = chunks[i];
    const bool wanted = i == 0 || i + 1 == chunks.size() ||
                        std::any_of(channels.begin(), channels.end(), [&](uint16_t id) { return holds(chunk, id); });
    if (!wanted) continue;
    chosen.insert(chunk.offset);
    ranges.emplace_back(chunk.startTimeNs, chunk.endTimeNs);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& range : ranges) {
    if (!merged.empty() && range.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, range.second);
    } else {
      merged.push_back(range);
    }
  }
  if (merged.size() > kMaxChunkRanges) return {};
  return merged;
}

}  // namespace

void KeySummary::add(double value, int64_t eventNs, std::optional<int64_t> step) {
  ++count;
  if (eventNs >= lastNs) {
    last = value;
    lastNs = eventNs;
  }
  if (!std::isfinite(value)) return;
  if (!min || value < *min) {
    min = value;
    minStep = step;
  }
  if (!max || value > *max) {
    max = value;
    maxStep = step;
  }
}

void KeySummary::merge(const KeySummary& other) {
  count += other.count;
  if (other.count > 0 && other.lastNs >= lastNs) {
    last = other.last;
    lastNs = other.lastNs;
  }
  if (other.min && (!min || *other.min < *min)) {
    min = other.min;
    minStep = other.minStep;
  }
  if (other.max && (!max || *other.max > *max)) {
    max = other.max;
    maxStep = other.maxStep;
  }
}

RecordingRuns readRecordingRuns(const std::string& path, const std::vector<std::string>& keys,
                                const std::atomic<bool>* stop) {
  RecordingRuns result;
  result.path = path;
  std::unique_ptr<RecordingReader> reader;
  try {
    reader = std::make_unique<RecordingReader>(path, RecordingReader::Progress{}, stop);
  } catch (const RecordingError& error) {
    result.problems.push_back(error.what());
    return result;
  }
  const RecordingSummary& summary = reader->summary();
  std::set<uint16_t> wantedChannels;
  for (const auto& [id, channel] : summary.channels) {
    const std::string& topic = channel.topic;  // clang 14 cannot capture a structured binding
    const bool wanted = topic == kRunConfigEventName ||
                        std::any_of(keys.begin(), keys.end(), [&](const std::string& key) { return keyMayBeOn(topic, key); });
    if (wanted) wantedChannels.insert(id);
  }
  std::set<uint64_t> chosen;
  auto ranges = chunkRanges(summary, wantedChannels, chosen);
  const bool whole = ranges.empty();
  if (whole) ranges = {{0, UINT64_MAX}};
  const uint64_t firstChunk = summary.chunks.empty() ? 0 : summary.chunks.front().offset;
  const uint64_t lastChunk = summary.chunks.empty() ? 0 : summary.chunks.back().offset;

  std::map<std::string, RunRow> runs;
  RecordedEventDecoder decoder(path);
  std::vector<ReceivedEvent> events;
  uint64_t undecodable = 0;
  std::string firstDecodeError;
  const std::string stem = std::filesystem::path(path).stem().string();
  const auto onMessage = [&](const RecordedMessage& message) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return false;
    if (!whole && !chosen.contains(message.chunkOffset)) return true;
    // The first and last chunks are read whole (who is in the file, its last steps); the others
    // only for the channels that matter.
    const bool everything = message.chunkOffset == firstChunk || message.chunkOffset == lastChunk;
    if (!everything && (message.channel == nullptr || !wantedChannels.contains(message.channel->id))) return true;
    std::string error;
    if (!decoder.decode(message, events, &error)) {
      if (undecodable++ == 0) firstDecodeError = error;
      return true;
    }
    for (const ReceivedEvent& received : events) {
      const std::string& name = received.source && !received.source->run.empty() ? received.source->run : stem;
      RunRow& run = runs[name];
      if (run.files.empty()) {
        run.name = name;
        run.files = {path};
        run.startNs = message.logTimeNs;
      }
      run.startNs = std::min(run.startNs, message.logTimeNs);
      run.endNs = std::max(run.endNs, message.logTimeNs);
      const Event& event = received.event;
      const std::optional<int64_t> step = statedStep(event);
      if (step) run.lastStep = std::max(run.lastStep.value_or(INT64_MIN), *step);
      const int64_t eventNs = toWireTime(event.timestamp);
      if (const auto config = runConfigOf(event); config && eventNs >= run.configNs) {
        run.config = *config;
        run.configNs = eventNs;
      }
      for (const std::string& key : keys) {
        if (const auto value = valueOf(event, key)) run.summary[key].add(*value, eventNs, step);
      }
    }
    return true;
  };
  for (const auto& [from, to] : ranges) {
    reader->forEachMessage(from, to, onMessage);
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) {
      result.problems.push_back(path + ": interrupted");
      return result;
    }
  }
  result.readable = true;
  result.chunksRead = reader->readStats().chunksRead;
  for (auto& [name, run] : runs) {
    run.finished = reader->indexed();
    // One run in the file: its span is the file's, known without reading every chunk.
    if (runs.size() == 1 && summary.messageCount > 0) {
      run.startNs = summary.startTimeNs;
      run.endNs = summary.endTimeNs;
    }
    result.runs.push_back(std::move(run));
  }
  for (const RecordingProblem& problem : reader->problems()) result.problems.push_back(where(path, problem.offset, problem.what));
  if (reader->unlistedProblems() > 0) {
    result.problems.push_back(path + ": and " + std::to_string(reader->unlistedProblems()) + " more problems");
  }
  if (undecodable > 0) {
    result.problems.push_back(path + ": " + std::to_string(undecodable) + " undecodable message(s), the first: " +
                              firstDecodeError);
  }
  return result;
}

FoundRecordings findRecordings(const std::vector<std::string>& paths, std::size_t maxFiles) {
  namespace fs = std::filesystem;
  FoundRecordings found;
  std::set<std::string> seen;
  bool full = false;
  const auto take = [&](const std::string& file) {
    if (seen.contains(file)) return;
    if (found.files.size() >= maxFiles) {
      full = true;
      return;
    }
    seen.insert(file);
    found.files.push_back(file);
  };
  for (const std::string& path : paths) {
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (error || !fs::exists(status)) {
      found.problems.push_back(path + ": " + (error ? error.message() : "no such file or directory"));
      continue;
    }
    if (!fs::is_directory(status)) {
      take(path);
      continue;
    }
    std::vector<std::string> inside;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, error);
    for (; !error && it != fs::recursive_directory_iterator() && inside.size() <= maxFiles; it.increment(error)) {
      std::error_code fileError;
      if (it->path().extension() == ".mcap" && it->is_regular_file(fileError)) inside.push_back(it->path().string());
    }
    if (error) found.problems.push_back(path + ": " + error.message() + " (what was listed before is read)");
    std::sort(inside.begin(), inside.end());
    for (const std::string& file : inside) take(file);
  }
  if (full) {
    found.problems.push_back("more than " + std::to_string(maxFiles) + " recordings: the rest are left out");
  }
  return found;
}

std::vector<RunRow> mergeRuns(const std::vector<RecordingRuns>& recordings) {
  std::map<std::string, RunRow> merged;
  for (const RecordingRuns& recording : recordings) {
    for (const RunRow& run : recording.runs) {
      const auto [it, first] = merged.try_emplace(run.name, run);
      if (first) continue;
      RunRow& into = it->second;
      // The newest file says whether the run was closed cleanly.
      if (run.endNs >= into.endNs) into.finished = run.finished;
      into.files.insert(into.files.end(), run.files.begin(), run.files.end());
      into.startNs = std::min(into.startNs, run.startNs);
      into.endNs = std::max(into.endNs, run.endNs);
      if (run.lastStep) into.lastStep = std::max(into.lastStep.value_or(INT64_MIN), *run.lastStep);
      if (run.configNs >= into.configNs && run.configNs != INT64_MIN) {
        into.config = run.config;
        into.configNs = run.configNs;
      }
      for (const auto& [key, values] : run.summary) into.summary[key].merge(values);
    }
  }
  std::vector<RunRow> rows;
  rows.reserve(merged.size());
  for (auto& [name, run] : merged) rows.push_back(std::move(run));
  return rows;
}

void sortRuns(std::vector<RunRow>& runs, const std::optional<std::string>& key, bool bestMax) {
  const auto bestOf = [&](const RunRow& run) -> std::optional<double> {
    if (!key) return std::nullopt;
    const auto found = run.summary.find(*key);
    return found == run.summary.end() ? std::nullopt : found->second.best(bestMax);
  };
  std::stable_sort(runs.begin(), runs.end(), [&](const RunRow& a, const RunRow& b) {
    if (key) {
      const auto x = bestOf(a);
      const auto y = bestOf(b);
      if (x.has_value() != y.has_value()) return x.has_value();
      if (x && *x != *y) return bestMax ? *x > *y : *x < *y;
    } else if (a.startNs != b.startNs) {
      return a.startNs < b.startNs;
    }
    return a.name < b.name;
  });
}

}  // namespace livemon::livemonctl
