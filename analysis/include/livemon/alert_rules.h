#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <livemon/clock.h>
#include <livemon/event.h>
#include <livemon/source_info.h>
#include <livemon/transport/event_batch_view.h>

// Alert rules and the engine that applies them to what a subscriber receives. Pure logic on an
// injected clock, no threads and no I/O, so the dashboard and `livemonctl watch` run the same
// rules. Values are named as value_key.h names them.
namespace livemon {

enum class AlertRuleKind : uint8_t {
  NotFinite,  // "nan": any number of any event becomes NaN or ±Inf
  Silent,     // "silent [DURATION]": a source stops sending without saying goodbye
  Loss,       // "loss": events lost in transit (sequence gaps) or dropped by their publisher
  Threshold,  // "KEY > X [for N]": a value beyond a threshold N times in a row
};

// "nan" "silent" "loss" "threshold".
std::string_view alertRuleKindName(AlertRuleKind kind) noexcept;

enum class AlertComparison : uint8_t { Greater, GreaterOrEqual, Less, LessOrEqual };

// ">" ">=" "<" "<=".
std::string_view alertComparisonText(AlertComparison comparison) noexcept;

// Thread-safety: a plain value type.
// One parsed rule. Grammar (keywords in any case, tokens separated by blanks):
//   nan
//   loss
//   silent [DURATION]         DURATION: a number and a unit, ms s m h ("30s", "1.5m"); bare: seconds
//   KEY OP NUMBER [for N]     OP: > >= < <=; N: consecutive values, 1 to kMaxAlertConsecutive
// KEY is a value key ("train.loss.mean", "eval.accuracy"), or a double-quoted string with \" and
// \\ escapes for a key with blanks or operator characters in it.
struct AlertRule {
  AlertRuleKind kind = AlertRuleKind::NotFinite;
  std::string text;  // as written, without surrounding blanks; alerts name their rule by it
  // Threshold only.
  std::string key;
  AlertComparison comparison = AlertComparison::Greater;
  double threshold = 0.0;
  uint32_t consecutive = 1;
  // Silent only: how long a source may be quiet; unset: kSilentHeartbeats of its heartbeat
  // interval (see AlertEngine).
  std::optional<std::chrono::milliseconds> silentAfter;

  // Whether `value` is beyond the threshold (never for NaN).
  bool crosses(double value) const noexcept;
};

inline constexpr std::size_t kMaxAlertRuleBytes = 4096;
inline constexpr uint32_t kMaxAlertConsecutive = 1'000'000;
inline constexpr std::chrono::milliseconds kMinSilentAfter{1};
inline constexpr std::chrono::milliseconds kMaxSilentAfter{std::chrono::hours(24 * 7)};

// Thread-safety: a plain value type.
//
// Where and why a rule's text was refused.
struct AlertRuleError {
  std::size_t position = 0;  // byte offset into the text as given
  std::string reason;
};

// Parses one rule. On bad text returns nothing and, when `error` is given, fills it. Never throws
// for any text (it may throw std::bad_alloc).
std::optional<AlertRule> parseAlertRule(std::string_view text, AlertRuleError* error = nullptr);

// `rule "TEXT": at column N: REASON` (column counted from 1; the text made printable).
std::string describeAlertRuleError(std::string_view text, const AlertRuleError& error);

// Parses one rule; throws std::invalid_argument with describeAlertRuleError()'s message.
AlertRule parseAlertRuleOrThrow(std::string_view text);

// Who an alert is about: the publisher's identity (core's SourceInfo). The old name, kept so code
// written against it compiles; it is the same type.
using AlertSource = SourceInfo;

// "run@host:pid", plus " rank N" when a rank is set (not escaped): the source as alerts name it,
// without the world size describe() adds.
std::string alertSourceName(const SourceInfo& source);

// Thread-safety: a plain value type.
// One triggered rule. Text in it may come from a peer (keys, topics, the source): escape it before
// printing it on a terminal.
struct Alert {
  std::chrono::system_clock::time_point time;  // the event's time; the clock's wall time for silence
  SourceInfo source;
  std::size_t ruleIndex = 0;  // into AlertEngine::rules()
  AlertRuleKind kind = AlertRuleKind::NotFinite;
  std::string rule;     // the rule's text
  std::string key;      // the value's key; for loss, the topic or "publisher.dropped"; empty for silence
  double value = 0.0;   // the value; for silence, the seconds quiet; for loss, the events lost
  std::string message;  // one sentence saying what happened
  std::optional<int64_t> step;  // the event's step (statedStep); none for silence and loss
};

// Thread-safety: a plain value type.
struct AlertEngineOptions {
  // Measures silence and stamps silence alerts; nullptr means livemon::systemClock(). Must outlive
  // the engine.
  Clock* clock = nullptr;
  // States of (rule, source, key) followed at most: a threshold's run of values, a value that is
  // NaN. Beyond it the one touched longest ago is forgotten (counted in statesForgotten).
  std::size_t maxStates = 16384;
  // Sources followed at most (for silence and loss). Beyond it the one heard longest ago is
  // forgotten (counted in sourcesForgotten); it is followed afresh if heard again.
  std::size_t maxSources = 1024;
  // Silence for a "silent" rule without a duration: this many heartbeat intervals of the source
  // (from its heartbeats; 1 s until one is known), and never less than minDefaultSilence.
  uint32_t silentHeartbeats = 5;
  std::chrono::milliseconds minDefaultSilence{2000};
  // A source's losses are told once, then again only after this long without new losses.
  std::chrono::milliseconds lossQuiet{10000};
};

// Thread-safety: a plain value type.
struct AlertEngineStats {
  uint64_t alerts = 0;
  std::size_t states = 0;
  std::size_t sources = 0;
  uint64_t statesForgotten = 0;
  uint64_t sourcesForgotten = 0;
};

// Not thread-safe: one owner at a time; one thread at a time (a dashboard's GUI or ingest thread, a
// command's loop). Applies rules to what a subscriber sees and appends each alert to the caller's
// vector.
//
// Each rule alerts once per crossing and source: "nan" once per key until that key is finite
// again; a threshold when the N-th value in a row crosses, then not until a value does not;
// "silent" once per silence (the source is heard again first); "loss" once, then again only after
// lossQuiet without new losses from that source.
//
// Memory is bounded whatever peers send: states and sources are capped (options), the work per
// event is a few hash lookups per numeric field.
class AlertEngine {
 public:
  using Options = AlertEngineOptions;

