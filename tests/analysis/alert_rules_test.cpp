// Alert rules: how their text is read (and refused), and what the engine tells, once per crossing
// and source, on a ManualClock.
#include <livemon/alert_rules.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace livemon {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

AlertRule rule(std::string_view text) { return parseAlertRuleOrThrow(text); }

AlertRuleError refusal(std::string_view text) {
  AlertRuleError error;
  EXPECT_FALSE(parseAlertRule(text, &error).has_value()) << text;
  EXPECT_FALSE(error.reason.empty()) << text;
  return error;
}

AlertSource source(std::string run = "job", std::optional<int64_t> rank = 0) {
  AlertSource s;
  s.run = std::move(run);
  s.host = "node";
  s.pid = 42;
  s.rank = rank;
  s.instanceId = 7;
  return s;
}

Event stat(std::string key, double value, int64_t second = 0) {
  return Event{std::string(kStatEventName), std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000 + second)),
               {{std::move(key), value}}};
}

// "k<i>.mean" (built step by step: GCC 12 warns falsely about "k" + std::string).
std::string numberedKey(int i) {
  std::string key = "k";
  key += std::to_string(i);
  key += ".mean";
  return key;
}

// ---------------------------------------------------------------------------------------------
// Parsing

TEST(AlertRuleParse, BuiltInRules) {
  EXPECT_EQ(rule("nan").kind, AlertRuleKind::NotFinite);
  EXPECT_EQ(rule("  NaN \t").kind, AlertRuleKind::NotFinite);
  EXPECT_EQ(rule("  NaN \t").text, "NaN");
  EXPECT_EQ(rule("loss").kind, AlertRuleKind::Loss);
  const AlertRule silent = rule("silent");
  EXPECT_EQ(silent.kind, AlertRuleKind::Silent);
  EXPECT_FALSE(silent.silentAfter.has_value());
}

TEST(AlertRuleParse, SilentTakesADuration) {
  EXPECT_EQ(rule("silent 30s").silentAfter, 30s);
  EXPECT_EQ(rule("silent 30").silentAfter, 30s);
  EXPECT_EQ(rule("silent 250ms").silentAfter, 250ms);
  EXPECT_EQ(rule("silent 1.5m").silentAfter, 90s);
  EXPECT_EQ(rule("silent 2h").silentAfter, 2h);
  EXPECT_EQ(rule("silent 7h").silentAfter, 7h);
}

TEST(AlertRuleParse, Thresholds) {
  const AlertRule r = rule("train.loss.mean > 10 for 3");
  EXPECT_EQ(r.kind, AlertRuleKind::Threshold);
  EXPECT_EQ(r.key, "train.loss.mean");
  EXPECT_EQ(r.comparison, AlertComparison::Greater);
  EXPECT_EQ(r.threshold, 10.0);
  EXPECT_EQ(r.consecutive, 3u);
  EXPECT_EQ(r.text, "train.loss.mean > 10 for 3");

  EXPECT_EQ(rule("eval.accuracy<0.5").comparison, AlertComparison::Less);
  EXPECT_EQ(rule("eval.accuracy<0.5").key, "eval.accuracy");
  EXPECT_EQ(rule("x >= -1e3").threshold, -1000.0);
  EXPECT_EQ(rule("x >= -1e3").comparison, AlertComparison::GreaterOrEqual);
  EXPECT_EQ(rule("x <= +2.5 FOR 2 windows").comparison, AlertComparison::LessOrEqual);
  EXPECT_EQ(rule("x <= +2.5 FOR 2 windows").consecutive, 2u);
  EXPECT_EQ(rule("x > 1").consecutive, 1u);
  // Keywords are keys when a comparison follows.
  EXPECT_EQ(rule("nan > 1").key, "nan");
  EXPECT_EQ(rule("silent < 1").kind, AlertRuleKind::Threshold);
}

TEST(AlertRuleParse, QuotedKeysHoldAnything) {
  const AlertRule r = rule(R"("gpu util > %" > 90)");
  EXPECT_EQ(r.key, "gpu util > %");
  EXPECT_EQ(rule(R"("a\"b\\c" < 0)").key, "a\"b\\c");
  EXPECT_EQ(rule(R"("nan")" " > 0").key, "nan");
}

