// `livemonctl watch` in process: its alert lines, and its loop against real publishers (a
// Publisher, and a PayloadPublisher for sources that vanish, lose events or say goodbye exactly
// when the test says), with an injected clock wherever silence is measured.
#include <livemonctl/watch.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <thread>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/transport/payload_publisher.h>
#include <livemon/transport/publisher.h>
#include <livemonctl/command.h>

#include "json_lines.h"
#include "locked_stream.h"
#include "test_support.h"

namespace livemon::livemonctl {
namespace {

using namespace transport;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;
using test::Json;
using test::parseJson;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> result;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) result.push_back(line);
  return result;
}

std::size_t countLines(const std::string& text, const std::string& containing) {
  std::size_t count = 0;
  for (const std::string& line : lines(text)) count += line.find(containing) != std::string::npos ? 1 : 0;
  return count;
}

// Runs watch on a thread of its own until it returns or stop() is called.
class WatchRun {
 public:
  explicit WatchRun(WatchOptions options) : options_(std::move(options)) {
    thread_ = std::thread([this] {
      code_ = runWatch(options_, stop_, out_, err_);
      done_ = true;
    });
  }
  ~WatchRun() { stop(); }
  int stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return code_;
  }
  bool done() const { return done_; }
  // Waits until standard output holds `text`.
  bool waitForOut(const std::string& text) {
    return test::waitUntil([&] { return out().find(text) != std::string::npos; });
  }
  std::string out() const { return out_.text(); }
  std::string err() const { return err_.text(); }
  // With --json: the alerts printed so far (whole lines), parsed.
  std::vector<Json> jsonAlerts() const {
    const std::string text = out();
    return test::parseJsonLines(text.substr(0, text.rfind('\n') + 1));
  }
  // With --json: waits until an alert says `message`.
  bool waitForAlert(const std::string& message) {
    return test::waitUntil([&] { return countAlerts("message", message) > 0; });
  }
  // With --json: the alerts whose `field` is `value`.
  std::size_t countAlerts(const std::string& field, const std::string& value) const {
    std::size_t count = 0;
    for (const Json& alert : jsonAlerts()) count += alert.value(field, "") == value ? 1 : 0;
    return count;
  }

 private:
  WatchOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  test::LockedStream out_;
  test::LockedStream err_;
  int code_ = -1;
  std::thread thread_;
};

Event statEvent(std::string key, double value) {
  return test::makeEvent(std::string(kStatEventName), {{std::move(key), value}}, std::chrono::system_clock::now());
}

SourceInfo sourceNamed(std::string run, uint64_t id) {
  SourceInfo source;
  source.run = std::move(run);
  source.host = "node";
  source.pid = 99;
  source.rank = 1;
  source.instanceId = id;
  source.startTime = fromWireTime(1'700'000'000'000'000'000);
  return source;
}

// A publisher whose every message the test writes: sources that lose events, vanish or say
// goodbye exactly when told.
class HandMadePublisher {
 public:
  HandMadePublisher() : publisher_(options()) {}
  const std::string& endpoint() const { return publisher_.endpoints()[0]; }
  bool waitForSubscriber() {
    std::atomic<bool> never{false};
    return publisher_.waitForSubscriber(test::kDeadline, never);
  }
  void event(const SourceInfo& source, uint64_t sequence, const std::string& name, DataValue value) {
    const std::vector<Event> events{test::makeEvent(name, {{"v", std::move(value)}}, std::chrono::system_clock::now())};
    ASSERT_TRUE(publisher_.send(name, encodeEventsPayload(source, sequence, name, events)));
  }
  void heartbeat(const SourceInfo& source, uint64_t sequence, uint64_t dropped, MessageKind kind = MessageKind::Heartbeat) {
    PublisherCounters counters;
    counters.timestamp = std::chrono::system_clock::now();
    counters.interval = 1000ms;
    counters.dropped = dropped;
    ASSERT_TRUE(publisher_.send(kHeartbeatTopic, encodeHeartbeatPayload(kind, source, sequence, counters)));
  }

