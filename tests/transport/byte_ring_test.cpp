// The Publisher's queue: records come out whole and in order across the buffer's end, a full
// ring refuses and counts nothing itself, and the space the consumer frees is used again.
#include "byte_ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace livemon::transport::detail {
namespace {

std::vector<std::string> drainAll(ByteRing& ring) {
  std::vector<std::string> records;
  std::string scratch;
  ring.drain(SIZE_MAX, scratch, [&](std::string_view record) { records.emplace_back(record); });
  return records;
}

TEST(ByteRingTest, RecordsComeOutWholeAndInOrderAcrossTheEnd) {
  // 4-byte prefixes and records of 1 to 13 bytes in 64 bytes: every offset of the end is crossed,
  // the prefix split and the record split.
  ByteRing ring(64);
  std::vector<std::string> expected;
  std::vector<std::string> got;
  for (int i = 0; i < 500; ++i) {
    const std::string record(static_cast<std::size_t>(i % 13) + 1, static_cast<char>('a' + i % 26));
    ASSERT_TRUE(ring.push(record)) << i;
    expected.push_back(record);
    if (i % 3 == 2) {
      for (std::string& r : drainAll(ring)) got.push_back(std::move(r));
      EXPECT_EQ(ring.size(), 0u);
    }
  }
  for (std::string& r : drainAll(ring)) got.push_back(std::move(r));
  EXPECT_EQ(got, expected);
}

TEST(ByteRingTest, AFullRingRefusesAndTakesAgainOnceDrained) {
  ByteRing ring(32);
  EXPECT_TRUE(ring.push(std::string(12, 'a')));  // 16 bytes with the prefix
  EXPECT_TRUE(ring.push(std::string(12, 'b')));  // 32: full
  EXPECT_FALSE(ring.push("c"));
  EXPECT_FALSE(ring.push(""));
  EXPECT_EQ(ring.size(), 32u);
  EXPECT_FALSE(ring.push(std::string(29, 'x')));  // never fits
  EXPECT_EQ(drainAll(ring), (std::vector<std::string>{std::string(12, 'a'), std::string(12, 'b')}));
  // The producer read the consumer's position while the ring was full; it must read it again.
  EXPECT_TRUE(ring.push(std::string(28, 'd')));
  EXPECT_FALSE(ring.push(""));
  EXPECT_EQ(drainAll(ring), (std::vector<std::string>{std::string(28, 'd')}));
  EXPECT_TRUE(ring.push(""));
  EXPECT_EQ(drainAll(ring), (std::vector<std::string>{std::string()}));
}

// Producers on several threads, the consumer on another: every record arrives once, whole, and
// each producer's in the order it pushed them; those refused were refused, not lost.
TEST(ByteRingTest, ConcurrentProducersKeepTheirOrder) {
  constexpr int kProducers = 3;
  constexpr uint32_t kPerProducer = 20000;
  ByteRing ring(1024);
  std::atomic<int> producing{kProducers};
  std::vector<std::vector<uint32_t>> accepted(kProducers);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (uint32_t i = 0; i < kPerProducer; ++i) {
        std::string record(static_cast<std::size_t>(5 + i % 17), static_cast<char>('0' + p));
        std::memcpy(record.data() + 1, &i, sizeof i);
        if (ring.push(record)) accepted[static_cast<std::size_t>(p)].push_back(i);
      }
      producing.fetch_sub(1);
    });
  }
  std::vector<std::vector<uint32_t>> received(kProducers);
  std::string scratch;
  auto take = [&](std::string_view record) {
    ASSERT_GE(record.size(), 5u);
    const int p = record[0] - '0';
    ASSERT_TRUE(p >= 0 && p < kProducers);
    uint32_t i = 0;
    std::memcpy(&i, record.data() + 1, sizeof i);
    ASSERT_EQ(record.size(), 5 + i % 17);
    EXPECT_EQ(record.substr(5), std::string(record.size() - 5, record[0]));
    received[static_cast<std::size_t>(p)].push_back(i);
  };
  while (producing.load() > 0) ring.drain(256, scratch, take);
  for (std::thread& producer : producers) producer.join();
  ring.drain(SIZE_MAX, scratch, take);
  for (int p = 0; p < kProducers; ++p) {
    EXPECT_EQ(received[static_cast<std::size_t>(p)], accepted[static_cast<std::size_t>(p)]) << p;
  }
}

}  // namespace
}  // namespace livemon::transport::detail
