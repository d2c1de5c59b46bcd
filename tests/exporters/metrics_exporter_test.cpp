#include <livemon/transport/metrics_exporter.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <livemon/clock.h>
#include <livemon/event_handler.h>
#include <livemon/transport/error.h>
#include <livemon/transport/publisher.h>

#include "http_get.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::makeEvent;

SourceInfo source(std::string run, std::string host, std::optional<int64_t> rank) {
  SourceInfo info;
  info.run = std::move(run);
  info.host = std::move(host);
  info.pid = 42;
  info.rank = rank;
  info.instanceId = 7;
  return info;
}

Event statEvent(std::unordered_map<std::string, DataValue> data) {
  return makeEvent(std::string(kStatEventName), std::move(data));
}

// An exporter that serves nothing, on a test clock.
class MetricsExporterTest : public ::testing::Test {
 protected:
  MetricsExporterOptions options(std::size_t maxSeries = 100'000) {
    MetricsExporterOptions o;
    o.serve = false;
    o.clock = &clock_;
    o.maxSeries = maxSeries;
    o.forgetAfter = 5min;
    return o;
  }
  ManualClock clock_;
};

// "s<i>.mean" (built without operator+, which GCC 12 misreads as an overlapping copy).
std::string seriesKey(int i) {
  std::string key("s");
  key.append(std::to_string(i)).append(".mean");
  return key;
}

bool hasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

TEST_F(MetricsExporterTest, ServesTheLatestValueOfEachAggregationWithItsSourceLabels) {
  MetricsExporter exporter(options());
  const SourceInfo rank3 = source("llm", "node-1", 3);
  exporter.observe(rank3, statEvent({{"train.loss.mean", 2.5}, {"train.loss.max", 4.0}, {"tokens.count", int64_t{12}}}));
  exporter.observe(rank3, statEvent({{"train.loss.mean", 1.25}}));
  exporter.observe(source("llm", "node-2", std::nullopt), makeEvent("torch.monitor.Stat", {{"lr.value", 0.001}}));

  const std::string text = exporter.text();
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="mean",host="node-1",rank="3",run="llm",stat="train.loss"} 1.25)"))
      << text;
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="max",host="node-1",rank="3",run="llm",stat="train.loss"} 4)"))
      << text;
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="count",host="node-1",rank="3",run="llm",stat="tokens"} 12)"))
      << text;
  // No rank: an empty label, which Prometheus treats as absent.
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="value",host="node-2",rank="",run="llm",stat="lr"} 0.001)"))
      << text;
  EXPECT_NE(text.find("# TYPE livemon_stat gauge"), std::string::npos);
  EXPECT_TRUE(hasLine(text, "livemon_exporter_events_total 3")) << text;
  EXPECT_TRUE(hasLine(text, "livemon_exporter_series 4")) << text;
  const MetricsExporterStats stats = exporter.stats();
  EXPECT_EQ(stats.series, 4u);
  EXPECT_EQ(stats.sources, 2u);
  EXPECT_EQ(stats.statValues, 5u);
}

TEST_F(MetricsExporterTest, SplitsAtTheLastDotAndSkipsOtherEventsAndNonNumbers) {
  MetricsExporter exporter(options());
  const SourceInfo job = source("run", "host", 0);
  exporter.observe(job, statEvent({{"a.b.c.p99", 9.0}, {"note.value", std::string("text")}, {"flag.value", true},
                                   {"step", int64_t{100}}}));
  exporter.observe(job, makeEvent("eval", {{"eval.accuracy", 0.9}}));
  const std::string text = exporter.text();
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="p99",host="host",rank="0",run="run",stat="a.b.c"} 9)")) << text;
  EXPECT_EQ(text.find("eval"), std::string::npos) << text;
  EXPECT_EQ(text.find("note"), std::string::npos) << text;
  EXPECT_EQ(exporter.stats().series, 1u);
  EXPECT_EQ(exporter.stats().malformedKeys, 0u);  // the step field is not a Stat key
  EXPECT_EQ(exporter.stats().events, 2u);
}

