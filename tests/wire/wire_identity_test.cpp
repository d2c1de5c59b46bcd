// The optional "world" and "local_rank" keys of "src": they round-trip, are written only when set
// (so payloads without them keep their bytes), are read in any order, and hostile values make the
// message malformed instead of reaching a reader's views.
#include <livemon/transport/wire_format.h>

#include <gtest/gtest.h>
#include <msgpack.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "test_support.h"

namespace livemon::transport {
namespace {

using test::makeEvent;

SourceInfo rankedSource() {
  SourceInfo source;
  source.run = "demo";
  source.host = "gpu01";
  source.pid = 4242;
  source.rank = 3;
  source.instanceId = 0x1122334455667788ULL;
  source.startTime = fromWireTime(1'700'000'000'000'000'000);
  return source;
}

std::string eventsPayload(const SourceInfo& source) {
  return encodeEventsPayload(source, 7, "eval", {makeEvent("eval", {{"accuracy", 1.0}}, fromWireTime(5))});
}

DecodeStatus decode(std::string_view payload, WireMessage& message, std::string* error = nullptr) {
  return decodeMessage("eval", payload, WireLimits{}, message, error);
}

TEST(WireIdentity, WorldSizeAndLocalRankRoundTripInEveryCombination) {
  for (std::optional<int64_t> rank : {std::optional<int64_t>{}, std::optional<int64_t>{3}}) {
    for (std::optional<int64_t> world : {std::optional<int64_t>{}, std::optional<int64_t>{8}}) {
      for (std::optional<int64_t> local : {std::optional<int64_t>{}, std::optional<int64_t>{0}}) {
        SourceInfo source = rankedSource();
        source.rank = rank;
        source.worldSize = world;
        source.localRank = local;
        WireMessage message;
        std::string error;
        ASSERT_EQ(decode(eventsPayload(source), message, &error), DecodeStatus::Ok) << error;
        EXPECT_EQ(message.source, source);
        PublisherCounters counters;
        const std::string heartbeat = encodeHeartbeatPayload(MessageKind::Heartbeat, source, 0, counters);
        ASSERT_EQ(decodeMessage(kHeartbeatTopic, heartbeat, WireLimits{}, message, &error), DecodeStatus::Ok) << error;
        EXPECT_EQ(message.source, source);
      }
    }
  }
}

// The keys go after "rank", and nothing else moves: the payload with them is the payload without
// them plus exactly those entries, and without them it is what it was before they existed.
TEST(WireIdentity, KeysAreWrittenOnlyWhenSetAndChangeNothingElse) {
  const std::string before = eventsPayload(rankedSource());
  EXPECT_EQ(before.find("world"), std::string::npos);
  EXPECT_EQ(before.find("local_rank"), std::string::npos);
  EXPECT_EQ(before.find(std::string("\xa3src\x86", 5)), 16u) << "a src map of six, as before the keys existed";

  SourceInfo source = rankedSource();
  source.worldSize = 8;
  source.localRank = 1;
  std::string expected = before;
  expected[20] = '\x88';  // src map of eight
  const std::string rankEntry("\xa4rank\x03", 6);
  const std::size_t afterRank = expected.find(rankEntry) + rankEntry.size();
  expected.insert(afterRank, std::string("\xa5world\x08\xaalocal_rank\x01", 19));
  EXPECT_EQ(eventsPayload(source), expected);
}

// A reader that skips keys it does not know (every version-1 reader before these keys) sees an
// ordinary src: the new entries are plain string keys with integer values.
TEST(WireIdentity, NewKeysAreSkippableScalars) {
  SourceInfo source = rankedSource();
  source.worldSize = 8;
  source.localRank = 1;
  const std::string payload = eventsPayload(source);
  const msgpack::object_handle handle = msgpack::unpack(payload.data(), payload.size());
  const msgpack::object& src = handle.get().via.map.ptr[2].val;
  ASSERT_EQ(src.type, msgpack::type::MAP);
  int found = 0;
  for (uint32_t i = 0; i < src.via.map.size; ++i) {
    const auto key = src.via.map.ptr[i].key.as<std::string>();
    if (key == "world" || key == "local_rank") {
      EXPECT_EQ(src.via.map.ptr[i].val.type, msgpack::type::POSITIVE_INTEGER) << key;
      ++found;
    }
  }
  EXPECT_EQ(found, 2);
}

// Packs an events payload whose "src" has the given entries, each written by a callback, in order.
using Entry = std::function<void(msgpack::packer<msgpack::sbuffer>&)>;

std::string payloadWithSrc(const std::vector<Entry>& srcEntries) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> packer(buffer);
  packer.pack_map(6);
  packer.pack(std::string("v"));
  packer.pack(uint64_t{1});
  packer.pack(std::string("kind"));
  packer.pack(std::string("events"));
  packer.pack(std::string("src"));
  packer.pack_map(static_cast<uint32_t>(srcEntries.size()));
  for (const Entry& entry : srcEntries) entry(packer);
  packer.pack(std::string("seq"));
  packer.pack(uint64_t{0});
  packer.pack(std::string("name"));
  packer.pack(std::string("eval"));
  packer.pack(std::string("events"));
  packer.pack_array(1);
  packer.pack_array(2);
  packer.pack(int64_t{5});
  packer.pack_map(0);
  return std::string(buffer.data(), buffer.size());
}

template <typename T>
Entry entry(std::string key, T value) {
  return [key, value](msgpack::packer<msgpack::sbuffer>& packer) {
    packer.pack(key);
    packer.pack(value);
  };
}

std::vector<Entry> required() {
  return {entry("run", std::string("r")), entry("host", std::string("h")), entry("pid", int64_t{1}),
          entry("id", uint64_t{9}), entry("start", int64_t{0})};
}

std::string srcWith(std::vector<Entry> extra, bool first = false) {
  std::vector<Entry> entries = required();
  entries.insert(first ? entries.begin() : entries.end(), extra.begin(), extra.end());
  return payloadWithSrc(entries);
}

TEST(WireIdentity, ReadersAcceptTheKeysInAnyOrder) {
  WireMessage message;
  std::string error;
  ASSERT_EQ(decode(srcWith({entry("local_rank", int64_t{2}), entry("world", int64_t{4}), entry("rank", int64_t{3})},
                           true),
                   message, &error),
            DecodeStatus::Ok)
      << error;
  EXPECT_EQ(message.source.rank, 3);
  EXPECT_EQ(message.source.worldSize, 4);
  EXPECT_EQ(message.source.localRank, 2);
  ASSERT_EQ(decode(srcWith({entry("world", int64_t{1})}), message, &error), DecodeStatus::Ok) << error;
  EXPECT_EQ(message.source.worldSize, 1) << "a world size without a rank";
  EXPECT_FALSE(message.source.rank.has_value());
  EXPECT_FALSE(message.source.localRank.has_value());
  ASSERT_EQ(decode(srcWith({entry("rank", int64_t{-1})}), message, &error), DecodeStatus::Ok)
      << "a rank alone may be any integer, as before world existed: " << error;
}

TEST(WireIdentity, HostileValuesAreMalformed) {
  const std::vector<std::pair<std::string, std::vector<Entry>>> cases = {
      {"world 0", {entry("world", int64_t{0})}},
      {"negative world", {entry("world", int64_t{-8})}},
      {"rank == world", {entry("rank", int64_t{8}), entry("world", int64_t{8})}},
      {"rank beyond world, world first", {entry("world", int64_t{8}), entry("rank", int64_t{1'000'000})}},
      {"negative rank beside world", {entry("rank", int64_t{-1}), entry("world", int64_t{8})}},
      {"negative local_rank", {entry("local_rank", int64_t{-1})}},
      {"local_rank == world", {entry("local_rank", int64_t{8}), entry("world", int64_t{8})}},
      {"world as a string", {entry("world", std::string("8"))}},
      {"world as a float", {entry("world", 8.5)}},  // msgpack-cxx writes an integral double as an integer
      {"local_rank nil", {entry("local_rank", msgpack::type::nil_t())}},
      {"world beyond int64", {entry("world", std::numeric_limits<uint64_t>::max())}},
      {"duplicate world", {entry("world", int64_t{8}), entry("world", int64_t{8})}},
      {"duplicate local_rank", {entry("local_rank", int64_t{1}), entry("local_rank", int64_t{1})}},
  };
  for (const auto& [what, extra] : cases) {
    WireMessage message;
    std::string error;
    EXPECT_EQ(decode(srcWith(extra), message, &error), DecodeStatus::Malformed) << what;
    EXPECT_FALSE(error.empty()) << what;
  }
}

TEST(WireIdentity, EncodersRefuseAnIdentityReadersWouldRefuse) {
  SourceInfo source = rankedSource();
  source.worldSize = 3;  // rank 3 of 3
  EXPECT_STREQ(identityBroken(source), "rank is not in 0..world-1");
  EXPECT_THROW(eventsPayload(source), std::invalid_argument);
  EXPECT_THROW(encodeHeartbeatPayload(MessageKind::Goodbye, source, 0, {}), std::invalid_argument);
  source.worldSize = 4;
  source.localRank = -1;
  EXPECT_STREQ(identityBroken(source), "local_rank is negative");
  source.localRank = 3;
  EXPECT_EQ(identityBroken(source), nullptr);
}

TEST(WireIdentity, DescribeShowsTheWorldSizeBesideTheRank) {
  SourceInfo source = rankedSource();
  EXPECT_EQ(describe(source), "demo@gpu01:4242 rank 3");
  source.worldSize = 8;
  source.localRank = 1;
  EXPECT_EQ(describe(source), "demo@gpu01:4242 rank 3/8");
  source.rank.reset();
  EXPECT_EQ(describe(source), "demo@gpu01:4242") << "a world size without a rank says nothing alone";
}

}  // namespace
}  // namespace livemon::transport
