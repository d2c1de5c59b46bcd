#include <livemon/alert_rules.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include <livemon/json_text.h>
#include <livemon/value_key.h>

namespace livemon {

namespace {

constexpr std::size_t kMaxRules = 1024;
// What a heartbeat may claim as its interval, for the default silence (the wire allows 1 s at
// most; a peer may claim anything).
constexpr std::chrono::milliseconds kUnknownHeartbeatInterval{1000};
constexpr std::chrono::milliseconds kMaxHeartbeatInterval{60000};

bool isBlank(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool isOperatorChar(char c) noexcept { return c == '<' || c == '>' || c == '=' || c == '!'; }

bool equalsIgnoringCase(std::string_view a, std::string_view b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

// Not thread-safe: one parse.
// Reads a rule's text front to back; every failure names the byte offset it happened at.
class RuleParser {
 public:
  explicit RuleParser(std::string_view text) : text_(text) {}

  std::optional<AlertRule> parse(AlertRuleError& error) {
    error_ = &error;
    if (text_.size() > kMaxAlertRuleBytes) {
      return fail(kMaxAlertRuleBytes, "a rule is at most " + std::to_string(kMaxAlertRuleBytes) + " bytes long");
    }
    std::size_t end = text_.size();
    while (end > 0 && isBlank(text_[end - 1])) --end;
    text_ = text_.substr(0, end);
    skipBlanks();
    if (atEnd()) return fail(pos_, "empty rule: expected nan, silent, loss or KEY > NUMBER");
    AlertRule rule;
    rule.text = std::string(text_.substr(pos_));

    const bool quoted = text_[pos_] == '"';
    std::string key;
    if (quoted) {
      if (!quotedKey(key)) return std::nullopt;
    } else {
      key = std::string(bareToken());
      if (key.empty()) return fail(pos_, "expected a key before the comparison");
    }
    skipBlanks();

    if (!quoted && !atEnd() && !isOperatorChar(text_[pos_]) && equalsIgnoringCase(key, "silent")) {
      rule.kind = AlertRuleKind::Silent;
      if (!duration(rule)) return std::nullopt;
      return finish(std::move(rule), "unexpected text after the duration");
    }
    if (atEnd()) {
      if (!quoted) {
        if (equalsIgnoringCase(key, "nan")) return finishBuiltIn(std::move(rule), AlertRuleKind::NotFinite);
        if (equalsIgnoringCase(key, "loss")) return finishBuiltIn(std::move(rule), AlertRuleKind::Loss);
        if (equalsIgnoringCase(key, "silent")) return finishBuiltIn(std::move(rule), AlertRuleKind::Silent);
      }
      return fail(pos_, "expected a comparison (>, >=, <, <=) after the key, or one of nan, silent, loss");
    }
    if (!quoted && !isOperatorChar(text_[pos_]) && (equalsIgnoringCase(key, "nan") || equalsIgnoringCase(key, "loss"))) {
      return fail(pos_, "\"" + key + "\" takes nothing after it");
    }

    rule.kind = AlertRuleKind::Threshold;
    rule.key = std::move(key);
    if (!comparison(rule)) return std::nullopt;
    skipBlanks();
    if (!threshold(rule)) return std::nullopt;
    skipBlanks();
    if (!atEnd()) {
      const std::size_t forAt = pos_;
      if (!equalsIgnoringCase(bareToken(), "for")) return fail(forAt, "expected \"for N\" or the end of the rule");
      skipBlanks();
      if (!consecutive(rule)) return std::nullopt;
      skipBlanks();
      if (!atEnd()) {
        const std::size_t unitAt = pos_;
        const std::string_view unit = bareToken();
        bool known = false;
        for (std::string_view word : {"value", "values", "window", "windows", "time", "times"}) known |= equalsIgnoringCase(unit, word);
        if (!known) return fail(unitAt, "expected the end of the rule after \"for N\"");
      }
    }
    return finish(std::move(rule), "expected the end of the rule");
  }

 private:
  bool atEnd() const noexcept { return pos_ >= text_.size(); }
  void skipBlanks() noexcept {
    while (!atEnd() && isBlank(text_[pos_])) ++pos_;
  }
  std::string_view bareToken() noexcept {
    const std::size_t start = pos_;
    while (!atEnd() && !isBlank(text_[pos_]) && !isOperatorChar(text_[pos_]) && text_[pos_] != '"') ++pos_;
    return text_.substr(start, pos_ - start);
  }
  // A run of anything but blanks (numbers, durations).
  std::string_view word() noexcept {
    const std::size_t start = pos_;
    while (!atEnd() && !isBlank(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  std::nullopt_t fail(std::size_t position, std::string reason) {
    error_->position = position;
    error_->reason = std::move(reason);
    return std::nullopt;
  }

  std::optional<AlertRule> finishBuiltIn(AlertRule rule, AlertRuleKind kind) {
    rule.kind = kind;
    return rule;
  }
  std::optional<AlertRule> finish(AlertRule rule, const char* reasonIfMore) {
    skipBlanks();
    if (!atEnd()) return fail(pos_, reasonIfMore);
    return rule;
  }

  bool quotedKey(std::string& key) {
    const std::size_t open = pos_++;
    while (!atEnd()) {
      const char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        if (!key.empty()) return true;
        fail(open, "the quoted key is empty");
        return false;
      }
      if (c == '\\') {
        if (pos_ + 1 >= text_.size() || (text_[pos_ + 1] != '"' && text_[pos_ + 1] != '\\')) {
          fail(pos_, "in a quoted key only \\\" and \\\\ are escapes");
          return false;
        }
        key += text_[pos_ + 1];
        pos_ += 2;
        continue;
      }
      key += c;
      ++pos_;
    }
    fail(open, "the quoted key has no closing quote");
    return false;
  }

  bool comparison(AlertRule& rule) {
    const std::size_t at = pos_;
    std::size_t length = 0;
    while (pos_ + length < text_.size() && isOperatorChar(text_[pos_ + length])) ++length;
    const std::string_view op = text_.substr(at, length);
    if (op == ">") {
      rule.comparison = AlertComparison::Greater;
    } else if (op == ">=") {
      rule.comparison = AlertComparison::GreaterOrEqual;
    } else if (op == "<") {
      rule.comparison = AlertComparison::Less;
    } else if (op == "<=") {
      rule.comparison = AlertComparison::LessOrEqual;
    } else if (op.empty()) {
      fail(at, "expected a comparison (>, >=, <, <=) after the key");
      return false;
    } else {
      fail(at, "unknown comparison \"" + std::string(op) + "\": use >, >=, < or <=");
      return false;
    }
    pos_ += length;
    return true;
  }

  // A decimal number filling `text`, with an optional sign; nothing when it is not one.
  static std::optional<double> number(std::string_view text, std::string* why) {
    if (!text.empty() && text.front() == '+') text.remove_prefix(1);
    double value = 0.0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      *why = "out of range for a double";
      return std::nullopt;
    }
    if (ec != std::errc() || end != text.data() + text.size()) {
      *why = "not a number";
      return std::nullopt;
    }
    if (!std::isfinite(value)) {
      *why = "not a finite number";
      return std::nullopt;
    }
    return value;
  }

  bool threshold(AlertRule& rule) {
    const std::size_t at = pos_;
    const std::string_view text = word();
    if (text.empty()) {
      fail(at, "expected a number after " + std::string(alertComparisonText(rule.comparison)));
      return false;
    }
    std::string why;
    const std::optional<double> value = number(text, &why);
    if (!value) {
      fail(at, "the threshold \"" + std::string(text) + "\" is " + why);
      return false;
    }
    rule.threshold = *value;
    return true;
  }

  bool consecutive(AlertRule& rule) {
    const std::size_t at = pos_;
    const std::string_view text = bareToken();
    uint64_t count = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || count < 1 ||
        count > kMaxAlertConsecutive) {
      fail(at, "expected a count of values from 1 to " + std::to_string(kMaxAlertConsecutive) + " after \"for\"");
      return false;
    }
    rule.consecutive = static_cast<uint32_t>(count);
    return true;
  }

  bool duration(AlertRule& rule) {
    const std::size_t at = pos_;
    std::string_view text = word();
    double unitMs = 1000.0;
    std::size_t digits = text.size();
    while (digits > 0 && ((text[digits - 1] >= 'a' && text[digits - 1] <= 'z') || (text[digits - 1] >= 'A' && text[digits - 1] <= 'Z'))) {
      --digits;
    }
    const std::string_view unit = text.substr(digits);
    if (unit.empty() || equalsIgnoringCase(unit, "s")) {
      unitMs = 1000.0;
    } else if (equalsIgnoringCase(unit, "ms")) {
      unitMs = 1.0;
    } else if (equalsIgnoringCase(unit, "m") || equalsIgnoringCase(unit, "min")) {
      unitMs = 60'000.0;
    } else if (equalsIgnoringCase(unit, "h")) {
      unitMs = 3'600'000.0;
    } else {
      fail(at + digits, "unknown unit \"" + std::string(unit) + "\": use ms, s, m or h");
      return false;
    }
    std::string why;
    const std::optional<double> value = number(text.substr(0, digits), &why);
    if (!value) {
      fail(at, "the duration \"" + std::string(text) + "\" is " + (digits == 0 ? std::string("missing its number") : why));
      return false;
    }
    const double ms = *value * unitMs;
    if (!(ms >= static_cast<double>(kMinSilentAfter.count()) - 0.5 && ms <= static_cast<double>(kMaxSilentAfter.count()))) {
      fail(at, "the duration must be from 1ms to 7 days");
      return false;
    }
    rule.silentAfter = std::chrono::milliseconds(std::max<int64_t>(1, std::llround(ms)));
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  AlertRuleError* error_ = nullptr;
};

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

std::string_view alertRuleKindName(AlertRuleKind kind) noexcept {
  switch (kind) {
    case AlertRuleKind::NotFinite: return "nan";
    case AlertRuleKind::Silent: return "silent";
    case AlertRuleKind::Loss: return "loss";
    case AlertRuleKind::Threshold: return "threshold";
  }
  return "?";
}

std::string_view alertComparisonText(AlertComparison comparison) noexcept {
  switch (comparison) {
    case AlertComparison::Greater: return ">";
    case AlertComparison::GreaterOrEqual: return ">=";
    case AlertComparison::Less: return "<";
    case AlertComparison::LessOrEqual: return "<=";
  }
  return "?";
}

bool AlertRule::crosses(double value) const noexcept {
  switch (comparison) {
    case AlertComparison::Greater: return value > threshold;
    case AlertComparison::GreaterOrEqual: return value >= threshold;
    case AlertComparison::Less: return value < threshold;
    case AlertComparison::LessOrEqual: return value <= threshold;
  }
  return false;
}

std::optional<AlertRule> parseAlertRule(std::string_view text, AlertRuleError* error) {
  AlertRuleError ignored;
  return RuleParser(text).parse(error != nullptr ? *error : ignored);
}

std::string describeAlertRuleError(std::string_view text, const AlertRuleError& error) {
  return "rule " + jsonString(text) + ": at column " + std::to_string(error.position + 1) + ": " + error.reason;
}

AlertRule parseAlertRuleOrThrow(std::string_view text) {
  AlertRuleError error;
  std::optional<AlertRule> rule = parseAlertRule(text, &error);
  if (!rule) throw std::invalid_argument(describeAlertRuleError(text, error));
  return std::move(*rule);
}

std::string alertSourceName(const SourceInfo& source) {
  std::string text = source.run + "@" + source.host + ":" + std::to_string(source.pid);
  if (source.rank) text += " rank " + std::to_string(*source.rank);
  return text;
}

// ---------------------------------------------------------------------------------------------
// The engine

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

void AlertEngine::valueSeen(SourceEntry& entry, const Event& event, const std::string& key, double value,
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
      Alert& alert = out.emplace_back(makeAlert(entry, rule, event.timestamp));
      alert.key = key;
      alert.value = value;
      alert.step = statedStep(event);
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
    Alert& alert = out.emplace_back(makeAlert(entry, rule, event.timestamp));
    alert.key = key;
    alert.value = value;
    alert.step = statedStep(event);
    alert.message = key + " = " + numberText(value) + ", " + std::string(alertComparisonText(r.comparison)) + " " +
                    numberText(r.threshold);
    if (r.consecutive > 1) alert.message += " for " + std::to_string(r.consecutive) + " values in a row";
  }
}

void AlertEngine::observeEvent(const SourceInfo& source, const Event& event, std::vector<Alert>& out) {
  SourceEntry& entry = sourceEntry(source);
  if (const auto now = clock_->now(); now > entry.lastHeard) {
    entry.lastHeard = now;
    entry.gone = false;
    std::fill(entry.silenceTold.begin(), entry.silenceTold.end(), false);
  }
  if (notFiniteRules_.empty() && thresholdsByKey_.empty()) return;
  const bool stat = isStatEventName(event.name);
  // Plain events build their keys only when a rule may name them or a value may be NaN.
  const bool named = stat ? !thresholdsByKey_.empty() : thresholdPrefixes_.contains(event.name);
  for (const auto& [field, data] : event.data) {
    const std::optional<double> value = numericValue(data);
    if (!value) continue;
    if (!named && notFiniteRules_.empty()) continue;
    if (!named && std::isfinite(*value) && notFiniteStates_ == 0) continue;
    const std::string key = valueKey(event.name, field);
    const std::vector<uint32_t>* thresholds = nullptr;
    if (named) {
      if (const auto found = thresholdsByKey_.find(key); found != thresholdsByKey_.end()) thresholds = &found->second;
    }
    valueSeen(entry, event, key, *value, thresholds, out);
  }
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
