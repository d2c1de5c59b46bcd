#include <livemon/transport/recorded_event.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "recorded_sample.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::received;
using test::source;
namespace fs = std::filesystem;

class RecordedEventTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("livemon-recorded-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "run.mcap").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void writeSample() { test::writeSampleRecording(path_); }

  fs::path dir_;
  std::string path_;
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
