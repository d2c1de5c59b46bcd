#include <livemon/transport/recorded_event.h>

#include <gtest/gtest.h>


#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "recorded_sample.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::received;
using test::source;
namespace fs = std::filesystem;

class RecordedEventTest : public ::testing::Test {
 protected:
  void writeSample() { test::writeSampleRecording(path_); }

  test::TempDir temp_;  // removed with its contents after each test
  fs::path dir_ = temp_.path();
  std::string path_ = (dir_ / "run.mcap").string();
};

TEST_F(RecordedEventTest, EventsComeBackWithEveryTypeTheirSourceAndSequence) {
  const auto from = source("run-ü", 4242, 3);
  const ReceivedEvent original =
      received(from, 77, "mixed", 1500ms,
               {{"double", 1.0},
                {"nan", std::numeric_limits<double>::quiet_NaN()},
                {"inf", -std::numeric_limits<double>::infinity()},
                {"int", int64_t{-5}},
                {"bool", false},
                {"empty", std::string()},
                {"unicode", std::string("Δloss ≤ ε")}});
  {
    RecordingWriter writer(path_);
    recordEvent(writer, original);
  }
  RecordingReader reader(path_);
  RecordedEventDecoder decoder(path_);
  int seen = 0;
  reader.forEachMessage([&](const RecordedMessage& message) {
    EXPECT_EQ(message.channel->topic, "mixed");
    EXPECT_EQ(message.publishTimeNs, static_cast<uint64_t>(toWireTime(original.event.timestamp)));
    EXPECT_EQ(message.logTimeNs, static_cast<uint64_t>(toWireTime(original.receivedAt)));
    ReceivedEvent back;
    std::string error;
    EXPECT_TRUE(decoder.decode(message, back, &error)) << error;
    EXPECT_EQ(*back.source, *from);
    EXPECT_EQ(back.sequence, 77u);
    EXPECT_EQ(back.receivedAt, original.receivedAt);
    EXPECT_EQ(*back.endpoint, path_);
    EXPECT_EQ(back.event.name, "mixed");
    EXPECT_EQ(back.event.timestamp, original.event.timestamp);
    EXPECT_TRUE(std::holds_alternative<double>(back.event.data.at("double")));
    EXPECT_TRUE(std::isnan(std::get<double>(back.event.data.at("nan"))));
    auto withoutNan = back.event.data;
    auto expected = original.event.data;
    withoutNan.erase("nan");
    expected.erase("nan");
    EXPECT_EQ(withoutNan, expected);
    ++seen;
    return true;
  });
  EXPECT_EQ(seen, 1);
}

TEST_F(RecordedEventTest, StepsSurviveARecordingAndEventsWithoutOneStayWithout) {
  const auto from = source("run", 1, 0);
  std::vector<ReceivedEvent> originals;
  for (int i = 0; i < 4; ++i) {
    originals.push_back(received(from, static_cast<uint64_t>(i), "train", std::chrono::milliseconds(1000 + i),
                                 {{"loss", 1.0 / (i + 1)}}));
    if (i != 2) originals.back().event.step = int64_t{i} * 1000 - 1;
  }
  {
    RecordingWriter writer(path_);
    for (const ReceivedEvent& original : originals) recordEvent(writer, original);
  }
  RecordingReader reader(path_);
  RecordedEventDecoder decoder(path_);
  std::vector<Event> back;
  reader.forEachMessage([&](const RecordedMessage& message) {
    ReceivedEvent event;
    std::string error;
    EXPECT_TRUE(decoder.decode(message, event, &error)) << error;
    back.push_back(event.event);
    return true;
  });
  ASSERT_EQ(back.size(), originals.size());
  for (std::size_t i = 0; i < back.size(); ++i) EXPECT_EQ(back[i], originals[i].event) << i;
  EXPECT_FALSE(back[2].step.has_value());
}

// tests/recording/data/recording_before_steps.mcap was written by the recorder before steps
// existed: two Stat windows and an "eval" event with an int "step" field, from one source.
TEST_F(RecordedEventTest, RecordingsFromBeforeStepsStillOpen) {
  const std::string path = test::sourceDir() + "/tests/recording/data/recording_before_steps.mcap";
  RecordingReader reader(path);
  EXPECT_TRUE(reader.indexed());
  EXPECT_TRUE(reader.problems().empty());
  RecordedEventDecoder decoder(path);
  std::vector<Event> events;
  reader.forEachMessage([&](const RecordedMessage& message) {
    ReceivedEvent event;
    std::string error;
    EXPECT_TRUE(decoder.decode(message, event, &error)) << error;
    EXPECT_EQ(event.source->run, "demo");
    events.push_back(event.event);
    return true;
  });
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].name, "livemon.Stat");
  EXPECT_EQ(events[0].data.at("train.loss.mean"), DataValue(0.5));
  EXPECT_EQ(events[1].name, "eval");
  EXPECT_EQ(events[1].data.at("accuracy"), DataValue(0.75));
  EXPECT_EQ(events[2].data.at("train.loss.mean"), DataValue(0.25));
  for (const Event& event : events) EXPECT_FALSE(event.step.has_value()) << event;
  EXPECT_EQ(statedStep(events[1]), 100) << "the int field \"step\" still states the step";
}

TEST_F(RecordedEventTest, DecoderSharesOneSourcePerPublisherInstance) {
  writeSample();
  RecordingReader reader(path_);
  RecordedEventDecoder decoder(path_);
  std::set<const SourceInfo*> distinct;
  reader.forEachMessage([&](const RecordedMessage& message) {
    ReceivedEvent event;
    EXPECT_TRUE(decoder.decode(message, event));
    distinct.insert(event.source.get());
    return true;
  });
  EXPECT_EQ(distinct.size(), 2u);
}

TEST_F(RecordedEventTest, DecoderRejectsPayloadsThatAreNotEvents) {
  {
    RecordingWriter writer(path_);
    writer.write("garbage", 1, 1, "\xc1 not msgpack");
  }
  RecordingReader reader(path_);
  RecordedEventDecoder decoder(path_);
  reader.forEachMessage([&](const RecordedMessage& message) {
    ReceivedEvent event;
    std::string error;
    EXPECT_FALSE(decoder.decode(message, event, &error));
    EXPECT_FALSE(error.empty());
    return true;
  });
}

TEST_F(RecordedEventTest, RecordingGoesOnPastTheEventNameLimit) {
  RecordingWriter writer(path_);
  const auto trainer = source("train", 100, 0);
  for (uint64_t i = 0; i < 65535 + 5; ++i) {
    EXPECT_NO_THROW(recordEvent(writer, received(trainer, 0, "name-" + std::to_string(i), 1ms, {})));
  }
  EXPECT_NO_THROW(recordEvent(writer, received(trainer, 1, "name-1", 2ms, {{"after", true}})));
  writer.close();
  EXPECT_EQ(writer.messageCount(), 65535u + 1u);
}

}  // namespace
}  // namespace livemon::transport
