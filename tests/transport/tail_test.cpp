// `livemonctl tail`'s formatting and its run loop, in process.
#include <livemon/transport/tail.h>

#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <thread>

#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

ReceivedEvent received(Event event) {
  SourceInfo source;
  source.run = "run";
  source.host = "host";
  source.pid = 12;
  source.rank = 3;
  source.instanceId = 0xabc;
  source.startTime = fromWireTime(5);
  ReceivedEvent r;
  r.event = std::move(event);
  r.source = std::make_shared<const SourceInfo>(source);
  r.sequence = 41;
  r.endpoint = std::make_shared<const std::string>("tcp://127.0.0.1:5555");
  return r;
}

TEST(Tail, JsonLinesKeepTypesAndEscape) {
  const auto r = received(test::makeEvent("n\"ame", {{"one", 1.0},
                                                     {"int", int64_t{1}},
                                                     {"nan", std::numeric_limits<double>::quiet_NaN()},
                                                     {"inf", std::numeric_limits<double>::infinity()},
                                                     {"-inf", -std::numeric_limits<double>::infinity()},
                                                     {"small", 1e-300},
                                                     {"text", std::string("a\"b\\c\n\x01 ü")},
                                                     {"bad utf8", std::string("\xff\xc3")},
                                                     {"yes", true}}));
  const std::string json = formatEventJson(r);
  EXPECT_EQ(json,
            "{\"time\":\"2023-11-14T22:13:20.123456789Z\",\"ts\":1700000000123456789,\"name\":\"n\\\"ame\",\"seq\":41,"
            "\"source\":{\"run\":\"run\",\"host\":\"host\",\"pid\":12,\"rank\":3,\"id\":\"0000000000000abc\",\"start\":5},"
            "\"endpoint\":\"tcp://127.0.0.1:5555\",\"data\":{\"-inf\":\"-Infinity\",\"bad utf8\":\"\xef\xbf\xbd\xef\xbf\xbd\","
            "\"inf\":\"Infinity\",\"int\":1,\"nan\":\"NaN\",\"one\":1.0,\"small\":1e-300,"
            "\"text\":\"a\\\"b\\\\c\\n\\u0001 ü\",\"yes\":true}}");
}

TEST(Tail, TextLinesAreReadable) {
  const auto r = received(test::makeEvent("livemon.Stat", {{"loss.mean", 0.123456789}, {"loss.count", 12.0}, {"epoch", int64_t{2}}}));
  const std::string line = formatEventText(r);
  // The clock is local time, so only its shape is fixed.
  ASSERT_GE(line.size(), 13u);
  EXPECT_EQ(line[2], ':');
  EXPECT_EQ(line[8], '.');
  EXPECT_EQ(line.substr(12), " run@host:12 rank 3 livemon.Stat #41 epoch=2 loss.count=12.0 loss.mean=0.123457");
}

TEST(Tail, NoticesForSourcesAndGaps) {
  const auto r = received(test::makeEvent("x", {}));
  SourceChange joined{r.source, SourceState::Alive, true, r.endpoint};
  EXPECT_EQ(formatSourceChangeText(joined), "-- joined: run@host:12 rank 3 (id 0000000000000abc) via tcp://127.0.0.1:5555");
  SourceChange stale{r.source, SourceState::Stale, false, r.endpoint};
  EXPECT_EQ(formatSourceChangeJson(stale).rfind("{\"notice\":\"stale\",\"source\":{\"run\":\"run\"", 0), 0u);
  GapInfo gap{r.source, "loss", 10, 15};
  EXPECT_EQ(formatGapText(gap), "-- gap: 5 event(s) of loss missing from run@host:12 rank 3 (#10 to #14)");
  EXPECT_EQ(formatGapJson(gap).rfind("{\"notice\":\"gap\",\"topic\":\"loss\",\"expected\":10,\"received\":15,\"missed\":5,", 0),
            0u);
}

TEST(Tail, PrintsEventsOfAPublisherUntilTheCount) {
  PublisherOptions options = test::testPublisherOptions();
  options.runName = "tailed";
  Publisher publisher(options);
  TailOptions tail;
  tail.endpoints = publisher.endpoints();
  tail.filters = {"wanted"};
  tail.json = true;
  tail.maxEvents = 3;
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  std::atomic<bool> done{false};
  std::thread runner([&] {
    runTail(tail, stop, out, err);
    done = true;
  });
  int64_t i = 0;
  const bool finished = test::waitUntil([&] {
    logEvent(test::makeEvent("unwanted", {{"i", i}}));
    logEvent(test::makeEvent("wanted", {{"i", i++}}));
    return done.load();
  });
  stop = true;
  runner.join();
  ASSERT_TRUE(finished);
  std::istringstream lines(out.str());
  std::string line;
  int events = 0;
  bool joined = false;
  while (std::getline(lines, line)) {
    if (line.rfind("{\"notice\":\"joined\"", 0) == 0) joined = true;
    if (line.find("\"name\":\"wanted\"") != std::string::npos) ++events;
    EXPECT_EQ(line.find("unwanted"), std::string::npos) << line;
  }
  EXPECT_TRUE(joined);
  EXPECT_EQ(events, 3);
  EXPECT_NE(err.str().find("listening to " + publisher.endpoints()[0]), std::string::npos) << err.str();
}

// A publisher with more topics than the subscriber follows: tail says it forgot some, and counts
// them in its summary.
TEST(Tail, SaysWhenItForgetsTopics) {
  Publisher publisher(test::testPublisherOptions());
  TailOptions tail;
  tail.endpoints = publisher.endpoints();
  tail.maxEvents = SubscriberOptions{}.maxTopicsPerSource + 100;
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  std::atomic<bool> done{false};
  std::thread runner([&] {
    runTail(tail, stop, out, err);
    done = true;
  });
  int64_t i = 0;
  const bool finished = test::waitUntil([&] {
    logEvent(test::makeEvent("topic" + std::to_string(i), {{"i", i}}));
    ++i;
    return done.load();
  });
  stop = true;
  runner.join();
  ASSERT_TRUE(finished);
  EXPECT_NE(err.str().find("livemonctl tail: notice: forgot the sequence numbers of "), std::string::npos) << err.str();
  EXPECT_EQ(err.str().find("forgot 0 topic(s)"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace livemon::transport
