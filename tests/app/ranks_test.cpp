// `livemonctl ranks` as functions: its JSON and table for a window, and bad options.
#include <livemonctl/ranks.h>

#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include <livemonctl/command.h>

#include "json_lines.h"

namespace livemon::livemonctl {
namespace {

using transport::test::Json;

RankWindow sampleWindow() {
  RankWindow window;
  window.run = "job\x1b[2J";
  window.time = std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'700'000'000'123'456'789));
  window.median = 10.0;
  window.scored = 2;
  RankScore slow;
  slow.rank = 7;
  slow.host = "node-1";
  slow.pid = 4242;
  slow.instanceId = 0xabc;
  slow.value = 20.0;
  slow.score = 0.5;
  slow.below = 3;
  slow.flagged = true;
  RankScore typical = slow;
  typical.rank = 3;
  typical.value = 10.0;
  typical.score = 1.0;
  typical.below = 0;
  typical.flagged = false;
  RankScore stale = typical;
  stale.rank = 12;
  stale.value = std::numeric_limits<double>::infinity();
  stale.score = std::numeric_limits<double>::quiet_NaN();
  stale.stale = true;
  window.ranks = {slow, typical, stale};
  window.flagged = {7};
  return window;
}

TEST(Ranks, JsonHoldsEveryRankWorstFirstAndTheFlaggedRanks) {
  EXPECT_EQ(formatRankWindowJson(sampleWindow(), RankScorerOptions{}),
            "{\"time\":\"2023-11-14T22:13:20.123456789Z\",\"ts\":1700000000123456789,\"run\":\"job\\u001b[2J\","
            "\"stat\":\"train.compute_time_ms.mean\",\"median\":10.0,\"threshold\":0.8,\"windows\":3,\"ranks\":["
            "{\"rank\":7,\"value\":20.0,\"score\":0.5,\"flagged\":true,\"below\":3,\"stale\":false,\"host\":\"node-1\","
            "\"pid\":4242,\"id\":\"0000000000000abc\"},"
            "{\"rank\":3,\"value\":10.0,\"score\":1.0,\"flagged\":false,\"below\":0,\"stale\":false,\"host\":\"node-1\","
            "\"pid\":4242,\"id\":\"0000000000000abc\"},"
            "{\"rank\":12,\"value\":\"Infinity\",\"score\":\"NaN\",\"flagged\":false,\"below\":0,\"stale\":true,"
            "\"host\":\"node-1\",\"pid\":4242,\"id\":\"0000000000000abc\"}],\"flagged\":[7]}");
}

// What SPEC.md promises a reader of `ranks --json`: per window the ranks, each with at least rank,
// value, score and flagged, and the flagged rank numbers.
TEST(Ranks, JsonReadsAsTheRanksAndTheFlaggedOnes) {
  const Json window = transport::test::parseJson(formatRankWindowJson(sampleWindow(), RankScorerOptions{}));
  EXPECT_EQ(window["run"], "job\x1b[2J");
  EXPECT_EQ(window["ts"].get<int64_t>(), 1'700'000'000'123'456'789);
  EXPECT_EQ(window["flagged"], Json::array({7}));
  ASSERT_EQ(window["ranks"].size(), 3u);
  const Json& slow = window["ranks"][0];
  EXPECT_EQ(slow["rank"], 7);
  EXPECT_EQ(slow["value"], 20.0);
  EXPECT_EQ(slow["score"], 0.5);
  EXPECT_EQ(slow["flagged"], true);
  EXPECT_EQ(window["ranks"][1]["flagged"], false);
  EXPECT_EQ(window["ranks"][2]["value"], "Infinity");
  EXPECT_EQ(window["ranks"][2]["score"], "NaN");
  EXPECT_EQ(window["ranks"][2]["stale"], true);
}

TEST(Ranks, TheTableListsWorstFirstEscapesPeerTextAndCutsAtRows) {
  RankScorerOptions scoring;
  const std::string table = formatRankWindowText(sampleWindow(), scoring);
  EXPECT_NE(table.find(" run \"job\\u001b[2J\": 3 rank(s), 2 scored; train.compute_time_ms.mean median 10; "
                       "flagged (score < 0.8 for 3 windows): 7\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
  EXPECT_NE(table.find("    RANK   SCORE        VALUE FLAG          PID  HOST\n"
                       "       7    0.50           20 FLAGGED      4242  node-1\n"
                       "       3    1.00           10              4242  node-1\n"
                       "      12       -          inf stale        4242  node-1\n"),
            std::string::npos)
      << table;
  const std::string cut = formatRankWindowText(sampleWindow(), scoring, 1);
  EXPECT_NE(cut.find("FLAGGED"), std::string::npos);
  EXPECT_EQ(cut.find("stale"), std::string::npos);
  EXPECT_NE(cut.find("... 2 more\n"), std::string::npos) << cut;

  RankWindow none = sampleWindow();
  none.flagged.clear();
  none.ranks[0].flagged = false;
  none.ranks[0].below = 1;
  const std::string calm = formatRankWindowText(none, scoring);
  EXPECT_NE(calm.find("windows): none\n"), std::string::npos) << calm;
  EXPECT_NE(calm.find("low 1/3"), std::string::npos) << calm;
}

TEST(Ranks, BadOptionsFailNamingThem) {
  std::atomic<bool> stop{true};
  std::ostringstream out;
  std::ostringstream err;
  RanksOptions options;
  options.endpoints = {"inproc://ranks-bad-options"};
  options.threshold = 0;
  EXPECT_EQ(runRanks(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("livemonctl ranks: threshold must be a finite number above 0"), std::string::npos) << err.str();
  err.str("");
  options = RanksOptions{};
  options.window = std::chrono::milliseconds(0);
  EXPECT_EQ(runRanks(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("livemonctl ranks: window must be at least 1 ms"), std::string::npos) << err.str();
  err.str("");
  options = RanksOptions{};
  options.stat.clear();
  EXPECT_EQ(runRanks(options, stop, out, err), kFailedExitCode);
  EXPECT_NE(err.str().find("livemonctl ranks: key must not be empty"), std::string::npos) << err.str();
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace livemon::livemonctl