  // Throws std::invalid_argument for more than 1024 rules or a zero cap.
  explicit AlertEngine(std::vector<AlertRule> rules, Options options = {});
  ~AlertEngine();
  AlertEngine(const AlertEngine&) = delete;
  AlertEngine& operator=(const AlertEngine&) = delete;

  const std::vector<AlertRule>& rules() const noexcept { return rules_; }

  // An event from `source`; also counts as hearing from it now.
  void observeEvent(const SourceInfo& source, const Event& event, std::vector<Alert>& out);
  // The same for an event lent by a Subscriber (SubscriberCallbacks::onEventView).
  void observeEvent(const SourceInfo& source, const transport::EventView& event, std::vector<Alert>& out);
  // Anything from `source`, heartbeats included, last arrived at `lastHeard` (the clock's
  // monotonic time). `heartbeatInterval`: what its heartbeats say, for the default silence.
  void observeHeard(const SourceInfo& source, std::chrono::steady_clock::time_point lastHeard,
                    std::optional<std::chrono::milliseconds> heartbeatInterval = std::nullopt);
  // The source said goodbye: its silence is not an alert (until it is heard again).
  void observeGoodbye(const SourceInfo& source);
  // `missed` events of `topic` never arrived (a sequence gap).
  void observeGap(const SourceInfo& source, std::string_view topic, uint64_t missed, std::vector<Alert>& out);
  // The publisher's own count of events it dropped, as its latest heartbeat says. The first count
  // seen is the baseline; only growth is a loss.
  void observePublisherDropped(const SourceInfo& source, uint64_t droppedTotal, std::vector<Alert>& out);
  // Looks for sources silent for longer than their rules allow. Call it regularly (every poll).
  void checkSilence(std::vector<Alert>& out);

  AlertEngineStats stats() const noexcept;

 private:
  struct SourceHash {
    std::size_t operator()(const SourceInfo& source) const noexcept;
  };
  struct SourceEntry;
  using SourceList = std::list<SourceEntry>;
  struct StateKey {
    uint32_t rule = 0;
    uint64_t source = 0;  // SourceEntry::serial
    std::string key;
    friend bool operator==(const StateKey&, const StateKey&) = default;
  };
  struct StateKeyHash {
    std::size_t operator()(const StateKey& key) const noexcept;
  };
  struct KeyState;
  using StateList = std::list<KeyState>;

  SourceEntry& sourceEntry(const SourceInfo& source);
  // observeEvent's work for either kind of event.
  template <typename EventType>
  void observeFields(const SourceInfo& source, const EventType& event, std::string_view name,
                     std::chrono::system_clock::time_point timestamp, std::vector<Alert>& out);
  void valueSeen(SourceEntry& entry, std::chrono::system_clock::time_point timestamp,
                 const std::optional<int64_t>& step, const std::string& key, double value,
                 const std::vector<uint32_t>* thresholds, std::vector<Alert>& out);
  StateList::iterator findState(const StateKey& key);
  StateList::iterator addState(StateKey key);
  void eraseState(StateList::iterator state);
  void loss(SourceEntry& entry, std::string_view key, uint64_t lost, std::string message, std::vector<Alert>& out);
  Alert makeAlert(const SourceEntry& entry, uint32_t rule, std::chrono::system_clock::time_point time);
  std::chrono::milliseconds silenceAllowed(const AlertRule& rule, const SourceEntry& entry) const;

  std::vector<AlertRule> rules_;
  Options options_;
  Clock* clock_;
  std::vector<uint32_t> notFiniteRules_;
  std::vector<uint32_t> silentRules_;
  std::vector<uint32_t> lossRules_;
  // Threshold rules by key, and every event name that can start one of those keys ("eval" for
  // "eval.accuracy"), so events that no rule names cost one lookup.
  std::unordered_map<std::string, std::vector<uint32_t>> thresholdsByKey_;
  std::unordered_set<std::string> thresholdPrefixes_;

  // Most recently heard first.
  SourceList sources_;
  std::unordered_map<SourceInfo, SourceList::iterator, SourceHash> sourceIndex_;
  uint64_t nextSerial_ = 1;
  // Most recently touched first.
  StateList states_;
  std::unordered_map<StateKey, StateList::iterator, StateKeyHash> stateIndex_;
  std::size_t notFiniteStates_ = 0;  // of states_, those of NaN rules (none: finite values skip them)
  AlertEngineStats stats_;
};

}  // namespace livemon