TEST(AlertRuleParse, RefusalsSayWhereAndWhy) {
  struct Case {
    std::string text;
    std::size_t position;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"", 0, "empty rule"},
      {"   ", 0, "empty rule"},
      {"train.loss", 10, "expected a comparison"},
      {"train.loss 10", 11, "expected a comparison"},
      {"x == 3", 2, "unknown comparison \"==\""},
      {"x => 3", 2, "unknown comparison"},
      {"x >", 3, "expected a number after >"},
      {"x > ten", 4, "the threshold \"ten\" is not a number"},
      {"x > 1e999", 4, "out of range"},
      {"x > nan", 4, "not a finite number"},
      {"x > inf", 4, "not a finite number"},
      {"x > 1 during 3", 6, "expected \"for N\""},
      {"x > 1 for", 9, "expected a count"},
      {"x > 1 for 0", 10, "expected a count"},
      {"x > 1 for -2", 10, "expected a count"},
      {"x > 1 for 1000001", 10, "expected a count"},
      {"x > 1 for 3 apples", 12, "expected the end of the rule"},
      {"> 3", 0, "expected a key"},
      {"nan please", 4, "\"nan\" takes nothing"},
      {"loss 3", 5, "\"loss\" takes nothing"},
      {"silent 5 parsecs", 9, "unexpected text after the duration"},
      {"silent 5y", 8, "unknown unit \"y\""},
      {"silent s", 7, "missing its number"},
      {"silent 0s", 7, "from 1ms to 7 days"},
      {"silent 8000h", 7, "from 1ms to 7 days"},
      {"silent -1s", 7, "from 1ms to 7 days"},
      {R"("open > 3)", 0, "no closing quote"},
      {R"("" > 3)", 0, "quoted key is empty"},
      {R"("a\n" > 3)", 2, "only \\\" and \\\\ are escapes"},
  };
  for (const Case& c : cases) {
    const AlertRuleError error = refusal(c.text);
    EXPECT_EQ(error.position, c.position) << c.text << ": " << error.reason;
    EXPECT_THAT(error.reason, HasSubstr(c.reason)) << c.text;
  }
}

TEST(AlertRuleParse, TooLongAndControlCharactersAreRefusedReadably) {
  const AlertRuleError error = refusal(std::string(kMaxAlertRuleBytes + 1, 'x'));
  EXPECT_EQ(error.position, kMaxAlertRuleBytes);
  EXPECT_TRUE(parseAlertRule("k" + std::string(kMaxAlertRuleBytes - 5, 'x') + " > 1").has_value());
  try {
    parseAlertRuleOrThrow("x\x1b[2J > ?");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "rule \"x\\u001b[2J > ?\": at column 9: the threshold \"?\" is not a number");
  }
}

// ---------------------------------------------------------------------------------------------
// The engine

class AlertEngineTest : public ::testing::Test {
 protected:
  AlertEngine engine(std::vector<std::string> texts, AlertEngineOptions options = {}) {
    std::vector<AlertRule> rules;
    for (const std::string& text : texts) rules.push_back(rule(text));
    options.clock = &clock_;
    return AlertEngine(std::move(rules), options);
  }
  std::vector<Alert> feed(AlertEngine& e, const AlertSource& s, const Event& event) {
    std::vector<Alert> out;
    e.observeEvent(s, event, out);
    return out;
  }
  std::vector<Alert> silence(AlertEngine& e) {
    std::vector<Alert> out;
    e.checkSilence(out);
    return out;
  }

  ManualClock clock_;
};

TEST_F(AlertEngineTest, NanAndInfinityOfAnyNumberAlertOncePerKeyUntilFinite) {
  AlertEngine e = engine({"nan"});
  const AlertSource s = source();
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 1.0)).empty());

  auto alerts = feed(e, s, stat("train.loss.mean", kNaN, 5));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, AlertRuleKind::NotFinite);
  EXPECT_EQ(alerts[0].rule, "nan");
  EXPECT_EQ(alerts[0].key, "train.loss.mean");
  EXPECT_TRUE(std::isnan(alerts[0].value));
  EXPECT_EQ(alerts[0].source, s);
  EXPECT_EQ(alerts[0].time, stat("", 0, 5).timestamp);
  EXPECT_EQ(alerts[0].message, "train.loss.mean is NaN");

  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", kInf)).empty()) << "still not finite: told already";
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 2.0)).empty());
  alerts = feed(e, s, stat("train.loss.mean", -kInf));
  ASSERT_EQ(alerts.size(), 1u) << "finite again re-armed it";
  EXPECT_EQ(alerts[0].message, "train.loss.mean is -Inf");

  // Another key, and plain events' fields, by the dashboard's names; integers are never NaN,
  // strings and bools are not numbers.
  Event eval{"eval", clock_.wallNow(), {{"accuracy", kNaN}, {"epoch", int64_t{3}}, {"note", std::string("nan")}, {"ok", true}}};
  alerts = feed(e, s, eval);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].key, "eval.accuracy");
  Event torch{std::string(kTorchStatEventName), clock_.wallNow(), {{"gpu.util.mean", kInf}}};
  alerts = feed(e, s, torch);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].key, "gpu.util.mean");
}

