// The status bar's per-endpoint health: state, events/s, gaps and drops.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <livemon/ui/dashboard/endpoint_health.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using namespace std::chrono_literals;

transport::EndpointStatus endpoint(const std::string& name, uint64_t events) {
  transport::EndpointStatus status;
  status.endpoint = std::make_shared<const std::string>(name);
  status.events = events;
  return status;
}

transport::SourceStatus source(const std::string& endpointName, transport::SourceState state, uint64_t gaps = 0,
                               uint64_t missed = 0, std::optional<uint64_t> dropped = std::nullopt) {
  transport::SourceStatus status;
  status.source = test::makeSource("train", static_cast<int64_t>(gaps + 1));
  status.endpoint = std::make_shared<const std::string>(endpointName);
  status.state = state;
  status.gaps = gaps;
  status.missedEvents = missed;
  if (dropped) {
    transport::PublisherCounters counters;
    counters.dropped = *dropped;
    status.lastCounters = counters;
  }
  return status;
}

TEST(EndpointHealth, NothingHeardIsUnreachableAnAliveSourceConnectsSilenceIsSilentAndGoodbyeFinished) {
  const auto a = endpoint("tcp://a:1", 0);
  EXPECT_EQ(summarizeEndpoint(a, {}).state, EndpointState::Unreachable);
  EXPECT_EQ(summarizeEndpoint(a, {source("tcp://a:1", transport::SourceState::Alive)}).state, EndpointState::Connected);
  EXPECT_EQ(summarizeEndpoint(a, {source("tcp://a:1", transport::SourceState::Stale)}).state, EndpointState::Silent);
  EXPECT_EQ(summarizeEndpoint(a, {source("tcp://a:1", transport::SourceState::Gone)}).state, EndpointState::Finished);
  EXPECT_EQ(summarizeEndpoint(a, {source("tcp://a:1", transport::SourceState::Stale),
                                  source("tcp://a:1", transport::SourceState::Alive)})
                .state,
            EndpointState::Connected);
  // A source heard elsewhere does not count.
  EXPECT_EQ(summarizeEndpoint(a, {source("tcp://b:2", transport::SourceState::Alive)}).state, EndpointState::Unreachable);
  EXPECT_EQ(endpointStateName(EndpointState::Silent), "silent");
}

// A run that said goodbye is over, not broken; an endpoint nobody answers on, or whose
// publishers went quiet without a goodbye, is the trouble to look at. They read differently.
TEST(EndpointHealth, AFinishedRunIsToldApartFromAnUnreachableOrSilentEndpoint) {
  const auto name = [](const EndpointHealth& health) { return std::string(endpointStateName(health.state)); };
  const auto a = endpoint("tcp://a:1", 10);
  EXPECT_EQ(name(summarizeEndpoint(a, {source("tcp://a:1", transport::SourceState::Gone)})), "finished");
  EXPECT_EQ(name(summarizeEndpoint(a, {source("tcp://a:1", transport::SourceState::Stale)})), "silent");
  // One quiet publisher among finished ones is still the news.
  EXPECT_EQ(name(summarizeEndpoint(a, {source("tcp://a:1", transport::SourceState::Gone),
                                       source("tcp://a:1", transport::SourceState::Stale)})),
            "silent");
  // Nothing heard: unreachable while nothing is connected, waiting once a peer is.
  EXPECT_EQ(name(summarizeEndpoint(endpoint("tcp://a:1", 0), {})), "unreachable");
  transport::EndpointStatus connected = endpoint("tcp://a:1", 0);
  connected.connections = 1;
  EXPECT_EQ(name(summarizeEndpoint(connected, {})), "waiting");
  // A bound endpoint and inproc:// report no connections: they wait rather than fail.
  transport::EndpointStatus bound = endpoint("tcp://127.0.0.1:5555", 0);
  bound.mode = transport::EndpointMode::Bind;
  EXPECT_EQ(name(summarizeEndpoint(bound, {})), "waiting");
  EXPECT_EQ(name(summarizeEndpoint(endpoint("inproc://train", 0), {})), "waiting");
  EXPECT_TRUE(endpointStateIsTrouble(EndpointState::Unreachable));
  EXPECT_TRUE(endpointStateIsTrouble(EndpointState::Silent));
  EXPECT_FALSE(endpointStateIsTrouble(EndpointState::Finished));
  EXPECT_FALSE(endpointStateIsTrouble(EndpointState::Waiting));
  EXPECT_FALSE(endpointStateIsTrouble(EndpointState::Connected));
}

