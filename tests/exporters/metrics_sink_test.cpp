// The Prometheus exporter as a Publisher's metrics sink, fed Stat events directly: through the
// hand-off a Publisher uses (MetricsFeed), with no socket and no HTTP server.
#include <livemon/transport/metrics_exporter.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include <livemon/clock.h>
#include <livemon/event.h>
#include <livemon/transport/publisher_metrics.h>

#include "metrics_feed.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;

bool hasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

SourceInfo job(int64_t rank) {
  SourceInfo info;
  info.run = "llm";
  info.host = "node-1";
  info.pid = 42;
  info.rank = rank;
  return info;
}

std::shared_ptr<MetricsExporter> quietExporter(ManualClock& clock) {
  MetricsExporterOptions options;
  options.serve = false;
  options.clock = &clock;
  return std::make_shared<MetricsExporter>(options);
}

TEST(MetricsSink, StatEventsFromALoggingThreadReachTheExporterAsTheyWereLogged) {
  ManualClock clock;
  auto exporter = quietExporter(clock);
  detail::MetricsFeed feed(exporter);  // the exporter is the sink itself
  std::thread logging([&] {
    feed.offer(test::makeEvent(std::string(kStatEventName), {{"train.loss.mean", 2.5}, {"train.loss.max", 4.0}}));
    feed.offer(test::makeEvent("train.step", {{"loss", 9.0}}));  // not a Stat: not the exporter's
    feed.offer(test::makeEvent(std::string(kStatEventName), {{"train.loss.mean", 1.25}, {"step", int64_t{7}}}));
  });
  logging.join();
  EXPECT_EQ(exporter->stats().events, 0u) << "nothing reaches the exporter before the I/O thread delivers";
  EXPECT_EQ(feed.deliver(job(3)), 2u);

  const std::string text = exporter->text();
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="mean",host="node-1",rank="3",run="llm",stat="train.loss"} 1.25)"))
      << text;
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="max",host="node-1",rank="3",run="llm",stat="train.loss"} 4)"))
      << text;
  EXPECT_TRUE(hasLine(text, "livemon_exporter_events_total 2")) << "only Stat events are handed over\n" << text;
  EXPECT_TRUE(hasLine(text, "livemon_exporter_series 2")) << "a \"step\" field is not a series\n" << text;
  EXPECT_EQ(feed.droppedCount(), 0u);
}

// One exporter serves several Publishers (LIVEMON_METRICS_PORT): each feed names its own source.
TEST(MetricsSink, FeedsSharingAnExporterKeepTheirSourcesApart) {
  ManualClock clock;
  auto exporter = quietExporter(clock);
  detail::MetricsFeed rank0(exporter);
  detail::MetricsFeed rank1(exporter);
  rank0.offer(test::makeEvent(std::string(kStatEventName), {{"loss.mean", 0.5}}));
  rank1.offer(test::makeEvent(std::string(kTorchStatEventName), {{"loss.mean", 0.75}}));
  rank0.deliver(job(0));
  rank1.deliver(job(1));
  const std::string text = exporter->text();
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="mean",host="node-1",rank="0",run="llm",stat="loss"} 0.5)"))
      << text;
  EXPECT_TRUE(hasLine(text, R"(livemon_stat{aggregation="mean",host="node-1",rank="1",run="llm",stat="loss"} 0.75)"))
      << text;
  EXPECT_EQ(rank0.port(), 0) << "an exporter that serves nothing has no port";
}

// Heartbeats keep a source's series; silence past forgetAfter removes them.
TEST(MetricsSink, HeartbeatsKeepTheSourceAlive) {
  ManualClock clock;
  MetricsExporterOptions options;
  options.serve = false;
  options.clock = &clock;
  options.forgetAfter = 10s;
  auto exporter = std::make_shared<MetricsExporter>(options);
  detail::MetricsFeed feed(exporter);
  feed.offer(test::makeEvent(std::string(kStatEventName), {{"loss.mean", 0.5}}));
  feed.deliver(job(0));
  clock.advance(8s);
  feed.sourceAlive(job(0));
  clock.advance(8s);
  EXPECT_EQ(exporter->stats().series, 1u) << "alive 8 s ago";
  clock.advance(11s);
  exporter->text();  // a scrape forgets the silent
  EXPECT_EQ(exporter->stats().series, 0u);
}

}  // namespace
}  // namespace livemon::transport
