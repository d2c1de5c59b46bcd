// Converting received events for the dashboard (off the GUI thread), staging them, and the
// ingest worker's synthetic-feed path.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <livemon/ui/event_converter.h>
#include <livemon/ui/ingest_worker.h>
#include <livemon/ui/staging_buffer.h>

#include "ui_test_support.h"

namespace livemon::ui {
namespace {

using test::atMs;
using test::makeSource;
using test::received;

const SeriesDescriptor* findSeries(const IngestBatch& batch, const std::string& stat, const std::string& aggregation) {
  for (const SeriesDescriptor& s : batch.series) {
    if (s.stat == stat && s.aggregation == aggregation) return &s;
  }
  return nullptr;
}

TEST(EventConverter, StatEventsOfBothNamesBecomeSeriesSamplesAndLogEntries) {
  EventConverter converter;
  IngestBatch batch;
  const auto source = makeSource("train", 42);
  auto livemonStat = received(source, Event{"livemon.Stat", atMs(1000.0),
                                            {{"loss.mean", 0.5}, {"train.step_ms.p99", 12.0}, {"steps.count", int64_t{7}}}});
  auto torchStat = received(source, Event{"torch.monitor.Stat", atMs(2000.0), {{"gpu.util.value", 80.0}}});
  converter.convert(livemonStat, batch);
  converter.convert(torchStat, batch);

  ASSERT_EQ(batch.sources.size(), 1U);
  EXPECT_EQ(batch.sources[0].info->run, "train");
  EXPECT_EQ(batch.sources[0].endpoint, "tcp://127.0.0.1:5555");
  ASSERT_EQ(batch.series.size(), 4U);
  ASSERT_NE(findSeries(batch, "loss", "mean"), nullptr);
  ASSERT_NE(findSeries(batch, "train.step_ms", "p99"), nullptr);
  ASSERT_NE(findSeries(batch, "steps", "count"), nullptr);
  ASSERT_NE(findSeries(batch, "gpu.util", "value"), nullptr);
  ASSERT_EQ(batch.samples.size(), 4U);
  const SeriesId gpu = findSeries(batch, "gpu.util", "value")->id;
  const auto sample = std::find_if(batch.samples.begin(), batch.samples.end(), [&](const StatSample& s) { return s.series == gpu; });
  ASSERT_NE(sample, batch.samples.end());
  EXPECT_EQ(sample->x, 2000.0);
  EXPECT_EQ(sample->y, 80.0);
  const SeriesId steps = findSeries(batch, "steps", "count")->id;
  EXPECT_TRUE(std::any_of(batch.samples.begin(), batch.samples.end(),
                          [&](const StatSample& s) { return s.series == steps && s.y == 7.0; }));
  EXPECT_EQ(batch.log.size(), 2U);
  EXPECT_EQ(batch.events, 2U);
  ASSERT_EQ(batch.names.size(), 2U);
  EXPECT_EQ(batch.names[0].name, "livemon.Stat");
  EXPECT_EQ(batch.names[1].name, "torch.monitor.Stat");
}

TEST(EventConverter, SeriesAreInternedPerSourceAndKey) {
  EventConverter converter;
  const auto a = makeSource("train", 1, 0);
  const auto b = makeSource("train", 2, 1);
  IngestBatch first;
  auto e1 = received(a, Event{"livemon.Stat", atMs(1), {{"loss.mean", 1.0}}});
  auto e2 = received(b, Event{"livemon.Stat", atMs(1), {{"loss.mean", 2.0}}});
  converter.convert(e1, first);
  converter.convert(e2, first);
  ASSERT_EQ(first.series.size(), 2U);
  EXPECT_NE(first.series[0].source, first.series[1].source);

  // Later events of known series carry only samples; a copy of a known SourceInfo is the same source.
  IngestBatch second;
  auto e3 = received(std::make_shared<const transport::SourceInfo>(*a), Event{"livemon.Stat", atMs(2), {{"loss.mean", 3.0}}});
  converter.convert(e3, second);
  EXPECT_TRUE(second.sources.empty());
  EXPECT_TRUE(second.series.empty());
  EXPECT_TRUE(second.names.empty());
  ASSERT_EQ(second.samples.size(), 1U);
  EXPECT_EQ(second.samples[0].series, first.series[0].id);
  EXPECT_EQ(converter.sourceCount(), 2U);
}

TEST(EventConverter, AForgottenSourceSeenAgainIsANewSourceWithNewSeries) {
  EventConverter converter;
  const auto replayed = makeSource("train", 1);
  const auto live = makeSource("live", 2);
  IngestBatch first;
  auto e1 = received(replayed, Event{"livemon.Stat", atMs(1), {{"loss.mean", 1.0}}});
  auto e2 = received(live, Event{"livemon.Stat", atMs(1), {{"loss.mean", 2.0}}});
  converter.convert(e1, first);
  converter.convert(e2, first);
  ASSERT_EQ(first.sources.size(), 2U);

  converter.forgetSources({0});
  EXPECT_EQ(converter.sourceCount(), 1U);
  // The same recording opened again: an equal source, and the very same one, both get id 2.
  IngestBatch second;
  auto e3 = received(std::make_shared<const transport::SourceInfo>(*replayed), Event{"livemon.Stat", atMs(2), {{"loss.mean", 3.0}}});
  auto e4 = received(replayed, Event{"livemon.Stat", atMs(3), {{"loss.mean", 4.0}}});
  auto e5 = received(live, Event{"livemon.Stat", atMs(3), {{"loss.mean", 5.0}}});
  converter.convert(e3, second);
  converter.convert(e4, second);
  converter.convert(e5, second);
  ASSERT_EQ(second.sources.size(), 1U);
  EXPECT_EQ(second.sources[0].id, 2U);
  ASSERT_EQ(second.series.size(), 1U);
  EXPECT_EQ(second.series[0].source, 2U);
  EXPECT_EQ(second.series[0].id, 2U);
  ASSERT_EQ(second.samples.size(), 3U);
  EXPECT_EQ(second.samples[0].series, 2U);
  EXPECT_EQ(second.samples[1].series, 2U);
  EXPECT_EQ(second.samples[2].series, first.series[1].id);  // the live source is untouched
}

TEST(EventConverter, OtherEventsAreOnlyLoggedAndNonNumericStatValuesAreNotPlotted) {
  EventConverter converter;
  IngestBatch batch;
  const auto source = makeSource("train", 1);
  auto checkpoint = received(source, Event{"checkpoint", atMs(5), {{"path", std::string("/ckpt/1")}, {"loss.mean", 1.0}}});
  auto odd = received(source, Event{"livemon.Stat", atMs(6), {{"note.text", std::string("x")}, {"ok.flag", true}, {"plain", 4.0}}});
  converter.convert(checkpoint, batch);
  converter.convert(odd, batch);
  EXPECT_EQ(batch.log.size(), 2U);
  // Only "plain" is plotted: a key without a dot is its own Stat with aggregation "value".
  ASSERT_EQ(batch.series.size(), 1U);
  EXPECT_EQ(batch.series[0].stat, "plain");
  EXPECT_EQ(batch.series[0].aggregation, "value");
  ASSERT_EQ(batch.samples.size(), 1U);
}

TEST(EventConverter, RendersDataSortedByKeyWithStringsQuoted) {
  const Event event{"e", atMs(0), {{"b", 0.25}, {"a", std::string("text")}, {"d", true}, {"c", int64_t{-3}}, {"e", 1.0 / 3.0}}};
  EXPECT_EQ(EventConverter::renderData(event), "a=\"text\", b=0.25, c=-3, d=true, e=0.3333333333");
  EXPECT_EQ(EventConverter::renderData(Event{"empty", atMs(0), {}}), "");
}

TEST(StagingBuffer, TakeHandsOverEverythingOnceInOrder) {
  StagingBuffer staging;
  IngestBatch a;
  a.series.push_back(SeriesDescriptor{0, 0, "loss", "mean"});
  a.samples.push_back(StatSample{0, 1.0, 1.0});
  IngestBatch b;
  b.samples.push_back(StatSample{0, 2.0, 2.0});
  b.events = 1;
  staging.push(std::move(a));
  staging.push(std::move(b));
  IngestBatch taken = staging.take();
  ASSERT_EQ(taken.samples.size(), 2U);
  EXPECT_EQ(taken.samples[0].x, 1.0);
  EXPECT_EQ(taken.samples[1].x, 2.0);
  EXPECT_EQ(taken.series.size(), 1U);
  EXPECT_EQ(taken.events, 1U);
  EXPECT_TRUE(staging.take().empty());
}

TEST(StagingBuffer, BeyondItsLimitsNewEntriesAreDroppedAndCountedButDescriptorsKept) {
  StagingBuffer staging(StagingBuffer::Limits{3, 2});
  IngestBatch batch;
  for (int i = 0; i < 5; ++i) {
    batch.log.push_back(LogEntry{i, 0, 0, std::to_string(i)});
    batch.samples.push_back(StatSample{0, static_cast<double>(i), 0.0});
  }
  batch.series.push_back(SeriesDescriptor{0, 0, "loss", "mean"});
  staging.push(std::move(batch));
  EXPECT_EQ(staging.droppedLogEntries(), 2U);
  EXPECT_EQ(staging.droppedSamples(), 3U);
  IngestBatch taken = staging.take();
  ASSERT_EQ(taken.log.size(), 3U);
  EXPECT_EQ(taken.log[0].data, "0");
  EXPECT_EQ(taken.samples.size(), 2U);
  EXPECT_EQ(taken.series.size(), 1U);
}

TEST(IngestWorker, DeliveredEventsReachTheStagingBuffer) {
  IngestWorker::Options options;  // no endpoints: a synthetic feed only
  IngestWorker worker(options);
  worker.start();
  std::vector<transport::ReceivedEvent> events;
  events.push_back(received(makeSource("train", 1), Event{"livemon.Stat", atMs(1), {{"loss.mean", 1.0}}}));
  events.push_back(received(makeSource("train", 1), Event{"note", atMs(2), {}}));
  worker.deliver(events);
  IngestBatch batch = worker.staging().take();
  EXPECT_EQ(batch.sources.size(), 1U);
  EXPECT_EQ(batch.series.size(), 1U);
  EXPECT_EQ(batch.samples.size(), 1U);
  EXPECT_EQ(batch.log.size(), 2U);
  worker.stop();
}

}  // namespace
}  // namespace livemon::ui
