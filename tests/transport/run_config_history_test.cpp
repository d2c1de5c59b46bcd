// A run's config reaches every reader: a Publisher sends the process's config however the two
// were made in time, and a late joiner still receives it after the history's byte bound dropped
// it, from a publisher and through a relay, exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include <livemon/event_handler.h>
#include <livemon/run_config.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/relay.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

using test::makeEvent;
using test::pollUntil;
using test::waitUntil;

void logSteps(int first, int count) {
  for (int i = first; i < first + count; ++i) logEvent(makeEvent("step", {{"i", int64_t{i}}}));
}

// The process's config is global: each test starts and ends without one.
class RunConfigHistory : public ::testing::Test {
 protected:
  RunConfigHistory() { clearRunConfig(); }
  ~RunConfigHistory() override { clearRunConfig(); }
};

// What a late joiner received: the configs, whether each came in the history, and how many step
// events came before it.
struct Joined {
  std::vector<RunConfig> configs;
  std::vector<bool> fromHistory;
  std::vector<std::size_t> stepsBefore;
  std::size_t steps = 0;
  std::vector<HistoryStatus> histories;

  SubscriberCallbacks callbacks() {
    SubscriberCallbacks callbacks;
    callbacks.onEvent = [this](ReceivedEvent& event) {
      if (event.event.name == "step") ++steps;
      if (const auto config = runConfigOf(event.event)) {
        configs.push_back(*config);
        fromHistory.push_back(event.fromHistory);
        stepsBefore.push_back(steps);
      }
    };
    callbacks.onHistory = [this](const HistoryStatus& status) { histories.push_back(status); };
    return callbacks;
  }

  // Joins `endpoint` with history and takes the answer and some of what follows it.
  void join(const std::string& endpoint) {
    SubscriberOptions options = test::connectTo({endpoint});
    options.history = true;
    Subscriber subscriber(options);
    const SubscriberCallbacks taken = callbacks();
    ASSERT_TRUE(pollUntil(subscriber, taken, [&] { return !histories.empty() && steps > 0; }));
    EXPECT_EQ(histories.front().outcome, HistoryOutcome::Received) << histories.front().error;
    EXPECT_EQ(subscriber.stats().duplicates, 0u);
    EXPECT_EQ(subscriber.stats().conflicts, 0u);
  }
};

const RunConfig kConfig{{"optimizer.lr", 3e-4}, {"batch", int64_t{64}}, {"optimizer.name", std::string("adam")}};

TEST_F(RunConfigHistory, AConfigSetBeforeThePublisherStartedReachesALateJoiner) {
  setRunConfig(kConfig);
  Publisher publisher(test::testPublisherOptions());
  logSteps(0, 10);
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == 11; })) << "the config and the steps";
  Joined joined;
  joined.join(publisher.endpoints().front());
  ASSERT_EQ(joined.configs.size(), 1u);
  EXPECT_EQ(joined.configs.front(), kConfig);
  EXPECT_TRUE(joined.fromHistory.front());
}

TEST_F(RunConfigHistory, AConfigSetAfterThePublisherStartedReachesALateJoiner) {
  Publisher publisher(test::testPublisherOptions());
  setRunConfig(kConfig);
  logSteps(0, 10);
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == 11; }));
  Joined joined;
  joined.join(publisher.endpoints().front());
  ASSERT_EQ(joined.configs.size(), 1u);
  EXPECT_EQ(joined.configs.front(), kConfig);
}

TEST_F(RunConfigHistory, ALateJoinerReceivesTheConfigFirstAfterTheHistoryDroppedIt) {
  PublisherOptions options = test::testPublisherOptions();
  options.historyBytes = 16 * 1024;
  options.maxBatchEvents = 10;
  Publisher publisher(options);
  setRunConfig(kConfig);
  int logged = 0;
  ASSERT_TRUE(waitUntil([&] {
    logSteps(logged, 10);
    logged += 10;
    return publisher.stats().historyDropped > 100;
  }));
  const PublisherStats stats = publisher.stats();
  EXPECT_EQ(stats.historyConfigs, 1u);
  EXPECT_GT(stats.historyConfigBytes, 0u);
  EXPECT_EQ(stats.historyConfigsDropped, 0u);
  Joined joined;
  joined.join(publisher.endpoints().front());
  ASSERT_EQ(joined.configs.size(), 1u) << "once, although the history no longer holds it among its messages";
  EXPECT_EQ(joined.configs.front(), kConfig);
  EXPECT_TRUE(joined.fromHistory.front());
  EXPECT_EQ(joined.stepsBefore.front(), 0u) << "before the rest of the history";
  EXPECT_TRUE(joined.histories.front().truncated);
}

TEST_F(RunConfigHistory, APublisherForAnotherSourcePublishesItsOwnConfig) {
  setRunConfig({{"process", int64_t{1}}});
  PublisherOptions options = test::testPublisherOptions();
  options.handleLoggedEvents = false;
  Publisher publisher(options);
  EXPECT_THROW(publisher.publishRunConfig({{"step", int64_t{1}}}), std::invalid_argument);
  EXPECT_THROW(publisher.publishRunConfig({{"", int64_t{1}}}), std::invalid_argument);
  publisher.publishRunConfig(kConfig);
  publisher.publish(makeEvent("step", {{"i", int64_t{0}}}));
  ASSERT_TRUE(waitUntil([&] { return publisher.publishedCount() == 2; }));
  Joined joined;
  joined.join(publisher.endpoints().front());
  ASSERT_EQ(joined.configs.size(), 1u) << "its own, not the process's";
  EXPECT_EQ(joined.configs.front(), kConfig);
  EXPECT_EQ(currentRunConfig(), (RunConfig{{"process", int64_t{1}}})) << "the process's config is not changed";
}

