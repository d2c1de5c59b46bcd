// The version-1 encoder and decoder: types survive, limits hold, bad input is classified, and the
// bytes match the example in docs/wire-format.md.
#include <livemon/transport/wire_format.h>

#include <gtest/gtest.h>
#include <msgpack.hpp>

#include <bit>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include "test_support.h"

namespace livemon::transport {
namespace {

using test::makeEvent;
using namespace std::string_view_literals;

SourceInfo exampleSource() {
  SourceInfo source;
  source.run = "demo";
  source.host = "gpu01";
  source.pid = 4242;
  source.rank = 0;
  source.instanceId = 0x1122334455667788ULL;
  source.startTime = fromWireTime(1'700'000'000'000'000'000);
  return source;
}

WireMessage decodeOk(std::string_view topic, const std::string& payload, const WireLimits& limits = {}) {
  WireMessage message;
  std::string error;
  const DecodeStatus status = decodeMessage(topic, payload, limits, message, &error);
  EXPECT_EQ(status, DecodeStatus::Ok) << error;
  return message;
}

DecodeStatus decodeStatus(std::string_view topic, std::string_view payload, const WireLimits& limits = {}) {
  WireMessage message;
  return decodeMessage(topic, payload, limits, message);
}

// The hex digits of the first ```hex block after `marker` in docs/wire-format.md.
std::string hexBlockFromDoc(const std::string& marker) {
  std::ifstream file(test::sourceDir() + "/docs/wire-format.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const auto at = doc.find(marker);
  if (at == std::string::npos) return {};
  const auto begin = doc.find("```hex\n", at);
  const auto end = doc.find("```", begin + 7);
  if (begin == std::string::npos || end == std::string::npos) return {};
  std::string bytes;
  std::string digits;
  for (char c : doc.substr(begin + 7, end - begin - 7)) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits += c;
    if (digits.size() == 2) {
      bytes += static_cast<char>(std::stoi(digits, nullptr, 16));
      digits.clear();
    }
  }
  return bytes;
}

TEST(WireFormat, EveryValueTypeRoundTrips) {
  const Event event = makeEvent("types", {{"string", std::string("text")},
                                          {"unicode", std::string("Grüße, 世界 🚀")},
                                          {"empty", std::string()},
                                          {"double", 2.5},
                                          {"one", 1.0},
                                          {"zero", 0.0},
                                          {"negative zero", -0.0},
                                          {"nan", std::numeric_limits<double>::quiet_NaN()},
                                          {"inf", std::numeric_limits<double>::infinity()},
                                          {"-inf", -std::numeric_limits<double>::infinity()},
                                          {"tiny", std::numeric_limits<double>::denorm_min()},
                                          {"int", int64_t{42}},
                                          {"int one", int64_t{1}},
                                          {"int min", std::numeric_limits<int64_t>::min()},
                                          {"int max", std::numeric_limits<int64_t>::max()},
                                          {"int -1", int64_t{-1}},
                                          {"true", true},
                                          {"false", false}});
  const std::string payload = encodeEventsPayload(exampleSource(), 3, "types", {event});
  const WireMessage message = decodeOk("types", payload);
  ASSERT_EQ(message.events.size(), 1u);
  const Event& got = message.events[0];
  EXPECT_EQ(got.name, "types");
  EXPECT_EQ(got.timestamp, event.timestamp);
  ASSERT_EQ(got.data.size(), event.data.size());
  for (const auto& [key, value] : event.data) {
    ASSERT_TRUE(got.data.contains(key)) << key;
    const DataValue& back = got.data.at(key);
    ASSERT_EQ(back.index(), value.index()) << key << " changed type";
    if (const double* d = std::get_if<double>(&value)) {
      const double b = std::get<double>(back);
      if (std::isnan(*d)) {
        EXPECT_TRUE(std::isnan(b)) << key;
      } else {
        EXPECT_EQ(std::bit_cast<uint64_t>(b), std::bit_cast<uint64_t>(*d)) << key;
      }
    } else {
      EXPECT_EQ(back, value) << key;
    }
  }
  // Events compare equal (NaN aside) and keep double 1.0 apart from integer 1.
  EXPECT_EQ(std::get<double>(got.data.at("one")), 1.0);
  EXPECT_EQ(std::get<int64_t>(got.data.at("int one")), 1);
}

TEST(WireFormat, DoublesAreFloat64ForAnIndependentDecoder) {
  // msgpack-cxx 4.1.3 itself would pack 1.0 as an integer; livemon must not.
  const Event event = makeEvent("x", {{"one", 1.0}, {"inf", std::numeric_limits<double>::infinity()}});
  const std::string payload = encodeEventsPayload(exampleSource(), 0, "x", {event});
  const msgpack::object_handle handle = msgpack::unpack(payload.data(), payload.size());
  const msgpack::object& root = handle.get();
  ASSERT_EQ(root.type, msgpack::type::MAP);
  bool found = false;
  for (uint32_t i = 0; i < root.via.map.size; ++i) {
    const auto& kv = root.via.map.ptr[i];
    if (kv.key.as<std::string>() != "events") continue;
    const msgpack::object& data = kv.val.via.array.ptr[0].via.array.ptr[1];
    ASSERT_EQ(data.type, msgpack::type::MAP);
    for (uint32_t j = 0; j < data.via.map.size; ++j) {
      EXPECT_EQ(data.via.map.ptr[j].val.type, msgpack::type::FLOAT64) << data.via.map.ptr[j].key.as<std::string>();
    }
    found = true;
  }
  EXPECT_TRUE(found);
  // The raw byte: 0xcb followed by the IEEE-754 bits of 1.0.
  EXPECT_NE(payload.find(std::string("\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00", 9)), std::string::npos);
}

TEST(WireFormat, SourceAndSequenceRoundTrip) {
  SourceInfo source = exampleSource();
  source.rank.reset();
  source.pid = 1;
  std::vector<Event> events{makeEvent("n", {{"a", 1.0}}), makeEvent("n", {{"a", 2.0}})};
  const WireMessage message = decodeOk("n", encodeEventsPayload(source, 1ULL << 40, "n", events));
  EXPECT_EQ(message.kind, MessageKind::Events);
  EXPECT_EQ(message.source, source);
  EXPECT_FALSE(message.source.rank.has_value());
  EXPECT_EQ(message.sequence, 1ULL << 40);
  EXPECT_EQ(message.events, events);
}

TEST(WireFormat, HeartbeatAndGoodbyeRoundTrip) {
  PublisherCounters counters;
  counters.timestamp = fromWireTime(1'700'000'002'000'000'000);
  counters.interval = std::chrono::milliseconds(1000);
  counters.published = 123456;
  counters.dropped = 7;
  for (MessageKind kind : {MessageKind::Heartbeat, MessageKind::Goodbye}) {
    const WireMessage message = decodeOk(kHeartbeatTopic, encodeHeartbeatPayload(kind, exampleSource(), 9, counters));
    EXPECT_EQ(message.kind, kind);
    EXPECT_EQ(message.source, exampleSource());
    EXPECT_EQ(message.sequence, 9u);
    EXPECT_EQ(message.counters.timestamp, counters.timestamp);
    EXPECT_EQ(message.counters.interval, counters.interval);
    EXPECT_EQ(message.counters.published, counters.published);
    EXPECT_EQ(message.counters.dropped, counters.dropped);
  }
}

TEST(WireFormat, BytesMatchTheDocumentedExamples) {
  Event event = makeEvent("eval", {{"accuracy", 1.0}}, fromWireTime(1'700'000'001'500'000'000));
  const std::string events = encodeEventsPayload(exampleSource(), 7, "eval", {event});
  const std::string documentedEvents = hexBlockFromDoc("<!-- example: events payload -->");
  ASSERT_FALSE(documentedEvents.empty()) << "docs/wire-format.md lacks the events example";
  EXPECT_EQ(events, documentedEvents);

  SourceInfo torchrunRank = exampleSource();
  torchrunRank.worldSize = 8;
  torchrunRank.localRank = 0;
  const std::string documentedWorld = hexBlockFromDoc("<!-- example: events payload with world and local_rank -->");
  ASSERT_FALSE(documentedWorld.empty()) << "docs/wire-format.md lacks the example with world and local_rank";
  EXPECT_EQ(encodeEventsPayload(torchrunRank, 7, "eval", {event}), documentedWorld);

  event.step = 1200;
  const std::string stepped = encodeEventsPayload(exampleSource(), 7, "eval", {event});
  const std::string documentedStepped = hexBlockFromDoc("<!-- example: events payload with a step -->");
  ASSERT_FALSE(documentedStepped.empty()) << "docs/wire-format.md lacks the example with a step";
  EXPECT_EQ(stepped, documentedStepped);

  PublisherCounters counters;
  counters.timestamp = fromWireTime(1'700'000'002'000'000'000);
  counters.interval = std::chrono::milliseconds(1000);
  counters.published = 300;
  counters.dropped = 0;
  const std::string heartbeat = encodeHeartbeatPayload(MessageKind::Heartbeat, exampleSource(), 2, counters);
  const std::string documentedHeartbeat = hexBlockFromDoc("<!-- example: heartbeat payload -->");
  ASSERT_FALSE(documentedHeartbeat.empty()) << "docs/wire-format.md lacks the heartbeat example";
  EXPECT_EQ(heartbeat, documentedHeartbeat);
}

// Steps: an optional "steps" array beside "events", written only when an event has a step.

Event withStep(Event event, std::optional<int64_t> step) {
  event.step = step;
  return event;
}

TEST(WireFormat, StepsRoundTripBesideEventsWithout) {
  const std::vector<Event> events = {
      withStep(makeEvent("train", {{"loss", 0.5}}), 10),
      withStep(makeEvent("train", {{"loss", 0.4}}), std::nullopt),
      withStep(makeEvent("train", {{"loss", 0.3}}), -2),
      withStep(makeEvent("train", {{"loss", 0.2}}), std::numeric_limits<int64_t>::max()),
      withStep(makeEvent("train", {{"loss", 0.1}}), std::numeric_limits<int64_t>::min() + 1),
  };
  const WireMessage message = decodeOk("train", encodeEventsPayload(exampleSource(), 0, "train", events));
  EXPECT_EQ(message.events, events);
}

TEST(WireFormat, EventsWithoutAStepAreEncodedAsBeforeStepsExisted) {
  const std::vector<Event> events = {makeEvent("e", {{"k", 1.0}}), makeEvent("e", {{"k", 2.0}})};
  const std::string payload = encodeEventsPayload(exampleSource(), 0, "e", events);
  EXPECT_EQ(payload.find("steps"), std::string::npos);
  EXPECT_EQ(static_cast<uint8_t>(payload[0]), 0x86) << "six keys, as in every version-1 payload before steps";
  for (const Event& event : decodeOk("e", payload).events) EXPECT_FALSE(event.step.has_value());
}

// Produced by the version-1 encoder before steps existed: source run "demo", host "gpu01", pid
// 4242, no rank; seq 3; two "train" events, {"loss": 0.25} and {"step": 12} (an int field).
constexpr std::string_view kPayloadBeforeSteps =
    "\x86\xa1\x76\x01\xa4\x6b\x69\x6e\x64\xa6\x65\x76\x65\x6e\x74\x73"
    "\xa3\x73\x72\x63\x85\xa3\x72\x75\x6e\xa4\x64\x65\x6d\x6f\xa4\x68"
    "\x6f\x73\x74\xa5\x67\x70\x75\x30\x31\xa3\x70\x69\x64\xcd\x10\x92"
    "\xa2\x69\x64\xcf\x11\x22\x33\x44\x55\x66\x77\x88\xa5\x73\x74\x61"
    "\x72\x74\xcf\x17\x97\x9c\xfe\x36\x2a\x00\x00\xa3\x73\x65\x71\x03"
    "\xa4\x6e\x61\x6d\x65\xa5\x74\x72\x61\x69\x6e\xa6\x65\x76\x65\x6e"
    "\x74\x73\x92\x92\xcf\x17\x97\x9c\xfe\x71\xc4\xca\x00\x81\xa4\x6c"
    "\x6f\x73\x73\xcb\x3f\xd0\x00\x00\x00\x00\x00\x00\x92\xcf\x17\x97"
    "\x9c\xfe\xad\x5f\x94\x00\x81\xa4\x73\x74\x65\x70\x0c"sv;

TEST(WireFormat, PayloadsFromBeforeStepsStillDecode) {
  ASSERT_EQ(kPayloadBeforeSteps.size(), 141u);
  const WireMessage message = decodeOk("train", std::string(kPayloadBeforeSteps));
  EXPECT_EQ(message.sequence, 3u);
  EXPECT_EQ(message.source.run, "demo");
  EXPECT_FALSE(message.source.rank.has_value());
  ASSERT_EQ(message.events.size(), 2u);
  EXPECT_EQ(message.events[0], makeEvent("train", {{"loss", 0.25}}, fromWireTime(1'700'000'001'000'000'000)));
  EXPECT_EQ(message.events[1], makeEvent("train", {{"step", int64_t{12}}}, fromWireTime(1'700'000'002'000'000'000)));
  EXPECT_FALSE(message.events[1].step.has_value()) << "decoded as sent";
  EXPECT_EQ(statedStep(message.events[1]), 12) << "its int field still states the step";
  // And today's encoder still writes exactly these bytes for the same events.
  SourceInfo source = exampleSource();
  source.rank.reset();
  EXPECT_EQ(encodeEventsPayload(source, 3, "train", message.events), kPayloadBeforeSteps);
}

// A reader that knows only [timestamp, data] pairs and skips keys it does not know (every
// version-1 reader before steps) still reads every event of a payload with steps.
TEST(WireFormat, PayloadsWithStepsReadAsBeforeByReadersThatSkipUnknownKeys) {
  const std::vector<Event> events = {withStep(makeEvent("t", {{"k", 1.0}}), 5), makeEvent("t", {{"k", 2.0}})};
  const std::string payload = encodeEventsPayload(exampleSource(), 0, "t", events);
  const msgpack::object_handle handle = msgpack::unpack(payload.data(), payload.size());
  const msgpack::object& map = handle.get();
  ASSERT_EQ(map.type, msgpack::type::MAP);
  ASSERT_EQ(map.via.map.size, 7u);
  EXPECT_EQ(map.via.map.ptr[0].key.as<std::string>(), "v");
  EXPECT_EQ(map.via.map.ptr[0].val.as<int>(), 1) << "still version 1";
  EXPECT_EQ(map.via.map.ptr[5].key.as<std::string>(), "events");
  const msgpack::object& array = map.via.map.ptr[5].val;
  ASSERT_EQ(array.via.array.size, 2u);
  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_EQ(array.via.array.ptr[i].via.array.size, 2u) << "an event stays a [timestamp, data] pair";
    EXPECT_EQ(array.via.array.ptr[i].via.array.ptr[1].via.map.size, 1u) << "the step is not a data field";
  }
  EXPECT_EQ(map.via.map.ptr[6].key.as<std::string>(), "steps");
  const msgpack::object& steps = map.via.map.ptr[6].val;
  ASSERT_EQ(steps.via.array.size, 2u);
  EXPECT_EQ(steps.via.array.ptr[0].as<int64_t>(), 5);
  EXPECT_TRUE(steps.via.array.ptr[1].is_nil());
}

TEST(WireFormat, StepsMayComeBeforeEventsAndMustMatchThem) {
  auto payloadWith = [](bool stepsFirst, int stepCount, bool stepIsString) {
    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> packer(buffer);
    packer.pack_map(7);
    packer.pack(std::string("v"));
    packer.pack(1);
    packer.pack(std::string("kind"));
    packer.pack(std::string("events"));
    packer.pack(std::string("src"));
    packer.pack_map(5);
    for (const char* key : {"run", "host"}) {
      packer.pack(std::string(key));
      packer.pack(std::string("x"));
    }
    for (const char* key : {"pid", "id", "start"}) {
      packer.pack(std::string(key));
      packer.pack(1);
    }
    packer.pack(std::string("seq"));
    packer.pack(0);
    packer.pack(std::string("name"));
    packer.pack(std::string("n"));
    auto packSteps = [&] {
      packer.pack(std::string("steps"));
      packer.pack_array(static_cast<uint32_t>(stepCount));
      for (int i = 0; i < stepCount; ++i) {
        if (stepIsString) {
          packer.pack(std::string("1"));
        } else if (i == 0) {
          packer.pack_nil();
        } else {
          packer.pack(i * 100);
        }
      }
    };
    if (stepsFirst) packSteps();
    packer.pack(std::string("events"));
    packer.pack_array(2);
    for (int i = 0; i < 2; ++i) {
      packer.pack_array(2);
      packer.pack(int64_t{i});
      packer.pack_map(0);
    }
    if (!stepsFirst) packSteps();
    return std::string(buffer.data(), buffer.size());
  };
  for (const bool stepsFirst : {true, false}) {
    const WireMessage message = decodeOk("n", payloadWith(stepsFirst, 2, false));
    ASSERT_EQ(message.events.size(), 2u);
    EXPECT_FALSE(message.events[0].step.has_value());
    EXPECT_EQ(message.events[1].step, 100);
    EXPECT_EQ(decodeStatus("n", payloadWith(stepsFirst, 1, false)), DecodeStatus::Malformed) << "too few steps";
    EXPECT_EQ(decodeStatus("n", payloadWith(stepsFirst, 3, false)), DecodeStatus::Malformed) << "too many steps";
    EXPECT_EQ(decodeStatus("n", payloadWith(stepsFirst, 2, true)), DecodeStatus::Malformed) << "a string step";
  }
  WireLimits limits;
  limits.maxEventsPerMessage = 2;
  EXPECT_EQ(decodeStatus("n", payloadWith(false, 3, false), limits), DecodeStatus::TooLarge);
}

TEST(WireFormat, TruncatedPayloadsAreMalformedAtEveryLength) {
  const Event event = makeEvent("t", {{"s", std::string("hello")}, {"d", 0.5}, {"i", int64_t{-300}}, {"b", true}});
  const std::string payload = encodeEventsPayload(exampleSource(), 0, "t", {event, event});
  for (std::size_t length = 0; length < payload.size(); ++length) {
    EXPECT_EQ(decodeStatus("t", payload.substr(0, length)), DecodeStatus::Malformed) << "length " << length;
  }
  EXPECT_EQ(decodeStatus("t", payload + "x"), DecodeStatus::Malformed) << "trailing byte";
}

TEST(WireFormat, GarbageNeverCrashesTheDecoder) {
  const std::string payload = encodeEventsPayload(exampleSource(), 0, "g", {makeEvent("g", {{"k", 1.0}})});
  uint64_t seed = 12345;
  for (int round = 0; round < 20000; ++round) {
    std::string mutated = payload;
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::size_t flips = 1 + (seed >> 60);
    for (std::size_t f = 0; f < flips; ++f) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      mutated[(seed >> 33) % mutated.size()] = static_cast<char>(seed >> 20);
    }
    WireMessage message;
    decodeMessage("g", mutated, WireLimits{}, message);  // must only return
  }
  EXPECT_EQ(decodeStatus("g", std::string(100, '\xff')), DecodeStatus::Malformed);
  EXPECT_EQ(decodeStatus("g", ""), DecodeStatus::Malformed);
  EXPECT_EQ(decodeStatus("g", std::string("\xc1", 1)), DecodeStatus::Malformed);
}