 private:
  static PayloadPublisherOptions options() {
    PayloadPublisherOptions o;
    o.bind = {"tcp://127.0.0.1:*"};
    o.linger = 0ms;
    return o;
  }
  PayloadPublisher publisher_;
};

// ---------------------------------------------------------------------------------------------
// Alert lines

Alert sampleAlert() {
  Alert alert;
  alert.time = fromWireTime(1'700'000'000'123'456'789);
  alert.source.run = "job";
  alert.source.host = "node";
  alert.source.pid = 12;
  alert.source.rank = 3;
  alert.source.instanceId = 0xabc;
  alert.kind = AlertRuleKind::NotFinite;
  alert.rule = "nan";
  alert.key = "train.loss.mean";
  alert.value = kNaN;
  alert.message = "train.loss.mean is NaN";
  return alert;
}

TEST(Watch, AlertJsonLines) {
  Alert alert = sampleAlert();
  EXPECT_EQ(formatAlertJson(alert),
            "{\"time\":\"2023-11-14T22:13:20.123456789Z\",\"ts\":1700000000123456789,\"alert\":\"nan\",\"rule\":\"nan\","
            "\"key\":\"train.loss.mean\",\"value\":\"NaN\",\"message\":\"train.loss.mean is NaN\","
            "\"source\":{\"run\":\"job\",\"host\":\"node\",\"pid\":12,\"rank\":3,\"id\":\"0000000000000abc\"}}");
  alert.kind = AlertRuleKind::Silent;
  alert.key.clear();
  alert.value = 7.5;
  alert.source.rank.reset();
  const Json silent = parseJson(formatAlertJson(alert));
  EXPECT_EQ(silent["alert"], "silent");
  EXPECT_EQ(silent["rule"], "nan");
  EXPECT_FALSE(silent.contains("key")) << "silence has no key";
  EXPECT_EQ(silent["value"], 7.5);
  EXPECT_EQ(silent["source"], Json::parse(R"({"run": "job", "host": "node", "pid": 12, "id": "0000000000000abc"})"))
      << "no rank, no key";
  alert.value = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(parseJson(formatAlertJson(alert))["value"], "-Infinity");
  alert.value = 3.0;
  const Json three = parseJson(formatAlertJson(alert));
  EXPECT_TRUE(three["value"].is_number_float()) << "a double stays a double: " << three;
  EXPECT_EQ(three["value"], 3.0);
}

TEST(Watch, AlertTextLinesAreReadableAndEscaped) {
  Alert alert = sampleAlert();
  const std::string line = formatAlertText(alert);
  ASSERT_GE(line.size(), 13u);
  EXPECT_EQ(line[2], ':');
  EXPECT_EQ(line.substr(12), " alert job@node:12 rank 3: train.loss.mean is NaN (rule \"nan\")");

  // A peer names its run and its keys: nothing it sends may move the cursor or fake a line.
  alert.source.run = "job\x1b[2J";
  alert.message = "loss\nlivemonctl watch: all clear is NaN";
  alert.rule = "\"a\\x\" > 1";
  const std::string hostile = formatAlertText(alert);
  EXPECT_EQ(hostile.find('\x1b'), std::string::npos) << hostile;
  EXPECT_EQ(hostile.find('\n'), std::string::npos) << hostile;
  EXPECT_THAT(hostile, HasSubstr("job\\u001b[2J@node:12 rank 3: loss\\nlivemonctl watch"));
  EXPECT_THAT(hostile, HasSubstr("(rule \"\\\"a\\\\x\\\" > 1\")"));
}

// ---------------------------------------------------------------------------------------------
// The loop