TEST_F(MetricsExporterTest, CountsMalformedKeysAndKeepsTheRest) {
  MetricsExporter exporter(options());
  exporter.observe(source("r", "h", 1), statEvent({{"nodot", 1.0}, {".mean", 2.0}, {"loss.", 3.0}, {"ok.mean", 4.0}}));
  EXPECT_EQ(exporter.stats().malformedKeys, 3u);
  EXPECT_EQ(exporter.stats().series, 1u);
  EXPECT_TRUE(hasLine(exporter.text(), "livemon_exporter_malformed_keys_total 3"));
}

TEST_F(MetricsExporterTest, RefusesNewSeriesBeyondTheCapButUpdatesTheKnownOnes) {
  MetricsExporter exporter(options(3));
  const SourceInfo job = source("r", "h", 1);
  exporter.observe(job, statEvent({{"a.mean", 1.0}, {"b.mean", 1.0}, {"c.mean", 1.0}}));
  exporter.observe(source("other", "h", 2), statEvent({{"d.mean", 1.0}, {"e.mean", 1.0}}));
  exporter.observe(job, statEvent({{"a.mean", 5.0}}));
  const MetricsExporterStats stats = exporter.stats();
  EXPECT_EQ(stats.series, 3u);
  EXPECT_EQ(stats.seriesDropped, 2u);
  EXPECT_EQ(stats.sources, 1u);  // the refused source holds no series, so it is not kept either
  const std::string text = exporter.text();
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="mean",host="h",rank="1",run="r",stat="a"} 5)")) << text;
  EXPECT_TRUE(hasLine(text, "livemon_exporter_series_dropped_total 2")) << text;
  EXPECT_EQ(text.find("other"), std::string::npos);
}

// One source (a runaway job, or a peer of a relay inventing Stat keys) must not take the whole
// series cap: each gets at most maxSeriesPerSource, and what is refused is counted and served.
TEST_F(MetricsExporterTest, EachSourceGetsABoundedShareOfTheSeries) {
  MetricsExporterOptions o = options(10);
  o.maxSeriesPerSource = 4;
  MetricsExporter exporter(o);
  const SourceInfo greedy = source("greedy", "h", 0);
  std::unordered_map<std::string, DataValue> many;
  for (int i = 0; i < 8; ++i) many[seriesKey(i)] = 1.0;
  exporter.observe(greedy, statEvent(many));
  exporter.observe(source("late", "h", 1), statEvent({{"a.mean", 1.0}, {"b.mean", 2.0}, {"c.mean", 3.0}}));
  const MetricsExporterStats stats = exporter.stats();
  EXPECT_EQ(stats.series, 7u);
  EXPECT_EQ(stats.seriesDropped, 4u);
  EXPECT_EQ(stats.seriesDroppedSourceCap, 4u);
  const std::string text = exporter.text();
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="mean",host="h",rank="1",run="late",stat="c"} 3)"))
      << text;
  EXPECT_TRUE(hasLine(text, "livemon_exporter_series_dropped_total 4")) << text;
  EXPECT_TRUE(hasLine(text, "livemon_exporter_series_dropped_source_cap_total 4")) << text;
  // The total cap still holds across sources.
  for (int rank = 2; rank < 6; ++rank) exporter.observe(source("more", "h", rank), statEvent(many));
  EXPECT_EQ(exporter.stats().series, 10u);
  o.maxSeriesPerSource = 0;
  EXPECT_THROW(MetricsExporter{o}, std::invalid_argument);
}

