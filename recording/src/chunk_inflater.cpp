#include "chunk_inflater.h"

#include <zstd.h>

#include <algorithm>
#include <new>

#include "mcap_format.h"

namespace livemon::transport {
namespace {

// zstd produces at most this much per call, so a stop request is seen within a few milliseconds.
constexpr std::size_t kDecompressStepBytes = 4 << 20;

}  // namespace

ChunkInflater::~ChunkInflater() { ZSTD_freeDCtx(zstd_); }

std::string_view ChunkInflater::inflate(const RecordingChunk& chunk, std::string_view data, uint64_t dataOffset,
                                        const std::atomic<bool>* stop, const std::string& path,
                                        RecordingReadStats& stats) {
  const uint64_t claimed = chunk.uncompressedSize;
  if (claimed > kMaxRecordingChunkBytes) {
    throw mcap::ParseError{chunk.offset, "the chunk claims " + std::to_string(claimed) +
                                             " bytes uncompressed, more than any recording chunk holds (" +
                                             std::to_string(kMaxRecordingChunkBytes) + ")"};
  }
  if (claimed > kRecordingSmallChunkAllowance && claimed / kMaxRecordingCompressionRatio > data.size()) {
    throw mcap::ParseError{chunk.offset, "the chunk claims " + std::to_string(claimed) + " bytes uncompressed from " +
                                             std::to_string(data.size()) + " compressed, more than " +
                                             std::to_string(kMaxRecordingCompressionRatio) +
                                             " times as many: a decompression bomb or damage"};
  }
  // The frames' own sizes, where they give them, must agree with the header.
  uint64_t framesHold = 0;
  bool allKnown = true;
  for (std::string_view rest = data; !rest.empty();) {
    const std::size_t frame = ZSTD_findFrameCompressedSize(rest.data(), rest.size());
    const unsigned long long holds = ZSTD_getFrameContentSize(rest.data(), rest.size());
    if (ZSTD_isError(frame) || holds == ZSTD_CONTENTSIZE_ERROR) {
      throw mcap::ParseError{dataOffset + (data.size() - rest.size()), "the chunk's records are not zstd data"};
    }
    if (holds == ZSTD_CONTENTSIZE_UNKNOWN) {
      allKnown = false;
    } else {
      framesHold += std::min<uint64_t>(holds, kMaxRecordingChunkBytes + 1);
    }
    if (framesHold > claimed) break;
    rest.remove_prefix(frame);
  }
  if (framesHold > claimed || (allKnown && framesHold != claimed)) {
    throw mcap::ParseError{chunk.offset, "the chunk's zstd data says it holds " + std::to_string(framesHold) +
                                             " bytes, its header " + std::to_string(claimed)};
  }

  if (zstd_ == nullptr) {
    zstd_ = ZSTD_createDCtx();
    if (zstd_ == nullptr) throw std::bad_alloc();
  } else {
    ZSTD_DCtx_reset(zstd_, ZSTD_reset_session_only);
  }
  // A buffer that held a huge chunk is not kept for the small ones after it (nor is
  // the reader's buffer of stored bytes).
  if (inflated_.capacity() > (uint64_t{64} << 20) && inflated_.capacity() / 4 > claimed) std::string().swap(inflated_);
  inflated_.clear();
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  std::size_t produced = 0;
  for (;;) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) throw RecordingStopped(path, chunk.offset);
    if (produced == inflated_.size() && inflated_.size() < claimed) {
      inflated_.resize(static_cast<std::size_t>(std::min<uint64_t>(claimed, std::max<uint64_t>(64 * 1024, 2 * inflated_.size()))));
    }
    // Once the claimed bytes are there, a spare byte shows whether zstd has more.
    char spare = 0;
    ZSTD_outBuffer out = produced < inflated_.size()
                             ? ZSTD_outBuffer{inflated_.data() + produced,
                                              std::min(inflated_.size() - produced, kDecompressStepBytes), 0}
                             : ZSTD_outBuffer{&spare, 1, 0};
    const std::size_t consumedBefore = in.pos;
    const std::size_t left = ZSTD_decompressStream(zstd_, &out, &in);
    if (ZSTD_isError(left)) {
      throw mcap::ParseError{dataOffset, std::string("chunk does not decompress: ") + ZSTD_getErrorName(left)};
    }
    if (out.dst == &spare) {
      if (out.pos > 0) {
        throw mcap::ParseError{chunk.offset, "the chunk decompresses to more than the " + std::to_string(claimed) +
                                                 " bytes its header says"};
      }
    } else {
      produced += out.pos;
      stats.bytesDecompressed += out.pos;
    }
    if (left == 0 && in.pos == in.size) break;  // every frame decoded and flushed
    if (out.pos == 0 && in.pos == consumedBefore) {
      throw mcap::ParseError{dataOffset + data.size(), "the chunk's zstd data ends inside a frame"};
    }
  }
  if (produced != claimed) {
    throw mcap::ParseError{chunk.offset, "chunk decompresses to " + std::to_string(produced) +
                                             " bytes, its header says " + std::to_string(claimed)};
  }
  return std::string_view(inflated_).substr(0, produced);
}

}  // namespace livemon::transport
