#include <livemon/transport/recorded_event.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include <livemon/transport/event_batch_view.h>

#include "recorded_sample.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::received;
using test::source;
namespace fs = std::filesystem;

// What the single-event decode says of each message of `path` it refuses; a message it takes
// fails the test.
std::vector<std::string> singleDecodeErrors(const std::string& path) {
  RecordingReader reader(path);
  RecordedEventDecoder decoder(path);
  std::vector<std::string> errors;
  reader.forEachMessage([&](const RecordedMessage& message) {
    ReceivedEvent event;
    std::string error;
    EXPECT_FALSE(decoder.decode(message, event, &error));
    errors.push_back(error);
    return true;
  });
  return errors;
}

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
  const std::vector<std::string> errors = singleDecodeErrors(path_);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_FALSE(errors[0].empty());
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

// The events of one wire message as a subscriber delivers them: each with the message it
// arrived in (SubscriberOptions::keepMessages), received at the same moment.
std::vector<ReceivedEvent> arrivedTogether(const std::shared_ptr<const SourceInfo>& from, uint64_t first, const std::string& name,
                                           std::chrono::milliseconds at, std::size_t count) {
  std::vector<ReceivedEvent> events;
  std::vector<Event> plain;
  for (std::size_t i = 0; i < count; ++i) {
    events.push_back(received(from, first + i, name, at + std::chrono::milliseconds(i), {{"i", static_cast<int64_t>(i)}}));
    events.back().receivedAt = events.front().receivedAt;
    if (i % 2 == 0) events.back().event.step = static_cast<int64_t>(100 + i);
    plain.push_back(events.back().event);
  }
  const auto message = std::make_shared<const ReceivedMessage>(
      ReceivedMessage{name, encodeEventsPayload(*from, first, name, plain), first, count});
  for (ReceivedEvent& event : events) event.message = message;
  return events;
}

// Every message of `path`, split into its events; `messages` counts the messages.
std::vector<ReceivedEvent> readEvents(const std::string& path, std::size_t* messages = nullptr) {
  RecordingReader reader(path);
  RecordedEventDecoder decoder(path);
  std::vector<ReceivedEvent> all;
  std::vector<ReceivedEvent> batch;
  reader.forEachMessage([&](const RecordedMessage& message) {
    std::string error;
    EXPECT_TRUE(decoder.decode(message, batch, &error)) << error;
    for (ReceivedEvent& event : batch) all.push_back(std::move(event));
    if (messages) ++*messages;
    return true;
  });
  EXPECT_TRUE(reader.problems().empty());
  return all;
}

TEST_F(RecordedEventTest, AWholeMessageIsRecordedOnceAsItArrivedAndOtherEventsAlone) {
  const auto from = source("run", 7, 1);
  const std::vector<ReceivedEvent> batch = arrivedTogether(from, 40, "train", 1000ms, 5);
  ReceivedEvent alone = received(from, 0, "eval", 2000ms, {{"accuracy", 0.5}});
  {
    RecordingWriter writer(path_);
    ReceivedEventRecorder recorder(writer);
    for (const ReceivedEvent& event : batch) EXPECT_TRUE(recorder.record(event));
    EXPECT_TRUE(recorder.record(alone));
    EXPECT_EQ(recorder.events(), 6u);
    EXPECT_EQ(writer.messageCount(), 2u) << "the batch as one message, the lone event as another";
  }
  RecordingReader reader(path_);
  EXPECT_EQ(recordingFormatVersion(reader.summary()), 2);
  for (const auto& [id, channel] : reader.summary().channels) {
    EXPECT_EQ(channel.metadata, (std::map<std::string, std::string>{{"livemon.format", "2"}})) << channel.topic;
  }
  // The message's bytes are the payload as it arrived, its publish time its first event's.
  reader.forEachMessage([&](const RecordedMessage& message) {
    if (message.channel->topic == "train") {
      EXPECT_EQ(message.payload, batch.front().message->payload);
      EXPECT_EQ(message.publishTimeNs, static_cast<uint64_t>(toWireTime(batch.front().event.timestamp)));
      EXPECT_EQ(message.logTimeNs, static_cast<uint64_t>(toWireTime(batch.front().receivedAt)));
    }
    return true;
  });
  std::size_t messages = 0;
  const std::vector<ReceivedEvent> back = readEvents(path_, &messages);
  EXPECT_EQ(messages, 2u);
  ASSERT_EQ(back.size(), 6u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(back[i].event, batch[i].event) << i;
    EXPECT_EQ(back[i].sequence, 40 + i);
    EXPECT_EQ(*back[i].source, *from);
    EXPECT_EQ(back[i].receivedAt, batch[i].receivedAt);
  }
  EXPECT_EQ(back[5].event, alone.event);
  EXPECT_EQ(back[0].source, back[4].source) << "one shared source per publisher instance";
}