// A restarted process, or a forger, with the same run, host and rank as a live source: each
// keeps its own series, neither overwrites the other. The first keeps the plain labels; a later
// one is told apart by an "id" label (its instance id, as `tail --json` shows it).
TEST_F(MetricsExporterTest, SourcesWithTheSameLabelsDoNotOverwriteEachOther) {
  MetricsExporter exporter(options());
  SourceInfo real = source("job", "node", 0);
  SourceInfo forger = real;
  forger.instanceId = 0xdead;
  forger.pid = 666;
  exporter.observe(real, statEvent({{"loss.mean", 1.0}}));
  exporter.observe(forger, statEvent({{"loss.mean", 99.0}}));
  EXPECT_EQ(exporter.stats().series, 2u);
  EXPECT_EQ(exporter.stats().sources, 2u);
  const std::string text = exporter.text();
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="mean",host="node",rank="0",run="job",stat="loss"} 1)"))
      << text;
  EXPECT_TRUE(hasLine(text,
                      R"(livemon_stat{aggregation="mean",host="node",id="000000000000dead",rank="0",run="job",stat="loss"} 99)"))
      << text;
  // The forger's goodbye does not cut the real source's life short either.
  exporter.sourceGone(forger);
  clock_.advance(4min);
  exporter.observe(real, statEvent({{"loss.mean", 2.0}}));
  clock_.advance(90s);
  const std::string later = exporter.text();
  EXPECT_TRUE(hasLine(later, R"(livemon_stat{aggregation="mean",host="node",rank="0",run="job",stat="loss"} 2)"))
      << later;
  EXPECT_EQ(later.find("dead"), std::string::npos) << later;
}

// A scrape of a large registry renders without the lock the feeding thread (a Publisher's I/O
// thread, a relay's worker) needs: an update completes while the scrape is rendering.
TEST_F(MetricsExporterTest, AnUpdateIsNotBlockedWhileAScrapeRenders) {
  std::mutex mutex;
  std::condition_variable changed;
  bool rendering = false;
  bool updated = false;
  bool updateSeenWhileRendering = false;
  MetricsExporterOptions o = options();
  o.whileRendering = [&] {
    std::unique_lock lock(mutex);
    rendering = true;
    changed.notify_all();
    // Waits for the update; bounded, so a render that holds the lock fails instead of hanging.
    updateSeenWhileRendering = changed.wait_for(lock, 10s, [&] { return updated; });
  };
  MetricsExporter exporter(o);
  std::unordered_map<std::string, DataValue> many;
  for (int i = 0; i < 2000; ++i) many[seriesKey(i)] = 1.0;
  for (int rank = 0; rank < 10; ++rank) exporter.observe(source("big", "h", rank), statEvent(many));
  std::thread scrape([&] { EXPECT_NE(exporter.text().find("s1999"), std::string::npos); });
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, 10s, [&] { return rendering; }));
  }
  exporter.observe(source("big", "h", 0), statEvent({{"s0.mean", 5.0}}));  // the I/O thread's update
  {
    std::lock_guard lock(mutex);
    updated = true;
  }
  changed.notify_all();
  scrape.join();
  EXPECT_TRUE(updateSeenWhileRendering) << "the update waited for the scrape to finish";
  EXPECT_NE(exporter.text().find(R"(run="big",stat="s0"} 5)"), std::string::npos);
}

TEST_F(MetricsExporterTest, ForgetsASilentSourceAfterForgetAfterUnlessItKeepsTalking) {
  MetricsExporter exporter(options());
  const SourceInfo quiet = source("quiet", "h", 0);
  const SourceInfo alive = source("alive", "h", 1);
  exporter.observe(quiet, statEvent({{"loss.mean", 1.0}}));
  exporter.observe(alive, statEvent({{"loss.mean", 2.0}}));
  clock_.advance(4min);
  exporter.sourceAlive(alive);  // a heartbeat: long Stat windows must not make a source vanish
  EXPECT_EQ(exporter.stats().sources, 2u);
  clock_.advance(61s);
  const std::string text = exporter.text();  // a scrape checks, too
  EXPECT_EQ(text.find("quiet"), std::string::npos) << text;
  EXPECT_NE(text.find("alive"), std::string::npos) << text;
  EXPECT_EQ(exporter.stats().sourcesForgotten, 1u);
  EXPECT_EQ(exporter.stats().series, 1u);
}