TEST(Watch, ExitsWithStatus3OnANaN) {
  Publisher publisher(test::testPublisherOptions());
  WatchOptions options;
  options.endpoints = publisher.endpoints();
  options.rules = {"nan"};
  options.exitOnAlert = true;
  WatchRun watch(options);
  // Until watch is connected, what is logged may be lost: log until it stops.
  const bool stopped = test::waitUntil([&] {
    logEvent(statEvent("train.loss.mean", 0.5));
    logEvent(statEvent("train.loss.mean", kNaN));
    return watch.done();
  });
  ASSERT_TRUE(stopped) << watch.err();
  EXPECT_EQ(watch.stop(), kAlertExitCode);
  const std::vector<std::string> printed = lines(watch.out());
  ASSERT_EQ(printed.size(), 1u) << watch.out();
  EXPECT_THAT(printed[0], HasSubstr(": train.loss.mean is NaN (rule \"nan\")"));
  EXPECT_THAT(watch.err(), HasSubstr("livemonctl watch: 1 alert(s), stopped at the first"));
}

TEST(Watch, ThresholdForNConsecutiveValuesOncePerCrossing) {
  Publisher publisher(test::testPublisherOptions());
  WatchOptions options;
  options.endpoints = publisher.endpoints();
  options.rules = {"train.loss.mean > 10 for 3", "nan"};
  options.json = true;
  WatchRun watch(options);
  // A NaN on a key of its own tells when watch receives: nothing logged after it is lost.
  ASSERT_TRUE(test::waitUntil([&] {
    logEvent(statEvent("connected.mean", kNaN));
    return watch.countAlerts("message", "connected.mean is NaN") > 0;
  })) << watch.err();
  for (double loss : {11.0, 12.0, 5.0, 11.0, 12.0, 13.0, 14.0, 15.0, 1.0, 20.0, 21.0}) logEvent(statEvent("train.loss.mean", loss));
  logEvent(statEvent("done.mean", kNaN));
  ASSERT_TRUE(watch.waitForAlert("done.mean is NaN")) << watch.out();
  EXPECT_EQ(watch.stop(), 0);
  std::vector<Json> thresholds;
  for (const Json& alert : watch.jsonAlerts()) {
    if (alert["alert"] == "threshold") thresholds.push_back(alert);
  }
  ASSERT_EQ(thresholds.size(), 1u) << watch.out();
  EXPECT_EQ(thresholds[0]["rule"], "train.loss.mean > 10 for 3");
  EXPECT_EQ(thresholds[0]["key"], "train.loss.mean");
  EXPECT_EQ(thresholds[0]["value"], 13.0);
  EXPECT_EQ(thresholds[0]["message"], "train.loss.mean = 13, > 10 for 3 values in a row");
  EXPECT_EQ(thresholds[0]["source"]["run"], "test");
}

TEST(Watch, SilenceOfAPublisherThatVanishedWithoutGoodbye) {
  HandMadePublisher publisher;
  ManualClock clock;
  WatchOptions options;
  options.endpoints = {publisher.endpoint()};
  options.rules = {"silent 2s", "nan"};
  options.clock = &clock;
  WatchRun watch(options);
  ASSERT_TRUE(publisher.waitForSubscriber());
  const SourceInfo vanishing = sourceNamed("vanishing", 1);
  publisher.heartbeat(vanishing, 0, 0);
  publisher.event(vanishing, 0, "connected", kNaN);
  ASSERT_TRUE(watch.waitForOut("connected.v is NaN")) << watch.err();
  EXPECT_EQ(countLines(watch.out(), "silent"), 0u);
  // No heartbeat, no goodbye: the job was killed.
  clock.advance(2100ms);
  ASSERT_TRUE(watch.waitForOut("vanishing@node:99 rank 1: vanishing@node:99 rank 1 silent for 2.1 s without a goodbye "
                               "(rule \"silent 2s\")"))
      << watch.out();
  clock.advance(10s);
  EXPECT_EQ(watch.stop(), 0);
  EXPECT_EQ(countLines(watch.out(), "silent for"), 1u) << "once per silence: " << watch.out();
}

