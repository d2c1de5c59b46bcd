// A job that returns from main with its Publisher local to main and range Stats timed live: the
// range Stats' open windows are logged before the Publisher goes (nothing else would send them),
// so a subscriber receives the last window. Run as a separate process: exit can only be seen
// from outside.
#include <gtest/gtest.h>

#include <signal.h>

#include <string>

#include <livemon/transport/subscriber.h>

#include "test_paths.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

TEST(PublisherExit, TheRangeStatsLastWindowReachesTheSubscriber) {
  SubscriberOptions options;
  options.bind = {"tcp://127.0.0.1:*"};
  Subscriber subscriber(options);
  const std::string probePath = livemon::test_paths::builtFile("publisher_exit_probe");
  test::ChildProcess probe({probePath, *subscriber.endpoints().at(0).endpoint});
  ASSERT_TRUE(probe.readStdoutUntil([](const std::string& out) { return out.find("ready\n") != std::string::npos; }))
      << probe.err();
  ASSERT_TRUE(test::pollUntil(subscriber, {}, [&] { return !subscriber.sources().empty(); }));

  double count = 0;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& r) {
    if (const auto found = r.event.data.find("range/exit_probe.count"); found != r.event.data.end()) {
      count += std::get<double>(found->second);
    }
  };
  probe.signal(SIGUSR1);
  EXPECT_EQ(probe.exitCode(), 0) << probe.err();
  ASSERT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return count > 0; })) << "the last window was lost";
  EXPECT_EQ(count, 1);
}

}  // namespace
}  // namespace livemon::transport
