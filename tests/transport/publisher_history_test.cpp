// PublisherHistory on its own: the history a Publisher serves to late subscribers, kept and
// answered without a Publisher (a bare ZeroMQ DEALER asks for it).
#include "publisher_history.h"

#include <gtest/gtest.h>
#include <zmq.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <livemon/detail/wire_codec.h>
#include <livemon/run_config.h>
#include <livemon/transport/wire_format.h>

#include "curve_security.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;

// A context, the (plain) security a publisher without CURVE has, and a DEALER to ask with.
class HistoryFixture : public ::testing::Test {
 protected:
  HistoryFixture() : security_(CurveOptions{}, "PublisherOptions") {}
  ~HistoryFixture() override {
    if (dealer_ != nullptr) zmq_close(dealer_);
    zmq_ctx_term(context_);
  }

  std::unique_ptr<detail::PublisherHistory> make(std::size_t bytes) {
    return std::make_unique<detail::PublisherHistory>(bytes, context_, test::uniqueInproc(), limits_, security_);
  }

  // A message of one event at `time` as the publisher keeps it: its payload and its body.
  static std::pair<std::shared_ptr<const std::string>, std::string> message(int index,
                                                                            std::chrono::system_clock::time_point time) {
    std::string body;
    detail::appendEventEntry(body, test::makeEvent("train.step", {{"i", int64_t{index}}}, time));
    return {std::make_shared<const std::string>("payload " + std::to_string(index)), body};
  }

  // Asks `history` for everything and serves until the answer ends: the payloads, then the end.
  std::vector<std::string> ask(detail::PublisherHistory& history, HistoryEnd& end) {
    dealer_ = zmq_socket(context_, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(dealer_, ZMQ_LINGER, &zero, sizeof zero);
    EXPECT_EQ(zmq_connect(dealer_, history.endpoint().c_str()), 0);
    const std::string request = encodeHistoryRequest({});
    zmq_send(dealer_, kHistoryTopic.data(), kHistoryTopic.size(), ZMQ_SNDMORE);
    zmq_send(dealer_, request.data(), request.size(), 0);
    std::vector<std::string> payloads;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      history.serve();
      char topic[64];
      const int topicSize = zmq_recv(dealer_, topic, sizeof topic, ZMQ_DONTWAIT);
      if (topicSize < 0) {
        std::this_thread::sleep_for(1ms);
        continue;
      }
      std::vector<char> payload(1 << 16);
      const int payloadSize = zmq_recv(dealer_, payload.data(), payload.size(), 0);
      const std::string body(payload.data(), static_cast<std::size_t>(std::max(payloadSize, 0)));
      if (std::string_view(topic, static_cast<std::size_t>(topicSize)) == kHistoryTopic) {
        EXPECT_EQ(decodeHistoryEnd(body, end), DecodeStatus::Ok);
        return payloads;
      }
      payloads.push_back(body);
    }
    ADD_FAILURE() << "no history end";
    return payloads;
  }

  void* context_ = zmq_ctx_new();
  void* dealer_ = nullptr;
  const WireLimits limits_;
  detail::SocketSecurity security_;
};

