// Converting received events for the dashboard (off the GUI thread), staging them, and the
// ingest worker's synthetic-feed path; the limits on what peers may make it hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <livemon/run_config.h>
#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/publisher.h>
#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/ingest/staging_buffer.h>

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

TEST(EventConverter, NonNumericValuesAreOnlyLoggedAndAStatKeyWithoutADotIsItsOwnStat) {
  EventConverter converter;
  IngestBatch batch;
  const auto source = makeSource("train", 1);
  auto checkpoint = received(source, Event{"checkpoint", atMs(5), {{"path", std::string("/ckpt/1")}, {"done", true}}});
  auto odd = received(source, Event{"livemon.Stat", atMs(6), {{"note.text", std::string("x")}, {"ok.flag", true}, {"plain", 4.0}}});
  converter.convert(checkpoint, batch);
  converter.convert(odd, batch);
  EXPECT_EQ(batch.log.size(), 2U);
  // Only "plain" is plotted: a key without a dot is its own Stat with aggregation "value".
  ASSERT_EQ(batch.series.size(), 1U);
  EXPECT_EQ(batch.series[0].stat, "plain");
  EXPECT_EQ(batch.series[0].aggregation, "value");
  EXPECT_EQ(batch.series[0].kind, SeriesKind::StatWindow);
  ASSERT_EQ(batch.samples.size(), 1U);
}

TEST(EventConverter, EveryNumericFieldOfAnyEventIsAChartWithAPointPerEvent) {
  EventConverter converter;
  const auto source = makeSource("train", 1);
  IngestBatch batch;
  for (int epoch = 1; epoch <= 3; ++epoch) {
    auto eval = received(source, Event{"eval", atMs(1000.0 * epoch),
                                       {{"epoch", int64_t{epoch}},
                                        {"step", int64_t{100 * epoch}},
                                        {"accuracy", 0.5 + 0.1 * epoch},
                                        {"loss", int64_t{4 - epoch}},
                                        {"split", std::string("val")},
                                        {"best", epoch == 3}}});
    converter.convert(eval, batch);
  }
  // accuracy and loss are charted; the run position (step, epoch), strings and bools are only logged.
  ASSERT_EQ(batch.series.size(), 2U);
  const SeriesDescriptor* accuracy = findSeries(batch, "eval.accuracy", "value");
  const SeriesDescriptor* loss = findSeries(batch, "eval.loss", "value");
  ASSERT_NE(accuracy, nullptr);
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(accuracy->kind, SeriesKind::EventField);
  EXPECT_EQ(loss->kind, SeriesKind::EventField);
  std::vector<std::pair<double, double>> accuracyPoints;
  std::vector<std::pair<double, double>> lossPoints;
  for (const StatSample& sample : batch.samples) {
    if (sample.series == accuracy->id) accuracyPoints.emplace_back(sample.x, sample.y);
    if (sample.series == loss->id) lossPoints.emplace_back(sample.x, sample.y);
  }
  EXPECT_EQ(batch.samples.size(), 6U);
  ASSERT_EQ(accuracyPoints.size(), 3U);
  EXPECT_EQ(accuracyPoints[0].first, 1000.0);
  EXPECT_DOUBLE_EQ(accuracyPoints[2].second, 0.8);
  EXPECT_EQ(lossPoints, (std::vector<std::pair<double, double>>{{1000.0, 3.0}, {2000.0, 2.0}, {3000.0, 1.0}}));
  EXPECT_EQ(batch.log.size(), 3U);
  EXPECT_EQ(converter.chartCount(), 2U);

  // Another source's eval joins the same charts with lines of its own.
  IngestBatch other;
  auto rank1 = received(makeSource("train", 2, 1), Event{"eval", atMs(1500.0), {{"accuracy", 0.7}}});
  converter.convert(rank1, other);
  ASSERT_EQ(other.series.size(), 1U);
  EXPECT_EQ(other.series[0].stat, "eval.accuracy");
  EXPECT_NE(other.series[0].id, accuracy->id);
  EXPECT_EQ(converter.chartCount(), 2U);
}

TEST(EventConverter, AnEventFieldAndAStatKeyOfTheSameNameAreDifferentLines) {
  EventConverter converter;
  const auto source = makeSource("train", 1);
  IngestBatch batch;
  // Event "train" field "loss.mean" and Stat key "train.loss.mean" name the same chart
  // "train.loss" ... but one is a Stat window's mean, the other a value per event.
  auto stat = received(source, Event{"livemon.Stat", atMs(1), {{"train.loss.mean", 1.0}}});
  auto event = received(source, Event{"train", atMs(2), {{"loss", 2.0}}});
  converter.convert(stat, batch);
  converter.convert(event, batch);
  ASSERT_EQ(batch.series.size(), 2U);
  EXPECT_EQ(batch.series[0].stat, "train.loss");
  EXPECT_EQ(batch.series[1].stat, "train.loss");
  EXPECT_NE(batch.series[0].aggregation, batch.series[1].aggregation);
  EXPECT_EQ(converter.chartCount(), 1U);
}

TEST(EventConverter, RendersDataSortedByKeyWithStringsQuoted) {
  const Event event{"e", atMs(0), {{"b", 0.25}, {"a", std::string("text")}, {"d", true}, {"c", int64_t{-3}}, {"e", 1.0 / 3.0}}};
  EXPECT_EQ(EventConverter::renderData(event), "a=\"text\", b=0.25, c=-3, d=true, e=0.3333333333");
  EXPECT_EQ(EventConverter::renderData(Event{"empty", atMs(0), {}}), "");
}

