// Who may do what under CURVE: a relay's separate allow lists for publishers and watchers, and a
// key removed from an allow list losing its live connections (publisher and relay alike).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <livemon/transport/curve.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/relay.h>
#include <livemon/transport/subscriber.h>

#include "curve_fixture.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::Fixture;
using test::Keys;

// How soon a removed key's connections must be gone: the product's claim (docs/security.md),
// with room for the slowdown of the sanitizer builds on a shared machine.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr std::chrono::milliseconds kRevocationDeadline = 5s;
#else
constexpr std::chrono::milliseconds kRevocationDeadline = 1s;
#endif

// Thread-safety: a plain value type, owned by one test.
// The numbered "curve.test" events one subscriber got, by run: how many, and the highest number.
struct ByRun {
  std::map<std::string, uint64_t> count;
  std::map<std::string, int64_t> highest;
  SubscriberCallbacks callbacks() {
    SubscriberCallbacks callbacks;
    callbacks.onEvent = [this](ReceivedEvent& e) {
      if (e.event.name != "curve.test") return;
      const std::string& run = e.source->run;
      ++count[run];
      const auto found = e.event.data.find("i");
      if (found == e.event.data.end()) return;
      const auto i = static_cast<int64_t>(std::get<double>(found->second));
      if (!highest.contains(run) || highest[run] < i) highest[run] = i;
    };
    return callbacks;
  }
  int64_t highestOf(const std::string& run) const {
    const auto found = highest.find(run);
    return found == highest.end() ? -1 : found->second;
  }
};

// Thread-safety: a plain value type, owned by one test.
// A publisher that numbers its "curve.test" events.
struct Numbered {
  explicit Numbered(const PublisherOptions& options) : publisher(options) {}
  void publish() { publisher.publish(test::makeEvent("curve.test", {{"i", static_cast<double>(next++)}})); }
  Publisher publisher;
  int64_t next = 0;
};

PublisherOptions publisherInto(const Relay& relay, const std::string& run, const Keys& keys, const Keys& server) {
  PublisherOptions options = test::connectedPublisherOptions(relay.listenEndpoint());
  options.handleLoggedEvents = false;
  options.runName = run;
  options.curve = {keys.secretFile, "", server.publicFile, false};
  return options;
}

TEST(CurveRelay, WatchersAndPublishersHaveAllowListsOfTheirOwn) {
  Fixture keys;  // keys.allow: who may watch (keys.client)
  const std::filesystem::path publishers = keys.temp.path() / "publishers";
  std::filesystem::create_directory(publishers);
  const Keys rank0(publishers, "rank0");

  RelayOptions relayOptions = test::loopbackRelayOptions();
  relayOptions.curve = keys.serverCurve();
  relayOptions.curveAllowPublish = publishers.string();
  std::mutex capturedMutex;
  std::map<std::string, uint64_t> captured;  // what a recorder would write, by run
  relayOptions.onMessage = [&](std::string_view, const WireMessage& message) {
    std::lock_guard lock(capturedMutex);
    if (message.kind == MessageKind::Events) captured[message.source.run] += message.events.size();
  };
  Relay relay(relayOptions);

  Subscriber watcher(keys.subscriberOptions(relay.serveEndpoint(), keys.client));
  // A key allowed only to publish may not watch.
  Subscriber publisherWatching(keys.subscriberOptions(relay.serveEndpoint(), rank0));
  Numbered honest(publisherInto(relay, "honest", rank0, keys.server));
  // A key allowed only to watch may not publish.
  Numbered sneaky(publisherInto(relay, "sneaky", keys.client, keys.server));

  ByRun seen;
  ASSERT_TRUE(test::waitForSource(watcher, honest.publisher.identity()));
  ASSERT_TRUE(test::pollUntil(watcher, seen.callbacks(), [&] {
    honest.publish();
    sneaky.publish();
    publisherWatching.poll(0ms, SubscriberCallbacks{});
    return seen.count["honest"] >= 20 && relay.stats().curveRefused >= 2 &&
           publisherWatching.endpoints().front().handshakeFailures >= 1;
  }));
  EXPECT_EQ(seen.count.count("sneaky"), 0u);
  EXPECT_EQ(publisherWatching.stats().messages, 0u);
  EXPECT_EQ(publisherWatching.endpoints().front().handshakeError,
            "refused: this side's key is not in the publisher's allow list");
  {
    std::lock_guard lock(capturedMutex);
    EXPECT_GE(captured["honest"], 1u);
    EXPECT_EQ(captured.count("sneaky"), 0u);
  }

  // The history a late watcher gets holds the honest events and none of the other's.
  SubscriberOptions lateOptions = keys.subscriberOptions(relay.serveEndpoint(), keys.client);
  lateOptions.history = true;
  Subscriber late(lateOptions);
  ByRun history;
  std::optional<HistoryStatus> status;
  SubscriberCallbacks callbacks = history.callbacks();
  callbacks.onHistory = [&](const HistoryStatus& s) { status = s; };
  ASSERT_TRUE(test::pollUntil(late, callbacks, [&] { return status.has_value(); }));
  EXPECT_EQ(status->outcome, HistoryOutcome::Received) << status->error;
  EXPECT_GE(history.count["honest"], 20u);
  EXPECT_EQ(history.count.count("sneaky"), 0u);
}

