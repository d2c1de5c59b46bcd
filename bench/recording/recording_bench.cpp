// Recording throughput, size and read speed: MCAP recordings beside JSON lines of the same events,
// written and read in the same run; and recording wire messages as they arrive (format version 2)
// beside re-encoding every event as a message of its own (version 1), for several batch sizes,
// medians of five alternating runs. Results: docs/benchmarks.md.
//
//   build/bench/recording/recording_bench [EVENTS] [DIR]     (defaults: 1000000, /tmp)
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemonctl/event_format.h>
#include <livemonctl/export.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>
#include <random>
#include <string>
#include <vector>

#include "bench_support.h"

namespace {

using namespace livemon;
using namespace livemon::transport;
using namespace livemon::livemonctl;
using Stopwatch = std::chrono::steady_clock;

double seconds(Stopwatch::time_point since) { return std::chrono::duration<double>(Stopwatch::now() - since).count(); }

// A Stat-window-like event from one of four ranks: six double fields, as a training job logs.
std::vector<ReceivedEvent> makeEvents(std::size_t n) {
  std::vector<std::shared_ptr<const SourceInfo>> sources;
  const auto t0 = std::chrono::system_clock::time_point(std::chrono::seconds(1'763'830'800));
  for (int rank = 0; rank < 4; ++rank) {
    sources.push_back(std::make_shared<const SourceInfo>(
        SourceInfo{"bench", "node-" + std::to_string(rank), 4000 + rank, rank, 0x1234567890ULL + static_cast<uint64_t>(rank), t0, {}, {}}));
  }
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 1);
  std::vector<ReceivedEvent> events(n);
  for (std::size_t i = 0; i < n; ++i) {
    ReceivedEvent& e = events[i];
    e.source = sources[i % 4];
    e.sequence = i / 4;
    e.event.name = "livemon.Stat";
    e.event.timestamp = t0 + std::chrono::microseconds(100 * i);
    e.receivedAt = e.event.timestamp + std::chrono::microseconds(300);
    const double loss = 2.0 * std::exp(-static_cast<double>(i) / 1e5) + 0.05 * noise(rng);
    e.event.data = {{"train.loss.mean", loss},       {"train.loss.min", loss - 0.1}, {"train.loss.max", loss + 0.1},
                    {"train.step_ms.p50", 90 + noise(rng)}, {"train.step_ms.p99", 120 + noise(rng)},
                    {"train.samples_per_s.mean", 700 + 10 * noise(rng)}};
  }
  return events;
}

// A small JSON reader for the lines formatEventJson writes, so the reference reads what it wrote
// back into events as the recording's reader does: objects, strings, numbers, booleans, null.
class JsonLineReader {
 public:
  explicit JsonLineReader(std::string_view text) : text_(text) {}

  // Fills `event` from {"time":..,"ts":..,"name":..,"seq":..,"source":{..},"endpoint":..,"data":{..}}.
  bool read(Event& event) {
    event.data.clear();
    if (!take('{')) return false;
    do {
      std::string key;
      if (!string(key) || !take(':')) return false;
      if (key == "name") {
        if (!string(event.name)) return false;
      } else if (key == "ts") {
        double ns = 0;
        bool integral = false;
        if (!number(ns, integral)) return false;
        event.timestamp = std::chrono::system_clock::time_point(std::chrono::nanoseconds(static_cast<int64_t>(ns)));
      } else if (key == "data") {
        if (!take('{')) return false;
        if (!take('}')) {
          do {
            std::string field;
            if (!string(field) || !take(':')) return false;
            DataValue value;
            if (!scalar(value)) return false;
            event.data.emplace(std::move(field), std::move(value));
          } while (take(','));
          if (!take('}')) return false;
        }
      } else if (!skipValue()) {
        return false;
      }
    } while (take(','));
    return take('}');
  }

 private:
  bool take(char c) {
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  bool string(std::string& out) {
    out.clear();
    if (!take('"')) return false;
    while (at_ < text_.size() && text_[at_] != '"') {
      if (text_[at_] == '\\' && at_ + 1 < text_.size()) ++at_;  // the escapes in use are \" and \\;
      out += text_[at_++];
    }
    return take('"');
  }
  bool number(double& out, bool& integral) {
    const char* begin = text_.data() + at_;
    char* end = nullptr;
    out = std::strtod(begin, &end);
    if (end == begin) return false;
    integral = std::string_view(begin, static_cast<std::size_t>(end - begin)).find_first_of(".eE") == std::string_view::npos;
    at_ += static_cast<std::size_t>(end - begin);
    return true;
  }
  bool scalar(DataValue& value) {
    if (at_ >= text_.size()) return false;
    const char c = text_[at_];
    if (c == '"') {
      std::string s;
      if (!string(s)) return false;
      value = std::move(s);
    } else if (text_.compare(at_, 4, "true") == 0) {
      at_ += 4;
      value = true;
    } else if (text_.compare(at_, 5, "false") == 0) {
      at_ += 5;
      value = false;
    } else {
      double d = 0;
      bool integral = false;
      if (!number(d, integral)) return false;
      if (integral) {
        value = static_cast<int64_t>(d);
      } else {
        value = d;
      }
    }
    return true;
  }
  bool skipValue() {
    if (take('{')) {
      if (take('}')) return true;
      do {
        std::string key;
        if (!string(key) || !take(':') || !skipValue()) return false;
      } while (take(','));
      return take('}');
    }
    if (text_.compare(at_, 4, "null") == 0) return at_ += 4, true;
    DataValue ignored;
    return scalar(ignored);
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

// CPU time of this thread, in seconds.
double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// `events` as a subscriber delivers them when the publishers sent batches of `batchSize` events of
// one source: each event carries the message it arrived in (SubscriberOptions::keepMessages).
std::vector<ReceivedEvent> arrivedInBatches(const std::vector<ReceivedEvent>& events, std::size_t batchSize) {
  std::map<const SourceInfo*, std::vector<const ReceivedEvent*>> perSource;
  for (const auto& e : events) perSource[e.source.get()].push_back(&e);
  std::vector<ReceivedEvent> out;
  out.reserve(events.size());
  for (auto& [source, list] : perSource) {
    for (std::size_t first = 0; first < list.size(); first += batchSize) {
      const std::size_t end = std::min(list.size(), first + batchSize);
      std::vector<Event> plain;
      for (std::size_t i = first; i < end; ++i) plain.push_back(list[i]->event);
      const auto message = std::make_shared<const ReceivedMessage>(ReceivedMessage{
          "livemon.Stat", encodeEventsPayload(*source, list[first]->sequence, "livemon.Stat", plain), list[first]->sequence,
          end - first});
      for (std::size_t i = first; i < end; ++i) {
        out.push_back(*list[i]);
        out.back().receivedAt = list[first]->receivedAt;
        out.back().message = message;
      }
    }
  }
  return out;
}

// Records `events` the version-1 way (each re-encoded alone) or as received; returns the CPU
// seconds of the recording thread and the file's size.
std::pair<double, uint64_t> recordOnce(const std::vector<ReceivedEvent>& events, const std::string& path, bool asReceived) {
  const double start = cpuSeconds();
  {
    RecordingWriter writer(path);
    if (asReceived) {
      ReceivedEventRecorder recorder(writer);
      for (const auto& e : events) recorder.record(e);
    } else {
      for (const auto& e : events) recordEvent(writer, e);
    }
    writer.close();
  }
  return {cpuSeconds() - start, std::filesystem::file_size(path)};
}

// Format 1 against format 2 for each batch size, side by side: the recorder's CPU time per event
// and the bytes per event, medians of five runs alternating the two.
void compareAsReceived(const std::vector<ReceivedEvent>& all, const std::filesystem::path& dir) {
  const std::size_t n = std::min<std::size_t>(all.size(), 200'000);
  const std::vector<ReceivedEvent> events(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
  const std::string path = (dir / "livemon-bench-as-received.mcap").string();
  std::printf("\nrecording %zu events: each re-encoded alone (format 1) vs messages as received (format 2)\n", n);
  std::printf("%-8s %16s %16s %8s %16s %16s %8s\n", "batch", "f1 CPU ns/event", "f2 CPU ns/event", "ratio",
              "f1 bytes/event", "f2 bytes/event", "ratio");
  for (const std::size_t batchSize : {std::size_t{1}, std::size_t{4}, std::size_t{16}, std::size_t{64}}) {
    const std::vector<ReceivedEvent> arrived = arrivedInBatches(events, batchSize);
    std::vector<double> cpu[2];
    std::vector<double> bytes[2];
    for (int run = 0; run < 5; ++run) {
      for (int variant = 0; variant < 2; ++variant) {
        const int which = run % 2 == 0 ? variant : 1 - variant;  // alternate which goes first
        const auto [seconds, size] = recordOnce(arrived, path, which == 1);
        cpu[which].push_back(seconds * 1e9 / static_cast<double>(n));
        bytes[which].push_back(static_cast<double>(size) / static_cast<double>(n));
      }
    }
    const double cpu1 = median(cpu[0]);
    const double cpu2 = median(cpu[1]);
    const double bytes1 = median(bytes[0]);
    const double bytes2 = median(bytes[1]);
    std::printf("%-8zu %16.0f %16.0f %7.2fx %16.1f %16.1f %7.2fx\n", batchSize, cpu1, cpu2, cpu1 / cpu2, bytes1, bytes2,
                bytes1 / bytes2);
  }
  std::filesystem::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "recording_bench [EVENTS, default 1000000] [DIR, default the temporary directory]";
  livemon::bench::exitOnHelp(argc, argv, usage);
  const std::size_t n = livemon::bench::countArgument(argc, argv, 1, 1'000'000, 1, 1'000'000'000, usage);
  const std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
  const std::string mcapPath = (dir / "livemon-bench.mcap").string();
  const std::string jsonPath = (dir / "livemon-bench.jsonl").string();
  std::printf("recording_bench: %zu events of 6 double fields from 4 sources\n", n);
  const std::vector<ReceivedEvent> events = makeEvents(n);

  // Write: MCAP (encode each event as a wire payload, chunk, compress) vs JSON lines.
  auto start = Stopwatch::now();
  {
    RecordingWriter writer(mcapPath);
    for (const auto& e : events) recordEvent(writer, e);
    writer.close();
  }
  const double mcapWrite = seconds(start);
  start = Stopwatch::now();
  {
    std::ofstream out(jsonPath, std::ios::binary | std::ios::trunc);
    for (const auto& e : events) out << formatEventJson(e) << '\n';
  }
  const double jsonWrite = seconds(start);
  const auto mcapBytes = std::filesystem::file_size(mcapPath);
  const auto jsonBytes = std::filesystem::file_size(jsonPath);

  // Read back into events: MCAP (index, decompress, decode) vs JSON lines (parse).
  start = Stopwatch::now();
  std::size_t mcapRead = 0;
  double checksum = 0;
  {
    RecordingReader reader(mcapPath);
    RecordedEventDecoder decoder(mcapPath);
    ReceivedEvent e;
    reader.forEachMessage([&](const RecordedMessage& m) {
      if (decoder.decode(m, e)) {
        ++mcapRead;
        checksum += std::get<double>(e.event.data.at("train.loss.mean"));
      }
      return true;
    });
  }
  const double mcapReadTime = seconds(start);
  start = Stopwatch::now();
  std::size_t jsonRead = 0;
  double jsonChecksum = 0;
  {
    std::ifstream in(jsonPath, std::ios::binary);
    Event e;
    for (std::string line; std::getline(in, line);) {
      if (JsonLineReader(line).read(e)) {
        ++jsonRead;
        jsonChecksum += std::get<double>(e.data.at("train.loss.mean"));
      }
    }
  }
  const double jsonReadTime = seconds(start);

  // Export to JSON lines (livemonctl export), to /dev/null.
  start = Stopwatch::now();
  {
    std::ofstream devnull("/dev/null");
    std::ostringstream err;
    std::atomic<bool> stop{false};
    ExportOptions options;
    options.path = mcapPath;
    options.output = "/dev/null";
    runExport(options, stop, devnull, err);
  }
  const double exportTime = seconds(start);

  auto rate = [&](double s) { return static_cast<double>(n) / s / 1e6; };
  std::printf("\n%-34s %14s %14s\n", "", "MCAP (livemon)", "JSON lines");
  std::printf("%-34s %12.2f M %12.2f M   events/s\n", "write", rate(mcapWrite), rate(jsonWrite));
  std::printf("%-34s %14.1f %14.1f   bytes/event\n", "size", static_cast<double>(mcapBytes) / static_cast<double>(n),
              static_cast<double>(jsonBytes) / static_cast<double>(n));
  std::printf("%-34s %12.2f M %12.2f M   events/s\n", "read back into events", rate(mcapReadTime), rate(jsonReadTime));
  std::printf("%-34s %12.2f M %14s   events/s\n", "export to JSON lines", rate(exportTime), "-");
  std::printf("(read %zu and %zu events; checksums %.6f and %.6f)\n", mcapRead, jsonRead, checksum, jsonChecksum);
  std::filesystem::remove(mcapPath);
  std::filesystem::remove(jsonPath);
  compareAsReceived(events, dir);
  return mcapRead == n && jsonRead == n ? 0 : 1;
}