TEST(EventConverter, ARunConfigIsHandedOnAndLoggedButNotCharted) {
  EventConverter converter;
  IngestBatch batch;
  const auto source = makeSource("lr-1e-3", 42);
  auto config = received(source, Event{std::string(kRunConfigEventName), atMs(1000.0),
                                       {{"lr", 1e-3}, {"batch", int64_t{64}}, {"optimizer", std::string("adam")}, {"step", int64_t{0}}}});
  converter.convert(config, batch);

  EXPECT_TRUE(batch.series.empty());
  EXPECT_TRUE(batch.samples.empty());
  ASSERT_EQ(batch.log.size(), 1U);
  ASSERT_EQ(batch.configs.size(), 1U);
  EXPECT_EQ(batch.configs[0].source, batch.sources[0].id);
  EXPECT_EQ(batch.configs[0].timeNs, 1'000'000'000);
  const RunConfig expected{{"lr", 1e-3}, {"batch", int64_t{64}}, {"optimizer", std::string("adam")}};
  EXPECT_EQ(batch.configs[0].config, expected);

  // A flood of configs holds one per source, the newest.
  for (int i = 0; i < 100; ++i) {
    auto again = received(source, Event{std::string(kRunConfigEventName), atMs(2000.0 + i), {{"lr", 1e-4 * i}}});
    converter.convert(again, batch);
  }
  ASSERT_EQ(batch.configs.size(), 1U);
  EXPECT_EQ(batch.configs[0].config, (RunConfig{{"lr", 1e-4 * 99}}));
  IngestBatch later;
  later.addConfig(RunConfigNote{batch.sources[0].id, 5'000'000'000, {{"lr", 0.5}}});
  batch.append(std::move(later));
  ASSERT_EQ(batch.configs.size(), 1U);
  EXPECT_EQ(batch.configs[0].config, (RunConfig{{"lr", 0.5}}));

  // Another event with the same fields is charted as usual.
  auto other = received(source, Event{"hparams", atMs(2000.0), {{"lr", 1e-3}}});
  converter.convert(other, batch);
  EXPECT_EQ(batch.series.size(), 1U);
  EXPECT_EQ(batch.configs.size(), 1U);
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

// The dashboard applies a large window in pieces (a dozen a second at 1 024 ranks) and hands each
// back: all of them are freed by the thread that pushes next, not by the GUI thread (whose frees
// of the ingest thread's memory cost it 10-15 ms a refresh in glibc's consolidation).
TEST(StagingBuffer, SpentPiecesAreFreedByTheThreadThatPushesNextNotTheCaller) {
  StagingBuffer staging;
  std::mutex mutex;
  std::vector<std::thread::id> freedOn;
  const auto note = [&](const transport::SourceInfo* info) {
    std::lock_guard lock(mutex);
    freedOn.push_back(std::this_thread::get_id());
    delete info;
  };
  constexpr int kPieces = 24;
  for (int piece = 0; piece < kPieces; ++piece) {
    IngestBatch spent;
    spent.sources.push_back(SourceDescriptor{0, std::shared_ptr<const transport::SourceInfo>(new transport::SourceInfo, note), "e"});
    staging.recycle(std::move(spent));
  }
  {
    std::lock_guard lock(mutex);
    EXPECT_TRUE(freedOn.empty()) << freedOn.size() << " freed by the caller";
  }
  std::thread::id pusher;
  std::thread([&] {
    pusher = std::this_thread::get_id();
    staging.push(IngestBatch{});
  }).join();
  ASSERT_EQ(freedOn.size(), static_cast<std::size_t>(kPieces));
  for (const std::thread::id id : freedOn) EXPECT_EQ(id, pusher);
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

TEST(StagingBuffer, ReplayedBatchesAreKeptWholeInOrderAndLeaveTheLiveLimitsAlone) {
  StagingBuffer staging(StagingBuffer::Limits{2, 2});
  IngestBatch replayed;
  replayed.series.push_back(SeriesDescriptor{0, 0, "loss", "mean"});
  for (int i = 0; i < 5; ++i) {
    replayed.log.push_back(LogEntry{i, 0, 0, std::to_string(i)});
    replayed.samples.push_back(StatSample{0, static_cast<double>(i), 0.0});
  }
  staging.pushReplayed(std::move(replayed));
  IngestBatch live;
  for (int i = 5; i < 7; ++i) {
    live.log.push_back(LogEntry{i, 0, 0, std::to_string(i)});
    live.samples.push_back(StatSample{0, static_cast<double>(i), 0.0});
  }
  staging.push(std::move(live));
  EXPECT_EQ(staging.droppedLogEntries(), 0U);
  EXPECT_EQ(staging.droppedSamples(), 0U);
  IngestBatch taken = staging.take();
  ASSERT_EQ(taken.log.size(), 7U);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(taken.log[static_cast<std::size_t>(i)].timeNs, i);
  EXPECT_EQ(taken.samples.size(), 7U);
  EXPECT_EQ(taken.series.size(), 1U);
}

TEST(IngestWorker, ReplayedEventsAreStagedBehindWhatWasConvertedBeforeWithTheirDescriptors) {
  IngestWorker::Options options;  // no endpoints: a synthetic feed only
  IngestWorker worker(options);
  std::vector<transport::ReceivedEvent> live{
      received(makeSource("live", 1), Event{"livemon.Stat", atMs(1), {{"loss.mean", 1.0}}})};
  worker.deliver(live);
  std::vector<transport::ReceivedEvent> replayed{
      received(makeSource("recorded", 2), Event{"livemon.Stat", atMs(2), {{"loss.mean", 2.0}}})};
  worker.stageReplayed(replayed);
  IngestBatch batch = worker.staging().take();
  ASSERT_EQ(batch.sources.size(), 2U);
  ASSERT_EQ(batch.series.size(), 2U);
  ASSERT_EQ(batch.samples.size(), 2U);
  EXPECT_EQ(batch.samples[0].y, 1.0);
  EXPECT_EQ(batch.samples[1].y, 2.0);
  // The replayed sample uses the series the replayed descriptor brought along.
  EXPECT_EQ(batch.samples[1].series, batch.series[1].id);
  EXPECT_EQ(batch.series[1].source, batch.sources[1].id);
  EXPECT_TRUE(worker.staging().take().empty());
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

// A field logged by every step of a fast loop: the GUI gets a few points per slot of each line,
// with its extremes and its NaN, while Stat windows and the log keep every event.
TEST(EventConverter, FinishFoldsAFastFieldsPointsButNotStatWindowsOrTheLog) {
  EventConverter converter(IngestLimits{}, 2.0);
  const auto source = makeSource("train", 1);
  IngestBatch batch;
  // 1000 events in 10 ms (5 slots), a spike in the middle and a NaN in the 4th slot.
  for (int i = 0; i < 1000; ++i) {
    double loss = 1.0 - i * 1e-4;
    if (i == 500) loss = 84.0;
    if (i == 700) loss = std::numeric_limits<double>::quiet_NaN();
    auto step = received(source, Event{"train.step", atMs(1000.0 + i * 0.01), {{"loss", loss}, {"step", int64_t{i}}}});
    converter.convert(step, batch);
  }
  auto stat = received(source, Event{"livemon.Stat", atMs(1005.0), {{"x.mean", 1.0}, {"x.max", 2.0}}});
  converter.convert(stat, batch);
  ASSERT_EQ(batch.samples.size(), 1002U);
  converter.finish(batch);

  const SeriesDescriptor* loss = findSeries(batch, "train.step.loss", "value");
  ASSERT_NE(loss, nullptr);
  std::vector<StatSample> points;
  std::size_t statSamples = 0;
  for (const StatSample& sample : batch.samples) {
    if (sample.series == loss->id) points.push_back(sample);
    else ++statSamples;
  }
  EXPECT_EQ(statSamples, 2U);
  EXPECT_LE(points.size(), 5U * 5U);  // 5 slots, 4 points each and the NaN
  EXPECT_EQ(converter.foldedSamples(), 1000U - points.size());
  ASSERT_FALSE(points.empty());
  EXPECT_EQ(points.front().y, 1.0);
  EXPECT_DOUBLE_EQ(points.back().y, 1.0 - 999 * 1e-4);
  const auto at = [&points](double x) {
    return std::find_if(points.begin(), points.end(), [x](const StatSample& s) { return s.x == x; });
  };
  ASSERT_NE(at(1005.0), points.end());
  EXPECT_EQ(at(1005.0)->y, 84.0);
  ASSERT_NE(at(1007.0), points.end());
  EXPECT_TRUE(std::isnan(at(1007.0)->y));
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end(), [](const StatSample& a, const StatSample& b) { return a.x < b.x; }));
  // Each point kept keeps its own event's step: the spike is at step 500.
  EXPECT_EQ(at(1005.0)->step, 500.0);
  for (const StatSample& point : points) EXPECT_EQ(point.step, std::round((point.x - 1000.0) / 0.01)) << point.x;
  EXPECT_EQ(batch.log.size(), 1001U);
}

TEST(EventConverter, SamplesCarryTheStepTheirEventStates) {
  EventConverter converter;
  const auto source = makeSource("train", 1);
  IngestBatch batch;
  Event window{"livemon.Stat", atMs(1000.0), {{"loss.mean", 0.5}}};
  window.step = 1200;
  auto stated = received(source, std::move(window));
  auto field = received(source, Event{"eval", atMs(2000.0), {{"accuracy", 0.9}, {"step", int64_t{1300}}}});
  auto none = received(source, Event{"livemon.Stat", atMs(3000.0), {{"loss.mean", 0.4}}});
  for (auto* event : {&stated, &field, &none}) converter.convert(*event, batch);
  ASSERT_EQ(batch.samples.size(), 3U);  // "step" itself is not charted
  EXPECT_EQ(batch.samples[0].step, 1200.0);
  EXPECT_EQ(batch.samples[1].step, 1300.0);
  EXPECT_FALSE(hasStep(batch.samples[2].step));
}

TEST(IngestWorker, DeliveredFastFieldsAreFoldedBeforeTheyAreStaged) {
  IngestWorker::Options options;  // no endpoints: a synthetic feed only
  IngestWorker worker(options);
  const auto source = makeSource("train", 1);
  std::vector<transport::ReceivedEvent> events;
  // Every event at the same instant, as a burst read in one poll.
  for (int i = 0; i < 3000; ++i) {
    events.push_back(received(source, Event{"train.step", atMs(1000.0), {{"loss", 1.0 + (i % 10)}}}));
  }
  worker.deliver(events);
  IngestBatch batch = worker.staging().take();
  ASSERT_EQ(batch.series.size(), 1U);
  EXPECT_LE(batch.samples.size(), 4U);
  double low = 1e9;
  double high = -1e9;
  for (const StatSample& s : batch.samples) {
    low = std::min(low, s.y);
    high = std::max(high, s.y);
  }
  EXPECT_EQ(low, 1.0);
  EXPECT_EQ(high, 10.0);
  EXPECT_EQ(batch.log.size(), 3000U);
}

// "<prefix><i><suffix>", built in place (GCC 12 warns wrongly on chained operator+ at -O3).
std::string numbered(const char* prefix, int i, const char* suffix = "") {
  std::string text(prefix);
  text += std::to_string(i);
  text += suffix;
  return text;
}

// Converts one Stat event into `out`.
void convertStat(EventConverter& converter, const std::shared_ptr<const transport::SourceInfo>& source, double ms,
                 std::unordered_map<std::string, DataValue> data, IngestBatch& out) {
  auto event = received(source, Event{std::string(kStatEventName), atMs(ms), std::move(data)});
  converter.convert(event, out);
}

TEST(EventConverterLimits, AFloodOfNewStatNamesStopsAtTheChartLimitAndKnownLinesKeepTheirPoints) {
  EventConverter converter;
  const IngestLimits limits = converter.limits();
  const auto train = makeSource("train", 1);
  IngestBatch first;
  convertStat(converter, train, 0, {{"loss.mean", 1.0}}, first);
  ASSERT_EQ(first.series.size(), 1U);
  const SeriesId loss = first.series[0].id;

  // A publisher with a step number in its Stat name: a new chart every window.
  constexpr int kNames = 100'000;
  std::set<std::string> charts{"loss"};
  std::size_t series = 1;
  for (int i = 0; i < kNames; ++i) {
    IngestBatch batch;
    convertStat(converter, train, 1.0 + i, {{numbered("step", i, ".mean"), 1.0}}, batch);
    for (const SeriesDescriptor& descriptor : batch.series) charts.insert(descriptor.stat);
    series += batch.series.size();
    ASSERT_EQ(batch.log.size(), 1U) << "the event itself is still logged";
  }
  EXPECT_EQ(charts.size(), limits.maxCharts);
  EXPECT_EQ(series, limits.maxCharts);
  EXPECT_EQ(converter.chartCount(), limits.maxCharts);
  EXPECT_EQ(converter.seriesCount(), limits.maxCharts);
  const LimitDrops drops = converter.drops();
  const uint64_t refused = kNames - (limits.maxCharts - 1);
  EXPECT_EQ(drops.charts.dropped, refused);
  EXPECT_EQ(drops.charts.distinct, std::min<uint64_t>(refused, DistinctCounter::kDefaultCapacity));
  EXPECT_TRUE(drops.charts.atLeast);
  EXPECT_FALSE(drops.sources.any() || drops.series.any() || drops.sourceSeries.any() || drops.eventNames.any());

  // What was known keeps updating; a new line of a known chart still fits; a refused name stays
  // refused and is counted again.
  IngestBatch after;
  convertStat(converter, train, 200'000, {{"loss.mean", 2.0}, {"loss.max", 3.0}, {"step99999.mean", 4.0}}, after);
  ASSERT_EQ(after.series.size(), 1U);
  EXPECT_EQ(after.series[0].stat, "loss");
  EXPECT_EQ(after.series[0].aggregation, "max");
  ASSERT_EQ(after.samples.size(), 2U);
  EXPECT_TRUE(std::any_of(after.samples.begin(), after.samples.end(),
                          [&](const StatSample& s) { return s.series == loss && s.y == 2.0; }));
  EXPECT_EQ(converter.drops().charts.dropped, refused + 1);
}

TEST(EventConverterLimits, AFloodOfNewSourcesStopsAtTheSourceLimitAndAKnownSourceKeepsGettingThrough) {
  EventConverter converter;
  const IngestLimits limits = converter.limits();
  const auto train = makeSource("train", 1, 0);
  IngestBatch first;
  convertStat(converter, train, 0, {{"loss.mean", 1.0}}, first);
  const SeriesId loss = first.series.at(0).id;

  // Identities invented by the hundred thousand (a new pid and rank each).
  constexpr int kSources = 100'000;
  std::size_t sources = 1;
  std::size_t logged = 0;
  for (int i = 0; i < kSources; ++i) {
    IngestBatch batch;
    convertStat(converter, makeSource("flood", 10 + i, i), 1.0 + i, {{"loss.mean", 1.0}}, batch);
    sources += batch.sources.size();
    logged += batch.log.size();
  }
  EXPECT_EQ(sources, limits.maxSources);
  EXPECT_EQ(logged, limits.maxSources - 1) << "a refused source's events are dropped whole";
  EXPECT_EQ(converter.sourceCount(), limits.maxSources);
  EXPECT_LE(converter.cachedSourceAddresses(), 2 * limits.maxSources);
  const LimitDrops drops = converter.drops();
  EXPECT_EQ(drops.sources.dropped, kSources - (limits.maxSources - 1));
  EXPECT_EQ(drops.sources.distinct, DistinctCounter::kDefaultCapacity);
  EXPECT_TRUE(drops.sources.atLeast);

  IngestBatch after;
  convertStat(converter, train, 200'000, {{"loss.mean", 2.0}}, after);
  EXPECT_TRUE(after.sources.empty());
  ASSERT_EQ(after.samples.size(), 1U);
  EXPECT_EQ(after.samples[0].series, loss);
  EXPECT_EQ(after.log.size(), 1U);
}

TEST(EventConverterLimits, ManyCopiesOfOneSourceAreOneSourceAndAreNotAllKept) {
  // The subscriber makes a new SourceInfo for a source it forgot and hears again.
  EventConverter converter;
  const auto train = makeSource("train", 1);
  for (int i = 0; i < 100'000; ++i) {
    IngestBatch batch;
    convertStat(converter, std::make_shared<const transport::SourceInfo>(*train), i, {{"loss.mean", 1.0}}, batch);
    ASSERT_EQ(batch.samples.size(), 1U);
    ASSERT_EQ(batch.samples[0].series, 0U);
  }
  EXPECT_EQ(converter.sourceCount(), 1U);
  EXPECT_LE(converter.cachedSourceAddresses(), 2 * converter.limits().maxSources);
}

TEST(EventConverterLimits, NewEventNamesBeyondTheLimitAreNotLoggedButStatsStillAre) {
  EventConverter converter;
  const IngestLimits limits = converter.limits();
  const auto train = makeSource("train", 1);
  std::size_t names = 0;
  for (int i = 0; i < 100'000; ++i) {
    IngestBatch batch;
    auto event = received(train, Event{numbered("event", i), atMs(i), {{"i", int64_t{i}}}});
    converter.convert(event, batch);
    names += batch.names.size();
  }
  EXPECT_EQ(names, limits.maxEventNames);
  EXPECT_EQ(converter.eventNameCount(), limits.maxEventNames);
  EXPECT_EQ(converter.drops().eventNames.dropped, 100'000 - limits.maxEventNames);

  // A Stat event arrives first after the flood: its name is taken anyway, and a known name is logged.
  IngestBatch after;
  convertStat(converter, train, 1e6, {{"loss.mean", 1.0}}, after);
  auto known = received(train, Event{"event7", atMs(1e6), {}});
  auto refused = received(train, Event{"event99999", atMs(1e6), {}});
  converter.convert(known, after);
  converter.convert(refused, after);
  ASSERT_EQ(after.names.size(), 1U);
  EXPECT_EQ(after.names[0].name, kStatEventName);
  EXPECT_EQ(after.samples.size(), 1U);
  ASSERT_EQ(after.log.size(), 2U);
  EXPECT_EQ(after.log[1].name, 7U);
  EXPECT_EQ(converter.drops().eventNames.dropped, 100'000 - limits.maxEventNames + 1);
  EXPECT_EQ(converter.drops().eventNames.distinct, DistinctCounter::kDefaultCapacity);
  EXPECT_TRUE(converter.drops().eventNames.atLeast);
}

TEST(EventConverterLimits, OneSourceCannotTakeEveryLine) {
  EventConverter converter;
  const IngestLimits limits = converter.limits();
  const auto runaway = makeSource("runaway", 1);
  // Ten thousand aggregations of one Stat: one chart, but a line each.
  std::size_t series = 0;
  for (int i = 0; i < 10'000; ++i) {
    IngestBatch batch;
    convertStat(converter, runaway, i, {{numbered("x.agg", i), 1.0}}, batch);
    series += batch.series.size();
  }
  EXPECT_EQ(series, limits.maxSeriesPerSource);
  EXPECT_EQ(converter.drops().sourceSeries.dropped, 10'000 - limits.maxSeriesPerSource);
  EXPECT_EQ(converter.drops().sourceSeries.distinct, 10'000 - limits.maxSeriesPerSource);
  EXPECT_FALSE(converter.drops().series.any());

  IngestBatch other;
  convertStat(converter, makeSource("train", 2), 0, {{"x.agg1", 1.0}, {"loss.mean", 2.0}}, other);
  EXPECT_EQ(other.series.size(), 2U);
  EXPECT_EQ(other.samples.size(), 2U);
}

TEST(EventConverterLimits, BeyondTheLineLimitNewLinesAreDroppedAndCounted) {
  IngestLimits limits;
  limits.maxSeries = 10;
  EventConverter converter(limits);
  std::size_t series = 0;
  for (int i = 0; i < 25; ++i) {
    IngestBatch batch;
    convertStat(converter, makeSource("train", 1 + i % 5), i, {{numbered("s", i / 5, ".mean"), 1.0}}, batch);
    series += batch.series.size();
  }
  EXPECT_EQ(series, 10U);
  EXPECT_EQ(converter.seriesCount(), 10U);
  EXPECT_EQ(converter.drops().series.dropped, 15U);
  EXPECT_EQ(converter.drops().series.distinct, 15U);
  EXPECT_FALSE(converter.drops().series.atLeast);
}

TEST(EventConverterLimits, LinesOfRanksHaveABoundOfTheirOwnInWhich1024RanksOf20StatsFit) {
  // 1 024 ranks x 20 Stats x 4 aggregations: 81 920 lines, more than maxSeries alone allows.
  EventConverter converter;
  ASSERT_LT(converter.limits().maxSeries, 1024U * 20 * 4);
  std::unordered_map<std::string, DataValue> window;
  for (int stat = 0; stat < 20; ++stat) {
    for (const char* aggregation : {".mean", ".min", ".max", ".p99"}) window.emplace(numbered("s", stat, aggregation), 1.0);
  }
  std::size_t series = 0;
  for (int rank = 0; rank < 1024; ++rank) {
    IngestBatch batch;
    convertStat(converter, makeSource("job", 1000 + rank, rank), 0, window, batch);
    series += batch.series.size();
  }
  EXPECT_EQ(series, 1024U * 20 * 4);
  EXPECT_FALSE(converter.drops().series.any());

  // A source without a rank still has maxSeries to itself, and ranks their own bound.
  IngestLimits limits;
  limits.maxSeries = 3;
  limits.maxRankedSeries = 5;
  EventConverter bounded(limits);
  IngestBatch batch;
  convertStat(bounded, makeSource("train", 1), 0, {{"a.mean", 1.0}, {"b.mean", 1.0}, {"c.mean", 1.0}, {"d.mean", 1.0}}, batch);
  EXPECT_EQ(batch.series.size(), 3U);
  convertStat(bounded, makeSource("job", 2, 0), 0, {{"a.mean", 1.0}, {"b.mean", 1.0}, {"c.mean", 1.0}}, batch);
  convertStat(bounded, makeSource("job", 3, 1), 0, {{"a.mean", 1.0}, {"b.mean", 1.0}, {"c.mean", 1.0}}, batch);
  EXPECT_EQ(batch.series.size(), 3U + 5U);
  EXPECT_EQ(bounded.drops().series.dropped, 2U);  // one line unranked, one of rank 1
  EXPECT_EQ(bounded.seriesCount(), 8U);

  // Forgetting the ranks gives their bound back, not the other's.
  bounded.forgetSources({1, 2});
  IngestBatch after;
  convertStat(bounded, makeSource("job", 4, 2), 0, {{"a.mean", 1.0}, {"b.mean", 1.0}, {"c.mean", 1.0}}, after);
  convertStat(bounded, makeSource("train", 1), 1, {{"d.mean", 1.0}}, after);
  EXPECT_EQ(after.series.size(), 3U);
}

TEST(EventConverterLimits, WithoutARankedBoundLinesOfRanksCountAgainstTheLineLimit) {
  IngestLimits limits;
  limits.maxSeries = 4;
  limits.maxRankedSeries = 0;  // ranks drawn a line each, at full size
  EventConverter converter(limits);
  IngestBatch batch;
  convertStat(converter, makeSource("job", 1, 0), 0, {{"a.mean", 1.0}, {"b.mean", 1.0}, {"c.mean", 1.0}}, batch);
  convertStat(converter, makeSource("job", 2, 1), 0, {{"a.mean", 1.0}, {"b.mean", 1.0}, {"c.mean", 1.0}}, batch);
  EXPECT_EQ(batch.series.size(), 4U);
  EXPECT_EQ(converter.drops().series.dropped, 2U);
}

TEST(EventConverterLimits, ForgottenSourcesGiveBackTheirSourcesLinesAndCharts) {
  IngestLimits limits;
  limits.maxSources = 2;
  limits.maxCharts = 2;
  limits.maxSeries = 3;
  EventConverter converter(limits);
  const auto replayed = makeSource("replayed", 1);
  const auto live = makeSource("live", 2);
  const auto late = makeSource("late", 3);
  IngestBatch batch;
  convertStat(converter, replayed, 0, {{"accuracy.mean", 1.0}, {"loss.mean", 1.0}}, batch);
  convertStat(converter, live, 0, {{"loss.mean", 2.0}, {"throughput.mean", 5.0}}, batch);
  convertStat(converter, late, 0, {{"loss.mean", 3.0}}, batch);
  EXPECT_EQ(batch.sources.size(), 2U);
  EXPECT_EQ(batch.series.size(), 3U);  // throughput would be a third chart
  EXPECT_EQ(converter.drops().charts.dropped, 1U);
  EXPECT_EQ(converter.drops().sources.dropped, 1U);

  converter.forgetSources({0});
  EXPECT_EQ(converter.sourceCount(), 1U);
  EXPECT_EQ(converter.seriesCount(), 1U);
  EXPECT_EQ(converter.chartCount(), 1U);
  IngestBatch after;
  convertStat(converter, late, 1, {{"loss.mean", 3.0}}, after);
  convertStat(converter, live, 1, {{"throughput.mean", 5.0}}, after);
  ASSERT_EQ(after.sources.size(), 1U);
  EXPECT_EQ(after.sources[0].info->run, "late");
  EXPECT_EQ(after.series.size(), 2U);
  EXPECT_EQ(after.samples.size(), 2U);
  EXPECT_EQ(converter.chartCount(), 2U);
}

TEST(EventConverterLimits, AHugeEventIsLoggedCutToTheLimitAndCounted) {
  EventConverter converter;
  const std::size_t limit = converter.limits().maxLogDataBytes;
  // A megabyte of two-byte characters: the cut must not split one.
  std::string huge;
  for (int i = 0; i < 512 * 1024; ++i) huge += "\xC3\xA9";  // é
  auto event = received(makeSource("train", 1), Event{"note", atMs(1), {{"text", huge}, {"a", 1.0}}});
  IngestBatch batch;
  converter.convert(event, batch);
  ASSERT_EQ(batch.log.size(), 1U);
  const std::string& data = batch.log[0].data;
  EXPECT_LE(data.capacity(), 2 * limit) << "the rest is not kept either";
  EXPECT_TRUE(data.starts_with("a=1, text=\"\xC3\xA9\xC3\xA9")) << data.substr(0, 40);
  const std::size_t marker = data.find("\xE2\x80\xA6 (");
  ASSERT_NE(marker, std::string::npos);
  EXPECT_LE(marker, limit);
  constexpr std::size_t kPrefix = 11;  // a=1, text="
  EXPECT_EQ((marker - kPrefix) % 2, 0U) << "cut between characters";
  const std::size_t full = EventConverter::renderData(event.event, std::numeric_limits<std::size_t>::max()).size();
  EXPECT_EQ(full, kPrefix + huge.size() + 1);
  EXPECT_TRUE(data.ends_with(" (" + std::to_string(full - marker) + " more bytes)")) << data.substr(marker);
  EXPECT_EQ(converter.drops().logData.dropped, 1U);

  // Ordinary events are logged whole.
  auto small = received(makeSource("train", 1), Event{"note", atMs(2), {{"text", std::string("short")}}});
  converter.convert(small, batch);
  EXPECT_EQ(batch.log[1].data, "text=\"short\"");
  EXPECT_EQ(converter.drops().logData.dropped, 1U);
}

TEST(EventConverterLimits, EventFieldsCountAgainstTheChartAndLineLimitsAndARefusedNameChartsNothing) {
  IngestLimits limits;
  limits.maxCharts = 3;
  limits.maxEventNames = 2;
  EventConverter converter(limits);
  const auto source = makeSource("hostile", 1);
  // A peer inventing a field per event: three charts, then refusals, counted per distinct field.
  std::size_t series = 0;
  for (int i = 0; i < 1000; ++i) {
    IngestBatch batch;
    auto event = received(source, Event{"metrics", atMs(i), {{numbered("f", i % 500), 1.0}}});
    converter.convert(event, batch);
    series += batch.series.size();
    EXPECT_EQ(batch.log.size(), 1U) << "the event itself is still logged";
  }
  EXPECT_EQ(series, 3U);
  EXPECT_EQ(converter.chartCount(), 3U);
  EXPECT_EQ(converter.drops().charts.dropped, 1000U - 6U);  // f0..f2 come back at 500..502
  EXPECT_EQ(converter.drops().charts.distinct, 497U);

  // The known lines keep their points; an event whose name is beyond the name limit is neither
  // logged nor charted.
  IngestBatch after;
  auto known = received(source, Event{"metrics", atMs(2000), {{"f0", 7.0}}});
  auto other = received(source, Event{"other", atMs(2001), {{"x", 1.0}}});
  auto refused = received(source, Event{"refused", atMs(2002), {{"x", 1.0}}});
  converter.convert(known, after);
  converter.convert(other, after);  // the second name: logged, but its chart is over the limit
  converter.convert(refused, after);
  ASSERT_EQ(after.samples.size(), 1U);
  EXPECT_EQ(after.samples[0].y, 7.0);
  EXPECT_EQ(after.log.size(), 2U);
  EXPECT_EQ(converter.drops().eventNames.dropped, 1U);
  EXPECT_EQ(converter.drops().charts.dropped, 1000U - 6U + 1U);

  // Forgetting the source gives its event-field charts back.
  converter.forgetSources({0});
  EXPECT_EQ(converter.chartCount(), 0U);
  EXPECT_EQ(converter.seriesCount(), 0U);
  IngestBatch again;
  auto fresh = received(makeSource("train", 2), Event{"other", atMs(3000), {{"x", 0.9}}});
  converter.convert(fresh, again);
  ASSERT_EQ(again.series.size(), 1U);
  EXPECT_EQ(again.series[0].stat, "other.x");
}

TEST(EventConverterLimits, EventFieldsCannotTakeTheChartsStatsNeed) {
  IngestLimits limits;
  limits.maxCharts = 4;
  limits.maxFieldCharts = 2;
  EventConverter converter(limits);
  const auto source = makeSource("train", 1);
  for (int i = 0; i < 100; ++i) {
    IngestBatch batch;
    auto event = received(source, Event{"metrics", atMs(i), {{numbered("f", i), 1.0}}});
    converter.convert(event, batch);
  }
  EXPECT_EQ(converter.chartCount(), 2U);
  EXPECT_EQ(converter.drops().fieldCharts.dropped, 98U);
  EXPECT_EQ(converter.drops().fieldCharts.distinct, 98U);
  EXPECT_FALSE(converter.drops().charts.any());

  IngestBatch stats;
  convertStat(converter, source, 200, {{"loss.mean", 1.0}, {"accuracy.mean", 0.5}}, stats);
  EXPECT_EQ(stats.series.size(), 2U);
  EXPECT_EQ(stats.samples.size(), 2U);
  // A known event-field chart still takes a new line (another source's).
  IngestBatch more;
  auto event = received(makeSource("train", 2), Event{"metrics", atMs(300), {{"f0", 2.0}}});
  converter.convert(event, more);
  EXPECT_EQ(more.series.size(), 1U);
}

TEST(EventConverterLimits, OneSourcesEventFieldsShareItsLineLimit) {
  IngestLimits limits;
  limits.maxSeriesPerSource = 5;
  EventConverter converter(limits);
  const auto source = makeSource("train", 1);
  IngestBatch batch;
  convertStat(converter, source, 0, {{"loss.mean", 1.0}, {"loss.max", 2.0}, {"loss.min", 0.5}}, batch);
  auto event = received(source, Event{"eval", atMs(1), {{"a", 1.0}, {"b", 1.0}, {"c", 1.0}, {"d", 1.0}}});
  converter.convert(event, batch);
  EXPECT_EQ(batch.series.size(), 5U);
  EXPECT_EQ(converter.drops().sourceSeries.dropped, 2U);
}

// What the Subscriber lends (SubscriberCallbacks::onEventView) converts to the very batch its
// owning copy converts to: descriptors, samples (rates and steps too), log rows, configs, and
// what the limits refuse.
TEST(EventConverter, ALentEventConvertsAsItsOwningCopy) {
  IngestLimits limits;
  limits.maxEventNames = 5;  // livemon.Stat, train.step, eval, the config, huge: name0 and on are refused
  limits.maxLogDataBytes = 200;
  EventConverter owning(limits);
  EventConverter lending(limits);
  const auto first = makeSource("train", 1);
  const auto second = makeSource("train", 2);
  const std::string stat = transport::PublisherOptions{}.statName;
  std::vector<transport::ReceivedEvent> events;
  for (int i = 0; i < 3; ++i) {
    events.push_back(received(i == 1 ? second : first,
                              Event{"livemon.Stat", atMs(1000.0 * (i + 1)),
                                    {{"loss.mean", 0.5 / (i + 1)}, {"loss.count", int64_t{7 + i}},
                                     {stat + ".published.value", 1000.0 * (i + 1)}, {"nodot", 1.0}}}));
  }
  Event step{"train.step", atMs(4000.0), {{"loss", 0.25}, {"step", int64_t{40}}, {"phase", std::string("warm")},
                                          {"ok", true}, {"lr", int64_t{3}}}};
  events.push_back(received(first, step));
  Event stepped{"eval", atMs(5000.0), {{"acc", 0.75}}};
  stepped.step = 50;
  events.push_back(received(first, stepped));
  events.push_back(received(first, Event{std::string(kRunConfigEventName), atMs(6000.0),
                                         {{"lr", 0.001}, {"model", std::string("tiny")}, {"step", int64_t{0}}}}));
  events.push_back(received(first, Event{"huge", atMs(7000.0), {{"text", std::string(1000, 'x')}}}));
  for (int i = 0; i < 3; ++i) {  // names beyond maxEventNames
    events.push_back(received(second, Event{"name" + std::to_string(i), atMs(8000.0 + i), {{"v", 1.0 * i}}}));
  }
  IngestBatch fromOwning;
  IngestBatch fromLent;
  for (transport::ReceivedEvent& event : events) {
    transport::ReceivedEvent copy = event;
    owning.convert(copy, fromOwning);
    const std::string payload =
        transport::encodeEventsPayload(*event.source, 0, event.event.name, {event.event});
    transport::EventBatchDecoder decoder;
    ASSERT_EQ(decoder.decode(event.event.name, payload,
                             [&](const transport::EventBatchView& batch) {
                               lending.convert(transport::ReceivedEventView{batch[0], batch, event.source, 0,
                                                                            event.endpoint, event.receivedAt, false, true},
                                               fromLent);
                             }),
              transport::DecodeStatus::Ok);
  }
  owning.finish(fromOwning);
  lending.finish(fromLent);

  EXPECT_EQ(fromLent.events, fromOwning.events);
  ASSERT_EQ(fromLent.sources.size(), fromOwning.sources.size());
  ASSERT_EQ(fromLent.names.size(), fromOwning.names.size());
  for (std::size_t i = 0; i < fromOwning.names.size(); ++i) {
    EXPECT_EQ(fromLent.names[i].id, fromOwning.names[i].id);
    EXPECT_EQ(fromLent.names[i].name, fromOwning.names[i].name);
  }
  auto seriesKeys = [](const IngestBatch& batch) {
    std::set<std::tuple<SeriesId, SourceId, std::string, std::string, int>> keys;
    for (const SeriesDescriptor& s : batch.series) keys.emplace(s.id, s.source, s.stat, s.aggregation, static_cast<int>(s.kind));
    return keys;
  };
  EXPECT_EQ(seriesKeys(fromLent), seriesKeys(fromOwning));
  ASSERT_EQ(fromLent.samples.size(), fromOwning.samples.size());
  auto samples = [](const IngestBatch& batch) {
    std::multiset<std::tuple<SeriesId, double, double, double>> all;
    for (const StatSample& s : batch.samples) all.emplace(s.series, s.x, s.y, std::isnan(s.step) ? -1.0 : s.step);
    return all;
  };
  EXPECT_EQ(samples(fromLent), samples(fromOwning));
  ASSERT_EQ(fromLent.log.size(), fromOwning.log.size());
  for (std::size_t i = 0; i < fromOwning.log.size(); ++i) {
    EXPECT_EQ(fromLent.log[i].data, fromOwning.log[i].data) << i;
    EXPECT_EQ(fromLent.log[i].timeNs, fromOwning.log[i].timeNs) << i;
    EXPECT_EQ(fromLent.log[i].step, fromOwning.log[i].step) << i;
    EXPECT_EQ(fromLent.log[i].name, fromOwning.log[i].name) << i;
    EXPECT_EQ(fromLent.log[i].source, fromOwning.log[i].source) << i;
  }
  ASSERT_EQ(fromLent.configs.size(), 1u);
  ASSERT_EQ(fromOwning.configs.size(), 1u);
  EXPECT_EQ(fromLent.configs[0].config, fromOwning.configs[0].config);
  EXPECT_EQ(lending.drops().eventNames.dropped, owning.drops().eventNames.dropped);
  EXPECT_GT(owning.drops().eventNames.dropped, 0u) << "the test reaches the name limit";
  EXPECT_EQ(lending.drops().logData.dropped, 1u);
  EXPECT_EQ(owning.drops().logData.dropped, 1u);
}

TEST(EventConverter, ThePublishersRunningTotalsAreChartedAsARatePerSecond) {
  EventConverter converter;
  const auto source = makeSource("train", 1);
  // What a Publisher reports about itself: its counters so far, as Stats with aggregation value.
  const std::string stat = transport::PublisherOptions{}.statName;
  const std::string published = stat + ".published.value";
  const std::string dropped = stat + ".dropped.value";
  IngestBatch batch;
  convertStat(converter, source, 5'000, {{published, 10'000.0}, {dropped, 0.0}, {"train.published.value", 3.0}}, batch);
  const SeriesDescriptor* rate = findSeries(batch, stat + ".published", "rate/s");
  ASSERT_NE(rate, nullptr);
  EXPECT_EQ(rate->kind, SeriesKind::CounterRate);
  ASSERT_NE(findSeries(batch, stat + ".dropped", "rate/s"), nullptr);
  // A user's Stat that happens to end in "published" is charted as it is.
  const SeriesDescriptor* user = findSeries(batch, "train.published", "value");
  ASSERT_NE(user, nullptr);
  EXPECT_EQ(user->kind, SeriesKind::StatWindow);
  // A first window has no rate yet.
  ASSERT_EQ(batch.samples.size(), 1U);
  EXPECT_EQ(batch.samples[0].series, user->id);

  const auto ratesOf = [&](const IngestBatch& b) {
    std::vector<std::pair<double, double>> points;
    for (const StatSample& s : b.samples) {
      if (s.series == rate->id) points.emplace_back(s.x, s.y);
    }
    return points;
  };
  IngestBatch next;
  convertStat(converter, source, 10'000, {{published, 30'000.0}, {dropped, 50.0}}, next);
  convertStat(converter, source, 12'000, {{published, 31'000.0}}, next);
  EXPECT_EQ(ratesOf(next), (std::vector<std::pair<double, double>>{{10'000.0, 4'000.0}, {12'000.0, 500.0}}));
  const SeriesId droppedId = findSeries(batch, stat + ".dropped", "rate/s")->id;
  const auto droppedPoint = std::find_if(next.samples.begin(), next.samples.end(), [&](const StatSample& s) { return s.series == droppedId; });
  ASSERT_NE(droppedPoint, next.samples.end());
  EXPECT_DOUBLE_EQ(droppedPoint->y, 10.0);

  // A total that goes down (counted anew) or a window that is not later (a replay seeking back)
  // gives no point, and the next window is taken against it.
  IngestBatch odd;
  convertStat(converter, source, 14'000, {{published, 100.0}}, odd);
  convertStat(converter, source, 13'000, {{published, 200.0}}, odd);
  convertStat(converter, source, 15'000, {{published, 1'200.0}}, odd);
  EXPECT_EQ(ratesOf(odd), (std::vector<std::pair<double, double>>{{15'000.0, 500.0}}));

  // A second source's counters are its own.
  IngestBatch other;
  convertStat(converter, makeSource("train", 2), 20'000, {{published, 5.0}}, other);
  ASSERT_EQ(other.series.size(), 1U);
  EXPECT_TRUE(other.samples.empty());
}

TEST(IngestWorker, ReportsWhatItsLimitsDroppedLiveAndReplayed) {
  IngestWorker::Options options;
  options.limits.maxSources = 1;
  IngestWorker worker(options);
  std::vector<transport::ReceivedEvent> live{received(makeSource("a", 1), Event{"note", atMs(1), {}}),
                                             received(makeSource("b", 2), Event{"note", atMs(2), {}})};
  worker.deliver(live);
  std::vector<transport::ReceivedEvent> replayed{received(makeSource("c", 3), Event{"note", atMs(3), {}})};
  worker.stageReplayed(replayed);
  EXPECT_EQ(worker.staging().take().log.size(), 1U);  // the live "a"'s: "c" is beyond the limit
  EXPECT_EQ(worker.limits().maxSources, 1U);
  const LimitDrops drops = worker.limitDrops();
  EXPECT_EQ(drops.sources.dropped, 2U);
  EXPECT_EQ(drops.sources.distinct, 2U);
}

}  // namespace
}  // namespace livemon::ui
