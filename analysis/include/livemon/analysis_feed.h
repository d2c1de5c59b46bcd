#pragma once

#include <memory>
#include <string>
#include <vector>

#include <livemon/alert_rules.h>
#include <livemon/rank_scores.h>
#include <livemon/transport/subscriber.h>

// What a Subscriber delivers, fed to the analyses: the one glue between a subscriber and an
// AlertEngine or a RankScorer, shared by `livemonctl watch`, `livemonctl ranks` and the
// dashboard's ingest thread.
namespace livemon {

// Thread-safety: a plain value type. An alert, with the subscriber's record of the source that
// raised it.
struct FedAlert {
  Alert alert;
  // The SourceInfo the subscriber shares for that source; null when none is known (a source the
  // subscriber's table no longer holds).
  std::shared_ptr<const transport::SourceInfo> source;
  // Where the source was heard; null for a sequence gap.
  std::shared_ptr<const std::string> endpoint;
};

// Not thread-safe: one owner at a time; one thread, the one that polls the Subscriber.
//
// Feeds an AlertEngine, a RankScorer or both with what a Subscriber delivers: events, sequence
// gaps and goodbyes through callbacks(), and after each poll the subscriber's source table
// (sources()), which tells who was heard (their heartbeats), what the publishers dropped
// themselves, and so who fell silent. The alerts raised wait, with their sources, for
// takeAlerts(): at most those of one poll when it is called after every poll.
//
// The analyses take the subscriber's SourceInfo as it is: nothing is converted per event.
class AnalysisFeed {
 public:
  // Either may be null; what is given must outlive the feed (or be replaced first).
  explicit AnalysisFeed(AlertEngine* alerts, RankScorer* ranks = nullptr) noexcept;

  // Feeds another engine from now on (one with new rules); null for none.
  void setAlertEngine(AlertEngine* alerts) noexcept { alerts_ = alerts; }

  void event(const transport::ReceivedEvent& event);
  void event(const transport::ReceivedEventView& event);
  void gap(const transport::GapInfo& gap);
  void sourceChanged(const transport::SourceChange& change);
  // After a poll: the subscriber's sources (Subscriber::sources()), then a look for silent ones.
  void sources(const std::vector<transport::SourceStatus>& sources);

  // Callbacks for Subscriber::poll() that feed this: events (lent, onEventView), gaps and source
  // changes. They refer to this feed, which must outlive them.
  transport::SubscriberCallbacks callbacks();

  // The alerts raised since the last call, oldest first.
  std::vector<FedAlert> takeAlerts();

  // `info` itself; a missing source (null) reads as one whose run is "unknown".
  static const SourceInfo& source(const std::shared_ptr<const SourceInfo>& info);

 private:
  // event()'s work for either kind of event.
  template <typename Received>
  void observe(const Received& event);
  // Moves the alerts just raised to the fed ones, from `info` heard on `endpoint`.
  void raisedBy(const std::shared_ptr<const transport::SourceInfo>& info,
                const std::shared_ptr<const std::string>& endpoint);

  AlertEngine* alerts_;
  RankScorer* ranks_;
  std::vector<Alert> raised_;  // by the engine call in progress
  std::vector<FedAlert> fed_;
};

}  // namespace livemon