TEST_F(AlertEngineTest, AnAlertCarriesTheStepItsEventStates) {
  AlertEngine e = engine({"nan", "eval.accuracy < 0.5"});
  const AlertSource s = source();
  Event window = stat("train.loss.mean", kNaN);
  window.step = 4200;
  auto alerts = feed(e, s, window);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].step, 4200);
  // A step in the event's data counts too; an event without one gives an alert without one.
  alerts = feed(e, s, Event{"eval", clock_.wallNow(), {{"accuracy", 0.1}, {"step", int64_t{4300}}}});
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].step, 4300);
  alerts = feed(e, s, stat("other.mean", kNaN));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_FALSE(alerts[0].step);
}

TEST_F(AlertEngineTest, EveryAggregationOfAStatWindowIsWatched) {
  AlertEngine e = engine({"nan"});
  Event window{std::string(kStatEventName), clock_.wallNow(),
               {{"loss.mean", kNaN}, {"loss.max", kInf}, {"loss.min", 0.5}, {"loss.count", 10.0}}};
  const auto alerts = feed(e, source(), window);
  std::vector<std::string> keys;
  for (const Alert& a : alerts) keys.push_back(a.key);
  EXPECT_THAT(keys, ::testing::UnorderedElementsAre("loss.mean", "loss.max"));
}

TEST_F(AlertEngineTest, ThresholdForNAlertsOnTheNthValueInARowAndReArms) {
  AlertEngine e = engine({"train.loss.mean > 10 for 3"});
  const AlertSource s = source();
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 11)).empty());
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 12)).empty());
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 9)).empty()) << "the run is broken";
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 11)).empty());
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 10)).empty()) << "> is strict";
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 11)).empty());
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 12)).empty());
  auto alerts = feed(e, s, stat("train.loss.mean", 13, 9));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, AlertRuleKind::Threshold);
  EXPECT_EQ(alerts[0].key, "train.loss.mean");
  EXPECT_EQ(alerts[0].value, 13.0);
  EXPECT_EQ(alerts[0].rule, "train.loss.mean > 10 for 3");
  EXPECT_EQ(alerts[0].message, "train.loss.mean = 13, > 10 for 3 values in a row");
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 50)).empty()) << "one alert per crossing";
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", kNaN)).empty()) << "NaN is not above anything";
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 11)).empty());
  EXPECT_TRUE(feed(e, s, stat("train.loss.mean", 11)).empty());
  EXPECT_EQ(feed(e, s, stat("train.loss.mean", 11)).size(), 1u) << "re-armed once the condition cleared";
}

TEST_F(AlertEngineTest, EachComparisonAndPlainEventKeys) {
  AlertEngine e = engine({"eval.accuracy < 0.5", "eval.accuracy >= 0.9", "step.ms <= 0", "x.y > 1"});
  const AlertSource s = source();
  auto evalEvent = [&](double accuracy) {
    return Event{"eval", clock_.wallNow(), {{"accuracy", accuracy}, {"loss", 1.0}}};
  };
  EXPECT_TRUE(feed(e, s, evalEvent(0.7)).empty());
  auto alerts = feed(e, s, evalEvent(0.4));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].rule, "eval.accuracy < 0.5");
  alerts = feed(e, s, evalEvent(0.9));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].rule, "eval.accuracy >= 0.9");
  // Integer values count as numbers; the key of a plain event is "<name>.<field>".
  alerts = feed(e, s, Event{"step", clock_.wallNow(), {{"ms", int64_t{0}}}});
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].key, "step.ms");
  // "x.y" is the Stat key or the field y of event x; not the field "x.y" of a Stat-less event "z".
  EXPECT_EQ(feed(e, s, Event{"x", clock_.wallNow(), {{"y", 2.0}}}).size(), 1u);
  EXPECT_TRUE(feed(e, s, Event{"z", clock_.wallNow(), {{"x.y", 2.0}}}).empty());
}

