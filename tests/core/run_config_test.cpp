// setRunConfig: the run's config as the event that carries it, and what it refuses.
#include <livemon/event_handler.h>
#include <livemon/run_config.h>
#include <livemon/step.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "event_recorder.h"

namespace livemon {
namespace {

using testing::EventRecorder;

// The config is process-wide: every test starts and ends without one.
class RunConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clearRunConfig();
    clearStep();
  }
  void TearDown() override {
    clearRunConfig();
    clearStep();
  }
};

TEST_F(RunConfigTest, SettingAConfigLogsItAsOneEventWithEveryKey) {
  EventRecorder recorder;
  setStep(12);
  setRunConfig({{"lr", 3e-4}, {"batch", int64_t{64}}, {"optimizer", std::string("adam")}, {"amp", true}});
  const auto events = recorder.events();
  ASSERT_EQ(events.size(), 1u);
  const Event& event = events[0];
  EXPECT_EQ(event.name, kRunConfigEventName);
  EXPECT_EQ(event.step, 12);
  ASSERT_EQ(event.data.size(), 4u);
  EXPECT_EQ(event.data.at("lr"), DataValue(3e-4));
  EXPECT_EQ(event.data.at("batch"), DataValue(int64_t{64}));
  EXPECT_EQ(event.data.at("optimizer"), DataValue(std::string("adam")));
  EXPECT_EQ(event.data.at("amp"), DataValue(true));
}

TEST_F(RunConfigTest, TheCurrentConfigIsTheOneSetLast) {
  EXPECT_FALSE(currentRunConfig().has_value());
  EXPECT_FALSE(currentRunConfigEvent().has_value());
  setRunConfig({{"lr", 1e-3}, {"seed", int64_t{1}}});
  setRunConfig({{"lr", 3e-4}});
  const auto config = currentRunConfig();
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(*config, (RunConfig{{"lr", 3e-4}}));
  ASSERT_TRUE(currentRunConfigEvent().has_value());
  EXPECT_EQ(runConfigOf(*currentRunConfigEvent()), config);
  clearRunConfig();
  EXPECT_FALSE(currentRunConfig().has_value());
}

TEST_F(RunConfigTest, ABadConfigIsRefusedWithItsKeyAndNothingIsSet) {
  setRunConfig({{"lr", 1e-3}});
  EventRecorder recorder;
  const auto refused = [](RunConfig config, const std::string& says) {
    try {
      setRunConfig(std::move(config));
      ADD_FAILURE() << "accepted a config that should say: " << says;
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find(says), std::string::npos) << error.what();
    }
  };
  refused({{"", 1.0}}, "empty key");
  refused({{"step", int64_t{3}}}, "\"step\"");
  refused({{std::string(kMaxRunConfigKeyBytes + 1, 'k'), 1.0}}, "longer than");
  refused({{"notes", std::string(kMaxRunConfigStringBytes + 1, 'x')}}, "\"notes\"");
  RunConfig tooMany;
  for (std::size_t i = 0; i <= kMaxRunConfigKeys; ++i) tooMany.emplace(std::to_string(i), 1.0);
  refused(std::move(tooMany), "keys, at most");
  EXPECT_EQ(recorder.size(), 0u);
  EXPECT_EQ(currentRunConfig(), (RunConfig{{"lr", 1e-3}}));
}

TEST_F(RunConfigTest, OnlyARunConfigEventCarriesAConfigAndItsStepFieldIsNotPartOfIt) {
  Event other{"eval", std::chrono::system_clock::now(), {{"lr", 1.0}}};
  EXPECT_FALSE(runConfigOf(other).has_value());
  Event config{std::string(kRunConfigEventName), std::chrono::system_clock::now(),
               {{"lr", 1.0}, {"step", int64_t{5}}}};
  EXPECT_EQ(runConfigOf(config), (RunConfig{{"lr", 1.0}}));
}

}  // namespace
}  // namespace livemon
