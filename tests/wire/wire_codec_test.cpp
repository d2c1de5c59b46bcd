// The Publisher's encoder: appendCheckedEventEntry writes what appendEventEntry writes, byte for
// byte, and refuses what eventLimitBroken refuses, in one walk over the fields.
#include <livemon/detail/wire_codec.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <livemon/event.h>

namespace livemon::transport::detail {
namespace {

using namespace std::chrono_literals;

Event at(std::chrono::nanoseconds sinceEpoch, std::unordered_map<std::string, DataValue> data) {
  return Event{"train.step", std::chrono::system_clock::time_point(
                                 std::chrono::duration_cast<std::chrono::system_clock::duration>(sinceEpoch)),
               std::move(data)};
}

std::string plain(const Event& event) {
  std::string out;
  appendEventEntry(out, event);
  return out;
}

// The checked entry after `prefix`, which must survive in front of it.
std::string checked(const Event& event, const WireLimits& limits = {}, const char** broken = nullptr) {
  RecordBuffer buffer;
  const std::string prefix = "prefix";
  std::memcpy(buffer.reserve(prefix.size()), prefix.data(), prefix.size());
  buffer.commit(buffer.data() + prefix.size());
  const char* why = appendCheckedEventEntry(buffer, event, limits);
  if (broken != nullptr) *broken = why;
  const std::string_view written = buffer.view();
  EXPECT_EQ(written.substr(0, prefix.size()), prefix);
  return std::string(written.substr(prefix.size()));
}

TEST(WireCodecTest, CheckedEntryIsByteForByteThePlainOne) {
  std::vector<Event> events{
      at(0ns, {}),
      at(1'700'000'000'123'456'789ns, {{"loss", 0.4321}, {"lr", 3e-4}, {"grad_norm", 1.25},
                                         {"step", int64_t{123456}}, {"phase", std::string("train")},
                                         {"finite", true}}),
      at(-5ns, {{"neg", int64_t{-1}}, {"neg8", int64_t{-100}}, {"neg16", int64_t{-30000}},
                {"neg32", int64_t{-2'000'000'000}}, {"min", std::numeric_limits<int64_t>::min()},
                {"max", std::numeric_limits<int64_t>::max()}, {"no", false}, {"one", 1.0}}),
      at(42ns, {{"s31", std::string(31, 'a')}, {"s32", std::string(32, 'b')}, {"s255", std::string(255, 'c')},
                {"s256", std::string(256, 'd')}, {"s65536", std::string(65536, 'e')}, {"", std::string()},
                {std::string(40, 'k'), int64_t{200}}, {std::string(300, 'K'), int64_t{70000}}}),
  };
  // Sixteen fields and more: a map16 header.
  std::unordered_map<std::string, DataValue> many;
  for (int i = 0; i < 40; ++i) many.emplace("field" + std::to_string(i), static_cast<double>(i));
  events.push_back(at(7ns, many));
  for (const Event& event : events) {
    const char* broken = "not set";
    EXPECT_EQ(checked(event, {}, &broken), plain(event)) << event;
    EXPECT_EQ(broken, nullptr) << event;
  }
}

TEST(WireCodecTest, CheckedEntryRefusesWhatTheLimitsRefuse) {
  WireLimits limits;
  limits.maxTopicBytes = 10;  // "train.step"
  limits.maxFieldsPerEvent = 3;
  limits.maxKeyBytes = 4;
  limits.maxStringBytes = 10;
  limits.maxPayloadBytes = kPayloadHeaderReserve + 16 + kMaxStepBytes + 3 * (4 + 14) + 10;
  std::vector<Event> events{
      at(1ns, {{"a", 1.0}}),
      at(1ns, {{"a", 1.0}, {"b", 2.0}, {"c", 3.0}, {"d", 4.0}}),
      at(1ns, {{"long", 1.0}}),
      at(1ns, {{"longer", 1.0}}),
      at(1ns, {{"s", std::string(10, 'x')}}),
      at(1ns, {{"s", std::string(11, 'x')}}),
      at(1ns, {{"abcd", std::string(10, 'x')}, {"efgh", 1.0}, {"ijkl", 2.0}}),
      at(1ns, {{"abcd", std::string(10, 'x')}, {"efghi", 1.0}}),
  };
  Event longName = at(1ns, {});
  longName.name = "train.steps";
  events.push_back(longName);
  int refused = 0;
  auto compare = [&](const Event& event) {
    const char* broken = nullptr;
    const std::string written = checked(event, limits, &broken);
    const char* expected = eventLimitBroken(event, limits);
    ASSERT_EQ(broken == nullptr, expected == nullptr) << event;
    if (expected != nullptr) {
      EXPECT_STREQ(broken, expected) << event;
      ++refused;
    } else {
      EXPECT_EQ(written, plain(event)) << event;
    }
  };
  for (const Event& event : events) compare(event);
  EXPECT_EQ(refused, 5);
  // The seventh event was exactly at the payload's limit; one byte less refuses it.
  limits.maxPayloadBytes -= 1;
  compare(events[6]);
  EXPECT_EQ(refused, 6);
}

TEST(WireCodecTest, RecordBufferKeepsItsContentAsItGrowsAndShrinks) {
  RecordBuffer buffer;
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    const std::string piece(static_cast<std::size_t>(i % 37) + 1, static_cast<char>('a' + i % 26));
    char* at = buffer.reserve(piece.size());
    std::memcpy(at, piece.data(), piece.size());
    buffer.commit(at + piece.size());
    expected += piece;
  }
  EXPECT_EQ(buffer.view(), expected);
  buffer.shrinkAbove(1 << 20);
  EXPECT_EQ(buffer.view(), expected);
  buffer.shrinkAbove(64);
  EXPECT_EQ(buffer.size(), 0u);
  buffer.clear();
  char* at = buffer.reserve(3);
  std::memcpy(at, "abc", 3);
  buffer.commit(at + 3);
  EXPECT_EQ(buffer.view(), "abc");
}

}  // namespace
}  // namespace livemon::transport::detail
