// MetricsFeed: a Publisher's Stat events on their way to its metrics sink, as events. The logging
// threads only copy; the sink is called by the delivering thread alone; overflow drops and counts.
#include "metrics_feed.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <livemon/event.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

// Thread-safe: members under `mutex`. What a sink was given, and on which threads.
class RecordingSink final : public PublisherMetrics {
 public:
  void observe(const SourceInfo& source, const Event& statEvent) override {
    std::lock_guard lock(mutex);
    if (throwOnNext) {
      throwOnNext = false;
      throw std::bad_alloc();
    }
    sources.push_back(source);
    events.push_back(statEvent);
    threads.push_back(std::this_thread::get_id());
  }
  void sourceAlive(const SourceInfo& source) override {
    std::lock_guard lock(mutex);
    alive.push_back(source);
  }
  uint16_t port() const noexcept override { return 9100; }

  std::mutex mutex;
  std::vector<SourceInfo> sources;
  std::vector<Event> events;
  std::vector<std::thread::id> threads;
  std::vector<SourceInfo> alive;
  bool throwOnNext = false;
};

SourceInfo source(const std::string& run, int64_t rank) {
  SourceInfo info;
  info.run = run;
  info.host = "node1";
  info.pid = 42;
  info.rank = rank;
  return info;
}

Event statEvent(std::unordered_map<std::string, DataValue> data) {
  return test::makeEvent(std::string(kStatEventName), std::move(data));
}

TEST(MetricsFeed, HandsStatEventsToTheSinkAsEventsOnlyWhenDelivering) {
  auto sink = std::make_shared<RecordingSink>();
  detail::MetricsFeed feed(sink);
  const Event first = statEvent({{"loss.mean", 0.5}, {"loss.max", 0.9}});
  const Event second = test::makeEvent(std::string(kTorchStatEventName), {{"lr.value", 3e-4}});
  EXPECT_TRUE(feed.offer(first));
  EXPECT_TRUE(feed.offer(second));
  EXPECT_EQ(feed.waiting(), 2u);
  EXPECT_TRUE(sink->events.empty()) << "offering never calls the sink";

  std::size_t delivered = 0;
  std::thread io([&] { delivered = feed.deliver(source("job", 3)); });
  const std::thread::id ioThread = io.get_id();
  io.join();
  EXPECT_EQ(delivered, 2u);
  ASSERT_EQ(sink->events.size(), 2u);
  EXPECT_EQ(sink->events[0], first) << "the event itself, oldest first";
  EXPECT_EQ(sink->events[1], second);
  EXPECT_EQ(sink->sources[0], source("job", 3));
  EXPECT_EQ(sink->threads[0], ioThread) << "the sink runs on the delivering thread";
  EXPECT_EQ(feed.waiting(), 0u);
  EXPECT_EQ(feed.deliver(source("job", 3)), 0u) << "nothing twice";
  EXPECT_EQ(feed.port(), 9100);
}

TEST(MetricsFeed, OtherEventsAreNotItsBusiness) {
  auto sink = std::make_shared<RecordingSink>();
  detail::MetricsFeed feed(sink);
  EXPECT_FALSE(feed.offer(test::makeEvent("train.step", {{"loss", 0.5}})));
  EXPECT_EQ(feed.waiting(), 0u);
  EXPECT_EQ(feed.droppedCount(), 0u) << "not a drop: never meant for the sink";
  feed.deliver(source("job", 0));
  EXPECT_TRUE(sink->events.empty());
}

TEST(MetricsFeed, AFullFeedDropsAndCountsUntilDelivered) {
  auto sink = std::make_shared<RecordingSink>();
  detail::MetricsFeed feed(sink, 2);
  EXPECT_TRUE(feed.offer(statEvent({{"a.value", 1.0}})));
  EXPECT_TRUE(feed.offer(statEvent({{"a.value", 2.0}})));
  EXPECT_FALSE(feed.offer(statEvent({{"a.value", 3.0}})));
  EXPECT_EQ(feed.droppedCount(), 1u);
  EXPECT_EQ(feed.deliver(source("job", 0)), 2u);
  EXPECT_TRUE(feed.offer(statEvent({{"a.value", 4.0}}))) << "room again";
  feed.deliver(source("job", 0));
  ASSERT_EQ(sink->events.size(), 3u);
  EXPECT_EQ(std::get<double>(sink->events[2].data.at("a.value")), 4.0);
}

// Slots are reused: an event copied into a slot that held a bigger one carries only its own data.
TEST(MetricsFeed, AReusedSlotCarriesOnlyTheNewEvent) {
  auto sink = std::make_shared<RecordingSink>();
  detail::MetricsFeed feed(sink);
  for (int round = 0; round < 3; ++round) {
    feed.offer(statEvent({{"loss.mean", 1.0}, {"loss.max", 2.0}, {"loss.min", 0.5}}));
    feed.deliver(source("job", 0));
  }
  const Event small = statEvent({{"lr.value", 0.1}});
  feed.offer(small);
  feed.deliver(source("job", 0));
  EXPECT_EQ(sink->events.back(), small);
}

TEST(MetricsFeed, ASinkThatThrowsLosesThatEventOnly) {
  auto sink = std::make_shared<RecordingSink>();
  detail::MetricsFeed feed(sink);
  sink->throwOnNext = true;
  feed.offer(statEvent({{"a.value", 1.0}}));
  feed.offer(statEvent({{"a.value", 2.0}}));
  EXPECT_EQ(feed.deliver(source("job", 0)), 2u);
  ASSERT_EQ(sink->events.size(), 1u);
  EXPECT_EQ(std::get<double>(sink->events[0].data.at("a.value")), 2.0);
}

TEST(MetricsFeed, HeartbeatsTellTheSinkTheSourceIsAlive) {
  auto sink = std::make_shared<RecordingSink>();
  detail::MetricsFeed feed(sink);
  feed.sourceAlive(source("job", 1));
  ASSERT_EQ(sink->alive.size(), 1u);
  EXPECT_EQ(sink->alive[0], source("job", 1));
}

// Several logging threads offer while one thread delivers: every event is delivered or counted as
// dropped, none is lost or seen twice.
TEST(MetricsFeed, ConcurrentOffersAreDeliveredOrCounted) {
  auto sink = std::make_shared<RecordingSink>();
  detail::MetricsFeed feed(sink, 64);
  constexpr int kThreads = 4;
  constexpr int kEach = 2000;
  std::atomic<int> offered{0};
  std::atomic<bool> done{false};
  std::thread io([&] {
    while (!done.load()) feed.deliver(source("job", 0));
    feed.deliver(source("job", 0));
  });
  std::vector<std::thread> loggers;
  for (int t = 0; t < kThreads; ++t) {
    loggers.emplace_back([&, t] {
      std::string key = std::to_string(t);
      key.append(".value");
      for (int i = 0; i < kEach; ++i) {
        feed.offer(statEvent({{key, static_cast<double>(i)}}));
        offered.fetch_add(1);
      }
    });
  }
  for (auto& logger : loggers) logger.join();
  done.store(true);
  io.join();
  EXPECT_EQ(sink->events.size() + feed.droppedCount(), static_cast<std::size_t>(offered.load()));
  EXPECT_GT(sink->events.size(), 0u);
}

TEST(MetricsFeed, RefusesNoSinkAndNoRoom) {
  EXPECT_THROW(detail::MetricsFeed(nullptr), std::invalid_argument);
  EXPECT_THROW(detail::MetricsFeed(std::make_shared<RecordingSink>(), 0), std::invalid_argument);
}

}  // namespace
}  // namespace livemon::transport