TEST_F(MetricsExporterTest, ForgetsASourceThatSaidGoodbyeAfterAWhileNotAtOnce) {
  MetricsExporter exporter(options());
  const SourceInfo job = source("job", "h", 0);
  WireMessage message;
  message.kind = MessageKind::Events;
  message.source = job;
  message.name = kStatEventName;
  message.events = {statEvent({{"loss.mean", 1.0}})};
  exporter.observe(message);
  message.kind = MessageKind::Goodbye;
  message.events.clear();
  exporter.observe(message);
  clock_.advance(1min);
  // The last values stay for scrapes that come after the job ended.
  EXPECT_NE(exporter.text().find("job"), std::string::npos);
  clock_.advance(4min);
  EXPECT_EQ(exporter.text().find("job"), std::string::npos);
  EXPECT_EQ(exporter.stats().sources, 0u);
  // Without a scrape, the next observation removes what is due.
  exporter.observe(job, statEvent({{"loss.mean", 1.0}}));
  clock_.advance(5min);
  exporter.observe(source("next", "h", 0), makeEvent("other", {}));
  EXPECT_EQ(exporter.stats().series, 0u);
}

TEST_F(MetricsExporterTest, FollowsASubscribersSourceChanges) {
  MetricsExporter exporter(options());
  ReceivedEvent received;
  received.source = std::make_shared<const SourceInfo>(source("sub", "h", 2));
  received.event = statEvent({{"loss.mean", 3.0}});
  exporter.observe(received);
  clock_.advance(3min);
  exporter.observe(SourceChange{received.source, SourceState::Gone, false, nullptr});
  clock_.advance(3min);
  EXPECT_NE(exporter.text().find("sub"), std::string::npos);  // 3 min after the goodbye
  clock_.advance(2min);
  EXPECT_EQ(exporter.text().find("sub"), std::string::npos);
}

TEST_F(MetricsExporterTest, MakesHostileLabelValuesSafeForPrometheus) {
  MetricsExporterOptions o = options();
  o.maxLabelBytes = 16;
  MetricsExporter exporter(o);
  const std::string longHost(100, 'h');
  exporter.observe(source(std::string("r\xff\x01n\"\\"), longHost, 1),
                   statEvent({{"caf\xc3\xa9\n.mean", 1.0}, {std::string(40, 's') + ".max", 2.0}}));
  const std::string text = exporter.text();
  // Invalid UTF-8 and control bytes become '?'; quotes, backslashes are escaped by the format.
  EXPECT_NE(text.find(R"(run="r??n\"\\")"), std::string::npos) << text;
  EXPECT_NE(text.find("stat=\"caf\xc3\xa9?\""), std::string::npos) << text;
  EXPECT_NE(text.find("host=\"" + std::string(16, 'h') + "\""), std::string::npos) << text;
  EXPECT_NE(text.find("stat=\"" + std::string(16, 's') + "\""), std::string::npos) << text;
  // A multi-byte character is never cut in half.
  exporter.observe(source("r", "h", 1), statEvent({{std::string(15, 'x') + "\xc3\xa9.mean", 1.0}}));
  EXPECT_NE(exporter.text().find("stat=\"" + std::string(15, 'x') + "\""), std::string::npos);
}

TEST_F(MetricsExporterTest, ServesExtraCountersAndRefusesBadNames) {
  MetricsExporter exporter(options());
  exporter.setCounter("livemon_relay_forwarded_total", "Messages forwarded", 17);
  exporter.setCounter("livemon_relay_forwarded_total", "Messages forwarded", 18);
  const std::string text = exporter.text();
  EXPECT_TRUE(hasLine(text, "livemon_relay_forwarded_total 18")) << text;
  EXPECT_NE(text.find("# TYPE livemon_relay_forwarded_total counter"), std::string::npos);
  EXPECT_THROW(exporter.setCounter("bad name", "", 1), std::invalid_argument);
  EXPECT_THROW(exporter.setCounter("livemon_stat", "", 1), std::invalid_argument);
  EXPECT_THROW(exporter.setCounter("livemon_exporter_series", "", 1), std::invalid_argument);
}

TEST_F(MetricsExporterTest, RefusesBadOptions) {
  MetricsExporterOptions o = options(0);
  EXPECT_THROW(MetricsExporter{o}, std::invalid_argument);
  o = options();
  o.forgetAfter = 0ms;
  EXPECT_THROW(MetricsExporter{o}, std::invalid_argument);
}

TEST(MetricsExporterHttp, ServesMetricsOverHttpOnLoopback) {
  MetricsExporterOptions options;
  options.port = 0;  // a free port
  MetricsExporter exporter(options);
  ASSERT_NE(exporter.port(), 0);
  exporter.observe(source("http", "h", 5), statEvent({{"train.loss.mean", 0.5}}));
  const auto response = test::httpGet(exporter.port(), "/metrics");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_NE(response->headers.find("text/plain"), std::string::npos) << response->headers;
  EXPECT_TRUE(hasLine(response->body,
                      R"(livemon_stat{aggregation="mean",host="h",rank="5",run="http",stat="train.loss"} 0.5)"))
      << response->body;
}

TEST(MetricsExporterHttp, ReportsAPortInUseByName) {
  MetricsExporter first;
  MetricsExporterOptions options;
  options.port = first.port();
  try {
    MetricsExporter second(options);
    FAIL() << "bound a port in use";
  } catch (const TransportError& error) {
    EXPECT_NE(std::string(error.what()).find("127.0.0.1:" + std::to_string(first.port())), std::string::npos)
        << error.what();
  }
}

TEST(PublisherMetrics, ServesTheJobsOwnStatsWhenAPortIsGiven) {
  PublisherOptions options = test::testPublisherOptions();
  options.runName = "metrics-job";
  options.rank = 4;
  options.metricsPort = test::freeTcpPort();
  Publisher publisher(options);
  ASSERT_EQ(publisher.metricsPort(), options.metricsPort);
  logEvent(statEvent({{"train.loss.mean", 0.75}}));
  logEvent(makeEvent("eval", {{"accuracy", 0.5}}));
  const std::string wanted =
      R"(livemon_stat{aggregation="mean",host=")" + publisher.identity().host +
      R"(",rank="4",run="metrics-job",stat="train.loss"} 0.75)";
  std::string body;
  EXPECT_TRUE(test::waitUntil([&] {
    const auto response = test::httpGet(publisher.metricsPort(), "/metrics");
    body = response ? response->body : "";
    return hasLine(body, wanted);
  })) << body;
}

