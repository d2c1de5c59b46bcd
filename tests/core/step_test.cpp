// setStep and the step every event and Stat window carries.
#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/step.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "event_recorder.h"

namespace livemon {
namespace {

using namespace std::chrono_literals;
using testing::EventRecorder;

// The step is process-wide: every test starts and ends without one.
class StepTest : public ::testing::Test {
 protected:
  void SetUp() override { clearStep(); }
  void TearDown() override { clearStep(); }
};

Event named(std::string name) { return Event{std::move(name), std::chrono::system_clock::now(), {}}; }

TEST_F(StepTest, ThereIsNoStepUntilOneIsSet) {
  EXPECT_FALSE(currentStep().has_value());
  EventRecorder recorder;
  logEvent(named("before"));
  ASSERT_EQ(recorder.size(), 1u);
  EXPECT_FALSE(recorder.events()[0].step.has_value());
}

TEST_F(StepTest, EventsCarryTheStepCurrentWhenTheyWereLogged) {
  EventRecorder recorder;
  setStep(7);
  const Event lvalue = named("lvalue");
  logEvent(lvalue);
  setStep(8);
  logEvent(named("rvalue"));
  const auto events = recorder.events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].step, 7);
  EXPECT_EQ(events[1].step, 8);
  EXPECT_FALSE(lvalue.step.has_value()) << "the caller's event is left as it was";
}

TEST_F(StepTest, AnEventsOwnStepWinsOverTheCurrentOne) {
  EventRecorder recorder;
  setStep(100);
  Event own = named("own");
  own.step = 3;
  logEvent(own);
  Event field = named("field");
  field.data["step"] = int64_t{42};
  logEvent(field);
  Event both = named("both");
  both.step = 5;
  both.data["step"] = int64_t{6};
  logEvent(both);
  Event notAnInt = named("double step");
  notAnInt.data["step"] = 9.0;  // only an int64 field states a step
  logEvent(notAnInt);
  const auto events = recorder.events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].step, 3);
  EXPECT_EQ(events[1].step, 42) << "a \"step\" field states the step";
  EXPECT_EQ(events[2].step, 5);
  EXPECT_EQ(statedStep(events[2]), 5);
  EXPECT_EQ(events[3].step, 100);
}

// logEvent hands handlers the caller's own event, not a copy, whichever overload is called: the
// step goes beside it, readable through statedStep while the handler runs, and nowhere after.
TEST_F(StepTest, HandlersGetTheCallersEventWithTheStepBesideIt) {
  struct Seen {
    const Event* address = nullptr;
    std::optional<int64_t> ownStep;
    std::optional<int64_t> stated;
  };
  std::vector<Seen> seen;
  const EventHandlerHandle handle = registerEventHandler([&](const Event& event) {
    seen.push_back({&event, event.step, statedStep(event)});
  });
  setStep(7);
  const Event lvalue = named("lvalue");
  logEvent(lvalue);
  Event rvalue = named("rvalue");
  logEvent(std::move(rvalue));
  unregisterEventHandler(handle);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].address, &lvalue) << "not a copy";
  EXPECT_EQ(seen[1].address, &rvalue) << "not a copy";  // NOLINT(bugprone-use-after-move)
  for (const Seen& one : seen) {
    EXPECT_FALSE(one.ownStep.has_value());
    EXPECT_EQ(one.stated, 7);
  }
  EXPECT_FALSE(statedStep(lvalue).has_value()) << "the step stays with the handler call";
}

// A handler that logs an event of its own gets that event's step, and the outer event's step is
// back once the inner logEvent returns.
TEST_F(StepTest, AHandlerThatLogsKeepsBothSteps) {
  std::vector<std::pair<std::string, std::optional<int64_t>>> seen;
  bool nested = false;
  const EventHandlerHandle handle = registerEventHandler([&](const Event& event) {
    if (event.name == "outer" && !nested) {
      nested = true;
      Event inner = named("inner");
      inner.data["step"] = int64_t{99};
      logEvent(inner);
    }
    seen.emplace_back(event.name, statedStep(event));
  });
  setStep(5);
  const Event outer = named("outer");
  logEvent(outer);
  unregisterEventHandler(handle);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], std::make_pair(std::string("inner"), std::optional<int64_t>(99)));
  EXPECT_EQ(seen[1], std::make_pair(std::string("outer"), std::optional<int64_t>(5)));
}

TEST_F(StepTest, AStepFieldCountsEvenWithoutSetStep) {
  EventRecorder recorder;
  Event field = named("eval");
  field.data["step"] = int64_t{-4};
  logEvent(field);
  ASSERT_EQ(recorder.size(), 1u);
  EXPECT_EQ(statedStep(recorder.events()[0]), -4);
}

TEST_F(StepTest, ClearStepEndsIt) {
  setStep(1);
  clearStep();
  EXPECT_FALSE(currentStep().has_value());
  EventRecorder recorder;
  logEvent(named("after"));
  EXPECT_FALSE(recorder.events().at(0).step.has_value());
}

TEST_F(StepTest, AnyStepButTheReservedValueIsKept) {
  for (const int64_t step : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::max(),
                             std::numeric_limits<int64_t>::min() + 1}) {
    setStep(step);
    EXPECT_EQ(currentStep(), step);
  }
  setStep(std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(currentStep().has_value());
}

TEST_F(StepTest, TheStepIsProcessWide) {
  setStep(11);
  std::optional<int64_t> seen;
  std::thread([&] { seen = currentStep(); }).join();
  EXPECT_EQ(seen, 11);
}

TEST_F(StepTest, AStatWindowCarriesTheStepCurrentWhenItClosed) {
  ManualClock clock{std::chrono::steady_clock::time_point(1'000ms)};
  EventRecorder recorder;
  Stat stat("loss", {Aggregation::Mean}, 1'000ms, std::numeric_limits<int64_t>::max(), clock);
  setStep(1);
  stat.add(1.0);
  setStep(2);
  stat.add(2.0);
  setStep(3);
  clock.advance(1'000ms);
  const auto windows = recorder.named(kStatEventName);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_EQ(windows[0].step, 3);
}

TEST_F(StepTest, AStatWindowWithoutAStepHasNone) {
  ManualClock clock{std::chrono::steady_clock::time_point(1'000ms)};
  EventRecorder recorder;
  Stat stat("loss", {Aggregation::Mean}, 1'000ms, std::numeric_limits<int64_t>::max(), clock);
  stat.add(1.0);
  stat.flush();
  const auto windows = recorder.named(kStatEventName);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_FALSE(windows[0].step.has_value());
}

TEST_F(StepTest, StatedStepReadsTheEventOnly) {
  setStep(50);
  Event event = named("e");
  EXPECT_FALSE(statedStep(event).has_value());
  event.data["step"] = std::string("12");
  EXPECT_FALSE(statedStep(event).has_value());
  event.data["step"] = int64_t{12};
  EXPECT_EQ(statedStep(event), 12);
  event.step = 13;
  EXPECT_EQ(statedStep(event), 13);
}

TEST_F(StepTest, EventsDifferingOnlyInStepAreNotEqual) {
  Event a = named("e");
  Event b = a;
  EXPECT_EQ(a, b);
  b.step = 1;
  EXPECT_NE(a, b);
  EXPECT_NE(toString(b).find("step=1"), std::string::npos);
}

}  // namespace
}  // namespace livemon
