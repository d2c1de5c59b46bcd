#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <livemon/alert_rules.h>
#include <livemon/analysis_feed.h>
#include <livemon/clock.h>
#include <livemon/transport/subscriber.h>
#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/data/ingest_batch.h>

namespace livemon::ui {

// The event name of the log row each alert gets.
inline constexpr std::string_view kAlertEventName = "livemon.alert";

// The rules a dashboard always runs, beside the user's: "nan", "silent", "loss".
std::vector<AlertRule> builtInAlertRules();

// Not thread-safe: one owner at a time (IngestWorker serializes it with its converter).
// Feeds an AlertEngine with what the ingest thread sees (events, gaps, goodbyes, the sources'
// heartbeats; through the AnalysisFeed that `livemonctl watch` uses too) and stages each alert it
// raises into the IngestBatch, behind the data that triggered it: a StagedAlert, and a log row
// named kAlertEventName from the alert's source, made by the same EventConverter as every other
// row (its fields are strings, so nothing is charted).
//
// Memory is bounded as the engine's is; alerts waiting for stage() are at most those of one poll.
class AlertFeed {
 public:
  // `clock` (nullptr: the system clock) measures silence; it must outlive the feed.
  explicit AlertFeed(std::vector<AlertRule> rules, Clock* clock = nullptr);

  // Starts every rule afresh with these (a rule's state is not carried over).
  void setRules(std::vector<AlertRule> rules);
  const std::vector<AlertRule>& rules() const noexcept { return engine_->rules(); }

  // Before the converter sees the event (converting may move its data).
  void event(const transport::ReceivedEvent& received) { feed_.event(received); }
  void event(const transport::ReceivedEventView& received) { feed_.event(received); }
  void gap(const transport::GapInfo& gap) { feed_.gap(gap); }
  void sourceChanged(const transport::SourceChange& change) { feed_.sourceChanged(change); }
  // The subscriber's source table (what heartbeats say), then a look for silent sources.
  void sources(const std::vector<transport::SourceStatus>& sources) { feed_.sources(sources); }

  // Moves the alerts raised so far into `out`, a log row each through `converter`.
  void stage(EventConverter& converter, IngestBatch& out);

 private:
  Clock* clock_;
  std::unique_ptr<AlertEngine> engine_;
  AnalysisFeed feed_;
};

}  // namespace livemon::ui
