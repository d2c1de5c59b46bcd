#include <livemon/ui/ingest/alert_feed.h>

#include <optional>
#include <utility>

namespace livemon::ui {

namespace {

AlertSource toAlertSource(const transport::SourceInfo& info) {
  AlertSource source;
  source.run = info.run;
  source.host = info.host;
  source.pid = info.pid;
  source.rank = info.rank;
  source.instanceId = info.instanceId;
  return source;
}

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
    : clock_(clock), engine_(std::make_unique<AlertEngine>(std::move(rules), engineOptions(clock))) {}

void AlertFeed::setRules(std::vector<AlertRule> rules) {
  engine_ = std::make_unique<AlertEngine>(std::move(rules), engineOptions(clock_));
}

const AlertSource& AlertFeed::alertSource(const std::shared_ptr<const transport::SourceInfo>& info) {
  static const transport::SourceInfo unknown{"unknown", "", 0, {}, 0, {}, {}, {}};
  if (info != lastInfo_ || !info) {
    lastInfo_ = info;
    lastSource_ = toAlertSource(info ? *info : unknown);
  }
  return lastSource_;
}

void AlertFeed::raisedBy(std::size_t from, const std::shared_ptr<const transport::SourceInfo>& info,
                         const std::shared_ptr<const std::string>& endpoint) {
  for (std::size_t i = from; i < raised_.size(); ++i) {
    raisedSources_.push_back(info);
    raisedEndpoints_.push_back(endpoint);
  }
}

void AlertFeed::event(const transport::ReceivedEvent& received) {
  const std::size_t before = raised_.size();
  engine_->observeEvent(alertSource(received.source), received.event, raised_);
  raisedBy(before, received.source, received.endpoint);
}

void AlertFeed::gap(const transport::GapInfo& gap) {
  const std::size_t before = raised_.size();
  engine_->observeGap(alertSource(gap.source), gap.topic, gap.missed(), raised_);
  raisedBy(before, gap.source, nullptr);
}

void AlertFeed::sourceChanged(const transport::SourceChange& change) {
  if (change.state == transport::SourceState::Gone) engine_->observeGoodbye(alertSource(change.source));
}

void AlertFeed::sources(const std::vector<transport::SourceStatus>& sources) {
  for (const transport::SourceStatus& status : sources) {
    if (status.state == transport::SourceState::Gone || !status.source) continue;
    const AlertSource& source = alertSource(status.source);
    std::optional<std::chrono::milliseconds> interval;
    if (status.lastCounters) interval = status.lastCounters->interval;
    engine_->observeHeard(source, status.lastSeen, interval);
    if (status.lastCounters) {
      const std::size_t before = raised_.size();
      engine_->observePublisherDropped(source, status.lastCounters->dropped, raised_);
      raisedBy(before, status.source, status.endpoint);
    }
  }
  const std::size_t before = raised_.size();
  engine_->checkSilence(raised_);
  // A silent source is still in the table (not Gone): its SourceInfo is found there.
  for (std::size_t i = before; i < raised_.size(); ++i) {
    std::shared_ptr<const transport::SourceInfo> info;
    std::shared_ptr<const std::string> endpoint;
    for (const transport::SourceStatus& status : sources) {
      if (status.source && alertSource(status.source) == raised_[i].source) {
        info = status.source;
        endpoint = status.endpoint;
        break;
      }
    }
    raisedSources_.push_back(std::move(info));
    raisedEndpoints_.push_back(std::move(endpoint));
  }
}

void AlertFeed::stage(EventConverter& converter, IngestBatch& out) {
  for (std::size_t i = 0; i < raised_.size(); ++i) {
    Alert& alert = raised_[i];
    StagedAlert staged;
    if (raisedSources_[i]) {
      // The log row, from the alert's source: the converter hands out the name's id and the
      // source's (the one its data already has). Strings only, so it charts nothing.
      transport::ReceivedEvent row;
      row.source = raisedSources_[i];
      row.endpoint = raisedEndpoints_[i];
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
  raised_.clear();
  raisedSources_.clear();
  raisedEndpoints_.clear();
}

}  // namespace livemon::ui
