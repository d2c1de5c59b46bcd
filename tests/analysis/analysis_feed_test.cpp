// The feed from a subscriber's deliveries to the analyses, with plain values and a ManualClock:
// which alerts it raises, and which source and endpoint each one is told to come from.
#include <livemon/analysis_feed.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace livemon {
namespace {

using namespace std::chrono_literals;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::shared_ptr<const transport::SourceInfo> sourceInfo(int64_t rank, uint64_t instanceId = 7) {
  transport::SourceInfo info;
  info.run = "job";
  info.host = "node";
  info.pid = 40 + rank;
  info.rank = rank;
  info.worldSize = 8;
  info.instanceId = instanceId;
  return std::make_shared<const transport::SourceInfo>(info);
}

transport::ReceivedEvent statEvent(std::shared_ptr<const transport::SourceInfo> source,
                                   std::shared_ptr<const std::string> endpoint, std::string key, double value) {
  transport::ReceivedEvent received;
  received.event = Event{std::string(kStatEventName), std::chrono::system_clock::time_point(1'700'000'000s),
                         {{std::move(key), value}}};
  received.source = std::move(source);
  received.endpoint = std::move(endpoint);
  return received;
}

// Calls f(const ReceivedEventView&) with `received` lent as a Subscriber lends it: its event
// encoded into a message and read back borrowed.
template <typename F>
void lend(const transport::ReceivedEvent& received, F&& f) {
  const std::string payload =
      transport::encodeEventsPayload(*received.source, received.sequence, received.event.name, {received.event});
  transport::EventBatchDecoder decoder;
  const transport::DecodeStatus status = decoder.decode(received.event.name, payload, [&](const transport::EventBatchView& batch) {
    f(transport::ReceivedEventView{batch[0], batch, received.source, received.sequence, received.endpoint,
                                   received.receivedAt, received.fromHistory, true});
  });
  ASSERT_EQ(status, transport::DecodeStatus::Ok);
}

// `missed` events of "step" from `source` never arrived.
transport::GapInfo gapOf(std::shared_ptr<const transport::SourceInfo> source, uint64_t missed) {
  transport::GapInfo gap;
  gap.source = std::move(source);
  gap.topic = "step";
  gap.expected = 10;
  gap.received = 10 + missed;
  return gap;
}

transport::SourceStatus heard(std::shared_ptr<const transport::SourceInfo> source,
                              std::shared_ptr<const std::string> endpoint, std::chrono::steady_clock::time_point at,
                              uint64_t dropped) {
  transport::SourceStatus status;
  status.source = std::move(source);
  status.endpoint = std::move(endpoint);
  status.lastSeen = at;
  transport::PublisherCounters counters;
  counters.interval = 1000ms;
  counters.dropped = dropped;
  status.lastCounters = counters;
  return status;
}

std::vector<AlertRule> rules(std::initializer_list<const char*> texts) {
  std::vector<AlertRule> parsed;
  for (const char* text : texts) parsed.push_back(parseAlertRuleOrThrow(text));
  return parsed;
}

class AnalysisFeedTest : public ::testing::Test {
 protected:
  AlertEngine engine(std::initializer_list<const char*> texts) {
    AlertEngineOptions options;
    options.clock = &clock_;
    return AlertEngine(rules(texts), options);
  }

  ManualClock clock_;
  std::shared_ptr<const std::string> endpoint_ = std::make_shared<const std::string>("tcp://127.0.0.1:5555");
};

TEST(AnalysisFeedSource, IsThePublishersOwnIdentityAndNamesAMissingOneUnknown) {
  const auto info = sourceInfo(3);
  EXPECT_EQ(&AnalysisFeed::source(info), info.get()) << "the subscriber's SourceInfo itself, not a copy";
  SourceInfo unknown;
  unknown.run = "unknown";
  EXPECT_EQ(AnalysisFeed::source(nullptr), unknown);
}

TEST_F(AnalysisFeedTest, AnEventsAlertComesFromItsSourceAndEndpoint) {
  AlertEngine alerts = engine({"nan"});
  AnalysisFeed feed(&alerts);
  const auto source = sourceInfo(1);
  feed.event(statEvent(source, endpoint_, "loss.mean", 1.0));
  EXPECT_TRUE(feed.takeAlerts().empty());

  feed.event(statEvent(source, endpoint_, "loss.mean", kNaN));
  const std::vector<FedAlert> fed = feed.takeAlerts();
  ASSERT_EQ(fed.size(), 1u);
  EXPECT_EQ(fed[0].alert.kind, AlertRuleKind::NotFinite);
  EXPECT_EQ(fed[0].alert.key, "loss.mean");
  EXPECT_EQ(fed[0].alert.source, *source);
  EXPECT_EQ(fed[0].source, source);
  EXPECT_EQ(fed[0].endpoint, endpoint_);
  EXPECT_TRUE(feed.takeAlerts().empty()) << "taken alerts are gone";
}

TEST_F(AnalysisFeedTest, AGapIsALossFromItsSourceWithNoEndpoint) {
  AlertEngine alerts = engine({"loss"});
  AnalysisFeed feed(&alerts);
  const transport::GapInfo gap = gapOf(sourceInfo(2), 4);
  feed.gap(gap);
  const std::vector<FedAlert> fed = feed.takeAlerts();
  ASSERT_EQ(fed.size(), 1u);
  EXPECT_EQ(fed[0].alert.kind, AlertRuleKind::Loss);
  EXPECT_EQ(fed[0].alert.value, 4.0);
  EXPECT_EQ(fed[0].source, gap.source);
  EXPECT_EQ(fed[0].endpoint, nullptr);
}

TEST_F(AnalysisFeedTest, TheSourceTableTellsWhatPublishersDroppedAndWhoFellSilent) {
  AlertEngine alerts = engine({"loss", "silent 2s"});
  AnalysisFeed feed(&alerts);
  const auto quiet = sourceInfo(0);
  const auto talking = sourceInfo(1);
  const auto start = clock_.now();
  feed.sources({heard(quiet, endpoint_, start, 0), heard(talking, endpoint_, start, 0)});
  EXPECT_TRUE(feed.takeAlerts().empty()) << "the first drop count is the baseline";

  clock_.advance(1s);
  feed.sources({heard(quiet, endpoint_, start, 0), heard(talking, endpoint_, clock_.now(), 5)});
  std::vector<FedAlert> fed = feed.takeAlerts();
  ASSERT_EQ(fed.size(), 1u);
  EXPECT_EQ(fed[0].alert.kind, AlertRuleKind::Loss);
  EXPECT_EQ(fed[0].alert.key, "publisher.dropped");
  EXPECT_EQ(fed[0].source, talking);
  EXPECT_EQ(fed[0].endpoint, endpoint_);

  clock_.advance(2s);
  feed.sources({heard(quiet, endpoint_, start, 0), heard(talking, endpoint_, clock_.now(), 5)});
  fed = feed.takeAlerts();
  ASSERT_EQ(fed.size(), 1u);
  EXPECT_EQ(fed[0].alert.kind, AlertRuleKind::Silent);
  EXPECT_EQ(fed[0].source, quiet) << "a silent source is found in the table it is still in";
  EXPECT_EQ(fed[0].endpoint, endpoint_);
}

TEST_F(AnalysisFeedTest, AGoodbyeIsNoSilence) {
  AlertEngine alerts = engine({"silent 2s"});
  AnalysisFeed feed(&alerts);
  const auto source = sourceInfo(0);
  feed.sources({heard(source, endpoint_, clock_.now(), 0)});
  transport::SourceChange change;
  change.source = source;
  change.state = transport::SourceState::Gone;
  feed.sourceChanged(change);
  clock_.advance(5s);
  transport::SourceStatus gone = heard(source, endpoint_, clock_.now() - 5s, 0);
  gone.state = transport::SourceState::Gone;
  feed.sources({gone});
  EXPECT_TRUE(feed.takeAlerts().empty());
}

TEST_F(AnalysisFeedTest, TheCallbacksFeedLikeTheCalls) {
  AlertEngine alerts = engine({"nan", "loss"});
  AnalysisFeed feed(&alerts);
  const transport::SubscriberCallbacks callbacks = feed.callbacks();
  const transport::ReceivedEvent received = statEvent(sourceInfo(1), endpoint_, "grad.norm", kNaN);
  ASSERT_TRUE(callbacks.onEventView) << "events are lent";
  lend(received, [&](const transport::ReceivedEventView& lent) { callbacks.onEventView(lent); });
  callbacks.onGap(gapOf(sourceInfo(1), 1));
  const std::vector<FedAlert> fed = feed.takeAlerts();
  ASSERT_EQ(fed.size(), 2u);
  EXPECT_EQ(fed[0].alert.kind, AlertRuleKind::NotFinite);
  EXPECT_EQ(fed[1].alert.kind, AlertRuleKind::Loss);
}

// A lent event raises what its owning copy raises, with the same key, value, step and time, and
// scores its rank alike.
TEST_F(AnalysisFeedTest, ALentEventIsObservedAsItsOwningCopy) {
  AlertEngine owningAlerts = engine({"nan", "loss.mean > 2", "eval.acc < 0.5"});
  AlertEngine lentAlerts = engine({"nan", "loss.mean > 2", "eval.acc < 0.5"});
  RankScorerOptions options;
  options.key = "loss.mean";
  options.clock = &clock_;
  RankScorer owningRanks(options);
  RankScorer lentRanks(options);
  AnalysisFeed owning(&owningAlerts, &owningRanks);
  AnalysisFeed lent(&lentAlerts, &lentRanks);
  std::vector<transport::ReceivedEvent> events;
  for (int64_t rank = 0; rank < 3; ++rank) {
    events.push_back(statEvent(sourceInfo(rank), endpoint_, "loss.mean", 1.0 + static_cast<double>(rank)));
  }
  events.push_back(statEvent(sourceInfo(1), endpoint_, "loss.mean", kNaN));
  events.back().event.step = 12;
  transport::ReceivedEvent eval = statEvent(sourceInfo(2), endpoint_, "unused", 0.0);
  eval.event.name = "eval";
  eval.event.data = {{"acc", 0.25}, {"step", int64_t{30}}, {"note", std::string("text")}};
  events.push_back(eval);
  for (const transport::ReceivedEvent& received : events) {
    owning.event(received);
    lend(received, [&](const transport::ReceivedEventView& view) { lent.event(view); });
  }
  const std::vector<FedAlert> fromOwning = owning.takeAlerts();
  const std::vector<FedAlert> fromLent = lent.takeAlerts();
  ASSERT_EQ(fromOwning.size(), 3u) << "loss.mean 3 > 2, NaN, eval.acc 0.25 < 0.5";
  ASSERT_EQ(fromLent.size(), fromOwning.size());
  for (std::size_t i = 0; i < fromOwning.size(); ++i) {
    EXPECT_EQ(fromLent[i].alert.kind, fromOwning[i].alert.kind) << i;
    EXPECT_EQ(fromLent[i].alert.key, fromOwning[i].alert.key) << i;
    EXPECT_EQ(fromLent[i].alert.step, fromOwning[i].alert.step) << i;
    EXPECT_EQ(fromLent[i].alert.time, fromOwning[i].alert.time) << i;
    EXPECT_EQ(fromLent[i].alert.message, fromOwning[i].alert.message) << i;
    EXPECT_EQ(fromLent[i].source, fromOwning[i].source) << i;
  }
  EXPECT_EQ(fromLent[1].alert.step, std::optional<int64_t>(12));
  EXPECT_EQ(fromLent[2].alert.step, std::optional<int64_t>(30)) << "a step stated in a field";
  const std::vector<RankWindow> owningWindows = owningRanks.evaluate();
  const std::vector<RankWindow> lentWindows = lentRanks.evaluate();
  ASSERT_EQ(lentWindows.size(), 1u);
  ASSERT_EQ(owningWindows.size(), 1u);
  ASSERT_EQ(lentWindows[0].ranks.size(), owningWindows[0].ranks.size());
  for (std::size_t i = 0; i < lentWindows[0].ranks.size(); ++i) {
    EXPECT_EQ(lentWindows[0].ranks[i].rank, owningWindows[0].ranks[i].rank);
    const double lentValue = lentWindows[0].ranks[i].value;
    const double owningValue = owningWindows[0].ranks[i].value;
    EXPECT_TRUE(lentValue == owningValue || (std::isnan(lentValue) && std::isnan(owningValue))) << i;
  }
}

TEST_F(AnalysisFeedTest, AnotherEngineTakesOverWithItsRules) {
  AlertEngine first = engine({"loss"});
  AlertEngine second = engine({"nan"});
  AnalysisFeed feed(&first);
  feed.event(statEvent(sourceInfo(1), endpoint_, "loss.mean", kNaN));
  EXPECT_TRUE(feed.takeAlerts().empty());
  feed.setAlertEngine(&second);
  feed.event(statEvent(sourceInfo(1), endpoint_, "loss.mean", kNaN));
  EXPECT_EQ(feed.takeAlerts().size(), 1u);
}

TEST_F(AnalysisFeedTest, RanksAreScoredFromTheEventsAndLeaveWithTheirGoodbye) {
  RankScorerOptions options;
  options.key = "compute.mean";
  options.clock = &clock_;
  RankScorer scorer(options);
  AnalysisFeed feed(nullptr, &scorer);
  const auto fast = sourceInfo(0);
  const auto slow = sourceInfo(1);
  feed.event(statEvent(fast, endpoint_, "compute.mean", 100.0));
  feed.event(statEvent(slow, endpoint_, "compute.mean", 300.0));
  std::vector<RankWindow> windows = scorer.evaluate();
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].run, "job");
  ASSERT_EQ(windows[0].ranks.size(), 2u);
  EXPECT_EQ(windows[0].ranks[0].rank, 1) << "the slow rank scores worst";

  transport::SourceChange change;
  change.source = slow;
  change.state = transport::SourceState::Gone;
  feed.sourceChanged(change);
  windows = scorer.evaluate();
  ASSERT_EQ(windows.size(), 1u);
  ASSERT_EQ(windows[0].ranks.size(), 1u);
  EXPECT_EQ(windows[0].ranks[0].rank, 0);
  EXPECT_TRUE(feed.takeAlerts().empty()) << "no engine, no alerts";
}

}  // namespace
}  // namespace livemon