// Lent events (SubscriberCallbacks::onEventView) record as the same events handed do: a message
// delivered whole written once, as it arrived, with its first event; an event of a message not
// delivered whole as a message of its own.
TEST_F(RecordedEventTest, LentEventsRecordAsTheirHandedCopiesDo) {
  const auto from = source("run", 7, 1);
  const std::vector<ReceivedEvent> batch = arrivedTogether(from, 40, "train", 1000ms, 5);
  const std::string& payload = batch.front().message->payload;
  {
    RecordingWriter writer(path_);
    ReceivedEventRecorder recorder(writer);
    EventBatchDecoder decoder;
    ASSERT_EQ(decoder.decode("train", payload,
                             [&](const EventBatchView& message) {
                               for (std::size_t i = 0; i < message.size(); ++i) {
                                 EXPECT_TRUE(recorder.record(ReceivedEventView{message[i], message, from, 40 + i,
                                                                               batch[i].endpoint, batch[i].receivedAt,
                                                                               false, true}));
                               }
                               // Its last two again, not delivered whole: each a message of its own.
                               for (std::size_t i = 3; i < message.size(); ++i) {
                                 EXPECT_TRUE(recorder.record(ReceivedEventView{message[i], message, from, 40 + i,
                                                                               batch[i].endpoint, batch[i].receivedAt,
                                                                               false, false}));
                               }
                             }),
              DecodeStatus::Ok);
    EXPECT_EQ(recorder.events(), 7u);
    EXPECT_EQ(writer.messageCount(), 3u) << "the whole message once, then two alone";
  }
  bool sawWhole = false;
  RecordingReader reader(path_);
  reader.forEachMessage([&](const RecordedMessage& message) {
    if (message.payload == payload) {
      sawWhole = true;
      EXPECT_EQ(message.publishTimeNs, static_cast<uint64_t>(toWireTime(batch.front().event.timestamp)));
      EXPECT_EQ(message.logTimeNs, static_cast<uint64_t>(toWireTime(batch.front().receivedAt)));
    }
    return true;
  });
  EXPECT_TRUE(sawWhole) << "the message's bytes as they arrived";
  const std::vector<ReceivedEvent> back = readEvents(path_);
  ASSERT_EQ(back.size(), 7u);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(back[i].event, batch[i].event) << i;
  EXPECT_EQ(back[5].event, batch[3].event);
  EXPECT_EQ(back[6].sequence, 44u);
}

TEST_F(RecordedEventTest, TheSingleEventDecodeRefusesABatchAndSaysSo) {
  {
    RecordingWriter writer(path_);
    ReceivedEventRecorder recorder(writer);
    for (const ReceivedEvent& event : arrivedTogether(source("run", 7), 0, "train", 0ms, 3)) recorder.record(event);
  }
  const std::vector<std::string> errors = singleDecodeErrors(path_);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("holds 3 events"), std::string::npos) << errors[0];
}

TEST_F(RecordedEventTest, AMessageRefusedByTheWriterCountsItsEventsAsNotRecorded) {
  RecordingWriter writer(path_);
  ReceivedEventRecorder recorder(writer);
  const auto from = source("run", 7);
  for (uint64_t i = 0; i < kMaxRecordingChannels; ++i) recorder.record(received(from, 0, "name-" + std::to_string(i), 1ms, {}));
  for (const ReceivedEvent& event : arrivedTogether(from, 0, "one-too-many", 2ms, 4)) EXPECT_FALSE(recorder.record(event));
  EXPECT_EQ(recorder.events(), kMaxRecordingChannels);
  EXPECT_EQ(recorder.notRecorded(), 4u);
}

