#include <livemon/analysis_feed.h>

#include <optional>
#include <utility>

namespace livemon {

AnalysisFeed::AnalysisFeed(AlertEngine* alerts, RankScorer* ranks) noexcept : alerts_(alerts), ranks_(ranks) {}

const SourceInfo& AnalysisFeed::source(const std::shared_ptr<const SourceInfo>& info) {
  static const SourceInfo unknown = [] {
    SourceInfo named;
    named.run = "unknown";
    return named;
  }();
  return info ? *info : unknown;
}

void AnalysisFeed::raisedBy(const std::shared_ptr<const transport::SourceInfo>& info,
                            const std::shared_ptr<const std::string>& endpoint) {
  for (Alert& alert : raised_) fed_.push_back(FedAlert{std::move(alert), info, endpoint});
  raised_.clear();
}

template <typename Received>
void AnalysisFeed::observe(const Received& event) {
  const SourceInfo& from = source(event.source);
  if (ranks_ != nullptr) ranks_->observeEvent(from, event.event);
  if (alerts_ == nullptr) return;
  alerts_->observeEvent(from, event.event, raised_);
  raisedBy(event.source, event.endpoint);
}

void AnalysisFeed::event(const transport::ReceivedEvent& event) { observe(event); }

void AnalysisFeed::event(const transport::ReceivedEventView& event) { observe(event); }

void AnalysisFeed::gap(const transport::GapInfo& gap) {
  if (alerts_ == nullptr) return;
  alerts_->observeGap(source(gap.source), gap.topic, gap.missed(), raised_);
  raisedBy(gap.source, nullptr);
}

void AnalysisFeed::sourceChanged(const transport::SourceChange& change) {
  if (change.state != transport::SourceState::Gone) return;
  const SourceInfo& from = source(change.source);
  if (ranks_ != nullptr) ranks_->observeGoodbye(from);
  if (alerts_ != nullptr) alerts_->observeGoodbye(from);
}

void AnalysisFeed::sources(const std::vector<transport::SourceStatus>& sources) {
  if (alerts_ == nullptr) return;
  for (const transport::SourceStatus& status : sources) {
    if (status.state == transport::SourceState::Gone || !status.source) continue;
    const SourceInfo& from = source(status.source);
    std::optional<std::chrono::milliseconds> interval;
    if (status.lastCounters) interval = status.lastCounters->interval;
    alerts_->observeHeard(from, status.lastSeen, interval);
    if (status.lastCounters) {
      alerts_->observePublisherDropped(from, status.lastCounters->dropped, raised_);
      raisedBy(status.source, status.endpoint);
    }
  }
  alerts_->checkSilence(raised_);
  // A silent source is still in the table (not Gone): its SourceInfo is found there.
  for (Alert& alert : raised_) {
    FedAlert fed{std::move(alert), nullptr, nullptr};
    for (const transport::SourceStatus& status : sources) {
      if (status.source && source(status.source) == fed.alert.source) {
        fed.source = status.source;
        fed.endpoint = status.endpoint;
        break;
      }
    }
    fed_.push_back(std::move(fed));
  }
  raised_.clear();
}

transport::SubscriberCallbacks AnalysisFeed::callbacks() {
  transport::SubscriberCallbacks callbacks;
  callbacks.onEventView = [this](const transport::ReceivedEventView& received) { event(received); };
  callbacks.onSourceChange = [this](const transport::SourceChange& change) { sourceChanged(change); };
  callbacks.onGap = [this](const transport::GapInfo& info) { gap(info); };
  return callbacks;
}

std::vector<FedAlert> AnalysisFeed::takeAlerts() {
  std::vector<FedAlert> taken;
  taken.swap(fed_);
  return taken;
}

}  // namespace livemon