TEST_F(HistoryFixture, AnswersWithTheMessagesKeptOldestFirst) {
  auto history = make(1 << 20);
  const auto start = std::chrono::system_clock::time_point(1'700'000'000s);
  for (int i = 0; i < 3; ++i) {
    auto [payload, body] = message(i, start + std::chrono::seconds(i));
    history->keep("train.step", payload, body);
  }
  HistoryEnd end;
  const std::vector<std::string> payloads = ask(*history, end);
  EXPECT_EQ(payloads, (std::vector<std::string>{"payload 0", "payload 1", "payload 2"}));
  EXPECT_EQ(end.messages, 3u);
  EXPECT_FALSE(end.truncated);
  ASSERT_TRUE(end.oldest.has_value());
  EXPECT_EQ(*end.oldest, start) << "the first kept message's first event";
  PublisherStats stats;
  history->copyTo(stats);
  EXPECT_EQ(stats.historyMessages, 3u);
  EXPECT_GT(stats.historyBytes, 0u);
  EXPECT_EQ(stats.historyDropped, 0u);
  EXPECT_EQ(stats.historyRequests, 1u);
}

TEST_F(HistoryFixture, KeepsTheNewestWithinItsBytesAndCountsWhatItDropped) {
  // Room for two messages with their bookkeeping, not three.
  auto history = make(2 * (detail::HistoryStore::kEntryOverhead + 64));
  for (int i = 0; i < 3; ++i) {
    auto [payload, body] = message(i, std::chrono::system_clock::now());
    history->keep("train.step", payload, body);
  }
  PublisherStats stats;
  history->copyTo(stats);
  EXPECT_EQ(stats.historyMessages, 2u);
  EXPECT_EQ(stats.historyDropped, 1u);
  HistoryEnd end;
  EXPECT_EQ(ask(*history, end), (std::vector<std::string>{"payload 1", "payload 2"}));
  EXPECT_TRUE(end.truncated);
}

TEST_F(HistoryFixture, APublisherThatConnectsOrTurnsHistoryOffKeepsNone) {
  PublisherOptions options = test::testPublisherOptions();
  options.historyBytes = 0;
  EXPECT_EQ(detail::makePublisherHistory(options, context_, test::uniqueInproc(), limits_, security_), nullptr);
  options.historyBytes = 1 << 20;
  options.bind.clear();
  options.connect = {"tcp://127.0.0.1:1"};
  EXPECT_EQ(detail::makePublisherHistory(options, context_, "tcp://127.0.0.1:1", limits_, security_), nullptr)
      << "its relay keeps the history";
}

TEST_F(HistoryFixture, BindsBesideThePublishersEndpointUnlessTold) {
  PublisherOptions options = test::testPublisherOptions();
  options.historyBytes = 1 << 20;
  const std::string endpoint = test::uniqueInproc();
  auto beside = detail::makePublisherHistory(options, context_, endpoint, limits_, security_);
  ASSERT_NE(beside, nullptr);
  EXPECT_EQ(beside->endpoint(), endpoint + ".history");
  options.historyEndpoint = test::uniqueInproc();
  auto told = detail::makePublisherHistory(options, context_, endpoint, limits_, security_);
  ASSERT_NE(told, nullptr);
  EXPECT_EQ(told->endpoint(), options.historyEndpoint);
}

// A config message of the source with `pid`, numbered `sequence`, as a publisher sends it.
std::shared_ptr<const std::string> configPayload(int64_t pid, uint64_t sequence, double lr = 1e-3) {
  SourceInfo source;
  source.run = "flood";
  source.host = "node";
  source.pid = pid;
  source.instanceId = 1;
  const Event event = test::makeEvent(std::string(kRunConfigEventName), {{"lr", lr}});
  return std::make_shared<const std::string>(
      encodeEventsPayload(source, sequence, kRunConfigEventName, {event}));
}

const std::string kConfigTopic(kRunConfigEventName);

TEST_F(HistoryFixture, AnswersTheConfigItDroppedFirstThenWhatItHolds) {
  const auto config = configPayload(7, 0);
  // Room for the config and two messages: the third drops the config, and leaves room for three.
  auto history = make(detail::HistoryStore::costOf(kConfigTopic, config->size()) +
                      2 * detail::HistoryStore::costOf("train.step", std::string("payload 0").size()));
  std::string body;
  history->keep(kConfigTopic, config, body);
  for (int i = 0; i < 4; ++i) {
    auto [payload, eventBody] = message(i, std::chrono::system_clock::now());
    history->keep("train.step", payload, eventBody);
  }
  PublisherStats stats;
  history->copyTo(stats);
  EXPECT_EQ(stats.historyMessages, 3u) << "the config went with the oldest messages";
  EXPECT_EQ(stats.historyConfigs, 1u);
  HistoryEnd end;
  EXPECT_EQ(ask(*history, end), (std::vector<std::string>{*config, "payload 1", "payload 2", "payload 3"}));
  EXPECT_EQ(end.messages, 4u);
  EXPECT_TRUE(end.truncated);
}

TEST_F(HistoryFixture, AConfigStillHeldIsAnsweredOnceInItsPlace) {
  auto history = make(1 << 20);
  auto [first, firstBody] = message(0, std::chrono::system_clock::now());
  history->keep("train.step", first, firstBody);
  const auto config = configPayload(7, 0);
  history->keep(kConfigTopic, config, "");
  HistoryEnd end;
  EXPECT_EQ(ask(*history, end), (std::vector<std::string>{"payload 0", *config}));
}

TEST(KeptConfigs, ASourcesNewerConfigReplacesItsOlderOneAndOthersAreNotKept) {
  detail::HistoryStore store(1 << 20);
  for (uint64_t i = 0; i < 100; ++i) store.append(kConfigTopic, configPayload(1, i, static_cast<double>(i)), 0, 0);
  store.append("train.step", std::make_shared<const std::string>("not a config"), 0, 0);
  store.append(kConfigTopic, std::make_shared<const std::string>("\x81 malformed"), 0, 0);
  ASSERT_EQ(store.configs().size(), 1u);
  const detail::KeptConfigs::Kept* kept = store.configs().firstFrom(0);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->index, 99u);
  EXPECT_EQ(*kept->message.payload, *configPayload(1, 99, 99.0)) << "the newest";
  EXPECT_EQ(store.configs().dropped(), 0u) << "replaced, not dropped";
  EXPECT_EQ(store.configs().firstFrom(100), nullptr);
}

