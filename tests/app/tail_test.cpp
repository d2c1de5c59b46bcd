// `livemonctl tail`'s formatting and its run loop, in process.
#include <livemonctl/event_format.h>
#include <livemonctl/tail.h>

#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <thread>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/transport/publisher.h>

#include "json_lines.h"
#include "locked_stream.h"
#include "test_support.h"

namespace livemon::livemonctl {
namespace {

using namespace transport;
using test::Json;
using test::parseJson;

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
  // And what a JSON reader gets from it.
  const Json parsed = parseJson(json);
  EXPECT_EQ(parsed["name"], "n\"ame");
  EXPECT_EQ(parsed["ts"].get<int64_t>(), 1700000000123456789);
  EXPECT_EQ(parsed["data"]["text"], "a\"b\\c\n\x01 ü");
  EXPECT_TRUE(parsed["data"]["one"].is_number_float());
  EXPECT_TRUE(parsed["data"]["int"].is_number_integer());
  EXPECT_EQ(parsed["data"]["nan"], "NaN");
  EXPECT_EQ(parsed["data"]["-inf"], "-Infinity");
  EXPECT_EQ(parsed["data"]["bad utf8"], "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(parsed["data"]["yes"], true);
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

// A torchrun job's source: the world size and local rank beside the rank, in JSON as numbers
// and in text as "rank 3/8".
TEST(Tail, WorldSizeAndLocalRankAreShownWithTheRank) {
  auto r = received(test::makeEvent("eval", {{"acc", 1.0}}));
  SourceInfo source = *r.source;
  source.worldSize = 8;
  source.localRank = 1;
  r.source = std::make_shared<const SourceInfo>(source);
  EXPECT_EQ(parseJson(formatEventJson(r))["source"],
            Json::parse(R"({"run": "run", "host": "host", "pid": 12, "rank": 3, "world_size": 8, "local_rank": 1,
                            "id": "0000000000000abc", "start": 5})"))
      << formatEventJson(r);
  EXPECT_EQ(formatEventText(r).substr(12), " run@host:12 rank 3/8 eval #41 acc=1.0");
}

TEST(Tail, TheStepIsShownWhereThereIsOne) {
  auto r = received(test::makeEvent("livemon.Stat", {{"loss.mean", 0.5}}));
  EXPECT_FALSE(parseJson(formatEventJson(r)).contains("step")) << "no step, no key";
  EXPECT_EQ(formatEventText(r).find("step"), std::string::npos);
  r.event.step = 1200;
  const Json json = parseJson(formatEventJson(r));
  EXPECT_EQ(json["step"], 1200) << json;
  EXPECT_EQ(json["seq"], 41) << json;
  EXPECT_EQ(formatEventText(r).substr(12), " run@host:12 rank 3 livemon.Stat #41 step 1200 loss.mean=0.5");
  // An event from a publisher that only had the int field "step" shows it the same way.
  auto field = received(test::makeEvent("eval", {{"step", int64_t{-7}}}));
  EXPECT_EQ(parseJson(formatEventJson(field))["step"], -7) << formatEventJson(field);
  EXPECT_EQ(formatEventText(field).substr(12), " run@host:12 rank 3 eval #41 step -7 step=-7");
}

TEST(Tail, TimesAtBothEndsOfTheNanosecondRangeAreExact) {
  // Any publisher chooses its timestamps; every int64 nanosecond count has its UTC time.
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {std::numeric_limits<int64_t>::min(), "1677-09-21T00:12:43.145224192Z"},
      {std::numeric_limits<int64_t>::min() + 1, "1677-09-21T00:12:43.145224193Z"},
      {-1, "1969-12-31T23:59:59.999999999Z"},
      {0, "1970-01-01T00:00:00.000000000Z"},
      {std::numeric_limits<int64_t>::max(), "2262-04-11T23:47:16.854775807Z"},
  };
  for (const auto& [ns, utc] : cases) {
    const auto r = received(test::makeEvent("t", {}, fromWireTime(ns)));
    const Json json = parseJson(formatEventJson(r));
    EXPECT_EQ(json["time"], utc) << json;
    EXPECT_EQ(json["ts"].get<int64_t>(), ns) << json;
    EXPECT_EQ(formatEventText(r)[2], ':') << ns;
  }
}

// No byte a terminal acts on: C0 controls, DEL, C1 controls (raw or UTF-8 encoded), and no
// Unicode line separators or direction overrides, which fake or reorder lines.
void expectNothingATerminalActsOn(const std::string& line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    EXPECT_FALSE(c < 0x20 || c == 0x7f) << "control byte " << int{c} << " at " << i << " in " << line;
    if (c == 0xc2 && i + 1 < line.size()) {
      const auto next = static_cast<unsigned char>(line[i + 1]);
      EXPECT_FALSE(next >= 0x80 && next <= 0x9f) << "C1 control at " << i << " in " << line;
    }
  }
  for (const char* sequence : {"\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xae", "\xe2\x81\xa6"}) {
    EXPECT_EQ(line.find(sequence), std::string::npos) << line;
  }
}

TEST(Tail, TextLinesEscapeWhatATerminalWouldActOn) {
  SourceInfo evil;
  evil.run = "run\x1b[2J";
  evil.host = "host\nfake line";
  evil.pid = 7;
  auto r = received(test::makeEvent("name\x1b]0;title\x07\xc2\x9b" "31m\xe2\x80\xae",
                                    {{"key\r", std::string("value\x9b\x7f")}, {"ok", std::string("é ü 日本")}}));
  r.source = std::make_shared<const SourceInfo>(evil);
  const std::string line = formatEventText(r);
  expectNothingATerminalActsOn(line);
  EXPECT_NE(line.find("run\\u001b[2J@host\\nfake line:7 name\\u001b]0;title\\u0007\\u009b31m\\u202e #41"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("ok=\"é ü 日本\""), std::string::npos) << "printable UTF-8 stays as it is: " << line;

  GapInfo gap{r.source, "topic\x1b[A", 1, 3};
  expectNothingATerminalActsOn(formatGapText(gap));
  SourceChange joined{r.source, SourceState::Alive, true, std::make_shared<const std::string>("ep\x1b")};
  expectNothingATerminalActsOn(formatSourceChangeText(joined));
}

// `tail --json` lines go to terminals and to log viewers as they are: the same characters a
// terminal acts on are \u escapes there too, and the line reads back as the text that was sent.
TEST(Tail, JsonLinesEscapeWhatATerminalWouldActOn) {
  SourceInfo evil;
  evil.run = "run\xc2\x9b" "2J\xe2\x80\xae";
  evil.host = "host\xe2\x80\xa8" "fake line";
  evil.pid = 7;
  const std::string name = "name\xc2\x85\xe2\x81\xa6x\xe2\x81\xa9\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad";
  const std::string value = "value\xc2\x80\xc2\x9f\xe2\x80\xa9\xe2\x81\xa7\xe2\x81\xa8 \xc3\xa9 \xe6\x97\xa5";
  auto r = received(test::makeEvent(name, {{"key\xe2\x80\xae", value}}));
  r.source = std::make_shared<const SourceInfo>(evil);
  const std::string line = formatEventJson(r);
  expectNothingATerminalActsOn(line);
  for (const char* sequence : {"\xe2\x80\xaa", "\xe2\x80\xab", "\xe2\x80\xac", "\xe2\x80\xad", "\xe2\x81\xa7",
                               "\xe2\x81\xa8", "\xe2\x81\xa9"}) {
    EXPECT_EQ(line.find(sequence), std::string::npos) << line;
  }
  EXPECT_NE(line.find("name\\u0085\\u2066x\\u2069\\u202a\\u202b\\u202c\\u202d"), std::string::npos) << line;
  EXPECT_NE(line.find("\xc3\xa9 \xe6\x97\xa5"), std::string::npos) << "printable UTF-8 stays as it is: " << line;
  const Json json = parseJson(line);
  EXPECT_EQ(json["name"], name) << line;
  EXPECT_EQ(json["data"]["key\xe2\x80\xae"], value) << line;
  EXPECT_EQ(json["source"]["run"], evil.run) << line;
  EXPECT_EQ(json["source"]["host"], evil.host) << line;

  GapInfo gap{r.source, "topic\xc2\x9b", 1, 3};
  expectNothingATerminalActsOn(formatGapJson(gap));
  SourceChange joined{r.source, SourceState::Alive, true, std::make_shared<const std::string>("ep\xe2\x80\xae")};
  expectNothingATerminalActsOn(formatSourceChangeJson(joined));
}

TEST(Tail, PrintableTextEscapesOnlyWhatATerminalActsOn) {
  EXPECT_EQ(printableText("a\x1b\xc2\x85\xe2\x80\xa8z é"), "a\\u001b\\u0085\\u2028z é");
  EXPECT_EQ(printableText("\xe2\x81\xa6x\xe2\x81\xa9 \x7f\t"), "\\u2066x\\u2069 \\u007f\\t");
  EXPECT_EQ(printableText("plain.name/with-ü_日本"), "plain.name/with-ü_日本");
  EXPECT_EQ(printableText("\x9b[2J"), "\xef\xbf\xbd[2J") << "a raw C1 byte is invalid UTF-8";
  EXPECT_EQ(quotedPrintableText("say \"hi\"\x1b"), "\"say \\\"hi\\\"\\u001b\"");
}

// The summary of tail and record quotes the last skipped message's reason, which may quote a peer.
TEST(Tail, SummaryEscapesTheLastErrorAndCountsEverySkip) {
  SubscriberStats stats;
  stats.events = 7;
  stats.malformed = 2;
  stats.protocolErrors = 1;
  stats.lastError = "bad topic \x1b]0;owned\x07\nlivemonctl tail: 0 events";
  const std::string summary = formatReceiveSummary(stats);
  EXPECT_EQ(summary.find('\x1b'), std::string::npos) << summary;
  EXPECT_EQ(summary.find('\n'), std::string::npos) << summary;
  EXPECT_NE(summary.find("7 events"), std::string::npos) << summary;
  EXPECT_NE(summary.find("2 malformed"), std::string::npos) << summary;
  EXPECT_NE(summary.find("1 reconnect(s) after protocol errors"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("conflicting"), std::string::npos) << "no conflicts, no mention: " << summary;
  stats.conflicts = 3;
  const std::string withConflicts = formatReceiveSummary(stats);
  EXPECT_NE(withConflicts.find("3 event(s) conflicting with a message claiming their numbers"), std::string::npos)
      << withConflicts;
}

TEST(Tail, NoticesForSourcesAndGaps) {
  const auto r = received(test::makeEvent("x", {}));
  SourceChange joined{r.source, SourceState::Alive, true, r.endpoint};
  EXPECT_EQ(formatSourceChangeText(joined), "-- joined: run@host:12 rank 3 (id 0000000000000abc) via tcp://127.0.0.1:5555");
  SourceChange stale{r.source, SourceState::Stale, false, r.endpoint};
  const Json staleJson = parseJson(formatSourceChangeJson(stale));
  EXPECT_EQ(staleJson["notice"], "stale");
  EXPECT_EQ(staleJson["source"]["run"], "run");
  EXPECT_EQ(staleJson["endpoint"], "tcp://127.0.0.1:5555");
  GapInfo gap{r.source, "loss", 10, 15};
  EXPECT_EQ(formatGapText(gap), "-- gap: 5 event(s) of loss missing from run@host:12 rank 3 (#10 to #14)");
  const Json gapJson = parseJson(formatGapJson(gap));
  EXPECT_EQ(gapJson["notice"], "gap");
  EXPECT_EQ(gapJson["topic"], "loss");
  EXPECT_EQ(gapJson["expected"], 10);
  EXPECT_EQ(gapJson["received"], 15);
  EXPECT_EQ(gapJson["missed"], 5);
  EXPECT_EQ(gapJson["source"]["pid"], 12);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// Runs tail on a thread of its own until stop().
class TailRun {
 public:
  explicit TailRun(TailOptions options) : options_(std::move(options)) {
    thread_ = std::thread([this] { code_ = runTail(options_, stop_, out_, err_); });
  }
  ~TailRun() { stop(); }
  int stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return code_;
  }
  std::string out() const { return out_.text(); }
  std::string err() const { return err_.text(); }

 private:
  TailOptions options_;
  std::atomic<bool> stop_{false};
  test::LockedStream out_;
  test::LockedStream err_;
  int code_ = -1;
  std::thread thread_;
};

std::string quietNotice(const std::string& endpoint) {
  return "livemonctl tail: nothing received from " + endpoint + " yet; is a publisher running there?\n";
}

// Where nothing publishes, tail used to wait in silence forever: a user on the wrong port could
// not tell it from a quiet job. It says so once, on stderr, and stdout stays empty.
TEST(Tail, SaysOnceWhenNothingArrivesFromAnEndpoint) {
  test::TempDir dir;
  const std::string nowhere = "ipc://" + (dir.path() / "nobody-publishes-here").string();
  ManualClock clock;
  TailOptions options;
  options.endpoints = {nowhere};
  options.clock = &clock;
  TailRun tail(options);
  ASSERT_TRUE(test::waitUntil([&] { return tail.err().find("listening to") != std::string::npos; }));
  clock.advance(std::chrono::seconds(4));
  clock.advance(std::chrono::milliseconds(1500));  // past the default 5 s
  EXPECT_TRUE(test::waitUntil([&] { return tail.err().find(quietNotice(nowhere)) != std::string::npos; })) << tail.err();
  clock.advance(std::chrono::minutes(10));
  EXPECT_EQ(tail.stop(), 0);
  EXPECT_EQ(occurrences(tail.err(), "nothing received"), 1u) << tail.err();
  EXPECT_EQ(tail.out(), "") << "stdout keeps its format: events and notices about sources only";
}

// An endpoint that delivers gets no notice, whatever the clock says afterwards; a quiet one beside
// it does.
TEST(Tail, NoQuietNoticeForAnEndpointThatDelivered) {
  test::TempDir dir;
  const std::string nowhere = "ipc://" + (dir.path() / "quiet").string();
  Publisher publisher(test::testPublisherOptions());
  ManualClock clock;
  TailOptions options;
  options.endpoints = {publisher.endpoints()[0], nowhere};
  options.clock = &clock;
  TailRun tail(options);
  int64_t i = 0;
  ASSERT_TRUE(test::waitUntil([&] {
    logEvent(test::makeEvent("before", {{"i", i++}}));
    return tail.out().find("before #") != std::string::npos;
  })) << tail.err();
  clock.advance(std::chrono::seconds(6));
  ASSERT_TRUE(test::waitUntil([&] { return tail.err().find(quietNotice(nowhere)) != std::string::npos; })) << tail.err();
  EXPECT_EQ(tail.stop(), 0);
  EXPECT_EQ(occurrences(tail.err(), "nothing received"), 1u) << tail.err();
  EXPECT_EQ(tail.out().find("nothing received"), std::string::npos);
}

TEST(Tail, QuietNoticeCanBeTurnedOff) {
  test::TempDir dir;
  ManualClock clock;
  TailOptions options;
  options.endpoints = {"ipc://" + (dir.path() / "quiet").string()};
  options.clock = &clock;
  options.quietNotice = std::chrono::milliseconds(0);
  TailRun tail(options);
  ASSERT_TRUE(test::waitUntil([&] { return tail.err().find("listening to") != std::string::npos; }));
  clock.advance(std::chrono::hours(1));
  EXPECT_EQ(tail.stop(), 0);
  EXPECT_EQ(tail.err().find("nothing received"), std::string::npos) << tail.err();
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
  int events = 0;
  bool joined = false;
  for (const Json& line : test::parseJsonLines(out.str())) {
    if (line.value("notice", "") == "joined") joined = true;
    if (line.contains("name")) {
      EXPECT_EQ(line["name"], "wanted") << line;
      EXPECT_EQ(line["source"]["run"], "tailed") << line;
      ++events;
    }
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
}  // namespace livemon::livemonctl
