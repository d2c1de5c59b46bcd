#include <livemon/ui/ingest/alert_feed.h>

#include <optional>
#include <utility>

namespace livemon::ui {

namespace {

AlertEngineOptions engineOptions(Clock* clock) {
  AlertEngineOptions options;
  options.clock = clock;
  return options;
}

}  // namespace

std::vector<AlertRule> builtInAlertRules() {
  std::vector<AlertRule> rules;
  for (const char* text : {"nan", "silent", "loss"}) rules.push_back(parseAlertRuleOrThrow(text));
  return rules;
}

AlertFeed::AlertFeed(std::vector<AlertRule> rules, Clock* clock)
    : clock_(clock),
      engine_(std::make_unique<AlertEngine>(std::move(rules), engineOptions(clock))),
      feed_(engine_.get()) {}

void AlertFeed::setRules(std::vector<AlertRule> rules) {
  engine_ = std::make_unique<AlertEngine>(std::move(rules), engineOptions(clock_));
  feed_.setAlertEngine(engine_.get());
}

void AlertFeed::stage(EventConverter& converter, IngestBatch& out) {
  for (FedAlert& fed : feed_.takeAlerts()) {
    Alert& alert = fed.alert;
    StagedAlert staged;
    if (fed.source) {
      // The log row, from the alert's source: the converter hands out the name's id and the
      // source's (the one its data already has). Strings only, so it charts nothing.
      transport::ReceivedEvent row;
      row.source = fed.source;
      row.endpoint = fed.endpoint;
      row.event.name = std::string(kAlertEventName);
      row.event.timestamp = alert.time;
      row.event.data.emplace("alert", std::string(alertRuleKindName(alert.kind)));
      row.event.data.emplace("rule", alert.rule);
      if (!alert.key.empty()) row.event.data.emplace("key", alert.key);
      row.event.data.emplace("message", alert.message);
      const std::size_t rows = out.log.size();
      const uint64_t events = out.events;
      converter.convert(row, out);
      out.events = events;  // not an event any peer sent
      if (out.log.size() > rows) staged.source = out.log.back().source;
    }
    staged.alert = std::move(alert);
    out.alerts.push_back(std::move(staged));
  }
}

}  // namespace livemon::ui
