// Stat window logic on a ManualClock: every window closes exactly when the test moves time.
#include <livemon/event_handler.h>
#include <livemon/quantile_sketch.h>
#include <livemon/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "event_recorder.h"

namespace livemon {
namespace {

using namespace std::chrono_literals;
using testing::EventRecorder;
using ::testing::HasSubstr;

constexpr int64_t kNoCap = std::numeric_limits<int64_t>::max();

class StatTest : public ::testing::Test {
 protected:
  // Starts mid-window for most window sizes, so alignment matters.
  ManualClock clock{std::chrono::steady_clock::time_point(123'456ms)};
  EventRecorder recorder;

  std::vector<Event> statEvents() const { return recorder.named(kStatEventName); }
};

// --- torch.monitor's own cases, restated as behaviour -------------------------------------

TEST_F(StatTest, FixedCountWindowLogsWhenMaxSamplesIsReached) {
  Stat a("a", {Aggregation::Mean, Aggregation::Count}, 100'000ms, 2, clock);
  a.add(5.0);
  EXPECT_EQ(a.count(), 1);
  a.add(6.0);
  EXPECT_EQ(a.count(), 0);
  EXPECT_EQ(a.get(), (std::map<Aggregation, double>{{Aggregation::Mean, 5.5}, {Aggregation::Count, 2.0}}));
  ASSERT_EQ(statEvents().size(), 1u);
}

TEST_F(StatTest, SumValueMeanCountMinMax) {
  Stat a("a",
         {Aggregation::Sum, Aggregation::Value, Aggregation::Mean, Aggregation::Count, Aggregation::Min,
          Aggregation::Max},
         100'000ms, 6, clock);
  for (double v : {0.0, 5.0, -5.0, -6.0, 9.0, 2.0}) a.add(v);
  const auto stats = a.get();
  EXPECT_EQ(stats.at(Aggregation::Sum), 5.0);
  EXPECT_EQ(stats.at(Aggregation::Value), 2.0);  // the last value (torch.monitor 1.13 gets this wrong)
  EXPECT_DOUBLE_EQ(stats.at(Aggregation::Mean), 5.0 / 6.0);
  EXPECT_EQ(stats.at(Aggregation::Count), 6.0);
  EXPECT_EQ(stats.at(Aggregation::Min), -6.0);
  EXPECT_EQ(stats.at(Aggregation::Max), 9.0);
}

TEST_F(StatTest, AddsAfterTheCapAreDroppedUntilTheWindowEnds) {
  Stat a("a", {Aggregation::Count, Aggregation::Sum}, 100'000ms, 3, clock);
  a.add(1);
  a.add(2);
  EXPECT_EQ(a.count(), 2);
  a.add(3);
  EXPECT_EQ(a.count(), 0);
  a.add(4);  // same window, already logged: dropped
  EXPECT_EQ(a.count(), 0);
  EXPECT_EQ(a.droppedCount(), 1);
  EXPECT_EQ(a.get(), (std::map<Aggregation, double>{{Aggregation::Count, 3.0}, {Aggregation::Sum, 6.0}}));
  ASSERT_EQ(statEvents().size(), 1u);

  clock.advance(100'000ms);  // the capped window ends: nothing more to log, adds count again
  EXPECT_EQ(statEvents().size(), 1u);
  a.add(10);
  EXPECT_EQ(a.count(), 1);
}

TEST_F(StatTest, TenYearWindowBehavesTheSame) {
  Stat a("a", {Aggregation::Count, Aggregation::Sum}, std::chrono::hours(24 * 365 * 10), 3, clock);
  a.add(1);
  a.add(2);
  EXPECT_EQ(a.count(), 2);
  a.add(3);
  EXPECT_EQ(a.count(), 0);
  a.add(4);
  EXPECT_EQ(a.count(), 0);
  EXPECT_EQ(a.get(), (std::map<Aggregation, double>{{Aggregation::Count, 3.0}, {Aggregation::Sum, 6.0}}));
}

TEST_F(StatTest, WindowChangeLogsAStatEvent) {
  Stat a("a", {Aggregation::Mean, Aggregation::Count}, 10s, kNoCap, clock);
  a.add(1);
  EXPECT_EQ(a.count(), 1);
  a.add(2);
  EXPECT_EQ(a.count(), 2);
  EXPECT_TRUE(statEvents().empty());

  clock.advance(10s);  // past the window's end, with no further add

  ASSERT_EQ(statEvents().size(), 1u);
  const Event e = statEvents().at(0);
  EXPECT_EQ(e.name, "livemon.Stat");
  EXPECT_EQ(e.timestamp, clock.wallNow());
  EXPECT_EQ(e.data, (std::unordered_map<std::string, DataValue>{{"a.mean", 1.5}, {"a.count", 2.0}}));
  EXPECT_EQ(a.count(), 0);
  a.add(3);
  EXPECT_EQ(a.count(), 1);
}

TEST_F(StatTest, DestructorLogsTheOpenWindow) {
  {
    Stat a("a", {Aggregation::Count}, std::chrono::hours(10), kNoCap, clock);
    a.add(1);
    EXPECT_EQ(a.count(), 1);
    EXPECT_TRUE(statEvents().empty());
  }
  ASSERT_EQ(statEvents().size(), 1u);
  EXPECT_EQ(statEvents()[0].data, (std::unordered_map<std::string, DataValue>{{"a.count", 1.0}}));
}

// --- window timing -------------------------------------------------------------------------

TEST_F(StatTest, WindowsAreAlignedToMultiplesOfTheirSize) {
  ManualClock at1234{std::chrono::steady_clock::time_point(1'234ms)};
  Stat a("a", {Aggregation::Count}, 1000ms, kNoCap, at1234);
  a.add(1);
  at1234.advance(765ms);  // 1999 ms: the window [1000, 2000) is still open
  EXPECT_TRUE(statEvents().empty());
  at1234.advance(1ms);  // 2000 ms
  EXPECT_EQ(statEvents().size(), 1u);
}

TEST_F(StatTest, ClosesOnTimeEvenWhenNoFurtherAddComes) {
  Stat a("a", {Aggregation::Sum}, 50ms, kNoCap, clock);
  a.add(4);              // at 123456 ms, in the window [123450, 123500)
  clock.advance(43ms);   // 123499 ms
  EXPECT_TRUE(statEvents().empty());
  clock.advance(1ms);
  ASSERT_EQ(statEvents().size(), 1u);
  EXPECT_EQ(a.get().at(Aggregation::Sum), 4.0);
}

TEST_F(StatTest, EmptyWindowsAreNeverLogged) {
  Stat a("a", {Aggregation::Count}, 10ms, kNoCap, clock);
  clock.advance(1s);
  EXPECT_TRUE(statEvents().empty());
  a.add(1);
  clock.advance(10ms);
  EXPECT_EQ(statEvents().size(), 1u);
  clock.advance(1s);  // a hundred empty windows
  EXPECT_EQ(statEvents().size(), 1u);
}

TEST_F(StatTest, EachWindowReportsOnlyItsOwnSamples) {
  Stat a("a", {Aggregation::Mean, Aggregation::Count}, 10ms, kNoCap, clock);
  a.add(1);
  a.add(3);
  clock.advance(10ms);
  a.add(10);
  clock.advance(10ms);
  const auto events = statEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data.at("a.mean"), DataValue(2.0));
  EXPECT_EQ(events[1].data.at("a.mean"), DataValue(10.0));
  EXPECT_EQ(events[1].data.at("a.count"), DataValue(1.0));
}

TEST_F(StatTest, ALateCloseStillLogsOnce) {
  Stat a("a", {Aggregation::Count}, 10ms, kNoCap, clock);
  a.add(1);
  a.add(1);
  clock.advance(1h);  // the clock jumps far past the window's end
  ASSERT_EQ(statEvents().size(), 1u);
  EXPECT_EQ(statEvents()[0].data.at("a.count"), DataValue(2.0));
}

TEST_F(StatTest, StatsWithDifferentWindowsCloseIndependently) {
  Stat fast("fast", {Aggregation::Count}, 10ms, kNoCap, clock);
  Stat slow("slow", {Aggregation::Count}, 1s, kNoCap, clock);
  for (int i = 0; i < 100; ++i) {
    fast.add(1);
    slow.add(1);
    clock.advance(10ms);
  }
  clock.advance(1s);
  std::size_t fastWindows = 0;
  double slowSamples = 0;
  for (const Event& e : statEvents()) {
    if (e.data.count("fast.count")) ++fastWindows;
    if (auto it = e.data.find("slow.count"); it != e.data.end()) slowSamples += std::get<double>(it->second);
  }
  EXPECT_EQ(fastWindows, 100u);
  EXPECT_EQ(slowSamples, 100.0);
}

// --- flush, get, count ---------------------------------------------------------------------

TEST_F(StatTest, GetReturnsZerosBeforeTheFirstClose) {
  Stat a("a", {Aggregation::Mean, Aggregation::P99}, 10s, kNoCap, clock);
  EXPECT_EQ(a.get(), (std::map<Aggregation, double>{{Aggregation::Mean, 0.0}, {Aggregation::P99, 0.0}}));
  a.add(7);
  EXPECT_EQ(a.get().at(Aggregation::Mean), 0.0);  // the window is still open
}

TEST_F(StatTest, FlushClosesTheOpenWindowNow) {
  Stat a("a", {Aggregation::Sum}, 10s, kNoCap, clock);
  a.flush();  // empty: nothing to log
  EXPECT_TRUE(statEvents().empty());
  a.add(1);
  a.add(2);
  a.flush();
  ASSERT_EQ(statEvents().size(), 1u);
  EXPECT_EQ(a.count(), 0);
  EXPECT_EQ(a.get().at(Aggregation::Sum), 3.0);
  a.add(5);
  clock.advance(10s);
  ASSERT_EQ(statEvents().size(), 2u);
  EXPECT_EQ(a.get().at(Aggregation::Sum), 5.0);
}

TEST_F(StatTest, FlushLiftsTheCap) {
  Stat a("a", {Aggregation::Count}, 10s, 1, clock);
  a.add(1);
  a.add(1);
  EXPECT_EQ(a.droppedCount(), 1);
  a.flush();
  a.add(1);
  EXPECT_EQ(statEvents().size(), 2u);
  EXPECT_EQ(a.droppedCount(), 1);
}

TEST_F(StatTest, DestroyingAnEmptyStatLogsNothing) {
  { Stat a("a", {Aggregation::Count}, 10s, kNoCap, clock); }
  {
    Stat b("b", {Aggregation::Count}, 10s, kNoCap, clock);
    b.add(1);
    b.flush();
  }
  EXPECT_EQ(statEvents().size(), 1u);
}

TEST_F(StatTest, EveryConfiguredAggregationIsReportedUnderItsKey) {
  std::vector<Aggregation> all(kAllAggregations.begin(), kAllAggregations.end());
  Stat a("train.loss", all, 10ms, kNoCap, clock);
  a.add(1);
  clock.advance(10ms);
  const auto events = statEvents();
  ASSERT_EQ(events.size(), 1u);
  const auto& data = events[0].data;
  EXPECT_EQ(data.size(), all.size());
  for (Aggregation aggregation : all) {
    const std::string key = "train.loss." + std::string(aggregationName(aggregation));
    ASSERT_TRUE(data.count(key)) << key;
    EXPECT_TRUE(std::holds_alternative<double>(data.at(key))) << key;
  }
}

TEST_F(StatTest, RepeatedAggregationsAreReportedOnce) {
  Stat a("a", {Aggregation::Max, Aggregation::Max, Aggregation::Min}, 10ms, kNoCap, clock);
  EXPECT_EQ(a.aggregations(), (std::vector<Aggregation>{Aggregation::Max, Aggregation::Min}));
}

TEST_F(StatTest, AccessorsReturnTheConfiguration) {
  Stat a("a", {Aggregation::Max}, 250ms, 9, clock);
  EXPECT_EQ(a.name(), "a");
  EXPECT_EQ(a.windowSize(), 250ms);
  EXPECT_EQ(a.maxSamples(), 9);
}

// --- the numbers ---------------------------------------------------------------------------

TEST_F(StatTest, StddevIsThePopulationStandardDeviation) {
  Stat a("a", {Aggregation::Stddev}, 10ms, kNoCap, clock);
  for (double v : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) a.add(v);
  clock.advance(10ms);
  EXPECT_DOUBLE_EQ(a.get().at(Aggregation::Stddev), 2.0);
  a.add(3);
  clock.advance(10ms);
  EXPECT_EQ(a.get().at(Aggregation::Stddev), 0.0);
}

TEST_F(StatTest, StddevStaysAccurateFarFromZero) {
  Stat a("a", {Aggregation::Stddev, Aggregation::Mean}, 10ms, kNoCap, clock);
  for (double v : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) a.add(1e9 + v);
  clock.advance(10ms);
  EXPECT_NEAR(a.get().at(Aggregation::Stddev), 2.0, 1e-6);
  EXPECT_DOUBLE_EQ(a.get().at(Aggregation::Mean), 1e9 + 5.0);
}

TEST_F(StatTest, QuantilesAreWithinTheStatedRelativeError) {
  Stat a("a", {Aggregation::P50, Aggregation::P90, Aggregation::P99}, 10ms, kNoCap, clock);
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(0.0, 1.5);
  std::vector<double> samples(20'000);
  for (double& v : samples) {
    v = dist(rng);
    a.add(v);
  }
  clock.advance(10ms);
  std::sort(samples.begin(), samples.end());
  auto exact = [&](double q) { return samples[static_cast<std::size_t>(std::ceil(q * samples.size())) - 1]; };
  const auto stats = a.get();
  const double bound = QuantileSketch::kRelativeError * (1 + 1e-12);
  EXPECT_LE(std::abs(stats.at(Aggregation::P50) - exact(0.50)) / exact(0.50), bound);
  EXPECT_LE(std::abs(stats.at(Aggregation::P90) - exact(0.90)) / exact(0.90), bound);
  EXPECT_LE(std::abs(stats.at(Aggregation::P99) - exact(0.99)) / exact(0.99), bound);
}

TEST_F(StatTest, QuantileWindowsDoNotLeakIntoEachOther) {
  Stat a("a", {Aggregation::P50}, 10ms, kNoCap, clock);
  for (int i = 0; i < 100; ++i) a.add(1000);
  clock.advance(10ms);
  a.add(1);
  clock.advance(10ms);
  EXPECT_EQ(a.get().at(Aggregation::P50), 1.0);
}

TEST_F(StatTest, NanPoisonsMeanAndSumButNotMinAndMax) {
  Stat a("a", {Aggregation::Mean, Aggregation::Sum, Aggregation::Min, Aggregation::Max, Aggregation::Value}, 10ms,
         kNoCap, clock);
  a.add(1);
  a.add(std::nan(""));
  a.add(3);
  clock.advance(10ms);
  auto stats = a.get();
  EXPECT_TRUE(std::isnan(stats.at(Aggregation::Mean)));  // a diverging loss must show
  EXPECT_TRUE(std::isnan(stats.at(Aggregation::Sum)));
  EXPECT_EQ(stats.at(Aggregation::Min), 1.0);
  EXPECT_EQ(stats.at(Aggregation::Max), 3.0);
  EXPECT_EQ(stats.at(Aggregation::Value), 3.0);

  a.add(std::nan(""));
  clock.advance(10ms);
  stats = a.get();
  EXPECT_TRUE(std::isnan(stats.at(Aggregation::Min)));
  EXPECT_TRUE(std::isnan(stats.at(Aggregation::Max)));
}

TEST_F(StatTest, InfinitiesAreKept) {
  Stat a("a", {Aggregation::Max, Aggregation::Min}, 10ms, kNoCap, clock);
  a.add(std::numeric_limits<double>::infinity());
  a.add(-std::numeric_limits<double>::infinity());
  clock.advance(10ms);
  EXPECT_EQ(a.get().at(Aggregation::Max), std::numeric_limits<double>::infinity());
  EXPECT_EQ(a.get().at(Aggregation::Min), -std::numeric_limits<double>::infinity());
}

// --- bad arguments -------------------------------------------------------------------------

template <typename F>
std::string invalidArgumentMessage(F&& make) {
  try {
    make();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "<no std::invalid_argument thrown>";
}

TEST_F(StatTest, BadArgumentsThrowNamingTheArgument) {
  EXPECT_THAT(invalidArgumentMessage([] { Stat("", {Aggregation::Mean}, 1s); }), HasSubstr("name"));
  EXPECT_THAT(invalidArgumentMessage([] { Stat("a", {Aggregation::Mean}, 0ms); }), HasSubstr("windowSize"));
  EXPECT_THAT(invalidArgumentMessage([] { Stat("a", {Aggregation::Mean}, -5ms); }), HasSubstr("windowSize"));
  EXPECT_THAT(invalidArgumentMessage([] { Stat("a", {Aggregation::Mean}, 1s, 0); }), HasSubstr("maxSamples"));
  EXPECT_THAT(invalidArgumentMessage([] { Stat("a", {Aggregation::Mean}, 1s, -1); }), HasSubstr("maxSamples"));
  EXPECT_THAT(invalidArgumentMessage([] { Stat("a", {}, 1s); }), HasSubstr("aggregations"));
  EXPECT_THAT(invalidArgumentMessage([] { Stat("a", {static_cast<Aggregation>(99)}, 1s); }),
              HasSubstr("aggregations"));
}

TEST_F(StatTest, SmallestValidArgumentsAreAccepted) {
  EXPECT_NO_THROW(Stat("a", {Aggregation::Mean}, 1ms, 1, clock));
}

// --- re-entrancy ---------------------------------------------------------------------------

TEST_F(StatTest, HandlerMayUseTheStatThatIsLogging) {
  Stat a("a", {Aggregation::Count}, 10ms, kNoCap, clock);
  int seen = 0;
  auto handle = registerEventHandler([&](const Event& e) {
    if (e.name != kStatEventName || !e.data.count("a.count")) return;
    ++seen;
    a.add(1);        // add to the Stat whose window is closing
    (void)a.get();   // read it
    if (seen == 1) a.flush();
  });
  a.add(1);
  clock.advance(10ms);
  EXPECT_EQ(seen, 2);  // the close, then the flush of the add made inside it
  unregisterEventHandler(handle);
}

}  // namespace
}  // namespace livemon