TEST(Watch, AGoodbyeIsNotSilence) {
  HandMadePublisher publisher;
  ManualClock clock;
  WatchOptions options;
  options.endpoints = {publisher.endpoint()};
  options.rules = {"silent 2s", "nan"};
  options.clock = &clock;
  WatchRun watch(options);
  ASSERT_TRUE(publisher.waitForSubscriber());
  const SourceInfo leaving = sourceNamed("leaving", 1);
  const SourceInfo other = sourceNamed("other", 2);
  publisher.event(leaving, 0, "first", kNaN);
  publisher.heartbeat(leaving, 0, 0, MessageKind::Goodbye);
  // Sent after the goodbye on the same connection, so received after it.
  publisher.event(other, 0, "after_goodbye", kNaN);
  ASSERT_TRUE(watch.waitForOut("after_goodbye.v is NaN")) << watch.err();
  clock.advance(1h);
  publisher.event(other, 1, "after_an_hour", kNaN);
  ASSERT_TRUE(watch.waitForOut("after_an_hour.v is NaN")) << watch.out();
  EXPECT_EQ(watch.stop(), 0);
  EXPECT_EQ(countLines(watch.out(), "leaving@node:99 rank 1 silent"), 0u) << watch.out();
}

TEST(Watch, LossFromSequenceGapsAndFromThePublishersDropCount) {
  HandMadePublisher publisher;
  ManualClock clock;
  WatchOptions options;
  options.endpoints = {publisher.endpoint()};
  options.rules = {"loss", "nan"};
  options.clock = &clock;
  options.json = true;
  WatchRun watch(options);
  ASSERT_TRUE(publisher.waitForSubscriber());
  const SourceInfo lossy = sourceNamed("lossy", 1);
  publisher.heartbeat(lossy, 0, 2);  // drops before watch came count for nothing
  publisher.event(lossy, 0, "train", 1.0);
  publisher.event(lossy, 5, "train", 1.0);  // #1 to #4 never came
  publisher.event(lossy, 0, "gate", kNaN);
  ASSERT_TRUE(watch.waitForAlert("gate.v is NaN")) << watch.err();
  const std::vector<Json> first = watch.jsonAlerts();
  ASSERT_FALSE(first.empty()) << watch.out();
  EXPECT_EQ(first[0]["alert"], "loss");
  EXPECT_EQ(first[0]["rule"], "loss");
  EXPECT_EQ(first[0]["key"], "train");
  EXPECT_EQ(first[0]["value"], 4.0);
  EXPECT_EQ(first[0]["message"], "4 event(s) of train lost in transit");
  // After a quiet spell the publisher itself reports drops.
  clock.advance(11s);
  publisher.heartbeat(lossy, 1, 9);
  ASSERT_TRUE(test::waitUntil([&] {
    for (const Json& alert : watch.jsonAlerts()) {
      if (alert["message"].get<std::string>().find("the publisher dropped 7 event(s) (9 in all)") != std::string::npos) {
        return true;
      }
    }
    return false;
  })) << watch.out();
  EXPECT_EQ(watch.stop(), 0);
  EXPECT_EQ(watch.countAlerts("alert", "loss"), 2u) << watch.out();
}

TEST(Watch, ABadRuleIsAUsageErrorNamingIt) {
  WatchOptions options;
  options.endpoints = {"tcp://127.0.0.1:1"};
  options.rules = {"nan", "train.loss.mean >> 10"};
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runWatch(options, stop, out, err), kUsageExitCode);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(),
            "livemonctl watch: bad rule \"train.loss.mean >> 10\": at column 17: unknown comparison \">>\": use >, >=, < "
            "or <=\n");
}

TEST(Watch, AnEndpointThatCannotBeUsedFails) {
  WatchOptions options;
  options.endpoints = {"nonsense://x"};
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runWatch(options, stop, out, err), kFailedExitCode);
  EXPECT_THAT(err.str(), HasSubstr("nonsense://x"));
}

}  // namespace
}  // namespace livemon::livemonctl
