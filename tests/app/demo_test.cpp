// `livemonctl demo`: the synthetic job looks like training, and the demo publishes it.
#include <livemonctl/demo.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <livemon/rank_scores.h>
#include <livemon/run_config.h>
#include <livemon/step.h>
#include <livemon/transport/subscriber.h>
#include <livemonctl/command.h>
#include <livemonctl/demo_ranks.h>
#include <livemonctl/run_config_option.h>
#include <livemonctl/synthetic_training_job.h>

#include "recorded_sample.h"
#include "test_support.h"

namespace livemon::livemonctl {
namespace {

using namespace transport;

TEST(SyntheticTrainingJob, LooksLikeTraining) {
  SyntheticTrainingJob job(42, 100.0, 100);
  std::vector<TrainingStep> steps;
  std::vector<EvalResult> evals;
  for (int i = 0; i < 6000; ++i) {
    steps.push_back(job.next());
    if (auto eval = job.evalDue()) evals.push_back(*eval);
  }
  auto meanLoss = [&](std::size_t from, std::size_t to) {
    double sum = 0;
    for (std::size_t i = from; i < to; ++i) sum += steps[i].loss;
    return sum / static_cast<double>(to - from);
  };
  EXPECT_GT(meanLoss(0, 200), 2 * meanLoss(5800, 6000)) << "the loss falls";
  int spikes = 0;
  for (std::size_t i = 1; i < steps.size(); ++i) spikes += steps[i].loss > 2 * steps[i - 1].loss;
  EXPECT_GT(spikes, 10) << "with occasional spikes";
  EXPECT_LT(spikes, 200);
  EXPECT_LT(steps[0].learningRate, steps[199].learningRate) << "warm-up";
  EXPECT_GT(steps[199].learningRate, steps[5999].learningRate) << "then decay";
  ASSERT_EQ(evals.size(), 60u);
  EXPECT_EQ(evals[0].epoch, 1);
  EXPECT_EQ(evals[0].step, 100);
  EXPECT_LT(evals[0].accuracy, evals.back().accuracy);
  for (const auto& s : steps) {
    EXPECT_GT(s.stepTimeMs, 0);
    EXPECT_GT(s.samplesPerSecond, 0);
    EXPECT_LT(s.dataWaitMs, s.stepTimeMs);
    EXPECT_GT(s.memoryGb, 4);
  }
}

// `--diverge-at`: a run that diverges, so alerts can be tried on the demo.
TEST(SyntheticTrainingJob, DivergesWhenAsked) {
  SyntheticTrainingJob steady(7, 100.0, 100);
  SyntheticTrainingJob diverging(7, 100.0, 100);
  diverging.divergeAt(50);
  std::vector<TrainingStep> a, b;
  for (int i = 0; i < 120; ++i) {
    a.push_back(steady.next());
    b.push_back(diverging.next());
  }
  for (int i = 0; i < 50; ++i) EXPECT_EQ(a[i].loss, b[i].loss) << "the same run until step 50";
  EXPECT_GT(b[85].loss, 50 * a[85].loss) << "then it blows up";
  EXPECT_TRUE(std::isfinite(b[89].loss));
  for (int i = 90; i < 120; ++i) {
    EXPECT_TRUE(std::isnan(b[i].loss)) << i;
    EXPECT_TRUE(std::isnan(b[i].gradNorm)) << i;
    EXPECT_TRUE(std::isfinite(b[i].stepTimeMs)) << "only the loss and gradients go bad";
  }
}

// `--config lr=...`: a higher learning rate makes the loss fall faster, and runs of a sweep end at
// different levels, so five runs of the demo differ on a chart.
TEST(SyntheticTrainingJob, TheLearningRateOfItsConfigShapesTheLossCurve) {
  const auto meanLoss = [](std::optional<double> lr, int from, int to) {
    JobShape shape;
    shape.peakLearningRate = lr;
    SyntheticTrainingJob job(11, 100.0, 100, shape);
    double sum = 0;
    for (int i = 0; i < to; ++i) {
      const double loss = job.next().loss;
      if (i >= from) sum += loss;
    }
    return sum / (to - from);
  };
  EXPECT_GT(meanLoss(1e-4, 300, 400), 1.5 * meanLoss(3e-3, 300, 400)) << "ten times the rate falls faster";
  EXPECT_GT(meanLoss(1e-2, 3000, 4000), 1.2 * meanLoss(1e-3, 3000, 4000)) << "a rate too high levels off higher";
  EXPECT_EQ(jobShapeOf({{"lr", 3e-3}, {"batch", int64_t{32}}}).peakLearningRate, 3e-3);
  EXPECT_EQ(jobShapeOf({{"lr", 3e-3}, {"batch", int64_t{32}}}).batchSize, 32);
  EXPECT_FALSE(jobShapeOf({{"lr", std::string("fast")}}).peakLearningRate) << "a value that is no rate changes nothing";
  EXPECT_FALSE(jobShapeOf({{"lr", -1.0}}).peakLearningRate);
  SyntheticTrainingJob batch128(3, 100.0, 100, jobShapeOf({{"batch", int64_t{128}}}));
  SyntheticTrainingJob batch64(3, 100.0, 100);
  EXPECT_DOUBLE_EQ(batch128.next().samplesPerSecond, 2 * batch64.next().samplesPerSecond);
}

TEST(RunConfigOption, ValuesAreIntsThenDoublesThenBoolsThenText) {
  EXPECT_EQ(parseConfigValue("64"), DataValue(int64_t{64}));
  EXPECT_EQ(parseConfigValue("-3"), DataValue(int64_t{-3}));
  EXPECT_EQ(parseConfigValue("3e-4"), DataValue(3e-4));
  EXPECT_EQ(parseConfigValue("0.5"), DataValue(0.5));
  EXPECT_EQ(parseConfigValue("true"), DataValue(true));
  EXPECT_EQ(parseConfigValue("false"), DataValue(false));
  EXPECT_EQ(parseConfigValue("adam"), DataValue(std::string("adam")));
  EXPECT_EQ(parseConfigValue("64k"), DataValue(std::string("64k")));
  EXPECT_EQ(parseConfigValue(""), DataValue(std::string()));
  EXPECT_EQ(parseConfigEntries({"lr=3e-4", "batch=64", "optimizer=adam", "note=a=b", "batch=128"}),
            (RunConfig{{"lr", 3e-4}, {"batch", int64_t{128}}, {"optimizer", std::string("adam")},
                       {"note", std::string("a=b")}}));
  EXPECT_THROW(parseConfigEntries({"lr"}), std::invalid_argument);
  EXPECT_THROW(parseConfigEntries({"=3"}), std::invalid_argument);
  EXPECT_THROW(parseConfigEntries({"step=3"}), std::invalid_argument);
}

// `demo --run NAME --config ... --steps N --record FILE`: the demo stops by itself after N steps,
// and its recording holds the run's config and its events under the run's name.
TEST(Demo, StopsAfterItsStepsAndRecordsItsConfigAndEvents) {
  test::TempDir dir;
  DemoOptions options;
  options.endpoint = test::uniqueInproc();
  options.stepsPerSecond = 2000;
  options.window = std::chrono::milliseconds(20);
  options.stepsPerEpoch = 50;
  options.runName = "lr-sweep-3";
  options.config = {{"lr", 3e-3}, {"batch", int64_t{32}}, {"optimizer", std::string("adam")}};
  options.steps = 120;
  options.recordPath = (dir.path() / "run.mcap").string();
  std::atomic<bool> stop{false};  // never set: the steps end it
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runDemo(options, stop, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("stopped after 120 steps"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("recorded "), std::string::npos) << out.str();
  EXPECT_FALSE(currentRunConfig()) << "the demo leaves no config behind";

  std::vector<std::string> problems;
  const auto events = test::readRecordedEvents(options.recordPath, &problems);
  EXPECT_TRUE(problems.empty()) << testing::PrintToString(problems);
  std::optional<RunConfig> config;
  int evals = 0;
  int64_t lastStep = -1;
  for (const ReceivedEvent& event : events) {
    EXPECT_EQ(event.source->run, "lr-sweep-3");
    if (const auto found = runConfigOf(event.event)) config = found;
    evals += event.event.name == "eval";
    if (event.event.name == kStatEventName && event.event.step) lastStep = std::max(lastStep, *event.event.step);
  }
  EXPECT_EQ(config, options.config);
  EXPECT_EQ(evals, 2) << "epochs end at steps 50 and 100";
  EXPECT_GE(lastStep, 110) << "the last windows are recorded too";
  EXPECT_LE(lastStep, 120);
}

// With ranks no publisher takes the logged config event, so each rank publishes (and records) it
// as its own.
TEST(Demo, EveryRankSendsAndRecordsTheConfig) {
  test::TempDir dir;
  DemoOptions options;
  options.endpoint = test::uniqueInproc();
  options.ranks = 3;
  options.stepsPerSecond = 2000;
  options.window = std::chrono::milliseconds(20);
  options.runName = "ranks-config";
  options.config = {{"lr", 1e-3}};
  options.steps = 60;
  options.recordPath = (dir.path() / "ranks.mcap").string();
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runDemo(options, stop, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("stopped after 60 steps of 3 ranks"), std::string::npos) << out.str();
  std::set<int64_t> recorded;
  for (const ReceivedEvent& event : test::readRecordedEvents(options.recordPath)) {
    EXPECT_EQ(event.source->run, "ranks-config");
    if (runConfigOf(event.event) == options.config) recorded.insert(event.source->rank.value_or(-1));
  }
  EXPECT_EQ(recorded, (std::set<int64_t>{0, 1, 2}));
}

// A recording that cannot be created ends the demo before it publishes.
TEST(Demo, ARecordingItCannotCreateIsAnError) {
  test::TempDir dir;
  DemoOptions options;
  options.endpoint = test::uniqueInproc();
  options.steps = 1;
  options.recordPath = (dir.path() / "missing" / "run.mcap").string();
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runDemo(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("missing/run.mcap"), std::string::npos) << err.str();
  EXPECT_EQ(out.str(), "");
}

TEST(Demo, PublishesStatsEvalsAndTheDataLoadingWaitCounter) {
  DemoOptions options;
  options.endpoint = "inproc://demo-test";
  options.stepsPerSecond = 500;
  options.window = std::chrono::milliseconds(50);
  options.stepsPerEpoch = 20;
  options.runName = "demo-test";
  options.seed = 7;
  // inproc allows connecting before the demo binds, so nothing it sends is missed.
  Subscriber subscriber(test::connectTo({options.endpoint}));
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  std::thread demo([&] { EXPECT_EQ(runDemo(options, stop, out, err), 0) << err.str(); });

  const std::set<std::string> wanted{"train.loss.mean",        "train.loss.min",         "train.loss.max",
                                     "train.lr.value",         "train.samples_per_s.mean", "train.step_time_ms.mean",
                                     "train.step_time_ms.p50", "train.step_time_ms.p90", "train.step_time_ms.p99",
                                     "train.grad_norm.mean",   "train.grad_norm.max",    "system.memory_gb.value",
                                     "system.memory_gb.max",   "train.data_loading.count",
                                     // the process's own, sampled every second
                                     "system.cpu_percent.value", "system.rss_bytes.value"};
  std::set<std::string> seen;
  bool eval = false;
  std::optional<int64_t> lastLossStep;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& r) {
    EXPECT_EQ(r.source->run, "demo-test");
    if (r.event.name == kStatEventName) {
      if (r.event.data.contains("train.loss.mean")) {
        // The demo sets the step every training step, so its windows are plotted by step.
        EXPECT_TRUE(r.event.step.has_value());
        if (r.event.step && lastLossStep) {
          EXPECT_GE(*r.event.step, *lastLossStep);
        }
        lastLossStep = r.event.step;
      }
      for (const auto& [key, value] : r.event.data) {
        EXPECT_TRUE(std::holds_alternative<double>(value)) << key;
        seen.insert(key);
      }
    } else if (r.event.name == "eval") {
      eval = std::holds_alternative<int64_t>(r.event.data.at("epoch")) &&
             std::holds_alternative<double>(r.event.data.at("accuracy"));
      EXPECT_EQ(statedStep(r.event), std::get<int64_t>(r.event.data.at("step")));
    }
  };
  const bool complete = test::pollUntil(subscriber, callbacks, [&] {
    return eval && std::includes(seen.begin(), seen.end(), wanted.begin(), wanted.end());
  });
  stop = true;
  demo.join();
  EXPECT_TRUE(complete) << "eval " << eval << ", stat keys seen " << seen.size();
  EXPECT_FALSE(currentStep().has_value()) << "the demo leaves no step behind";
  EXPECT_NE(out.str().find("publishing on inproc://demo-test"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("epoch 1 (step 20)"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("stopped after"), std::string::npos) << out.str();
}

// Four ranks in one process: four sources of one run, each publishing its own windows only (one
// train.loss window per step range, never another rank's as well).
TEST(Demo, RanksPublishTheirOwnStatsUnderOneRunName) {
  SubscriberOptions subscriberOptions;
  subscriberOptions.bind = {"inproc://demo-ranks-test"};
  Subscriber subscriber(subscriberOptions);
  DemoOptions options;
  options.connect = "inproc://demo-ranks-test";
  options.ranks = 4;
  options.stepsPerSecond = 500;
  options.window = std::chrono::milliseconds(50);
  options.stepsPerEpoch = 20;
  options.runName = "ranks-test";
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  std::thread demo([&] { EXPECT_EQ(runDemo(options, stop, out, err), 0) << err.str(); });

  std::map<int64_t, std::vector<int64_t>> lossSteps;  // per rank
  std::map<int64_t, int> evals;
  std::set<int64_t> systemRanks;  // the ranks that sent the process's system.* Stats
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& r) {
    EXPECT_EQ(r.source->run, "ranks-test");
    ASSERT_TRUE(r.source->rank.has_value());
    // One process stands for one node of four ranks.
    EXPECT_EQ(r.source->worldSize, 4);
    EXPECT_EQ(r.source->localRank, r.source->rank);
    if (r.event.name == "eval") ++evals[*r.source->rank];
    if (r.event.name != kStatEventName) return;
    for (const auto& [key, value] : r.event.data) EXPECT_EQ(key.find("rank"), std::string::npos) << key;
    if (r.event.data.contains("train.loss.mean") && r.event.step) lossSteps[*r.source->rank].push_back(*r.event.step);
    if (r.event.data.contains("system.rss_bytes.value")) systemRanks.insert(*r.source->rank);
  };
  const bool complete = test::pollUntil(subscriber, callbacks, [&] {
    if (lossSteps.size() < 4 || evals.size() < 4 || systemRanks.empty()) return false;
    for (const auto& [rank, steps] : lossSteps) {
      if (steps.size() < 5) return false;
    }
    return true;
  });
  stop = true;
  demo.join();
  ASSERT_TRUE(complete) << out.str() << err.str();
  for (const auto& [rank, steps] : lossSteps) {
    EXPECT_GE(rank, 0);
    EXPECT_LT(rank, 4);
    EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end()) &&
                std::adjacent_find(steps.begin(), steps.end()) == steps.end())
        << "rank " << rank << " sent a window twice, or another rank's: " << testing::PrintToString(steps);
  }
  EXPECT_EQ(systemRanks, std::set<int64_t>{0}) << "the process's numbers once, under rank 0";
  EXPECT_NE(out.str().find("4 ranks publishing into inproc://demo-ranks-test"), std::string::npos) << out.str();
}

TEST(Demo, ASynchronousStepWaitsForTheSlowestRank) {
  const std::vector<RankStepTimes> times = synchronousStep({10, 20, 12}, 1.5);
  ASSERT_EQ(times.size(), 3u);
  for (const RankStepTimes& t : times) EXPECT_DOUBLE_EQ(t.stepMs, 21.5);
  EXPECT_DOUBLE_EQ(times[0].computeMs, 10);
  EXPECT_DOUBLE_EQ(times[0].allreduceMs, 11.5);
  EXPECT_DOUBLE_EQ(times[1].allreduceMs, 1.5);  // the slowest only exchanges
  EXPECT_DOUBLE_EQ(times[2].allreduceMs, 9.5);
  EXPECT_TRUE(synchronousStep({}, 1.0).empty());
}

// The acceptance test of issue 15 for the library: `demo --ranks 32 --straggler 7` in this process,
// scored by RankScorer from what a subscriber receives. Rank 7 is flagged, no other rank ever is,
// and rank 7 spends the least time in the allreduce (the others wait for it there). A window is
// scored once every rank has sent a new one, so the test needs no clock of its own.
TEST(Demo, TheStragglersComputeTimeFlagsItAndOnlyIt) {
  SubscriberOptions subscriberOptions;
  subscriberOptions.bind = {"inproc://demo-straggler-test"};
  Subscriber subscriber(subscriberOptions);
  DemoOptions options;
  options.connect = "inproc://demo-straggler-test";
  options.ranks = 32;
  options.straggler = 7;
  options.stepsPerSecond = 200;
  options.window = std::chrono::milliseconds(100);
  options.runName = "straggler-test";
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  std::thread demo([&] { EXPECT_EQ(runDemo(options, stop, out, err), 0) << err.str(); });

  RankScorer compute;  // the default key: train.compute_time_ms.mean
  RankScorerOptions allreduceOptions;
  allreduceOptions.key = "train.allreduce_time_ms.mean";
  RankScorer allreduce(allreduceOptions);
  std::set<int64_t> fresh;  // ranks with a compute window since the last scoring
  std::set<int64_t> everFlagged;
  bool flaggedAlone = false;
  std::optional<RankWindow> lastAllreduce;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& r) {
    AlertSource source;
    source.run = r.source->run;
    source.rank = r.source->rank;
    source.instanceId = r.source->instanceId;
    compute.observeEvent(source, r.event);
    allreduce.observeEvent(source, r.event);
    if (r.source->rank && r.event.data.contains(std::string(kDefaultRankScoreKey))) fresh.insert(*r.source->rank);
    if (fresh.size() < 32) return;
    fresh.clear();
    const std::vector<RankWindow> windows = compute.evaluate();
    ASSERT_EQ(windows.size(), 1u);
    everFlagged.insert(windows[0].flagged.begin(), windows[0].flagged.end());
    flaggedAlone = windows[0].scored == 32 && windows[0].flagged == std::vector<int64_t>{7};
    lastAllreduce = allreduce.evaluate().at(0);
  };
  const bool flagged = test::pollUntil(subscriber, callbacks, [&] { return flaggedAlone; });
  stop = true;
  demo.join();
  ASSERT_TRUE(flagged) << out.str() << err.str();
  EXPECT_EQ(everFlagged, std::set<int64_t>{7});
  ASSERT_TRUE(lastAllreduce);
  // Scored median / value, the rank that waits least scores highest: last of worst first.
  EXPECT_EQ(lastAllreduce->ranks.back().rank, 7);
  EXPECT_NE(out.str().find("rank 7 is a straggler: it computes 2 times as long"), std::string::npos) << out.str();
}