TEST(WireFormat, StructuralErrorsAreMalformed) {
  const SourceInfo source = exampleSource();
  const std::string payload = encodeEventsPayload(source, 0, "name", {makeEvent("name", {{"k", 1.0}})});
  EXPECT_EQ(decodeStatus("other", payload), DecodeStatus::Malformed) << "topic differs from the name";
  PublisherCounters counters;
  EXPECT_EQ(decodeStatus("name", encodeHeartbeatPayload(MessageKind::Heartbeat, source, 0, counters)),
            DecodeStatus::Malformed)
      << "heartbeat on an event topic";

  auto payloadOf = [](const msgpack::sbuffer& buffer) { return std::string(buffer.data(), buffer.size()); };
  {  // "v" is not the first key
    msgpack::sbuffer buffer;
    msgpack::packer<msgpack::sbuffer> packer(buffer);
    packer.pack_map(1);
    packer.pack(std::string("kind"));
    packer.pack(std::string("events"));
    EXPECT_EQ(decodeStatus("x", payloadOf(buffer)), DecodeStatus::Malformed);
  }
  {  // a value of an unsupported type (nil)
    std::string bad = encodeEventsPayload(source, 0, "n", {makeEvent("n", {{"k", true}})});
    bad.back() = '\xc0';
    EXPECT_EQ(decodeStatus("n", bad), DecodeStatus::Malformed);
  }
  {  // a uint64 beyond int64 as a data value
    std::string bad = encodeEventsPayload(source, 0, "n", {makeEvent("n", {{"k", true}})});
    bad.back() = '\xcf';
    bad += std::string(8, '\xff');
    EXPECT_EQ(decodeStatus("n", bad), DecodeStatus::Malformed);
  }
}

