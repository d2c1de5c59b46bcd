#pragma once

// The zstd side of reading a recording's chunks (recording_reader.cpp).
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include <livemon/transport/recording.h>

struct ZSTD_DCtx_s;

namespace livemon::transport {

// Not thread-safe: one owner at a time; one reader's.
//
// Decompresses a zstd chunk into a buffer of its own, allocating only as zstd produces and never
// more than the chunk's header claims, which is itself checked against the stored size first.
class ChunkInflater {
 public:
  ChunkInflater() = default;
  ~ChunkInflater();
  ChunkInflater(const ChunkInflater&) = delete;
  ChunkInflater& operator=(const ChunkInflater&) = delete;

  // The chunk's records (`data` is its stored bytes, at `dataOffset` in the file), valid until the
  // next call. Throws mcap::ParseError where the data is wrong, and RecordingStopped, naming
  // `path`, when `stop` is set meanwhile. Counts what it produces in `stats`.
  std::string_view inflate(const RecordingChunk& chunk, std::string_view data, uint64_t dataOffset,
                           const std::atomic<bool>* stop, const std::string& path, RecordingReadStats& stats);

 private:
  ZSTD_DCtx_s* zstd_ = nullptr;
  std::string inflated_;
};

}  // namespace livemon::transport