// tests/recording/data/recording_format1.mcap was written by `livemonctl record` before
// recordings held batches (format version 1: one event per message, no format in the channels'
// metadata) from `livemonctl demo --run format-1`: 61 Stat windows and 5 evals, all with steps.
TEST_F(RecordedEventTest, Format1RecordingsStillRead) {
  const std::string path = test::sourceDir() + "/tests/recording/data/recording_format1.mcap";
  RecordingReader reader(path);
  EXPECT_TRUE(reader.indexed());
  EXPECT_EQ(recordingFormatVersion(reader.summary()), 1);
  EXPECT_EQ(reader.summary().messageCount, 66u);
  std::size_t messages = 0;
  const std::vector<ReceivedEvent> events = readEvents(path, &messages);
  ASSERT_EQ(events.size(), 66u);
  EXPECT_EQ(messages, 66u) << "one event per message";
  std::map<std::string, int> perName;
  for (const ReceivedEvent& event : events) {
    ++perName[event.event.name];
    EXPECT_EQ(event.source->run, "format-1");
    EXPECT_TRUE(statedStep(event.event).has_value());
  }
  EXPECT_EQ(perName, (std::map<std::string, int>{{"livemon.Stat", 61}, {"eval", 5}}));
}

TEST_F(RecordedEventTest, ACorruptBatchIsReportedWithWhereItIsAndWhatFollowsStillReads) {
  const auto from = source("run", 7);
  std::vector<Event> plain;
  for (int i = 0; i < 4; ++i) plain.push_back(Event{"train", test::kT0 + std::chrono::milliseconds(i), {{"i", int64_t{i}}}});
  const std::string good = encodeEventsPayload(*from, 0, "train", plain);
  const std::string cut = good.substr(0, good.size() - 5);  // the last event's data cut short
  {
    RecordingWriter writer(path_);
    writer.write("train", 1, 1, good);
    writer.write("train", 2, 2, cut);
    writer.write("train", 3, 3, encodeEventsPayload(*from, 4, "train", plain));
  }
  RecordingReader reader(path_);
  RecordedEventDecoder decoder(path_);
  std::vector<ReceivedEvent> batch;
  std::vector<std::size_t> sizes;
  std::vector<std::string> errors;
  reader.forEachMessage([&](const RecordedMessage& message) {
    std::string error;
    if (decoder.decode(message, batch, &error)) {
      sizes.push_back(batch.size());
      EXPECT_EQ(batch.back().sequence, message.logTimeNs == 1 ? 3u : 7u);
    } else {
      EXPECT_TRUE(batch.empty()) << "nothing of a refused message is handed out";
      errors.push_back(error);
    }
    return true;
  });
  EXPECT_EQ(sizes, (std::vector<std::size_t>{4, 4})) << "the messages around the corrupt one read whole";
  ASSERT_EQ(errors.size(), 1u);
  // The first message record of a chunk follows the channel record.
  EXPECT_NE(errors[0].find("the \"train\" message at byte "), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find(" of the chunk at byte " + std::to_string(reader.summary().chunks.front().offset) + ": "),
            std::string::npos)
      << errors[0];
}

TEST_F(RecordedEventTest, SplittingABatchIsBoundedByTheWireLimits) {
  {
    RecordingWriter writer(path_);
    ReceivedEventRecorder recorder(writer);
    for (const ReceivedEvent& event : arrivedTogether(source("run", 7), 0, "train", 0ms, 5)) recorder.record(event);
  }
  WireLimits limits;
  limits.maxEventsPerMessage = 4;
  RecordingReader reader(path_);
  RecordedEventDecoder decoder(path_, limits);
  std::vector<ReceivedEvent> batch;
  int refused = 0;
  reader.forEachMessage([&](const RecordedMessage& message) {
    std::string error;
    EXPECT_FALSE(decoder.decode(message, batch, &error));
    EXPECT_NE(error.find("5"), std::string::npos) << "names the count: " << error;
    ++refused;
    return true;
  });
  EXPECT_EQ(refused, 1);
}

}  // namespace
}  // namespace livemon::transport
