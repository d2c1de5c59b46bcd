// PublisherOptions::systemStats and LIVEMON_SYSTEM_STATS: a publisher that asks for them sends
// the process's `system.*` Stat windows, and one process has one sampler.
#include <livemon/transport/publisher.h>

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <livemon/system_stats.h>
#include <livemon/transport/subscriber.h>

#include "scoped_environment.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::connectTo;
using test::pollUntil;
using test::waitForSource;

// LIVEMON_SYSTEM_STATS, unset for one test unless it sets it, and restored after.
class SystemStatsVariable : public livemon::testing::ScopedEnvironment {
 public:
  SystemStatsVariable() : ScopedEnvironment("LIVEMON_SYSTEM_STATS") {}
};

// The Stat keys a subscriber receives from `publisher` until it has seen every key of `wanted` (or
// the deadline). Each quantity is a Stat of its own, so windows closing in the same tick arrive in
// any order: waiting for one key says nothing about another.
std::set<std::string> receivedKeys(const Publisher& publisher, const std::set<std::string>& wanted) {
  Subscriber subscriber(connectTo({publisher.endpoints().front()}));
  EXPECT_TRUE(waitForSource(subscriber, publisher.identity()));
  std::set<std::string> keys;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& received) {
    if (received.event.name != kStatEventName || *received.source != publisher.identity()) return;
    for (const auto& [key, value] : received.event.data) keys.insert(key);
  };
  pollUntil(subscriber, callbacks, [&] {
    return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& key) { return keys.contains(key); });
  });
  return keys;
}

// Whether a process-wide sampler is running: asking for one hands out the running one, whose
// window is not the unusual one asked for here.
bool samplerRunning() {
  return sharedSystemStatsSampler(std::chrono::milliseconds(4321))->options().window != std::chrono::milliseconds(4321);
}

TEST(PublisherSystemStats, TheOptionSendsTheProcesssSystemStats) {
  SystemStatsVariable variable;
  PublisherOptions options = test::testPublisherOptions();
  options.systemStats = true;
  options.statWindow = 200ms;
  Publisher publisher(options);
  EXPECT_TRUE(samplerRunning());
  // The CPU percentage needs two reads a second apart; the memory figures come from the first.
  const std::set<std::string> keys =
      receivedKeys(publisher, {"system.cpu_percent.value", "system.cpu_percent.mean", "system.cpu_percent.max",
                               "system.rss_bytes.value", "system.host_memory_used_bytes.value"});
  EXPECT_TRUE(keys.contains("system.cpu_percent.value"));
  EXPECT_TRUE(keys.contains("system.cpu_percent.mean"));
  EXPECT_TRUE(keys.contains("system.cpu_percent.max"));
  EXPECT_TRUE(keys.contains("system.rss_bytes.value"));
  EXPECT_TRUE(keys.contains("system.host_memory_used_bytes.value"));
}

TEST(PublisherSystemStats, TheEnvironmentVariableTurnsThemOn) {
  SystemStatsVariable variable;
  variable.set("1");
  PublisherOptions options = test::testPublisherOptions();
  options.statWindow = 200ms;
  Publisher publisher(options);
  const std::set<std::string> keys = receivedKeys(publisher, {"system.rss_bytes.value"});
  EXPECT_TRUE(keys.contains("system.rss_bytes.value"));
}

TEST(PublisherSystemStats, OffByDefaultAndWithZero) {
  SystemStatsVariable variable;
  {
    Publisher publisher(test::testPublisherOptions());
    EXPECT_FALSE(samplerRunning());
  }
  variable.set("0");
  Publisher publisher(test::testPublisherOptions());
  EXPECT_FALSE(samplerRunning());
}

TEST(PublisherSystemStats, APublisherThatHandlesNoLoggedEventsStartsNoSampler) {
  SystemStatsVariable variable;
  PublisherOptions options = test::testPublisherOptions();
  options.systemStats = true;
  options.handleLoggedEvents = false;
  Publisher publisher(options);
  EXPECT_FALSE(samplerRunning());
}

TEST(PublisherSystemStats, PublishersOfOneProcessShareOneSampler) {
  SystemStatsVariable variable;
  PublisherOptions options = test::testPublisherOptions();
  options.systemStats = true;
  options.statWindow = 200ms;
  std::optional<Publisher> first;
  first.emplace(options);
  options.statWindow = 700ms;
  Publisher second(options);
  EXPECT_EQ(sharedSystemStatsSampler(1ms)->options().window, 200ms) << "the first publisher's";
  first.reset();
  EXPECT_EQ(sharedSystemStatsSampler(1ms)->options().window, 200ms) << "kept by the second";
}

TEST(PublisherSystemStats, ABadVariableIsRefusedByName) {
  SystemStatsVariable variable;
  variable.set("yes please");
  try {
    Publisher publisher(test::testPublisherOptions());
    FAIL() << "accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("LIVEMON_SYSTEM_STATS"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace livemon::transport