TEST(WireFormat, UnknownVersionsAndKindsAreUnsupported) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_map(2);
  packer.pack(std::string("v"));
  packer.pack(2);
  packer.pack(std::string("anything"));
  packer.pack(std::string("from the future"));
  EXPECT_EQ(decodeStatus("x", std::string(buffer.data(), buffer.size())), DecodeStatus::UnsupportedVersion);

  // A later version-1 writer may add kinds and keys: unknown kinds are skipped, unknown keys ignored.
  std::string payload = encodeHeartbeatPayload(MessageKind::Heartbeat, exampleSource(), 0, PublisherCounters{});
  const std::string kind = std::string("\xa9heartbeat", 10);
  payload.replace(payload.find(kind), kind.size(), std::string("\xa9heartbeaT", 10));
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, payload), DecodeStatus::UnknownKind);

  std::string extended = encodeHeartbeatPayload(MessageKind::Heartbeat, exampleSource(), 0, PublisherCounters{});
  extended[0] = static_cast<char>(extended[0] + 1);  // one more map entry
  extended += std::string("\xa5""extra", 6);
  extended += std::string("\x92\xa1x\x81\xa1y\xc0", 7);  // ["x", {"y": nil}]
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, extended), DecodeStatus::Ok);
}

TEST(WireFormat, ContainerCountsBeyondTheBytesLeftAreMalformed) {
  // An unknown key's value is skipped. A map32 of 2^31 entries must not read as an empty map
  // (2 * 2^31 wraps to 0 in 32 bits), nor any count claim more entries than bytes remain.
  const std::string payload = encodeHeartbeatPayload(MessageKind::Heartbeat, exampleSource(), 0, PublisherCounters{});
  auto withExtra = [&](const std::string& value) {
    std::string extended = payload;
    extended[0] = static_cast<char>(extended[0] + 1);  // one more entry in the top-level fixmap
    return extended + std::string("\xa5""extra", 6) + value;
  };
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, withExtra(std::string("\x80", 1))), DecodeStatus::Ok) << "an empty map is fine";
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, withExtra(std::string("\xdf\x80\x00\x00\x00", 5))), DecodeStatus::Malformed);
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, withExtra(std::string("\xdf\xff\xff\xff\xff", 5))), DecodeStatus::Malformed);
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, withExtra(std::string("\xde\x00\x02\xc0\xc0", 5))), DecodeStatus::Malformed);
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, withExtra(std::string("\xdd\xff\xff\xff\xff\xc0", 6))), DecodeStatus::Malformed);
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, withExtra(std::string("\xc6\xff\xff\xff\xff", 5))), DecodeStatus::Malformed);
  EXPECT_EQ(decodeStatus(kHeartbeatTopic, withExtra(std::string("\xc9\xff\xff\xff\xff\x01", 6))), DecodeStatus::Malformed);
  // As event data: a map header claiming more fields than bytes remain.
  std::string events = encodeEventsPayload(exampleSource(), 0, "n", {makeEvent("n", {})});
  ASSERT_EQ(events.back(), '\x80');  // the event's empty data map, last
  events.back() = '\xde';
  events += std::string("\x03\xff", 2);
  EXPECT_EQ(decodeStatus("n", events), DecodeStatus::Malformed);
}