TEST(KeptConfigs, AFloodOfSourcesStaysWithinTheCountOldestSourcesFirst) {
  detail::HistoryStore store(std::size_t{1} << 30);
  const std::size_t sources = detail::KeptConfigs::kMaxSources + 1000;
  for (std::size_t pid = 0; pid < sources; ++pid) {
    store.append(kConfigTopic, configPayload(static_cast<int64_t>(pid), 0), 0, 0);
  }
  EXPECT_EQ(store.configs().size(), detail::KeptConfigs::kMaxSources);
  EXPECT_EQ(store.configs().dropped(), 1000u);
  EXPECT_LE(store.configs().bytes(), detail::KeptConfigs::kMaxBytes);
  const detail::KeptConfigs::Kept* oldest = store.configs().firstFrom(0);
  ASSERT_NE(oldest, nullptr);
  EXPECT_EQ(oldest->source.pid, 1000) << "the sources kept longest ago went first";
}

TEST(KeptConfigs, AFloodOfLargeConfigsStaysWithinTheBytes) {
  const std::size_t bound = 64 * 1024;
  detail::HistoryStore store(bound);  // its configs are held to the history's bound too
  SourceInfo source;
  source.run = "flood";
  source.host = "node";
  source.instanceId = 1;
  const Event event = test::makeEvent(std::string(kRunConfigEventName), {{"notes", std::string(8000, 'x')}});
  for (int64_t pid = 0; pid < 1000; ++pid) {
    source.pid = pid;
    store.append(kConfigTopic,
                 std::make_shared<const std::string>(encodeEventsPayload(source, 0, kRunConfigEventName, {event})), 0, 0);
    ASSERT_LE(store.configs().bytes(), bound);
  }
  EXPECT_GT(store.configs().size(), 1u);
  EXPECT_LT(store.configs().size(), 9u);
  EXPECT_EQ(store.configs().dropped(), 1000u - store.configs().size());
  EXPECT_EQ(store.configs().firstFrom(0)->source.pid, static_cast<int64_t>(1000 - store.configs().size()));
}

}  // namespace
}  // namespace livemon::transport
