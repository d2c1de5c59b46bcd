#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <livemon/run_config.h>

// What `livemonctl runs` reads from recordings: one row per run (SourceInfo::run), with its
// config, its time span, its last step and a summary of chosen keys.
namespace livemon::livemonctl {

// Recordings `runs` reads at most; beyond, the rest are left out and said so.
inline constexpr std::size_t kMaxRunFiles = 100000;

// Thread-safety: a plain value type.
//
// The values one key took in a run: Stat windows' "<stat>.<aggregation>" ("train.loss.mean") or an
// event's "<name>.<field>" ("eval.accuracy"), numbers only. Min, max and their steps count finite
// values only; `last` is the newest value (by event time), NaN included, so a run that diverged
// shows it.
struct KeySummary {
  uint64_t count = 0;
  double last = 0;
  int64_t lastNs = INT64_MIN;
  std::optional<double> min;
  std::optional<double> max;
  std::optional<int64_t> minStep;  // the step of the event that held the min (none without a step)
  std::optional<int64_t> maxStep;

  void add(double value, int64_t eventNs, std::optional<int64_t> step);
  void merge(const KeySummary& other);
  // The best value and its step: the max when `bestMax`, else the min.
  std::optional<double> best(bool bestMax) const { return bestMax ? max : min; }
  std::optional<int64_t> bestStep(bool bestMax) const { return bestMax ? maxStep : minStep; }
};

// Thread-safety: a plain value type. One run, from one recording or merged over several.
struct RunRow {
  std::string name;                 // the run's name; a recording's file stem when its sources have none
  std::vector<std::string> files;   // the recordings it is in, in the order they were read
  uint64_t startNs = 0;             // the receive (log) times of its first and last events
  uint64_t endNs = 0;
  std::optional<int64_t> lastStep;  // the highest step its events state
  bool finished = true;             // its newest recording was closed cleanly
  RunConfig config;                 // of its newest livemon.run_config event (any source)
  int64_t configNs = INT64_MIN;     // that event's time; INT64_MIN: none seen
  std::map<std::string, KeySummary> summary;  // per asked key, once a value was seen
};

// Thread-safety: a plain value type. What reading one recording found.
struct RecordingRuns {
  std::string path;
  bool readable = false;            // it opened as a recording
  std::vector<RunRow> runs;
  std::vector<std::string> problems;  // "PATH: byte N: what", or why it could not be opened
  uint64_t chunksRead = 0;            // chunk records loaded (RecordingReadStats::chunksRead)
};

// Reads the runs in the recording at `path`. Only the chunks that can matter are read, found with
// the chunk index: those holding livemon.run_config or a channel of one of `keys`, and the first
// and last (a run's start and last step). A run is found by its events in those chunks. A file
// that cannot be opened is returned with readable = false and the reason; damage inside it goes
// into problems and the rest is read. Stops early, unreadable, when `*stop` becomes true.
RecordingRuns readRecordingRuns(const std::string& path, const std::vector<std::string>& keys,
                                const std::atomic<bool>* stop = nullptr);

// Thread-safety: a plain value type.
struct FoundRecordings {
  std::vector<std::string> files;     // sorted within each argument, each once
  std::vector<std::string> problems;  // paths that could not be listed, files left out
};

// The recordings under `paths`: a directory is searched recursively for *.mcap files (not through
// symbolic links to directories); a file is taken as it is, whatever its name. At most `maxFiles`.
FoundRecordings findRecordings(const std::vector<std::string>& paths, std::size_t maxFiles = kMaxRunFiles);

// One row per run name over every recording read: its files, span and summaries merged, its config
// the newest, finished when its newest recording is.
std::vector<RunRow> mergeRuns(const std::vector<RecordingRuns>& recordings);

// Sorts by the best value of `key` (the highest first when `bestMax`, else the lowest), runs
// without one last; without a key by start time. Ties by name.
void sortRuns(std::vector<RunRow>& runs, const std::optional<std::string>& key, bool bestMax);

}  // namespace livemon::livemonctl