TEST(WireFormat, DecoderEnforcesItsLimits) {
  const SourceInfo source = exampleSource();
  WireLimits small;
  small.maxFieldsPerEvent = 2;
  small.maxStringBytes = 4;
  small.maxKeyBytes = 3;
  small.maxEventsPerMessage = 1;
  small.maxPayloadBytes = 200;
  small.maxTopicBytes = 4;
  auto encode = [&](std::vector<Event> events, std::string name = "n") {
    return encodeEventsPayload(source, 0, name, events);
  };
  EXPECT_EQ(decodeStatus("n", encode({makeEvent("n", {{"a", 1.0}, {"b", 1.0}, {"c", 1.0}})}), small),
            DecodeStatus::TooLarge);
  EXPECT_EQ(decodeStatus("n", encode({makeEvent("n", {{"a", std::string("12345")}})}), small), DecodeStatus::TooLarge);
  EXPECT_EQ(decodeStatus("n", encode({makeEvent("n", {{"abcd", 1.0}})}), small), DecodeStatus::TooLarge);
  EXPECT_EQ(decodeStatus("n", encode({makeEvent("n", {{"a", 1.0}}), makeEvent("n", {{"a", 1.0}})}), small),
            DecodeStatus::TooLarge);
  EXPECT_EQ(decodeStatus("names", encode({makeEvent("names", {})}, "names"), small), DecodeStatus::TooLarge);
  EXPECT_EQ(decodeStatus("n", std::string(201, '\x80'), small), DecodeStatus::TooLarge);
  EXPECT_EQ(decodeStatus("n", encode({makeEvent("n", {{"a", std::string("1234")}})}), small), DecodeStatus::Ok);
}