TEST_F(RunConfigHistory, ALateJoinerOfARelayReceivesTheConfigAfterItsHistoryDroppedIt) {
  RelayOptions relayOptions = test::loopbackRelayOptions();
  relayOptions.historyBytes = 32 * 1024;
  std::atomic<bool> connected{false};
  relayOptions.onMessage = [&](std::string_view topic, const WireMessage&) {
    if (topic == "step") connected = true;
  };
  Relay relay(relayOptions);
  Publisher publisher(test::connectedPublisherOptions(relay.listenEndpoint(), 0));
  // Until the relay receives this publisher's messages: its first ones may precede the connection.
  int logged = 0;
  ASSERT_TRUE(waitUntil([&] {
    logSteps(logged++, 1);
    return connected.load();
  }));
  setRunConfig(kConfig);
  ASSERT_TRUE(waitUntil([&] { return relay.stats().historyConfigs == 1; }));
  ASSERT_TRUE(waitUntil([&] {
    logSteps(logged++, 1);
    return relay.stats().historyDropped > 200;
  }));
  EXPECT_EQ(relay.stats().historyConfigs, 1u);
  Joined joined;
  joined.join(relay.serveEndpoint());
  ASSERT_EQ(joined.configs.size(), 1u);
  EXPECT_EQ(joined.configs.front(), kConfig);
  EXPECT_TRUE(joined.fromHistory.front());
  EXPECT_EQ(joined.stepsBefore.front(), 0u);
}

// A publisher that connects sends before the relay has subscribed, and ZeroMQ drops what it
// sends until then: the config, sent once at the start, went nowhere. Its copies (ConfigResend)
// reach a relay that came up after it, so the relay's history and recordings hold the config.
TEST_F(RunConfigHistory, AConfigSentBeforeTheRelayCameUpStillReachesIt) {
  test::TempDir dir;
  const std::string listen = "ipc://" + (dir.path() / "relay.sock").string();
  setRunConfig(kConfig);
  Publisher publisher(test::connectedPublisherOptions(listen, 0));
  ASSERT_TRUE(waitUntil([&] { return publisher.stats().messages >= 1; })) << "the config went out to no one";
  RelayOptions relayOptions = test::loopbackRelayOptions();
  relayOptions.listen = listen;
  std::atomic<int> configs{0};
  relayOptions.onMessage = [&](std::string_view topic, const WireMessage&) {
    if (topic == kRunConfigEventName) ++configs;
  };
  Relay relay(relayOptions);
  ASSERT_TRUE(waitUntil([&] { return relay.stats().historyConfigs == 1; }))
      << "the relay never received the config its publisher sent before it was up";
  logSteps(0, 1);
  // Every copy the publisher sends after that is neither kept nor handed to the recorder again.
  ASSERT_TRUE(waitUntil([&] { return relay.stats().historyMessages >= 2; }));
  Joined joined;
  joined.join(relay.serveEndpoint());
  ASSERT_EQ(joined.configs.size(), 1u);
  EXPECT_EQ(joined.configs.front(), kConfig);
  EXPECT_EQ(configs.load(), 1);
}

// Forged sources that each send a config, and one that sends many: the relay keeps the newest
// config of each within its bound, however many come.
TEST_F(RunConfigHistory, ARelayFloodedWithConfigsKeepsThemWithinItsBound) {
  constexpr std::size_t kHistory = 1024 * 1024;
  RelayOptions relayOptions = test::loopbackRelayOptions();
  relayOptions.historyBytes = kHistory;
  Relay relay(relayOptions);
  PayloadPublisherOptions publisherOptions;
  publisherOptions.connect = {relay.listenEndpoint()};
  publisherOptions.sendHighWaterMark = 0;  // the publisher keeps everything: the relay decides
  PayloadPublisher publisher(publisherOptions);
  Subscriber reader(test::connectTo({relay.serveEndpoint()}));
  SourceInfo source;
  source.run = "flood";
  source.host = "node";
  source.instanceId = 1;
  uint64_t sequence = 0;
  ASSERT_TRUE(test::sendUntilReceived(publisher, reader, source, "sync", sequence));

  const std::string topic(kRunConfigEventName);
  const Event config = makeEvent(topic, {{"notes", std::string(200, 'x')}});
  constexpr int64_t kSources = 6000;
  for (int64_t pid = 0; pid < kSources; ++pid) {
    source.pid = pid;
    publisher.send(topic, encodeEventsPayload(source, 0, topic, {config}));
  }
  for (uint64_t i = 0; i < 2000; ++i) publisher.send(topic, encodeEventsPayload(source, i, topic, {config}));
  ASSERT_TRUE(waitUntil([&] { return relay.stats().captured >= static_cast<uint64_t>(kSources) + 2000; }));
  ASSERT_TRUE(waitUntil([&] {
    const RelayStats stats = relay.stats();
    return stats.historyConfigs + stats.historyConfigsDropped == kSources;
  }));
  const RelayStats stats = relay.stats();
  EXPECT_LE(stats.historyConfigBytes, kHistory);
  EXPECT_GT(stats.historyConfigs, 100u);
  EXPECT_LT(stats.historyConfigs, static_cast<std::size_t>(kSources));
  EXPECT_LE(stats.historyBytes, kHistory);
}

}  // namespace
}  // namespace livemon::transport
