// Fuzzes parseAlertRule, which reads `livemonctl watch --rule` and the dashboard's rules, and the
// engine the accepted rule drives.
// Input: the rule's text, whole.
// Properties beyond "no crash, no undefined behaviour": a refusal says why and points inside the
// text; an accepted rule keeps its text (without surrounding blanks), reads back the same from it,
// and holds only values in range; a threshold rule alerts exactly when a value crosses it.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <livemon/alert_rules.h>
#include <livemon/clock.h>

#include "fuzz_support.h"

namespace {

using namespace livemon;

bool sameRule(const AlertRule& a, const AlertRule& b) {
  return a.kind == b.kind && a.text == b.text && a.key == b.key && a.comparison == b.comparison &&
         (a.threshold == b.threshold) && a.consecutive == b.consecutive && a.silentAfter == b.silentAfter;
}

void checkEngine(const AlertRule& rule) {
  ManualClock clock;
  AlertEngineOptions options;
  options.clock = &clock;
  options.maxStates = 4;
  AlertEngine engine({rule}, options);
  AlertSource source;
  source.run = "fuzz";
  std::vector<Alert> alerts;
  const std::string key = rule.kind == AlertRuleKind::Threshold ? rule.key : "loss.mean";
  bool crossedBefore = false;
  for (double value : {rule.threshold, std::nextafter(rule.threshold, 0.0), -rule.threshold,
                       std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    const Event event{std::string(kStatEventName), clock.wallNow(), {{key, value}}};
    alerts.clear();
    engine.observeEvent(source, event, alerts);
    if (rule.kind == AlertRuleKind::Threshold) {
      // One alert per crossing: when a single value is enough, the first crossing value tells.
      const bool crosses = rule.crosses(value);
      const bool first = crosses && !crossedBefore && rule.consecutive == 1;
      LIVEMON_FUZZ_CHECK(alerts.size() == (first ? 1u : 0u) || (crosses && rule.consecutive > 1 && alerts.size() <= 1));
      crossedBefore = crosses;
    }
    if (rule.kind == AlertRuleKind::NotFinite) LIVEMON_FUZZ_CHECK(alerts.size() <= 1);
    for (const Alert& alert : alerts) LIVEMON_FUZZ_CHECK(alert.rule == rule.text && alert.key == key);
  }
  clock.advance(std::chrono::hours(24 * 8));
  alerts.clear();
  engine.checkSilence(alerts);
  LIVEMON_FUZZ_CHECK(alerts.size() == (rule.kind == AlertRuleKind::Silent ? 1u : 0u));
  LIVEMON_FUZZ_CHECK(engine.stats().states <= 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  AlertRuleError error;
  const std::optional<AlertRule> rule = parseAlertRule(text, &error);
  if (!rule) {
    LIVEMON_FUZZ_CHECK(!error.reason.empty());
    LIVEMON_FUZZ_CHECK(error.position <= text.size());
    return 0;
  }
  LIVEMON_FUZZ_CHECK(error.reason.empty());
  LIVEMON_FUZZ_CHECK(!rule->text.empty() && text.find(rule->text) != std::string::npos);
  const std::optional<AlertRule> again = parseAlertRule(rule->text);
  LIVEMON_FUZZ_CHECK(again.has_value() && sameRule(*rule, *again));
  switch (rule->kind) {
    case AlertRuleKind::Threshold:
      LIVEMON_FUZZ_CHECK(!rule->key.empty() && std::isfinite(rule->threshold));
      LIVEMON_FUZZ_CHECK(rule->consecutive >= 1 && rule->consecutive <= kMaxAlertConsecutive);
      break;
    case AlertRuleKind::Silent:
      if (rule->silentAfter) LIVEMON_FUZZ_CHECK(*rule->silentAfter >= kMinSilentAfter && *rule->silentAfter <= kMaxSilentAfter);
      break;
    default: LIVEMON_FUZZ_CHECK(rule->key.empty()); break;
  }
  checkEngine(*rule);
  return 0;
}
