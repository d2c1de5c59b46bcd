// PublisherOptions beyond the socket: the environment's defaults (LIVEMON_CONNECT, RANK,
// WORLD_SIZE and LOCAL_RANK, as a torchrun job has them), a publisher that sends only what it
// is given (publish()), and metrics in a program that links livemon::transport alone (this one:
// the exporters' tests cover the served metrics).
#include <livemon/transport/publisher.h>

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include <livemon/event_handler.h>
#include <livemon/transport/relay.h>
#include <livemon/transport/subscriber.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::connectTo;
using test::makeEvent;
using test::pollUntil;
using test::waitForSource;

// Sets environment variables for one test and restores them after.
class Environment {
 public:
  void set(const char* name, const std::string& value) {
    remember(name);
    setenv(name, value.c_str(), 1);
  }
  void unset(const char* name) {
    remember(name);
    unsetenv(name);
  }
  ~Environment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        setenv(name.c_str(), value->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  void remember(const char* name) {
    if (saved_.count(name) != 0) return;
    const char* value = getenv(name);
    saved_[name] = value ? std::optional<std::string>(value) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(PublisherOptions, EndpointsFollowLivemonConnect) {
  Environment environment;
  environment.unset("LIVEMON_CONNECT");
  EXPECT_EQ(PublisherOptions{}.bind, std::vector<std::string>{std::string(kDefaultEndpoint)});
  EXPECT_TRUE(PublisherOptions{}.connect.empty());

  environment.set("LIVEMON_CONNECT", "tcp://head:5556, tcp://other:5556,");
  EXPECT_TRUE(PublisherOptions{}.bind.empty()) << "connect instead of bind";
  EXPECT_EQ(PublisherOptions{}.connect, (std::vector<std::string>{"tcp://head:5556", "tcp://other:5556"}));

  environment.set("LIVEMON_CONNECT", "");
  EXPECT_EQ(PublisherOptions{}.bind, std::vector<std::string>{std::string(kDefaultEndpoint)}) << "empty: as unset";
}

// A job as torchrun starts it: default options, LIVEMON_CONNECT naming the relay and RANK,
// WORLD_SIZE and LOCAL_RANK set.
TEST(PublisherOptions, AJobWithDefaultOptionsJoinsTheRelayInItsEnvironment) {
  RelayOptions relayOptions;
  relayOptions.listen = "tcp://127.0.0.1:*";
  relayOptions.serve = "tcp://127.0.0.1:*";
  Relay relay(relayOptions);
  Environment environment;
  environment.set("LIVEMON_CONNECT", relay.listenEndpoint());
  environment.set("RANK", "5");
  environment.set("WORLD_SIZE", "8");
  environment.set("LOCAL_RANK", "1");

  PublisherOptions options;  // endpoints untouched
  options.runName = "torchrun-job";
  options.heartbeatInterval = 20ms;
  Publisher publisher(options);
  EXPECT_EQ(publisher.endpoints(), std::vector<std::string>{relay.listenEndpoint()});
  EXPECT_EQ(publisher.identity().rank, 5);
  EXPECT_EQ(publisher.identity().worldSize, 8);
  EXPECT_EQ(publisher.identity().localRank, 1);
  Subscriber subscriber(connectTo({relay.serveEndpoint()}));
  // The whole identity, world size and local rank included, is what the subscriber knows.
  ASSERT_TRUE(waitForSource(subscriber, publisher.identity())) << "it reached the relay's subscribers";
}

TEST(PublisherOptions, OptionsWinOverTheEnvironmentAndNonIntegersThereAreIgnored) {
  Environment environment;
  environment.set("RANK", "2");
  environment.set("WORLD_SIZE", "4");
  environment.set("LOCAL_RANK", "2");
  PublisherOptions options = test::testPublisherOptions();
  options.worldSize = 16;
  options.localRank = 7;
  {
    Publisher publisher(options);
    EXPECT_EQ(publisher.identity().rank, 2) << "from RANK";
    EXPECT_EQ(publisher.identity().worldSize, 16);
    EXPECT_EQ(publisher.identity().localRank, 7);
  }
  environment.set("RANK", "");
  environment.set("WORLD_SIZE", "eight");
  environment.set("LOCAL_RANK", "1x");
  {
    Publisher publisher(test::testPublisherOptions());
    EXPECT_FALSE(publisher.identity().rank.has_value());
    EXPECT_FALSE(publisher.identity().worldSize.has_value());
    EXPECT_FALSE(publisher.identity().localRank.has_value());
  }
  environment.unset("RANK");
  environment.unset("WORLD_SIZE");
  environment.unset("LOCAL_RANK");
  {
    Publisher publisher(test::testPublisherOptions());
    EXPECT_FALSE(publisher.identity().worldSize.has_value());
    EXPECT_FALSE(publisher.identity().localRank.has_value());
  }
}

// An identity that readers would refuse as malformed must not reach the wire: the Publisher
// refuses it up front, naming the values, whether they came from the options or the environment.
TEST(PublisherOptions, RanksOutsideTheWorldAreRefused) {
  Environment environment;
  environment.unset("RANK");
  environment.unset("LOCAL_RANK");
  environment.set("WORLD_SIZE", "4");
  auto refusal = [](const PublisherOptions& options) -> std::string {
    try {
      Publisher publisher(options);
    } catch (const std::invalid_argument& error) {
      return error.what();
    }
    return "accepted";
  };
  PublisherOptions options = test::testPublisherOptions();
  options.rank = 4;
  EXPECT_NE(refusal(options).find("rank 4, worldSize 4"), std::string::npos) << refusal(options);
  options.rank = 3;
  options.localRank = -1;
  EXPECT_NE(refusal(options).find("local_rank is negative"), std::string::npos) << refusal(options);
  options.localRank.reset();
  environment.set("LOCAL_RANK", "4");
  EXPECT_NE(refusal(options).find("local_rank is not below world"), std::string::npos) << refusal(options);
  environment.set("WORLD_SIZE", "0");
  environment.unset("LOCAL_RANK");
  options.rank.reset();
  EXPECT_NE(refusal(options).find("world is below 1"), std::string::npos) << refusal(options);
  environment.set("WORLD_SIZE", "4");
  EXPECT_EQ(refusal(options), "accepted");
}

TEST(PublisherOptions, APublisherThatDoesNotHandleLoggedEventsSendsOnlyWhatItIsGiven) {
  PublisherOptions options = test::testPublisherOptions();
  options.handleLoggedEvents = false;
  Publisher direct(options);
  Subscriber subscriber(connectTo(direct.endpoints()));
  ASSERT_TRUE(waitForSource(subscriber, direct.identity()));

  logEvent(makeEvent("logged", {{"x", 1.0}}));
  direct.publish(makeEvent("direct", {{"x", 2.0}}));
  std::set<std::string> names;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& event) { names.insert(event.event.name); };
  ASSERT_TRUE(pollUntil(subscriber, callbacks, [&] { return names.count("direct") == 1; }));
  // Had the logged event been taken, it would have been queued before "direct" and sent with it
  // or before it.
  EXPECT_EQ(names, std::set<std::string>{"direct"});
}

// A publish-only program does not link livemon::exporters, which serves the metrics: an explicit
// metricsPort is refused, naming the option and what is missing, and LIVEMON_METRICS_PORT, which a
// cluster may set for every job, costs the job nothing but a notice.
TEST(PublisherOptions, MetricsNeedTheExportersLibrary) {
  Environment environment;
  environment.unset("LIVEMON_METRICS_PORT");
  PublisherOptions options = test::testPublisherOptions();
  options.metricsPort = 9;
  try {
    Publisher publisher(options);
    ADD_FAILURE() << "took a metricsPort without livemon::exporters";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("metricsPort 9"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("livemon::exporters"), std::string::npos) << error.what();
  }

  options.metricsPort = 0;
  environment.set("LIVEMON_METRICS_PORT", "9108");
  ::testing::internal::CaptureStderr();
  {
    Publisher first(options);
    Publisher second(options);
    EXPECT_EQ(first.metricsPort(), 0);
    EXPECT_EQ(second.metricsPort(), 0);
  }
  const std::string told = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(told.find("LIVEMON_METRICS_PORT is set, but this program serves no metrics"), std::string::npos) << told;
  EXPECT_EQ(told.find("LIVEMON_METRICS_PORT"), told.rfind("LIVEMON_METRICS_PORT")) << "said once: " << told;
}

// A run name without anything rank-like or LIVEMON_RUN in the environment.
class RunNames : public ::testing::Test {
 protected:
  RunNames() {
    for (const char* name : {"LIVEMON_RUN", "RANK", "TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"}) environment_.unset(name);
  }
  std::string runOf(PublisherOptions options) { return Publisher(std::move(options)).identity().run; }
  Environment environment_;
};

TEST_F(RunNames, ByDefaultTheProgramsNameAndTheTimeItStartedSharedByItsPublishers) {
  PublisherOptions options = test::testPublisherOptions();
  options.runName.clear();
  const std::string first = runOf(options);
  const std::string program = program_invocation_short_name;
  ASSERT_EQ(first.rfind(program + "-", 0), 0u) << first;
  const std::string time = first.substr(program.size() + 1);
  // YYYYmmdd-HHMMSS (std::regex here trips g++ 12's -Wmaybe-uninitialized in sanitizer builds)
  const auto digits = [&](std::size_t from, std::size_t count) {
    return std::all_of(time.begin() + static_cast<std::ptrdiff_t>(from),
                       time.begin() + static_cast<std::ptrdiff_t>(from + count), [](char c) { return c >= '0' && c <= '9'; });
  };
  ASSERT_EQ(time.size(), 15u) << first;
  EXPECT_TRUE(time.rfind("20", 0) == 0 && digits(0, 8) && time[8] == '-' && digits(9, 6)) << first;
  EXPECT_EQ(runOf(options), first) << "every Publisher of the process names one run";
  EXPECT_EQ(defaultRunName("train"), "train-" + time) << "the Python module names it by its script";
}

TEST_F(RunNames, LivemonRunNamesItUnlessTheOptionDoes) {
  environment_.set("LIVEMON_RUN", "resnet-lr3e-4");
  PublisherOptions options = test::testPublisherOptions();
  options.runName.clear();
  EXPECT_EQ(runOf(options), "resnet-lr3e-4");
  options.runName = "given";
  EXPECT_EQ(runOf(options), "given");
  environment_.set("LIVEMON_RUN", "");
  options.runName.clear();
  EXPECT_NE(runOf(options), "") << "empty is as unset";
}

TEST_F(RunNames, TheRanksOfAJobShareTheirLaunchersJobIdInsteadOfTheirStartTimes) {
  PublisherOptions options = test::testPublisherOptions();
  options.runName.clear();
  const std::string program = program_invocation_short_name;
  environment_.set("RANK", "2");
  EXPECT_EQ(runOf(options), program) << "no job id: the program's name alone, the same for every rank";
  environment_.set("SLURM_JOB_ID", "81234");
  EXPECT_EQ(runOf(options), program + "-81234");
  environment_.set("TORCHELASTIC_RUN_ID", "none");
  EXPECT_EQ(runOf(options), program + "-81234") << "torchrun's default id names nothing";
  environment_.set("TORCHELASTIC_RUN_ID", "5f0c4b1e-9a7d-4c3e-8b2a-1d6e7f809a1b");
  EXPECT_EQ(runOf(options), program + "-5f0c4b1e-9a7d-4c") << "cut short";
  environment_.unset("RANK");
  options.rank = 0;
  EXPECT_EQ(runOf(options), program + "-5f0c4b1e-9a7d-4c") << "a rank given as an option too";
  EXPECT_EQ(defaultRunName("train", 1), "train-5f0c4b1e-9a7d-4c");
}

}  // namespace
}  // namespace livemon::transport
