#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/alert_rules.h>
#include <livemon/clock.h>
#include <livemon/event.h>
#include <livemon/transport/event_batch_view.h>

// Straggler scoring across the ranks of a run: the publishers of one run name that carry a rank
// form a group, and each window every rank's latest value of one key is compared with the median
// across the group. Pure logic on an injected clock, no threads and no I/O, so the dashboard and
// `livemonctl ranks` score and flag the same way (as AlertEngine does for alerts).
namespace livemon {

// The default key: the demo's per-rank compute time. In synchronous data-parallel training every
// rank's step time is the same (each step ends in an allreduce that waits for the slowest rank),
// so the step time cannot tell a straggler; the time a rank computes before it waits can.
inline constexpr std::string_view kDefaultRankScoreKey = "train.compute_time_ms.mean";

// Which way a key runs.
enum class RankScoreDirection : uint8_t {
  LowerIsFaster,   // a time: score = median / value
  HigherIsFaster,  // a rate (samples/s): score = value / median
};

// Thread-safety: a plain value type.
struct RankScorerOptions {
  std::string key{kDefaultRankScoreKey};  // a value key, as value_key.h names it
  RankScoreDirection direction = RankScoreDirection::LowerIsFaster;
  // A rank is flagged once its score has stayed below `threshold` for `windows` evaluations in a
  // row, and stays flagged until a score is not below it.
  double threshold = 0.8;
  uint32_t windows = 3;
  // A rank whose latest value is older than this is stale: listed, but neither scored nor part of
  // the median, and its run of low scores ends (a rank that left without a goodbye, or one that
  // stopped sending the key).
  std::chrono::milliseconds staleAfter{3000};
  // A rank stale for this long is forgotten; it joins afresh if heard again.
  std::chrono::milliseconds forgetAfter{30000};
  // Bounds whatever peers send: runs and ranks (over all runs) followed at most. A new one beyond
  // them is refused and counted (RankScorerStats::refused) until room frees up.
  std::size_t maxRuns = 256;
  std::size_t maxRanks = 16384;
  // Measures staleness and stamps windows; nullptr means livemon::systemClock(). Must outlive the
  // scorer.
  Clock* clock = nullptr;
};

// Thread-safety: a plain value type.
// One rank in one window.
struct RankScore {
  int64_t rank = 0;
  std::string host;  // from the peer: escape before printing
  int64_t pid = 0;
  uint64_t instanceId = 0;
  // The latest value, as it came (also when it cannot be scored: NaN, ±Inf, negative).
  double value = 0.0;
  // The relative score, 1.0 = the median; for a time, 0.5 = twice as slow as the median. +Inf for
  // a zero time against a non-zero median. NaN when not scored (stale, or no usable value).
  double score = 0.0;
  bool stale = false;
  uint32_t below = 0;  // consecutive windows scored below the threshold
  bool flagged = false;
};

// Thread-safety: a plain value type.
// One run's ranks in one window.
struct RankWindow {
  std::string run;  // from the peer: escape before printing
  std::chrono::system_clock::time_point time;  // the clock's wall time at the evaluation
  double median = 0.0;     // across the scored ranks' values; NaN when none is scored
  std::size_t scored = 0;  // ranks that took part in the median
  std::vector<RankScore> ranks;  // worst first: by score ascending, then unscored ones by rank
  std::vector<int64_t> flagged;  // ascending
};

// Thread-safety: a plain value type.
struct RankScorerStats {
  std::size_t runs = 0;
  std::size_t ranks = 0;
  uint64_t values = 0;     // values observed for the key
  uint64_t refused = 0;    // values from a run or rank beyond the caps
  uint64_t forgotten = 0;  // ranks forgotten after forgetAfter, or said goodbye
};

// Not thread-safe: one owner at a time; one thread at a time (a dashboard's GUI or ingest thread, a
// command's loop). Groups ranked sources by run and scores them per window; see RankScorerOptions.
//
// The caller decides the windows: evaluate() closes one for every run from each rank's latest
// value, so publishers whose Stat windows close at different moments (each on its own monotonic
// clock) are compared by what they last said. Sources without a rank are ignored. A rank
// restarted under the same run and rank (a new instance id) replaces the old one and starts
// unflagged. Memory is bounded by the caps; the work per event is one lookup of the key, per
// evaluation O(ranks · log ranks).
class RankScorer {
 public:
  using Options = RankScorerOptions;

  // Throws std::invalid_argument naming the option: an empty key, a threshold not finite or not
  // above 0, zero windows, staleAfter below 1 ms, forgetAfter below staleAfter, a zero cap.
  explicit RankScorer(Options options = {});

  const Options& options() const noexcept { return options_; }

  // An event from `source`: when it carries the key as a number (a Stat event's "<stat>.<agg>"
  // field, or "<event>.<field>" of another event), that value becomes the rank's latest.
  void observeEvent(const SourceInfo& source, const Event& event);
  // The same for an event lent by a Subscriber (SubscriberCallbacks::onEventView).
  void observeEvent(const SourceInfo& source, const transport::EventView& event);
  // The key's value from `source`, directly.
  void observeValue(const SourceInfo& source, double value);
  // The source said goodbye: its rank leaves the group at once.
  void observeGoodbye(const SourceInfo& source);

  // Closes a window: scores every run's ranks by their latest values and advances their flags.
  // One RankWindow per run, runs in name order; ranks forgotten now are left out.
  std::vector<RankWindow> evaluate();

  RankScorerStats stats() const noexcept;

 private:
  struct Member {
    std::string host;
    int64_t pid = 0;
    uint64_t instanceId = 0;
    double value = 0.0;
    std::chrono::steady_clock::time_point lastValue{};
    uint32_t below = 0;
  };
  using Run = std::map<int64_t, Member>;

  Member* member(const SourceInfo& source);
  double scoreOf(double value, double median) const noexcept;

  Options options_;
  Clock* clock_;
  std::map<std::string, Run, std::less<>> runs_;
  std::size_t rankCount_ = 0;
  RankScorerStats stats_;
};

}  // namespace livemon