TEST_F(AlertEngineTest, SourcesAreIndependent) {
  AlertEngine e = engine({"loss.mean > 1 for 2", "nan"});
  const AlertSource rank0 = source("job", 0);
  const AlertSource rank1 = source("job", 1);
  AlertSource restarted = rank0;
  restarted.instanceId = 8;
  EXPECT_TRUE(feed(e, rank0, stat("loss.mean", 5)).empty());
  EXPECT_TRUE(feed(e, rank1, stat("loss.mean", 5)).empty()) << "rank 1's first value does not continue rank 0's run";
  auto alerts = feed(e, rank0, stat("loss.mean", 5));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].source, rank0);
  alerts = feed(e, rank1, stat("loss.mean", 5));
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].source, rank1);

  EXPECT_EQ(feed(e, rank0, stat("loss.mean", kNaN)).size(), 1u);
  EXPECT_EQ(feed(e, rank1, stat("loss.mean", kNaN)).size(), 1u) << "told per source";
  EXPECT_EQ(feed(e, restarted, stat("loss.mean", kNaN)).size(), 1u) << "a restarted publisher is another source";
}

TEST_F(AlertEngineTest, SilenceWithoutGoodbyeAfterTheRulesDuration) {
  AlertEngine e = engine({"silent 30s"});
  const AlertSource s = source();
  e.observeHeard(s, clock_.now(), 1000ms);
  clock_.advance(10s);
  e.observeHeard(s, clock_.now());
  clock_.advance(29s);
  e.observeHeard(s, clock_.now() - 35s);  // an older report changes nothing
  EXPECT_TRUE(silence(e).empty());
  clock_.advance(2s);
  auto alerts = silence(e);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].rule, "silent 30s");
  EXPECT_EQ(alerts[0].kind, AlertRuleKind::Silent);
  EXPECT_EQ(alerts[0].source, s);
  EXPECT_EQ(alerts[0].time, clock_.wallNow());
  EXPECT_EQ(alerts[0].value, 31.0);
  EXPECT_EQ(alerts[0].message, "job@node:42 rank 0 silent for 31 s without a goodbye");
  clock_.advance(100s);
  EXPECT_TRUE(silence(e).empty()) << "one alert per silence";
  e.observeHeard(s, clock_.now());
  EXPECT_TRUE(silence(e).empty()) << "heard again";
  clock_.advance(30001ms);
  EXPECT_EQ(silence(e).size(), 1u) << "the next silence";
}

TEST_F(AlertEngineTest, DefaultSilenceFollowsTheHeartbeatIntervalWithAFloor) {
  AlertEngine e = engine({"silent"});
  const AlertSource fast = source("fast");
  const AlertSource slow = source("slow");
  const AlertSource unknown = source("unknown");
  e.observeHeard(fast, clock_.now(), 20ms);       // 5 x 20 ms is below the 2 s floor
  e.observeHeard(slow, clock_.now(), 1000ms);     // 5 s
  e.observeHeard(unknown, clock_.now());          // 1 s assumed: 5 s
  clock_.advance(2001ms);
  auto alerts = silence(e);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].source, fast);
  clock_.advance(3000ms);
  alerts = silence(e);
  ASSERT_EQ(alerts.size(), 2u);
}

TEST_F(AlertEngineTest, GoodbyeIsNotSilenceAndEventsCountAsHeard) {
  AlertEngine e = engine({"silent 1s", "nan"});
  const AlertSource leaving = source("leaving");
  const AlertSource talking = source("talking");
  e.observeHeard(leaving, clock_.now());
  e.observeGoodbye(leaving);
  feed(e, talking, stat("a.mean", 1));
  clock_.advance(900ms);
  feed(e, talking, stat("a.mean", 1));
  clock_.advance(900ms);
  EXPECT_TRUE(silence(e).empty());
  clock_.advance(200ms);
  auto alerts = silence(e);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].source, talking);
  // Heard again after its goodbye (the subscriber calls it alive again): followed again.
  e.observeHeard(leaving, clock_.now());
  clock_.advance(2s);
  alerts = silence(e);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].source, leaving);
}

TEST_F(AlertEngineTest, LossFromGapsAndPublisherDropsToldOncePerEpisode) {
  AlertEngine e = engine({"loss"}, AlertEngineOptions{.lossQuiet = 10s});
  const AlertSource s = source();
  std::vector<Alert> out;
  e.observePublisherDropped(s, 7, out);
  EXPECT_TRUE(out.empty()) << "the first count is the baseline";
  e.observePublisherDropped(s, 7, out);
  EXPECT_TRUE(out.empty());
  e.observePublisherDropped(s, 12, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, AlertRuleKind::Loss);
  EXPECT_EQ(out[0].key, "publisher.dropped");
  EXPECT_EQ(out[0].value, 5.0);
  EXPECT_EQ(out[0].message, "the publisher dropped 5 event(s) (12 in all)");
  out.clear();
  clock_.advance(5s);
  e.observeGap(s, "train.loss", 3, out);
  EXPECT_TRUE(out.empty()) << "the same episode of losses";
  clock_.advance(9s);
  e.observeGap(s, "train.loss", 3, out);
  EXPECT_TRUE(out.empty()) << "losses keep coming: still the same episode";
  clock_.advance(10s);
  e.observeGap(s, "train.loss", 4, out);
  ASSERT_EQ(out.size(), 1u) << "10 s without losses ended the episode";
  EXPECT_EQ(out[0].key, "train.loss");
  EXPECT_EQ(out[0].value, 4.0);
  EXPECT_EQ(out[0].message, "4 event(s) of train.loss lost in transit");
  out.clear();
  e.observeGap(source("other"), "x", 1, out);
  EXPECT_EQ(out.size(), 1u) << "per source";
}