TEST(EndpointHealth, CarriesTheEndpointsProtocolErrors) {
  transport::EndpointStatus status = endpoint("tcp://a:1", 0);
  status.protocolErrors = 3;
  EXPECT_EQ(summarizeEndpoint(status, {}).protocolErrors, 3u);
}

TEST(EndpointHealth, SumsGapsMissedEventsAndPublisherDropsOfItsSources) {
  const EndpointHealth health = summarizeEndpoint(
      endpoint("tcp://a:1", 10), {source("tcp://a:1", transport::SourceState::Alive, 2, 30, 5),
                                  source("tcp://a:1", transport::SourceState::Alive, 1, 4),
                                  source("tcp://b:2", transport::SourceState::Alive, 100, 1000, 1000)});
  EXPECT_EQ(health.sources, 2U);
  EXPECT_EQ(health.gaps, 3U);
  EXPECT_EQ(health.missedEvents, 34U);
  EXPECT_EQ(health.publisherDrops, 5U);
  EXPECT_EQ(health.events, 10U);
}

TEST(EndpointHealth, TrackerComputesEventsPerSecondFromTheChange) {
  EndpointHealthTracker tracker;
  const auto t0 = std::chrono::steady_clock::time_point{} + 100s;
  auto first = tracker.update({endpoint("tcp://a:1", 1000)}, {}, t0);
  ASSERT_EQ(first.size(), 1U);
  EXPECT_EQ(first[0].eventsPerSecond, 0.0);
  auto second = tracker.update({endpoint("tcp://a:1", 3000)}, {}, t0 + 2s);
  EXPECT_DOUBLE_EQ(second[0].eventsPerSecond, 1000.0);
}

TEST(EndpointHealth, TheRateSpansSeveralSecondsSoOnceASecondBurstsDoNotFlicker) {
  EndpointHealthTracker tracker(5s);
  const auto t0 = std::chrono::steady_clock::time_point{} + 100s;
  uint64_t events = 0;
  std::vector<double> rates;
  for (int second = 0; second <= 12; ++second) {
    if (second % 2 == 1) events += 20;  // a burst of 20 every other second: 10/s
    rates.push_back(tracker.update({endpoint("tcp://a:1", events)}, {}, t0 + std::chrono::seconds(second))[0].eventsPerSecond);
  }
  for (std::size_t i = 6; i < rates.size(); ++i) EXPECT_NEAR(rates[i], 10.0, 2.0) << "at " << i << " s";
}

// Many sources behind one endpoint: ranks 0..n-1 of one run, the first `stale` of them silent.
std::vector<transport::SourceStatus> ranks(const std::string& endpointName, int n, int stale) {
  std::vector<transport::SourceStatus> result;
  for (int rank = 0; rank < n; ++rank) {
    transport::SourceStatus status;
    status.source = test::makeSource("train", 100 + rank, rank);
    status.endpoint = std::make_shared<const std::string>(endpointName);
    status.state = rank < stale ? transport::SourceState::Stale : transport::SourceState::Alive;
    result.push_back(status);
  }
  return result;
}

transport::SourceStatus relaySource(const std::string& endpointName, std::string run = "relay",
                                    std::vector<std::string> topics = {}) {
  transport::SourceStatus status;
  status.source = test::makeSource(std::move(run), 7);
  status.endpoint = std::make_shared<const std::string>(endpointName);
  for (std::string& topic : topics) status.lastSequence.emplace(std::move(topic), 1);
  return status;
}

