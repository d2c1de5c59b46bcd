// The range clock's calibration, driven by simulated clocks: a preemption can be placed between
// any two clock reads, which a real machine only does by chance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "tick_calibration.h"

namespace {

using livemon::detail::TickCalibration;
using livemon::detail::TickSources;

// A machine whose time is simulated: every clock read takes `readCostNs` of true time; the
// counter runs at `ticksPerNs` from an arbitrary origin; steady_clock reads true time plus an
// arbitrary epoch. A preemption (true time passing between two reads) can be injected after
// any read, by its index; the counter can jump or change rate.
class SimulatedClocks {
 public:
  enum class Read : uint8_t { Ticks, Steady };

  explicit SimulatedClocks(double ticksPerNs = 2.9, int64_t readCostNs = 200)
      : ticksPerNs_(ticksPerNs), readCostNs_(readCostNs) {}

  TickSources sources() {
    return TickSources{[this] { return read(Read::Ticks); }, [this] { return read(Read::Steady); }};
  }

  double trueNsPerTick() const { return 1.0 / ticksPerNs_; }
  void preemptAfterRead(std::size_t index, int64_t forNs) { preemptions_.push_back({index, forNs}); }
  // A preemption after every read with this probability, of 10 us to 20 ms.
  void preemptRandomly(double probability, uint64_t seed) {
    randomProbability_ = probability;
    random_.seed(seed);
  }
  // Time passing while nothing reads the clocks (the job running between two refines).
  void advance(int64_t ns) { trueNs_ += ns; }
  void jumpCounter(int64_t ticks) { tickOrigin_ += ticks; }
  void setCounterRate(double ticksPerNs) {
    tickOrigin_ = ticksAt(trueNs_);
    originNs_ = trueNs_;
    ticksPerNs_ = ticksPerNs;
  }

  const std::vector<Read>& reads() const { return reads_; }
  int64_t trueSteadyNs() const { return kSteadyEpochNs + trueNs_; }
  int64_t trueTicks() const { return ticksAt(trueNs_); }

 private:
  static constexpr int64_t kSteadyEpochNs = 7'000'000'000'123;

  int64_t ticksAt(int64_t ns) const {
    return tickOrigin_ + static_cast<int64_t>(std::floor(static_cast<double>(ns - originNs_) * ticksPerNs_));
  }

