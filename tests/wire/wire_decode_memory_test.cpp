// What decoding costs in memory per byte of payload. Every decoded event holds its own copy of
// the message's event name (Event::name is a std::string), so a message of many tiny events under
// a long name multiplies: 200 KB of 65 536 empty events named with 1 KiB cost some 75 MB in every
// subscriber. The decoder refuses (TooLarge) a message whose decoded events would cost more than
// WireLimits::decodedBytesPerPayloadByte times its payload plus decodedBytesAllowance. Measured
// here with a counting allocator: the bytes this thread asks operator new for while it decodes.
// GCC 12 misreads std::string's inlined copies here as overlapping (a known false positive).
#pragma GCC diagnostic ignored "-Wrestrict"
#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/wire_format.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include <livemon/detail/msgpack_writer.h>
#include <livemon/detail/wire_codec.h>

namespace {

thread_local bool g_counting = false;
thread_local std::size_t g_allocated = 0;

}  // namespace

void* operator new(std::size_t size) {
  if (g_counting) g_allocated += size;
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace livemon::transport {
namespace {

SourceInfo source() {
  SourceInfo info;
  info.run = "memory";
  info.host = "h";
  info.pid = 1;
  info.instanceId = 5;
  return info;
}

// An events payload of `count` events named `name`, each [timestamp, {fields}] with `fields`
// bool fields whose keys are "<field number>".
std::string payload(const std::string& name, uint32_t count, int64_t timestamp, uint32_t fields = 0) {
  std::string out;
  detail::MsgpackWriter writer(out);
  detail::writePayloadStart(writer, detail::kEventsPayloadEntries, MessageKind::Events, source(), 0);
  writer.str("name");
  writer.str(name);
  writer.str("events");
  writer.arrayHeader(count);
  for (uint32_t e = 0; e < count; ++e) {
    writer.arrayHeader(2);
    writer.sint(timestamp);
    writer.mapHeader(fields);
    for (uint32_t f = 0; f < fields; ++f) {
      writer.str(std::to_string(f));
      writer.boolean(true);
    }
  }
  return out;
}

struct Decoded {
  DecodeStatus status;
  std::size_t allocated;
  std::string error;
};

Decoded decodeCounting(const std::string& topic, const std::string& bytes) {
  WireMessage message;
  Decoded result{};
  g_allocated = 0;
  g_counting = true;
  result.status = decodeMessage(topic, bytes, WireLimits{}, message, &result.error);
  g_counting = false;
  result.allocated = g_allocated;
  return result;
}

std::size_t bound(std::size_t payloadBytes) {
  const WireLimits limits;
  return limits.decodedBytesPerPayloadByte * payloadBytes + limits.decodedBytesAllowance;
}

TEST(WireDecodeMemory, ManyEmptyEventsUnderALongNameAreRefusedBeforeTheyMultiplyMemory) {
  const std::string name(1024, 'n');
  const std::string hostile = payload(name, 65536, 0);
  ASSERT_LT(hostile.size(), 200u * 1024);
  const Decoded decoded = decodeCounting(name, hostile);
  EXPECT_EQ(decoded.status, DecodeStatus::TooLarge) << decoded.error;
  EXPECT_LE(decoded.allocated, bound(hostile.size()))
      << "decoding " << hostile.size() << " bytes allocated " << decoded.allocated << " bytes";
}

// What livemon's publishers send decodes, within the bound: Stat windows, events of many small
// fields (the most decoded memory per byte a field can cost), and the events a default Publisher
// batches (up to 4096 of one name) with the longest name and real timestamps.
TEST(WireDecodeMemory, WhatPublishersSendDecodesWithinTheBound) {
  const int64_t now = toWireTime(std::chrono::system_clock::now());
  struct Case {
    std::string name;
    uint32_t count;
    uint32_t fields;
  };
  for (const Case& c : {Case{"livemon.Stat", 4096, 8}, Case{"flags", 256, 200}, Case{"x", 4096, 0},
                        Case{std::string(64, 'n'), 4096, 0}, Case{std::string(1024, 'n'), 4096, 0},
                        Case{std::string(1024, 'n'), 4096, 3}}) {
    const std::string bytes = payload(c.name, c.count, now, c.fields);
    const Decoded decoded = decodeCounting(c.name, bytes);
    EXPECT_EQ(decoded.status, DecodeStatus::Ok) << c.name.size() << "-byte name, " << c.count << " events of "
                                                << c.fields << " fields: " << decoded.error;
    EXPECT_LE(decoded.allocated, bound(bytes.size())) << c.name.size() << "-byte name, " << c.count << " events of "
                                                      << c.fields << " fields";
  }
}


// The borrowed view (event_batch_view.h) allocates nothing once its buffers have grown to the
// messages' size: what the subscriber's consumers that keep no events decode with.
TEST(WireDecodeMemory, TheBorrowedViewAllocatesNothingOnceWarm) {
  const int64_t now = toWireTime(std::chrono::system_clock::now());
  const std::string bytes = payload("livemon.Stat", 100, now, 8);
  EventBatchDecoder decoder;
  std::size_t seen = 0;
  const auto count = [&](const EventBatchView& batch) {
    for (const EventView& event : batch) seen += event.fields().size();
  };
  ASSERT_EQ(decoder.decode("livemon.Stat", bytes, count), DecodeStatus::Ok);
  g_allocated = 0;
  g_counting = true;
  const DecodeStatus status = decoder.decode("livemon.Stat", bytes, count);
  g_counting = false;
  EXPECT_EQ(status, DecodeStatus::Ok);
  EXPECT_EQ(g_allocated, 0u);
  EXPECT_EQ(seen, 2u * 100 * 8);
  // The owning decoder allocates per event and per field, for comparison.
  EXPECT_GT(decodeCounting("livemon.Stat", bytes).allocated, 100u * 8 * 32);
}

// The view refuses what the owning decoder refuses for its size, before lending anything.
TEST(WireDecodeMemory, TheBorrowedViewKeepsTheDecodedSizeBound) {
  const std::string name(1024, 'n');
  const std::string hostile = payload(name, 65536, 0);
  EventBatchDecoder decoder;
  bool called = false;
  std::string error;
  g_allocated = 0;
  g_counting = true;
  const DecodeStatus status = decoder.decode(name, hostile, [&](const EventBatchView&) { called = true; }, &error);
  g_counting = false;
  EXPECT_EQ(status, DecodeStatus::TooLarge) << error;
  EXPECT_NE(error.find("decoded size"), std::string::npos) << error;
  EXPECT_FALSE(called);
  EXPECT_LE(g_allocated, bound(hostile.size()));
}

}  // namespace
}  // namespace livemon::transport