// "relay tcp://head:5555 · 256 sources · 3 stale": the relay is told apart from the ranks behind
// it, which are counted, and the stale ones among them.
TEST(EndpointHealth, ARelayWithManySourcesIsSummarizedCountingTheStaleOnes) {
  std::vector<transport::SourceStatus> sources = ranks("tcp://head:5555", 256, 3);
  sources.push_back(relaySource("tcp://head:5555"));
  sources.push_back(source("tcp://other:1", transport::SourceState::Stale));  // heard elsewhere
  const EndpointHealth health = summarizeEndpoint(endpoint("tcp://head:5555", 0), sources);
  EXPECT_TRUE(health.summarized());
  EXPECT_EQ(health.sources, 257U);
  EXPECT_EQ(health.relays, 1U);
  EXPECT_EQ(health.publishers(), 256U);
  EXPECT_EQ(health.staleSources, 3U);
  EXPECT_EQ(health.state, EndpointState::Connected);
  ASSERT_EQ(health.staleNames.size(), 3U);
  EXPECT_EQ(health.staleNames[0], "train@host:100 rank 0");
  EXPECT_EQ(health.staleNames[2], "train@host:102 rank 2");
}

// A torchrun rank names its place in the job: "rank 2/256" in the status bar's stale list.
TEST(EndpointHealth, StaleRanksShowTheWorldSize) {
  std::vector<transport::SourceStatus> sources = ranks("tcp://head:5555", 4, 3);
  for (transport::SourceStatus& status : sources) {
    transport::SourceInfo info = *status.source;
    info.worldSize = 256;
    status.source = std::make_shared<const transport::SourceInfo>(info);
  }
  const EndpointHealth health = summarizeEndpoint(endpoint("tcp://head:5555", 0), sources);
  ASSERT_EQ(health.staleNames.size(), 3U);
  EXPECT_EQ(health.staleNames[2], "train@host:102 rank 2/256");
}

// Thousands of stale ranks: the summary names a few and counts the rest.
TEST(EndpointHealth, OnlyTheFirstStaleSourcesAreNamed) {
  std::vector<transport::SourceStatus> sources = ranks("tcp://head:5555", 2000, 1500);
  const EndpointHealth health = summarizeEndpoint(endpoint("tcp://head:5555", 0), sources);
  EXPECT_EQ(health.staleSources, 1500U);
  EXPECT_EQ(health.staleNames.size(), kMaxNamedStaleSources);
  EXPECT_EQ(health.relays, 0U);
}

// A handful of publishers on one endpoint keep the plain line; more than that, or a relay even
// with one rank behind it, read as a summary.
TEST(EndpointHealth, ManySourcesOrARelayAreSummarizedAHandfulAreNot) {
  const auto a = endpoint("tcp://a:1", 0);
  EXPECT_FALSE(summarizeEndpoint(a, ranks("tcp://a:1", static_cast<int>(kSummarizeAboveSources), 0)).summarized());
  EXPECT_TRUE(summarizeEndpoint(a, ranks("tcp://a:1", static_cast<int>(kSummarizeAboveSources) + 1, 0)).summarized());
  std::vector<transport::SourceStatus> oneRank = ranks("tcp://a:1", 1, 0);
  oneRank.push_back(relaySource("tcp://a:1"));
  const EndpointHealth relayed = summarizeEndpoint(a, oneRank);
  EXPECT_TRUE(relayed.summarized());
  EXPECT_EQ(relayed.publishers(), 1U);
  EXPECT_FALSE(summarizeEndpoint(a, {}).summarized());
}

// A relay is recognised by its run name, or, renamed, by the livemon.relay.* Stats it sends; a run
// that merely logs other livemon.* Stats is not one.
TEST(EndpointHealth, ARelayIsKnownByItsRunNameOrItsStats) {
  EXPECT_TRUE(isRelaySource(relaySource("tcp://a:1")));
  EXPECT_TRUE(isRelaySource(relaySource("tcp://a:1", "head-relay", {"livemon.relay.down_messages"})));
  EXPECT_FALSE(isRelaySource(relaySource("tcp://a:1", "train", {"livemon.other", "livemon.relayx", "loss"})));
  EXPECT_FALSE(isRelaySource(relaySource("tcp://a:1", "relays")));

  // Two relays chained: the head relay and a node relay are both heard on the head's endpoint.
  const std::set<std::string> relays = relayEndpoints(
      {relaySource("tcp://head:5555"), relaySource("tcp://head:5555", "node-1", {"livemon.relay.up_bytes"}),
       source("tcp://gpu-3:5555", transport::SourceState::Alive)});
  EXPECT_EQ(relays, (std::set<std::string>{"tcp://head:5555"}));
}

}  // namespace
}  // namespace livemon::ui