  int64_t read(Read kind) {
    // The value is taken in the middle of the read.
    trueNs_ += readCostNs_ / 2;
    const int64_t value = kind == Read::Ticks ? ticksAt(trueNs_) : kSteadyEpochNs + trueNs_;
    trueNs_ += readCostNs_ - readCostNs_ / 2;
    for (const auto& [index, forNs] : preemptions_) {
      if (index == reads_.size()) trueNs_ += forNs;
    }
    if (randomProbability_ > 0 && std::bernoulli_distribution(randomProbability_)(random_)) {
      trueNs_ += std::uniform_int_distribution<int64_t>(10'000, 20'000'000)(random_);
    }
    reads_.push_back(kind);
    return value;
  }

  double ticksPerNs_;
  int64_t readCostNs_;
  int64_t trueNs_ = 0;
  int64_t tickOrigin_ = 123'456'789'000;
  int64_t originNs_ = 0;
  std::vector<std::pair<std::size_t, int64_t>> preemptions_;
  std::vector<Read> reads_;
  double randomProbability_ = 0;
  std::mt19937_64 random_;
};

double relativeError(double measured, double truth) { return std::abs(measured / truth - 1.0); }

// The read positions where a preemption can hurt: around every counter read (between it and the
// clock reads that bracket it), plus every 97th read for good measure.
std::vector<std::size_t> harmfulPositions(const std::vector<SimulatedClocks::Read>& reads) {
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    const bool nearTicks = reads[i] == SimulatedClocks::Read::Ticks ||
                           (i + 1 < reads.size() && reads[i + 1] == SimulatedClocks::Read::Ticks);
    if (nearTicks || i % 97 == 0) positions.push_back(i);
  }
  return positions;
}

constexpr int64_t kPreemptionNs = 10'000'000;  // a scheduler time slice on a loaded machine

TEST(TickCalibrationTest, MeasuresTheCounterRateOnAQuietMachine) {
  SimulatedClocks clocks;
  TickCalibration calibration(clocks.sources());
  ASSERT_TRUE(calibration.usable());
  EXPECT_LT(relativeError(calibration.nsPerTick(), clocks.trueNsPerTick()), 1e-3);
}

TEST(TickCalibrationTest, PreemptionBetweenTheLastCounterReadAndItsClockReadDoesNotSkewTheRate) {
  // Where the first rate is decided: the last counter read of the calibration.
  SimulatedClocks quiet;
  { TickCalibration dryRun(quiet.sources()); }
  std::size_t lastTickRead = 0;
  for (std::size_t i = 0; i < quiet.reads().size(); ++i) {
    if (quiet.reads()[i] == SimulatedClocks::Read::Ticks) lastTickRead = i;
  }

  SimulatedClocks clocks;
  clocks.preemptAfterRead(lastTickRead, kPreemptionNs);
  TickCalibration calibration(clocks.sources());
  ASSERT_TRUE(calibration.usable());
  EXPECT_LT(relativeError(calibration.nsPerTick(), clocks.trueNsPerTick()), 0.01);
}

TEST(TickCalibrationTest, APreemptionAnywhereInTheFirstCalibrationLeavesTheRateWithinOnePercent) {
  SimulatedClocks quiet;
  { TickCalibration dryRun(quiet.sources()); }
  int failures = 0;
  for (std::size_t position : harmfulPositions(quiet.reads())) {
    SimulatedClocks clocks;
    clocks.preemptAfterRead(position, kPreemptionNs);
    TickCalibration calibration(clocks.sources());
    ASSERT_TRUE(calibration.usable()) << "preempted after read " << position;
    const double error = relativeError(calibration.nsPerTick(), clocks.trueNsPerTick());
    EXPECT_LE(error, calibration.errorBound()) << "preempted after read " << position;
    if (error >= 0.01 && ++failures <= 5) {
      ADD_FAILURE() << "preempted after read " << position << " of " << quiet.reads().size() << ": rate off by "
                    << error * 100 << " %";
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(TickCalibrationTest, APreemptionAnywhereInARefineLeavesTheRateWithinOnePercent) {
  // A refine one second into the job, preempted for longer than a slice: the worst a refine can
  // see short of a stopped process.
  constexpr int64_t kLongPreemptionNs = 100'000'000;
  std::vector<SimulatedClocks::Read> refineReads;
  std::size_t firstRefineRead = 0;
  {
    SimulatedClocks quiet;
    TickCalibration calibration(quiet.sources());
    firstRefineRead = quiet.reads().size();
    quiet.advance(1'000'000'000);
    calibration.refine();
    refineReads.assign(quiet.reads().begin() + static_cast<std::ptrdiff_t>(firstRefineRead), quiet.reads().end());
  }
  ASSERT_FALSE(refineReads.empty());
  int failures = 0;
  for (std::size_t offset : harmfulPositions(refineReads)) {
    SimulatedClocks clocks;
    TickCalibration calibration(clocks.sources());
    clocks.preemptAfterRead(firstRefineRead + offset, kLongPreemptionNs);
    clocks.advance(1'000'000'000);
    calibration.refine();
    const double error = relativeError(calibration.nsPerTick(), clocks.trueNsPerTick());
    EXPECT_LE(error, calibration.errorBound()) << "refine preempted after its read " << offset;
    if (error >= 0.01 && ++failures <= 5) {
      ADD_FAILURE() << "refine preempted after its read " << offset << ": rate off by " << error * 100 << " %";
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(TickCalibrationTest, ItsErrorBoundHoldsHoweverOftenTheThreadIsPreempted) {
  // From a preemption every thousand reads to one after nearly every read: the rate may be
  // refused (the caller then keeps to steady_clock), but a rate in use is never off by more
  // than its stated bound, nor by 1 %.
  int usable = 0;
  for (const double probability : {0.001, 0.01, 0.1, 0.5, 0.9}) {
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      SimulatedClocks clocks;
      clocks.preemptRandomly(probability, seed);
      TickCalibration calibration(clocks.sources());
      for (int refine = 0; refine < 5 && calibration.usable(); ++refine) {
        const double error = relativeError(calibration.nsPerTick(), clocks.trueNsPerTick());
        EXPECT_LE(error, calibration.errorBound()) << "probability " << probability << ", seed " << seed;
        EXPECT_LT(error, 0.01) << "probability " << probability << ", seed " << seed;
        clocks.advance(50'000'000);
        calibration.refine();
      }
      usable += calibration.usable() ? 1 : 0;
    }
  }
  // A preemption after one read in ten still leaves enough tight brackets.
  EXPECT_GE(usable, 60);
}

TEST(TickCalibrationTest, ACounterAtNoPlausibleRateIsNotUsed) {
  SimulatedClocks megahertz(0.001);  // 1 MHz: not a time-stamp counter
  EXPECT_FALSE(TickCalibration(megahertz.sources()).usable());
  SimulatedClocks stopped(0.0);  // never advances
  EXPECT_FALSE(TickCalibration(stopped.sources()).usable());
  SimulatedClocks tooFast(100.0);  // 100 GHz
  EXPECT_FALSE(TickCalibration(tooFast.sources()).usable());
}

TEST(TickCalibrationTest, AReferenceClockThatNeverAdvancesEndsTheCalibration) {
  TickSources stuck{[] {
                      static int64_t ticks = 0;
                      return ticks += 100;
                    },
                    [] { return int64_t{42}; }};
  EXPECT_FALSE(TickCalibration(stuck).usable());
}

TEST(TickCalibrationTest, RefinesComeAsTheBaselineDoublesAndAtLeastEverySecond) {
  SimulatedClocks clocks;
  TickCalibration calibration(clocks.sources());
  ASSERT_TRUE(calibration.usable());
  const double firstBound = calibration.errorBound();
  std::vector<int64_t> refinedAtNs;
  const int64_t startNs = clocks.trueSteadyNs();
  while (clocks.trueSteadyNs() - startNs < 10'000'000'000) {
    clocks.advance(1'000'000);
    if (clocks.trueTicks() >= calibration.nextRefineTicks()) {
      calibration.refine();
      refinedAtNs.push_back(clocks.trueSteadyNs() - startNs);
    }
  }
  // 2, 4, 8 ... 1024 ms, then once a second: about twenty in ten seconds, not thousands.
  EXPECT_GE(refinedAtNs.size(), 15u);
  EXPECT_LE(refinedAtNs.size(), 25u);
  for (std::size_t i = 1; i < refinedAtNs.size(); ++i) {
    EXPECT_LE(refinedAtNs[i] - refinedAtNs[i - 1], 1'010'000'000);
  }
  EXPECT_EQ(calibration.refinesRejected(), 0);
  EXPECT_LT(calibration.errorBound(), firstBound / 1000);
  EXPECT_LT(relativeError(calibration.nsPerTick(), clocks.trueNsPerTick()), 1e-6);
}

TEST(TickCalibrationTest, ARefineWhoseEveryBracketWasPreemptedChangesNothing) {
  SimulatedClocks clocks;
  TickCalibration calibration(clocks.sources());
  clocks.advance(100'000'000);
  calibration.refine();
  const double rate = calibration.nsPerTick();
  const int64_t accepted = calibration.refinesAccepted();
  const std::size_t first = clocks.reads().size();
  for (std::size_t i = 0; i < 3 * TickCalibration::kBracketsPerSample; ++i) clocks.preemptAfterRead(first + i, 5'000'000);
  clocks.advance(100'000'000);
  calibration.refine();
  EXPECT_EQ(calibration.nsPerTick(), rate);
  EXPECT_EQ(calibration.refinesAccepted(), accepted);
  EXPECT_EQ(calibration.baselinesRestarted(), 0);
}

TEST(TickCalibrationTest, TheMapFollowsSteadyClockAndNeverRunsBackwards) {
  SimulatedClocks clocks;
  TickCalibration calibration(clocks.sources());
  for (int i = 0; i < 12; ++i) {
    clocks.advance(100'000'000);
    calibration.refine();
  }
  // Right now, within a few microseconds of steady_clock ...
  EXPECT_NEAR(static_cast<double>(calibration.toSteadyNs(clocks.trueTicks())),
              static_cast<double>(clocks.trueSteadyNs()), 2'000.0);
  // ... and increasing, tick by tick.
  const int64_t from = clocks.trueTicks() - 10'000'000;
  int64_t previous = calibration.toSteadyNs(from);
  for (int64_t ticks = from + 1; ticks < from + 1'000'000; ++ticks) {
    const int64_t ns = calibration.toSteadyNs(ticks);
    ASSERT_GE(ns, previous) << "at tick " << ticks;
    previous = ns;
  }
}

TEST(TickCalibrationTest, ACounterJumpRestartsTheBaselineAndKeepsTheRate) {
  SimulatedClocks clocks;
  TickCalibration calibration(clocks.sources());
  clocks.advance(500'000'000);
  calibration.refine();
  const double before = calibration.nsPerTick();
  // A suspend and resume: the counter was reset while steady_clock stood still.
  clocks.jumpCounter(-40'000'000'000);
  clocks.advance(500'000'000);
  calibration.refine();
  EXPECT_EQ(calibration.baselinesRestarted(), 1);
  EXPECT_EQ(calibration.nsPerTick(), before);
  // From the new baseline on, ticks map to the right time again.
  clocks.advance(10'000'000);
  EXPECT_NEAR(static_cast<double>(calibration.toSteadyNs(clocks.trueTicks())),
              static_cast<double>(clocks.trueSteadyNs()), 10'000.0);
  clocks.advance(500'000'000);
  calibration.refine();
  EXPECT_EQ(calibration.baselinesRestarted(), 1);
  EXPECT_LT(relativeError(calibration.nsPerTick(), clocks.trueNsPerTick()), 1e-5);
}

TEST(TickCalibrationTest, ACounterThatChangesRateIsFollowed) {
  // A virtual machine moved to a host whose counter runs at another rate.
  SimulatedClocks clocks(2.9);
  TickCalibration calibration(clocks.sources());
  clocks.advance(1'000'000'000);
  calibration.refine();
  clocks.setCounterRate(2.2);
  for (int i = 0; i < 3; ++i) {
    clocks.advance(200'000'000);
    calibration.refine();
  }
  EXPECT_GE(calibration.baselinesRestarted(), 1);
  EXPECT_LT(relativeError(calibration.nsPerTick(), clocks.trueNsPerTick()), 1e-4);
}

}  // namespace