TEST(Demo, RankEndpointsFollowRankZeros) {
  EXPECT_EQ(rankEndpoint("tcp://127.0.0.1:5555", 0), "tcp://127.0.0.1:5555");
  EXPECT_EQ(rankEndpoint("tcp://127.0.0.1:5555", 3), "tcp://127.0.0.1:5558");
  EXPECT_EQ(rankEndpoint("tcp://127.0.0.1:*", 3), "tcp://127.0.0.1:*");
  EXPECT_EQ(rankEndpoint("ipc:///tmp/demo", 2), "ipc:///tmp/demo-2");
}

TEST(Demo, RejectsBadOptions) {
  std::atomic<bool> stop{true};
  std::ostringstream out;
  std::ostringstream err;
  DemoOptions options;
  options.stepsPerSecond = 0;
  EXPECT_EQ(runDemo(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("livemonctl demo: steps per second must be in (0, 100000], got 0"), std::string::npos)
      << err.str();
  err.str("");
  options = DemoOptions{};
  options.window = std::chrono::milliseconds(0);
  EXPECT_EQ(runDemo(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("livemonctl demo: window must be at least 1 ms, got 0 ms"), std::string::npos) << err.str();
  err.str("");
  options = DemoOptions{};
  options.ranks = 0;
  EXPECT_EQ(runDemo(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("livemonctl demo: ranks must be 1..1024, got 0"), std::string::npos) << err.str();
  err.str("");
  options = DemoOptions{};
  options.ranks = 4;
  options.straggler = 4;
  EXPECT_EQ(runDemo(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("livemonctl demo: straggler must be a rank in 0..3, got 4"), std::string::npos) << err.str();
  err.str("");
  options.straggler = 1;
  options.stragglerFactor = 0;
  EXPECT_EQ(runDemo(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("livemonctl demo: straggler factor must be above 0 and at most 1000, got 0"), std::string::npos)
      << err.str();
  EXPECT_EQ(out.str(), "") << "nothing is published with a bad option";
}

}  // namespace
}  // namespace livemon::livemonctl