TEST(PublisherMetrics, TakesThePortFromTheEnvironmentAndIsOffWithoutOne) {
  {
    Publisher publisher(test::testPublisherOptions());
    EXPECT_EQ(publisher.metricsPort(), 0);
  }
  const uint16_t port = test::freeTcpPort();
  setenv("LIVEMON_METRICS_PORT", std::to_string(port).c_str(), 1);
  {
    Publisher publisher(test::testPublisherOptions());
    EXPECT_EQ(publisher.metricsPort(), port);
    EXPECT_TRUE(test::httpGet(port, "/metrics"));
  }
  setenv("LIVEMON_METRICS_PORT", "http", 1);
  try {
    Publisher publisher(test::testPublisherOptions());
    ADD_FAILURE() << "took a bad LIVEMON_METRICS_PORT";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("LIVEMON_METRICS_PORT"), std::string::npos) << error.what();
  }
  unsetenv("LIVEMON_METRICS_PORT");
}

// torchrun starts a node's ranks as processes of their own, with LOCAL_RANK 0, 1, ...: each serves on
// LIVEMON_METRICS_PORT plus its local rank, so they do not fight over one port.
TEST(PublisherMetrics, EachLocalRankOfANodeServesOnAPortOfItsOwn) {
  const uint16_t base = test::freeTcpPort();
  setenv("LIVEMON_METRICS_PORT", std::to_string(base).c_str(), 1);
  setenv("LOCAL_RANK", "0", 1);
  uint16_t zero = 0;
  {
    Publisher publisher(test::testPublisherOptions());
    zero = publisher.metricsPort();
  }
  EXPECT_EQ(zero, base);
  const uint16_t third = test::freeTcpPort();
  if (third > 2) {
    setenv("LIVEMON_METRICS_PORT", std::to_string(third - 2).c_str(), 1);
    setenv("LOCAL_RANK", "2", 1);
    Publisher publisher(test::testPublisherOptions());
    EXPECT_EQ(publisher.metricsPort(), third);
    EXPECT_TRUE(test::httpGet(third, "/metrics"));
  }
  setenv("LIVEMON_METRICS_PORT", "65535", 1);
  setenv("LOCAL_RANK", "3", 1);
  EXPECT_THROW(Publisher(test::testPublisherOptions()), std::invalid_argument);
  unsetenv("LOCAL_RANK");
  unsetenv("LIVEMON_METRICS_PORT");
}