TEST(CurveRelay, OneAllowListAdmitsPublishersAndWatchersAlike) {
  // Without curveAllowPublish, curve.allow admits both, as before there were two lists.
  Fixture keys;
  RelayOptions relayOptions = test::loopbackRelayOptions();
  relayOptions.curve = keys.serverCurve();
  Relay relay(relayOptions);
  Subscriber watcher(keys.subscriberOptions(relay.serveEndpoint(), keys.client));
  Numbered publisher(publisherInto(relay, "both", keys.client, keys.server));
  ByRun seen;
  ASSERT_TRUE(test::waitForSource(watcher, publisher.publisher.identity()));
  EXPECT_TRUE(test::pollUntil(watcher, seen.callbacks(), [&] {
    publisher.publish();
    return seen.count["both"] >= 5;
  }));
}

TEST(CurvePublisher, RemovingAKeyDisconnectsItsSubscribersWithinASecond) {
  Fixture keys;
  const Keys other(keys.allow, "other");
  Numbered publisher(keys.publisherOptions());
  const std::string endpoint = publisher.publisher.endpoints().front();
  SubscriberOptions revokedOptions = keys.subscriberOptions(endpoint, keys.client);
  revokedOptions.reconnectInterval = 20ms;
  Subscriber revoked(revokedOptions);
  Subscriber kept(keys.subscriberOptions(endpoint, other));
  ByRun revokedSeen;
  ByRun keptSeen;
  ASSERT_TRUE(test::waitForSource(revoked, publisher.publisher.identity()));
  ASSERT_TRUE(test::waitForSource(kept, publisher.publisher.identity()));
  ASSERT_TRUE(test::pollUntil(revoked, revokedSeen.callbacks(), [&] {
    publisher.publish();
    return revokedSeen.count["test"] >= 5;
  }));
  const uint64_t refusedBefore = publisher.publisher.stats().curveRefused;

  std::filesystem::remove(keys.allow / "client.key");
  const auto removed = std::chrono::steady_clock::now();
  ASSERT_TRUE(test::waitUntil([&] { return publisher.publisher.stats().curveRefused > refusedBefore; },
                              kRevocationDeadline));
  const auto disconnectedAfter = std::chrono::steady_clock::now() - removed;
  EXPECT_LT(disconnectedAfter, kRevocationDeadline);

  // Nothing published from now on reaches the removed key, through the old connection or a new
  // one; the other subscriber keeps receiving.
  const int64_t mark = publisher.next;
  ASSERT_TRUE(test::pollUntil(kept, keptSeen.callbacks(), [&] {
    publisher.publish();
    revoked.poll(0ms, revokedSeen.callbacks());
    return keptSeen.highestOf("test") >= mark + 20 && revoked.endpoints().front().handshakeFailures >= 1;
  }));
  EXPECT_LT(revokedSeen.highestOf("test"), mark);
  EXPECT_EQ(revoked.endpoints().front().handshakeError,
            "refused: this side's key is not in the publisher's allow list");
  EXPECT_EQ(kept.stats().missedEvents, 0u);
  EXPECT_GE(publisher.publisher.stats().curveRefused, refusedBefore + 2);  // the removal and the retry
}

