#pragma once

// Builds MCAP files byte by byte, for tests that need files livemon's writer never produces:
// damaged, hostile or crafted ones. Record layouts are those of the MCAP specification, version 0.
// Not thread-safe: plain functions and a value type.

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace livemon::transport::test::mcap {

inline constexpr std::string_view kMagic{"\x89MCAP0\r\n", 8};

enum Opcode : uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kStatistics = 0x0B,
  kDataEnd = 0x0F,
};

template <typename T>
std::string le(T value) {
  std::string out;
  out.reserve(sizeof(T));
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>(static_cast<uint64_t>(value) >> (8 * i)));
  return out;
}
inline std::string str(std::string_view s) { return le<uint32_t>(static_cast<uint32_t>(s.size())) + std::string(s); }

inline std::string record(uint8_t opcode, std::string_view content) {
  std::string out;
  out.reserve(9 + content.size());
  out.push_back(static_cast<char>(opcode));
  out.append(le<uint64_t>(content.size()));
  out.append(content);
  return out;
}

inline std::string headerRecord() { return record(kHeader, str("") + str("test")); }

inline std::string channelRecord(uint16_t id, std::string_view topic, std::string_view encoding = "msgpack") {
  return record(kChannel, le<uint16_t>(id) + le<uint16_t>(0) + str(topic) + str(encoding) + str(""));
}

inline std::string messageRecord(uint16_t channel, uint32_t sequence, uint64_t logTime, std::string_view data) {
  return record(kMessage, le<uint16_t>(channel) + le<uint32_t>(sequence) + le<uint64_t>(logTime) +
                              le<uint64_t>(logTime) + std::string(data));
}

inline std::string zstd(std::string_view bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
  if (ZSTD_isError(n)) throw std::runtime_error("zstd failed");
  out.resize(n);
  return out;
}

// A zstd frame that inflates to `size` zero bytes, compressed piece by piece so the zeros are
// never held in memory at once.
inline std::string zstdZeros(uint64_t size) {
  ZSTD_CCtx* context = ZSTD_createCCtx();
  ZSTD_CCtx_setPledgedSrcSize(context, size);
  const std::string zeros(1 << 20, '\0');
  std::string out;
  std::string buffer(ZSTD_CStreamOutSize(), '\0');
  for (uint64_t done = 0;;) {
    const std::size_t piece = static_cast<std::size_t>(std::min<uint64_t>(zeros.size(), size - done));
    done += piece;
    const bool last = done == size;
    ZSTD_inBuffer in{zeros.data(), piece, 0};
    for (bool finished = false; !finished;) {
      ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
      const std::size_t left = ZSTD_compressStream2(context, &o, &in, last ? ZSTD_e_end : ZSTD_e_continue);
      if (ZSTD_isError(left)) throw std::runtime_error("zstd failed");
      out.append(buffer.data(), o.pos);
      finished = last ? left == 0 : in.pos == in.size;
    }
    if (last) break;
  }
  ZSTD_freeCCtx(context);
  return out;
}

struct Chunk {
  std::string records{};  // uncompressed
  std::string compression = "zstd";
  uint64_t startTime = 0;
  uint64_t endTime = 0;
  // Overrides, to craft lies: the stored bytes and the uncompressed size the header claims.
  std::optional<std::string> stored{};
  std::optional<uint64_t> uncompressedSize{};
  uint32_t crc = 0;  // 0: none
};

inline std::string chunkRecord(const Chunk& chunk) {
  const std::string stored = chunk.stored ? *chunk.stored
                             : chunk.compression == "zstd" ? zstd(chunk.records)
                                                           : chunk.records;
  return record(kChunk, le<uint64_t>(chunk.startTime) + le<uint64_t>(chunk.endTime) +
                            le<uint64_t>(chunk.uncompressedSize.value_or(chunk.records.size())) +
                            le<uint32_t>(chunk.crc) + str(chunk.compression) + le<uint64_t>(stored.size()) + stored);
}

struct ChunkIndexEntry {
  uint64_t startTime = 0;
  uint64_t endTime = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
};

inline std::string chunkIndexRecord(const ChunkIndexEntry& e) {
  return record(kChunkIndex, le<uint64_t>(e.startTime) + le<uint64_t>(e.endTime) + le<uint64_t>(e.offset) +
                                 le<uint64_t>(e.length) + str("") + le<uint64_t>(0) + str("zstd") +
                                 le<uint64_t>(e.compressedSize) + le<uint64_t>(e.uncompressedSize));
}

inline std::string statisticsRecord(uint64_t messages, uint32_t channels, uint32_t chunks, uint64_t start, uint64_t end) {
  return record(kStatistics, le<uint64_t>(messages) + le<uint16_t>(0) + le<uint32_t>(channels) + le<uint32_t>(0) +
                                 le<uint32_t>(0) + le<uint32_t>(chunks) + le<uint64_t>(start) + le<uint64_t>(end) +
                                 str(""));
}

// A file under construction: magic and header first, records appended in order.
class File {
 public:
  File() : bytes_(std::string(kMagic) + headerRecord()) {}

  // Appends a record; returns its offset.
  uint64_t add(const std::string& record) {
    const uint64_t at = bytes_.size();
    bytes_ += record;
    return at;
  }
  uint64_t size() const { return bytes_.size(); }

  // The file without a summary, as a killed writer leaves it.
  const std::string& unclosed() const { return bytes_; }

  // Appends Data End, the summary records (no CRC checks: both CRC fields are 0), the footer and
  // the closing magic.
  std::string closed(const std::vector<std::string>& summary) const {
    std::string out = bytes_ + record(kDataEnd, le<uint32_t>(0));
    const uint64_t summaryStart = out.size();
    for (const std::string& r : summary) out += r;
    out += record(kFooter, le<uint64_t>(summaryStart) + le<uint64_t>(0) + le<uint32_t>(0));
    return out + std::string(kMagic);
  }

 private:
  std::string bytes_;
};

}  // namespace livemon::transport::test::mcap
