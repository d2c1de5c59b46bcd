#include <livemon/rank_scores.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <livemon/value_key.h>

namespace livemon {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Times and rates are never negative; a negative or non-finite value says nothing about speed.
bool scorable(double value) noexcept { return std::isfinite(value) && value >= 0.0; }

// The median of `values` (not empty); reorders them.
double median(std::vector<double>& values) {
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return lower + (upper - lower) / 2;
}

}  // namespace

RankScorer::RankScorer(Options options) : options_(std::move(options)) {
  if (options_.key.empty()) throw std::invalid_argument("key must not be empty");
  if (!std::isfinite(options_.threshold) || options_.threshold <= 0.0) {
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, options_.threshold).ptr;
    throw std::invalid_argument("threshold must be a finite number above 0, got " + std::string(text, end));
  }
  if (options_.windows == 0) throw std::invalid_argument("windows must be at least 1");
  if (options_.staleAfter < std::chrono::milliseconds(1)) throw std::invalid_argument("staleAfter must be at least 1 ms");
  if (options_.forgetAfter < options_.staleAfter) throw std::invalid_argument("forgetAfter must not be below staleAfter");
  if (options_.maxRuns == 0 || options_.maxRanks == 0) throw std::invalid_argument("maxRuns and maxRanks must be above 0");
  clock_ = options_.clock != nullptr ? options_.clock : &systemClock();
}

void RankScorer::observeEvent(const SourceInfo& source, const Event& event) {
  if (!source.rank) return;
  const std::string& key = options_.key;
  std::string_view field = key;
  if (!isStatEventName(event.name)) {
    // "<event>.<field>": only an event of that name can carry it.
    if (key.size() <= event.name.size() || key.compare(0, event.name.size(), event.name) != 0 ||
        key[event.name.size()] != '.') {
      return;
    }
    field = std::string_view(key).substr(event.name.size() + 1);
  }
  const auto found = event.data.find(std::string(field));
  if (found == event.data.end()) return;
  if (const std::optional<double> value = numericValue(found->second)) observeValue(source, *value);
}

void RankScorer::observeEvent(const SourceInfo& source, const transport::EventView& event) {
  if (!source.rank) return;
  const std::string& key = options_.key;
  std::string_view field = key;
  const std::string_view name = event.name();
  if (!isStatEventName(name)) {
    if (key.size() <= name.size() || key.compare(0, name.size(), name) != 0 || key[name.size()] != '.') return;
    field = std::string_view(key).substr(name.size() + 1);
  }
  const transport::FieldView* found = event.find(field);
  if (found == nullptr) return;
  if (const double* d = std::get_if<double>(&found->value)) {
    observeValue(source, *d);
  } else if (const int64_t* i = std::get_if<int64_t>(&found->value)) {
    observeValue(source, static_cast<double>(*i));
  }
}

void RankScorer::observeValue(const SourceInfo& source, double value) {
  Member* entry = member(source);
  if (entry == nullptr) {
    ++stats_.refused;
    return;
  }
  ++stats_.values;
  entry->value = value;
  entry->lastValue = clock_->now();
}

void RankScorer::observeGoodbye(const SourceInfo& source) {
  if (!source.rank) return;
  const auto run = runs_.find(source.run);
  if (run == runs_.end()) return;
  const auto rank = run->second.find(*source.rank);
  // A goodbye from an instance that was already replaced says nothing about its successor.
  if (rank == run->second.end() || rank->second.instanceId != source.instanceId) return;
  run->second.erase(rank);
  --rankCount_;
  ++stats_.forgotten;
  if (run->second.empty()) runs_.erase(run);
}

RankScorer::Member* RankScorer::member(const SourceInfo& source) {
  if (!source.rank) return nullptr;
  auto run = runs_.find(source.run);
  if (run == runs_.end()) {
    if (runs_.size() >= options_.maxRuns || rankCount_ >= options_.maxRanks) return nullptr;
    run = runs_.emplace(source.run, Run{}).first;
  }
  auto rank = run->second.find(*source.rank);
  if (rank == run->second.end()) {
    if (rankCount_ >= options_.maxRanks) return nullptr;
    rank = run->second.emplace(*source.rank, Member{}).first;
    ++rankCount_;
  }
  Member& entry = rank->second;
  if (entry.instanceId != source.instanceId || entry.pid != source.pid || entry.host != source.host) {
    // A new process in this rank's place: its history is not the old one's.
    entry = Member{};
    entry.host = source.host;
    entry.pid = source.pid;
    entry.instanceId = source.instanceId;
  }
  return &entry;
}

double RankScorer::scoreOf(double value, double median) const noexcept {
  const bool lowerIsFaster = options_.direction == RankScoreDirection::LowerIsFaster;
  const double numerator = lowerIsFaster ? median : value;
  const double denominator = lowerIsFaster ? value : median;
  if (denominator > 0.0) return numerator / denominator;
  // Zero against zero is as typical as can be; anything against zero is infinitely ahead.
  return numerator > 0.0 ? kInf : 1.0;
}

std::vector<RankWindow> RankScorer::evaluate() {
  const auto now = clock_->now();
  std::vector<RankWindow> windows;
  windows.reserve(runs_.size());
  std::vector<double> values;
  for (auto run = runs_.begin(); run != runs_.end();) {
    Run& members = run->second;
    for (auto rank = members.begin(); rank != members.end();) {
      if (now - rank->second.lastValue > options_.forgetAfter) {
        rank = members.erase(rank);
        --rankCount_;
        ++stats_.forgotten;
      } else {
        ++rank;
      }
    }
    if (members.empty()) {
      run = runs_.erase(run);
      continue;
    }

    RankWindow window;
    window.run = run->first;
    window.time = clock_->wallNow();
    values.clear();
    for (const auto& [rank, entry] : members) {
      if (now - entry.lastValue <= options_.staleAfter && scorable(entry.value)) values.push_back(entry.value);
    }
    window.scored = values.size();
    window.median = values.empty() ? kNaN : median(values);

    window.ranks.reserve(members.size());
    for (auto& [rank, entry] : members) {
      RankScore score;
      score.rank = rank;
      score.host = entry.host;
      score.pid = entry.pid;
      score.instanceId = entry.instanceId;
      score.value = entry.value;
      score.stale = now - entry.lastValue > options_.staleAfter;
      const bool scored = !score.stale && scorable(entry.value);
      score.score = scored ? scoreOf(entry.value, window.median) : kNaN;
      // A window without a score breaks a run of low ones: a flag needs consecutive evidence.
      if (scored && score.score < options_.threshold) {
        entry.below = entry.below < std::numeric_limits<uint32_t>::max() ? entry.below + 1 : entry.below;
      } else {
        entry.below = 0;
      }
      score.below = entry.below;
      score.flagged = entry.below >= options_.windows;
      if (score.flagged) window.flagged.push_back(rank);
      window.ranks.push_back(std::move(score));
    }
    std::stable_sort(window.ranks.begin(), window.ranks.end(), [](const RankScore& a, const RankScore& b) {
      const bool aScored = !std::isnan(a.score);
      const bool bScored = !std::isnan(b.score);
      if (aScored != bScored) return aScored;
      return aScored && a.score < b.score;  // ties and unscored ones keep rank order
    });
    windows.push_back(std::move(window));
    ++run;
  }
  return windows;
}

RankScorerStats RankScorer::stats() const noexcept {
  RankScorerStats stats = stats_;
  stats.runs = runs_.size();
  stats.ranks = rankCount_;
  return stats;
}

}  // namespace livemon