TEST(CurveRelay, RemovingAKeyDisconnectsItsPublisherAndItsWatcherWithinASecond) {
  Fixture keys;  // watchers: keys.client, other
  const Keys other(keys.allow, "other");
  const std::filesystem::path publishers = keys.temp.path() / "publishers";
  std::filesystem::create_directory(publishers);
  const Keys rank0(publishers, "rank0");
  const Keys rank1(publishers, "rank1");
  RelayOptions relayOptions = test::loopbackRelayOptions();
  relayOptions.curve = keys.serverCurve();
  relayOptions.curveAllowPublish = publishers.string();
  Relay relay(relayOptions);

  Numbered p0(publisherInto(relay, "p0", rank0, keys.server));
  Numbered p1(publisherInto(relay, "p1", rank1, keys.server));
  SubscriberOptions revokedOptions = keys.subscriberOptions(relay.serveEndpoint(), keys.client);
  revokedOptions.reconnectInterval = 20ms;
  Subscriber revoked(revokedOptions);
  Subscriber kept(keys.subscriberOptions(relay.serveEndpoint(), other));
  ByRun revokedSeen;
  ByRun keptSeen;
  for (Subscriber* s : {&revoked, &kept}) {
    ASSERT_TRUE(test::waitForSource(*s, p0.publisher.identity()));
    ASSERT_TRUE(test::waitForSource(*s, p1.publisher.identity()));
  }
  const auto waitForRefusal = [&] {
    const uint64_t before = relay.stats().curveRefused;
    const auto removed = std::chrono::steady_clock::now();
    const bool refused = test::waitUntil([&] { return relay.stats().curveRefused > before; }, kRevocationDeadline);
    return refused && std::chrono::steady_clock::now() - removed < kRevocationDeadline;
  };
  const auto publishBoth = [&] {
    p0.publish();
    p1.publish();
    revoked.poll(0ms, revokedSeen.callbacks());
  };

  // A publisher's key leaves the publish list: its events stop, the other publisher's go on.
  std::filesystem::remove(publishers / "rank0.key");
  ASSERT_TRUE(waitForRefusal());
  const int64_t p0Mark = p0.next;
  const int64_t p1Then = p1.next;
  ASSERT_TRUE(test::pollUntil(kept, keptSeen.callbacks(), [&] {
    publishBoth();
    return keptSeen.highestOf("p1") >= p1Then + 20;
  }));
  EXPECT_LT(keptSeen.highestOf("p0"), p0Mark);

  // A watcher's key leaves the watch list: it stops receiving, the other watcher does not. (The
  // removed publisher may still be retrying: the watcher's own refused retry tells, which also
  // takes its reconnection, so here the test's usual deadline applies.)
  std::filesystem::remove(keys.allow / "client.key");
  ASSERT_TRUE(test::pollUntil(revoked, revokedSeen.callbacks(),
                              [&] { return revoked.endpoints().front().handshakeFailures >= 1; }));
  const int64_t p1Mark = p1.next;
  ASSERT_TRUE(test::pollUntil(kept, keptSeen.callbacks(), [&] {
    publishBoth();
    return keptSeen.highestOf("p1") >= p1Mark + 20 && revoked.endpoints().front().handshakeFailures >= 1;
  }));
  EXPECT_LT(revokedSeen.highestOf("p1"), p1Mark);
  EXPECT_LT(revokedSeen.highestOf("p0"), p0Mark);
}

}  // namespace
}  // namespace livemon::transport