// Several Publishers in one process (`demo --ranks`, a job with two) with LIVEMON_METRICS_PORT:
// the process has one such port, so they share its server, which serves every one of them and
// lasts as long as one of them does. A port given as an option stays the Publisher's own.
TEST(PublisherMetrics, PublishersOfOneProcessShareThePortFromTheEnvironment) {
  const uint16_t port = test::freeTcpPort();
  setenv("LIVEMON_METRICS_PORT", std::to_string(port).c_str(), 1);
  auto rankOptions = [](int64_t rank) {
    PublisherOptions options = test::testPublisherOptions();
    options.runName = "shared-metrics";
    options.rank = rank;
    options.handleLoggedEvents = false;
    return options;
  };
  auto first = std::make_unique<Publisher>(rankOptions(0));
  auto second = std::make_unique<Publisher>(rankOptions(1));
  EXPECT_EQ(first->metricsPort(), port);
  EXPECT_EQ(second->metricsPort(), port);
  auto line = [&](const Publisher& publisher, const std::string& rank, const std::string& value) {
    return R"(livemon_stat{aggregation="mean",host=")" + publisher.identity().host + R"(",rank=")" + rank +
           R"(",run="shared-metrics",stat="train.loss"} )" + value;
  };
  first->publish(statEvent({{"train.loss.mean", 0.5}}));
  second->publish(statEvent({{"train.loss.mean", 0.25}}));
  std::string body;
  auto scrapeShows = [&](const std::vector<std::string>& lines) {
    return test::waitUntil([&] {
      const auto response = test::httpGet(port, "/metrics");
      body = response ? response->body : "";
      for (const std::string& wanted : lines) {
        if (!hasLine(body, wanted)) return false;
      }
      return true;
    });
  };
  EXPECT_TRUE(scrapeShows({line(*first, "0", "0.5"), line(*second, "1", "0.25")})) << body;

  PublisherOptions own = rankOptions(2);
  own.metricsPort = port;
  {
    Publisher third(own);  // an explicit port is not shared: this one comes up without metrics
    EXPECT_EQ(third.metricsPort(), 0);
    EXPECT_TRUE(third.stats().metricsUnavailable);
  }

  first.reset();
  second->publish(statEvent({{"train.loss.mean", 0.125}}));
  EXPECT_TRUE(scrapeShows({line(*second, "1", "0.125")})) << "served while one of them lives: " << body;
  second.reset();
  EXPECT_FALSE(test::httpGet(port, "/metrics")) << "closed with the last of them";
  {
    Publisher again(rankOptions(3));  // a later one opens the port anew
    EXPECT_EQ(again.metricsPort(), port);
    EXPECT_TRUE(test::httpGet(port, "/metrics"));
  }
  unsetenv("LIVEMON_METRICS_PORT");
}