TEST(WireFormat, EncoderRefusesWhatBreaksTheLimits) {
  WireLimits limits;
  limits.maxFieldsPerEvent = 1;
  EXPECT_THROW(encodeEventsPayload(exampleSource(), 0, "n", {makeEvent("n", {{"a", 1.0}, {"b", 2.0}})}, limits),
               std::invalid_argument);
  EXPECT_THROW(encodeEventsPayload(exampleSource(), 0, std::string(2000, 'n'), {}), std::invalid_argument);
  EXPECT_THROW(encodeHeartbeatPayload(MessageKind::Events, exampleSource(), 0, {}), std::invalid_argument);
}

TEST(WireFormat, TimestampsAreNanosecondsSinceTheEpoch) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::nanoseconds(1'234'567'890'123'456'789));
  EXPECT_EQ(toWireTime(t), 1'234'567'890'123'456'789);
  EXPECT_EQ(fromWireTime(-5), std::chrono::system_clock::time_point(std::chrono::nanoseconds(-5)));
}

TEST(WireFormat, DescribesSources) {
  SourceInfo source = exampleSource();
  EXPECT_EQ(describe(source), "demo@gpu01:4242 rank 0");
  source.rank.reset();
  EXPECT_EQ(describe(source), "demo@gpu01:4242");
}

}  // namespace
}  // namespace livemon::transport