TEST_F(AlertEngineTest, RulesOnlyAlertForTheirOwnKind) {
  AlertEngine e = engine({"x.mean > 1"});
  std::vector<Alert> out;
  e.observeGap(source(), "x", 100, out);
  e.observePublisherDropped(source(), 0, out);
  e.observePublisherDropped(source(), 100, out);
  e.observeHeard(source(), clock_.now());
  clock_.advance(1h);
  e.checkSilence(out);
  e.observeEvent(source(), stat("x.mean", kNaN), out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(e.stats().alerts, 0u);
}

TEST_F(AlertEngineTest, StatesAreCappedAndTheOldestIsForgotten) {
  AlertEngine e = engine({"nan"}, AlertEngineOptions{.maxStates = 4});
  const AlertSource s = source();
  // A hostile peer sends NaN under ever new keys: memory stays at the cap.
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(feed(e, s, stat(numberedKey(i), kNaN)).size(), 1u);
  EXPECT_EQ(e.stats().states, 4u);
  EXPECT_EQ(e.stats().statesForgotten, 996u);
  EXPECT_EQ(e.stats().alerts, 1000u);
  // The newest keys are still known: no second alert for them.
  EXPECT_TRUE(feed(e, s, stat("k999.mean", kNaN)).empty());
  // A forgotten one alerts again (once): the price of the bound.
  EXPECT_EQ(feed(e, s, stat("k0.mean", kNaN)).size(), 1u);
  // Finite values re-arm and free their states.
  for (int i = 0; i < 1000; ++i) feed(e, s, stat(numberedKey(i), 1.0));
  EXPECT_EQ(e.stats().states, 0u);
}

TEST_F(AlertEngineTest, SourcesAreCappedAndTheLeastRecentlyHeardIsForgotten) {
  AlertEngine e = engine({"silent 1s", "x.mean > 0 for 2"}, AlertEngineOptions{.maxSources = 3});
  for (int i = 0; i < 100; ++i) e.observeHeard(source("fake" + std::to_string(i)), clock_.now());
  EXPECT_EQ(e.stats().sources, 3u);
  EXPECT_EQ(e.stats().sourcesForgotten, 97u);
  const AlertSource real = source("real");
  feed(e, real, stat("x.mean", 1));
  EXPECT_EQ(e.stats().sources, 3u);
  clock_.advance(2s);
  auto alerts = silence(e);
  EXPECT_EQ(alerts.size(), 3u) << "the real source and the two fakes heard last";
  // Forgotten with its source: the run starts afresh after the source is.
  for (int i = 0; i < 3; ++i) e.observeHeard(source("again" + std::to_string(i)), clock_.now());
  EXPECT_TRUE(feed(e, real, stat("x.mean", 1)).empty());
  EXPECT_EQ(feed(e, real, stat("x.mean", 1)).size(), 1u);
}

TEST_F(AlertEngineTest, BadOptionsAreRefused) {
  EXPECT_THROW(engine({"nan"}, AlertEngineOptions{.maxStates = 0}), std::invalid_argument);
  EXPECT_THROW(engine({"nan"}, AlertEngineOptions{.maxSources = 0}), std::invalid_argument);
  EXPECT_THROW(engine(std::vector<std::string>(1025, "nan")), std::invalid_argument);
}

TEST(AlertSourceName, NamesTheSourceWithoutTheWorldSize) {
  EXPECT_EQ(alertSourceName(source("job", 3)), "job@node:42 rank 3");
  EXPECT_EQ(alertSourceName(source("job", std::nullopt)), "job@node:42");
  SourceInfo ranked = source("job", 3);
  ranked.worldSize = 8;
  EXPECT_EQ(alertSourceName(ranked), "job@node:42 rank 3") << "alerts name a rank as they always did";
  EXPECT_EQ(describe(ranked), "job@node:42 rank 3/8");
}

}  // namespace
}  // namespace livemon
