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
#include <livemon/step.h>
#include <livemon/transport/subscriber.h>
#include <livemonctl/command.h>
#include <livemonctl/demo_ranks.h>
#include <livemonctl/synthetic_training_job.h>

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