// On a shared node any local user can take a port first. A monitoring port must never kill the
// training job: the Publisher comes up without its metrics, says so once on stderr, shows it in
// its stats, and publishes as ever.
TEST(PublisherMetrics, APublisherWhoseMetricsPortIsTakenComesUpWithoutItAndPublishes) {
  MetricsExporter squatter;  // another process took the port first
  PublisherOptions options = test::testPublisherOptions();
  options.runName = "port-taken";
  options.metricsPort = squatter.port();
  options.handleLoggedEvents = false;
  ::testing::internal::CaptureStderr();
  std::unique_ptr<Publisher> publisher;
  ASSERT_NO_THROW(publisher = std::make_unique<Publisher>(options));
  const std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("127.0.0.1:" + std::to_string(squatter.port())), std::string::npos) << warning;
  EXPECT_NE(warning.find("without"), std::string::npos) << warning;
  EXPECT_EQ(publisher->metricsPort(), 0);
  EXPECT_TRUE(publisher->stats().metricsUnavailable);

  Subscriber subscriber(test::connectTo(publisher->endpoints()));
  ASSERT_TRUE(test::waitForSource(subscriber, publisher->identity()));
  std::size_t received = 0;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](const ReceivedEvent& event) { received += event.event.name == kStatEventName ? 1 : 0; };
  publisher->publish(statEvent({{"train.loss.mean", 0.5}}));
  EXPECT_TRUE(test::pollUntil(subscriber, callbacks, [&] { return received == 1; })) << "it publishes";

  // The same for the port of LIVEMON_METRICS_PORT; the warning is said once.
  setenv("LIVEMON_METRICS_PORT", std::to_string(squatter.port()).c_str(), 1);
  options.metricsPort = 0;
  ::testing::internal::CaptureStderr();
  {
    Publisher fromEnvironment(options);
    Publisher again(options);
    EXPECT_TRUE(fromEnvironment.stats().metricsUnavailable);
    EXPECT_TRUE(again.stats().metricsUnavailable);
  }
  const std::string later = ::testing::internal::GetCapturedStderr();
  unsetenv("LIVEMON_METRICS_PORT");
  EXPECT_EQ(later.find("livemon"), std::string::npos) << "said once: " << later;
  EXPECT_FALSE(Publisher(test::testPublisherOptions()).stats().metricsUnavailable);
}


// What `livemonctl relay --metrics-port` observes, the message borrowed (EventBatchView), exports
// exactly what the decoded message does: the same series, values, counts and refusals.
TEST_F(MetricsExporterTest, ABorrowedMessageExportsWhatTheDecodedOneDoes) {
  const SourceInfo job = source("job", "h", 2);
  std::vector<Event> events{statEvent({{"loss.mean", 1.5}, {"tokens.count", int64_t{7}}, {"nodot", 2.0},
                                       {"step", int64_t{3}}, {"phase.name", std::string("x")}}),
                            statEvent({{"loss.mean", 2.5}, {"lr.value", 3e-4}})};
  for (Event& event : events) event.timestamp = std::chrono::system_clock::time_point(std::chrono::seconds(9));
  const std::string stats = encodeEventsPayload(job, 0, kStatEventName, events);
  const std::string other = encodeEventsPayload(job, 2, "other", {makeEvent("other", {{"a.b", 1.0}})});
  PublisherCounters counters;
  const std::string goodbye = encodeHeartbeatPayload(MessageKind::Goodbye, job, 0, counters);
  MetricsExporter decoded(options());
  MetricsExporter borrowed(options());
  EventBatchDecoder decoder;
  for (const auto& [topic, payload] : {std::pair<std::string_view, std::string_view>{kStatEventName, stats},
                                       {"other", other}, {kHeartbeatTopic, goodbye}}) {
    WireMessage message;
    ASSERT_EQ(decodeMessage(topic, payload, WireLimits{}, message), DecodeStatus::Ok);
    decoded.observe(message);
    ASSERT_EQ(decoder.decode(topic, payload, [&](const EventBatchView& batch) { borrowed.observe(batch); }),
              DecodeStatus::Ok);
  }
  EXPECT_EQ(borrowed.text(), decoded.text());
  EXPECT_NE(borrowed.text().find("2.5"), std::string::npos) << borrowed.text();
  const MetricsExporterStats a = decoded.stats();
  const MetricsExporterStats b = borrowed.stats();
  EXPECT_EQ(b.events, a.events);
  EXPECT_EQ(b.statValues, a.statValues);
  EXPECT_EQ(b.malformedKeys, a.malformedKeys);
  EXPECT_EQ(b.series, a.series);
  EXPECT_EQ(b.sources, a.sources);
}

}  // namespace
}  // namespace livemon::transport
