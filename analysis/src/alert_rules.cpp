// The alert engine: applies the rules (parsed in alert_rule_parser.cpp) to what sources send.
#include <livemon/alert_rules.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>

#include <livemon/value_key.h>

namespace livemon {

namespace {

constexpr std::size_t kMaxRules = 1024;
// What a heartbeat may claim as its interval, for the default silence (the wire allows 1 s at
// most; a peer may claim anything).
constexpr std::chrono::milliseconds kUnknownHeartbeatInterval{1000};
constexpr std::chrono::milliseconds kMaxHeartbeatInterval{60000};

std::string numberText(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

uint64_t mix(uint64_t seed, uint64_t value) noexcept {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace

std::string alertSourceName(const SourceInfo& source) {
  std::string text = source.run + "@" + source.host + ":" + std::to_string(source.pid);
  if (source.rank) text += " rank " + std::to_string(*source.rank);
  return text;
}


struct AlertEngine::SourceEntry {
  SourceInfo identity;
  uint64_t serial = 0;
  std::chrono::steady_clock::time_point lastHeard;
  std::optional<std::chrono::milliseconds> heartbeatInterval;
  bool gone = false;
  std::vector<bool> silenceTold;  // per silent rule (silentRules_ order)
  std::optional<uint64_t> droppedSeen;
  std::optional<std::chrono::steady_clock::time_point> lastLoss;
};

struct AlertEngine::KeyState {
  StateKey key;
  uint32_t run = 0;    // threshold: crossing values in a row
  bool told = false;   // threshold: alerted for this run (NaN states are told when created)
};

std::size_t AlertEngine::SourceHash::operator()(const SourceInfo& source) const noexcept {
  uint64_t hash = std::hash<std::string>{}(source.run);
  hash = mix(hash, std::hash<std::string>{}(source.host));
  hash = mix(hash, static_cast<uint64_t>(source.pid));
  hash = mix(hash, source.rank ? static_cast<uint64_t>(*source.rank) ^ 0x72616e6bULL : 0);
  return mix(hash, source.instanceId);
}

std::size_t AlertEngine::StateKeyHash::operator()(const StateKey& key) const noexcept {
  return mix(mix(std::hash<std::string>{}(key.key), key.rule), key.source);
}

AlertEngine::AlertEngine(std::vector<AlertRule> rules, Options options)
    : rules_(std::move(rules)), options_(options), clock_(options.clock != nullptr ? options.clock : &systemClock()) {
  if (rules_.size() > kMaxRules) throw std::invalid_argument("AlertEngine: at most 1024 rules, not " + std::to_string(rules_.size()));
  if (options_.maxStates == 0) throw std::invalid_argument("AlertEngine: maxStates must be at least 1");
  if (options_.maxSources == 0) throw std::invalid_argument("AlertEngine: maxSources must be at least 1");
  for (uint32_t i = 0; i < rules_.size(); ++i) {
    const AlertRule& rule = rules_[i];
    switch (rule.kind) {
      case AlertRuleKind::NotFinite: notFiniteRules_.push_back(i); break;
      case AlertRuleKind::Silent: silentRules_.push_back(i); break;
      case AlertRuleKind::Loss: lossRules_.push_back(i); break;
      case AlertRuleKind::Threshold: {
        thresholdsByKey_[rule.key].push_back(i);
        for (std::size_t dot = rule.key.find('.'); dot != std::string::npos; dot = rule.key.find('.', dot + 1)) {
          thresholdPrefixes_.insert(rule.key.substr(0, dot));
        }
        break;
      }
    }
  }
}

AlertEngine::~AlertEngine() = default;

AlertEngineStats AlertEngine::stats() const noexcept {
  AlertEngineStats result = stats_;
  result.states = states_.size();
  result.sources = sources_.size();
  return result;
}

AlertEngine::SourceEntry& AlertEngine::sourceEntry(const SourceInfo& source) {
  if (const auto found = sourceIndex_.find(source); found != sourceIndex_.end()) {
    sources_.splice(sources_.begin(), sources_, found->second);
    return *found->second;
  }
  if (sources_.size() >= options_.maxSources) {
    // Its states stay until they age out: they carry its serial, never handed out again.
    sourceIndex_.erase(sources_.back().identity);
    sources_.pop_back();
    ++stats_.sourcesForgotten;
  }
  SourceEntry& entry = sources_.emplace_front();
  entry.identity = source;
  entry.serial = nextSerial_++;
  entry.lastHeard = clock_->now();
  entry.silenceTold.assign(silentRules_.size(), false);
  sourceIndex_.emplace(source, sources_.begin());
  return entry;
}

AlertEngine::StateList::iterator AlertEngine::findState(const StateKey& key) {
  const auto found = stateIndex_.find(key);
  if (found == stateIndex_.end()) return states_.end();
  states_.splice(states_.begin(), states_, found->second);
  return found->second;
}

AlertEngine::StateList::iterator AlertEngine::addState(StateKey key) {
  if (states_.size() >= options_.maxStates) {
    eraseState(std::prev(states_.end()));
    ++stats_.statesForgotten;
  }
  if (rules_[key.rule].kind == AlertRuleKind::NotFinite) ++notFiniteStates_;
  KeyState& state = states_.emplace_front();
  state.key = std::move(key);
  stateIndex_.emplace(state.key, states_.begin());
  return states_.begin();
}

void AlertEngine::eraseState(StateList::iterator state) {
  if (rules_[state->key.rule].kind == AlertRuleKind::NotFinite) --notFiniteStates_;
  stateIndex_.erase(state->key);
  states_.erase(state);
}

Alert AlertEngine::makeAlert(const SourceEntry& entry, uint32_t rule, std::chrono::system_clock::time_point time) {
  ++stats_.alerts;
  Alert alert;
  alert.time = time;
  alert.source = entry.identity;
  alert.ruleIndex = rule;
  alert.kind = rules_[rule].kind;
  alert.rule = rules_[rule].text;
  return alert;
}

void AlertEngine::valueSeen(SourceEntry& entry, std::chrono::system_clock::time_point timestamp,
                            const std::optional<int64_t>& step, const std::string& key, double value,
                            const std::vector<uint32_t>* thresholds, std::vector<Alert>& out) {
  const bool finite = std::isfinite(value);
  if (!finite || notFiniteStates_ > 0) {
    for (uint32_t rule : notFiniteRules_) {
      StateKey stateKey{rule, entry.serial, key};
      const auto state = findState(stateKey);
      if (finite) {
        if (state != states_.end()) eraseState(state);  // re-armed
        continue;
      }
      if (state != states_.end()) continue;  // told already
      addState(std::move(stateKey));
      Alert& alert = out.emplace_back(makeAlert(entry, rule, timestamp));
      alert.key = key;
      alert.value = value;
      alert.step = step;
      alert.message = key + " is " + numberText(value);
    }
  }
  if (thresholds == nullptr) return;
  for (uint32_t rule : *thresholds) {
    const AlertRule& r = rules_[rule];
    StateKey stateKey{rule, entry.serial, key};
    auto state = findState(stateKey);
    if (!r.crosses(value)) {
      if (state != states_.end()) eraseState(state);
      continue;
    }
    if (state == states_.end()) state = addState(std::move(stateKey));
    if (state->run < r.consecutive) ++state->run;
    if (state->run < r.consecutive || state->told) continue;
    state->told = true;
    Alert& alert = out.emplace_back(makeAlert(entry, rule, timestamp));
    alert.key = key;
    alert.value = value;
    alert.step = step;
    alert.message = key + " = " + numberText(value) + ", " + std::string(alertComparisonText(r.comparison)) + " " +
                    numberText(r.threshold);
    if (r.consecutive > 1) alert.message += " for " + std::to_string(r.consecutive) + " values in a row";
  }
}

namespace {

// The fields of either kind of event, as (key, value) with value a DataValue or FieldValueView.
const auto& fieldsOf(const Event& event) { return event.data; }
std::span<const transport::FieldView> fieldsOf(const transport::EventView& event) { return event.fields(); }
std::string_view keyOf(const std::pair<const std::string, DataValue>& field) { return field.first; }
std::string_view keyOf(const transport::FieldView& field) { return field.key; }
std::optional<double> valueOf(const std::pair<const std::string, DataValue>& field) { return numericValue(field.second); }
std::optional<double> valueOf(const transport::FieldView& field) {
  if (const double* d = std::get_if<double>(&field.value)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&field.value)) return static_cast<double>(*i);
  return std::nullopt;
}
std::optional<int64_t> stepOf(const Event& event) { return statedStep(event); }
std::optional<int64_t> stepOf(const transport::EventView& event) { return event.statedStep(); }

}  // namespace

template <typename EventType>
void AlertEngine::observeFields(const SourceInfo& source, const EventType& event, std::string_view name,
                                std::chrono::system_clock::time_point timestamp, std::vector<Alert>& out) {
  SourceEntry& entry = sourceEntry(source);
  if (const auto now = clock_->now(); now > entry.lastHeard) {
    entry.lastHeard = now;
    entry.gone = false;
    std::fill(entry.silenceTold.begin(), entry.silenceTold.end(), false);
  }
  if (notFiniteRules_.empty() && thresholdsByKey_.empty()) return;
  const bool stat = isStatEventName(name);
  // Plain events build their keys only when a rule may name them or a value may be NaN.
  const bool named = stat ? !thresholdsByKey_.empty() : !thresholdPrefixes_.empty() && thresholdPrefixes_.contains(std::string(name));
  std::optional<std::optional<int64_t>> step;  // read once, when an alert needs it
  for (const auto& field : fieldsOf(event)) {
    const std::optional<double> value = valueOf(field);
    if (!value) continue;
    if (!named && notFiniteRules_.empty()) continue;
    if (!named && std::isfinite(*value) && notFiniteStates_ == 0) continue;
    const std::string key = valueKey(name, keyOf(field));
    const std::vector<uint32_t>* thresholds = nullptr;
    if (named) {
      if (const auto found = thresholdsByKey_.find(key); found != thresholdsByKey_.end()) thresholds = &found->second;
    }
    if (!step) step = stepOf(event);
    valueSeen(entry, timestamp, *step, key, *value, thresholds, out);
  }
}

void AlertEngine::observeEvent(const SourceInfo& source, const Event& event, std::vector<Alert>& out) {
  observeFields(source, event, event.name, event.timestamp, out);
}

void AlertEngine::observeEvent(const SourceInfo& source, const transport::EventView& event, std::vector<Alert>& out) {
  observeFields(source, event, event.name(), event.timestamp(), out);
}

void AlertEngine::observeHeard(const SourceInfo& source, std::chrono::steady_clock::time_point lastHeard,
                               std::optional<std::chrono::milliseconds> heartbeatInterval) {
  SourceEntry& entry = sourceEntry(source);
  if (heartbeatInterval) {
    entry.heartbeatInterval = std::clamp(*heartbeatInterval, std::chrono::milliseconds(1), kMaxHeartbeatInterval);
  }
  if (lastHeard > entry.lastHeard) {
    entry.lastHeard = lastHeard;
    entry.gone = false;
    std::fill(entry.silenceTold.begin(), entry.silenceTold.end(), false);
  }
}

void AlertEngine::observeGoodbye(const SourceInfo& source) {
  if (silentRules_.empty()) return;
  SourceEntry& entry = sourceEntry(source);
  entry.gone = true;
  entry.lastHeard = std::max(entry.lastHeard, clock_->now());
}

std::chrono::milliseconds AlertEngine::silenceAllowed(const AlertRule& rule, const SourceEntry& entry) const {
  if (rule.silentAfter) return *rule.silentAfter;
  const std::chrono::milliseconds interval = entry.heartbeatInterval.value_or(kUnknownHeartbeatInterval);
  return std::max(options_.minDefaultSilence, interval * options_.silentHeartbeats);
}

void AlertEngine::checkSilence(std::vector<Alert>& out) {
  if (silentRules_.empty()) return;
  const auto now = clock_->now();
  for (SourceEntry& entry : sources_) {
    if (entry.gone) continue;
    const auto quiet = now - entry.lastHeard;
    for (std::size_t i = 0; i < silentRules_.size(); ++i) {
      if (entry.silenceTold[i] || quiet <= silenceAllowed(rules_[silentRules_[i]], entry)) continue;
      entry.silenceTold[i] = true;
      Alert& alert = out.emplace_back(makeAlert(entry, silentRules_[i], clock_->wallNow()));
      alert.value = std::chrono::duration<double>(quiet).count();
      alert.message = alertSourceName(entry.identity) + " silent for " + numberText(alert.value) + " s without a goodbye";
    }
  }
}

void AlertEngine::loss(SourceEntry& entry, std::string_view key, uint64_t lost, std::string message,
                       std::vector<Alert>& out) {
  const auto now = clock_->now();
  const bool told = entry.lastLoss && now - *entry.lastLoss < options_.lossQuiet;
  entry.lastLoss = now;
  if (told) return;
  for (uint32_t rule : lossRules_) {
    Alert& alert = out.emplace_back(makeAlert(entry, rule, clock_->wallNow()));
    alert.key = std::string(key);
    alert.value = static_cast<double>(lost);
    alert.message = message;
  }
}

void AlertEngine::observeGap(const SourceInfo& source, std::string_view topic, uint64_t missed, std::vector<Alert>& out) {
  if (lossRules_.empty() || missed == 0) return;
  SourceEntry& entry = sourceEntry(source);
  loss(entry, topic, missed, std::to_string(missed) + " event(s) of " + std::string(topic) + " lost in transit", out);
}

void AlertEngine::observePublisherDropped(const SourceInfo& source, uint64_t droppedTotal, std::vector<Alert>& out) {
  if (lossRules_.empty()) return;
  SourceEntry& entry = sourceEntry(source);
  const std::optional<uint64_t> before = entry.droppedSeen;
  entry.droppedSeen = droppedTotal;
  if (!before || droppedTotal <= *before) return;
  const uint64_t dropped = droppedTotal - *before;
  loss(entry, "publisher.dropped", dropped,
       "the publisher dropped " + std::to_string(dropped) + " event(s) (" + std::to_string(droppedTotal) + " in all)", out);
}

}  // namespace livemon
