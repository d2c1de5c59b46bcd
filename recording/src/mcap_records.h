#pragma once

// What a reader makes of single MCAP records (recording_reader.cpp): their names in messages, and
// Channel records.
#include <cstddef>
#include <cstdint>
#include <string>

#include <livemon/transport/recording.h>

#include "mcap_format.h"

namespace livemon::transport::mcap {

// A Channel record: ids, a topic, an encoding and a little metadata (livemon writes none).
constexpr std::size_t kMaxEncodingBytes = 64;
constexpr std::size_t kMaxChannelMetadataBytes = 1024;
constexpr uint64_t kMaxChannelRecordBytes =
    2 + 2 + 4 + kMaxRecordingTopicBytes + 4 + kMaxEncodingBytes + 4 + kMaxChannelMetadataBytes;

// "Chunk record", "unknown record 0x42".
std::string recordName(uint8_t op);

// `r` holds a whole Channel record's content (at most kMaxChannelRecordBytes). Throws ParseError
// for a field longer than livemon reads.
RecordingChannel parseChannel(ByteReader& r);

}  // namespace livemon::transport::mcap
