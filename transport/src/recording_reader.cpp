#include <livemon/transport/recording.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "mcap_format.h"

namespace livemon::transport {
namespace {

// No livemon chunk comes near this; a larger claim is damage, not a reason to allocate.
constexpr uint64_t kMaxChunkBytes = uint64_t{1} << 30;

std::string opcodeName(uint8_t op) {
  switch (static_cast<mcap::Opcode>(op)) {
    case mcap::Opcode::Header: return "Header";
    case mcap::Opcode::Footer: return "Footer";
    case mcap::Opcode::Schema: return "Schema";
    case mcap::Opcode::Channel: return "Channel";
    case mcap::Opcode::Message: return "Message";
    case mcap::Opcode::Chunk: return "Chunk";
    case mcap::Opcode::MessageIndex: return "Message Index";
    case mcap::Opcode::ChunkIndex: return "Chunk Index";
    case mcap::Opcode::Attachment: return "Attachment";
    case mcap::Opcode::AttachmentIndex: return "Attachment Index";
    case mcap::Opcode::Statistics: return "Statistics";
    case mcap::Opcode::Metadata: return "Metadata";
    case mcap::Opcode::MetadataIndex: return "Metadata Index";
    case mcap::Opcode::SummaryOffset: return "Summary Offset";
    case mcap::Opcode::DataEnd: return "Data End";
  }
  return "unknown record 0x" + std::to_string(op);
}

RecordingChannel parseChannel(mcap::ByteReader& r) {
  RecordingChannel channel;
  channel.id = r.u16();
  r.u16();  // schema id
  channel.topic = std::string(r.string("channel topic"));
  channel.messageEncoding = std::string(r.string("message encoding"));
  mcap::ByteReader metadata(r.string("channel metadata"), r.offset());
  while (metadata.remaining() > 0) {
    std::string key(metadata.string("metadata key"));
    channel.metadata[key] = std::string(metadata.string("metadata value"));
  }
  return channel;
}

// A chunk's header fields, and its stored records.
struct ChunkView {
  RecordingChunk info;
  uint32_t crc = 0;
  std::string_view stored;
  uint64_t storedOffset = 0;
};

ChunkView parseChunkHeader(std::string_view content, uint64_t recordOffset, uint64_t recordLength) {
  mcap::ByteReader r(content, recordOffset + mcap::kRecordPrefix);
  ChunkView view;
  view.info.offset = recordOffset;
  view.info.length = recordLength;
  view.info.startTimeNs = r.u64();
  view.info.endTimeNs = r.u64();
  view.info.uncompressedSize = r.u64();
  view.crc = r.u32();
  view.info.compression = std::string(r.string("compression name"));
  const uint64_t storedSize = r.u64();
  view.storedOffset = r.offset();
  view.stored = r.bytes(storedSize, "chunk records");
  view.info.compressedSize = storedSize;
  return view;
}

}  // namespace

struct RecordingReader::State {
  std::string path;
  int fd = -1;
  const char* data = nullptr;
  uint64_t size = 0;
  RecordingSummary summary;
  bool indexed = false;
  std::vector<RecordingProblem> problems;
  std::string scratch;  // decompressed chunk

  std::string_view file() const { return {data, size}; }

  // Decompresses and checks a chunk; throws mcap::ParseError naming where it broke.
  std::string_view decompress(const ChunkView& chunk) {
    if (chunk.info.compression.empty()) {
      if (chunk.stored.size() != chunk.info.uncompressedSize) {
        throw mcap::ParseError{chunk.storedOffset, "chunk size does not match its header"};
      }
      scratch.assign(chunk.stored);
    } else if (chunk.info.compression == "zstd") {
      if (chunk.info.uncompressedSize > kMaxChunkBytes) {
        throw mcap::ParseError{chunk.info.offset, "chunk claims " + std::to_string(chunk.info.uncompressedSize) +
                                                       " bytes uncompressed, more than any recording chunk holds"};
      }
      scratch.resize(chunk.info.uncompressedSize);
      const std::size_t n =
          ZSTD_decompress(scratch.data(), scratch.size(), chunk.stored.data(), chunk.stored.size());
      if (ZSTD_isError(n)) {
        throw mcap::ParseError{chunk.storedOffset, std::string("chunk does not decompress: ") + ZSTD_getErrorName(n)};
      }
      if (n != chunk.info.uncompressedSize) {
        throw mcap::ParseError{chunk.storedOffset, "chunk decompresses to " + std::to_string(n) + " bytes, its header says " +
                                                        std::to_string(chunk.info.uncompressedSize)};
      }
    } else {
      throw mcap::ParseError{chunk.info.offset, "chunk compression '" + chunk.info.compression + "' is not supported"};
    }
    if (chunk.crc != 0 && mcap::crc32(scratch) != chunk.crc) {
      throw mcap::ParseError{chunk.storedOffset, "chunk data does not match its CRC"};
    }
    return scratch;
  }

  // Walks the records of a decompressed chunk. Offsets in errors point at the chunk record.
  template <typename OnMessage>
  void walkChunk(const ChunkView& chunk, std::string_view records, OnMessage&& onMessage) {
    mcap::ByteReader r(records, 0);
    while (r.remaining() > 0) {
      const uint64_t at = r.offset();
      const uint8_t op = r.u8();
      const uint64_t length = r.u64();
      if (length > r.remaining()) {
        throw mcap::ParseError{chunk.info.offset, "record " + std::to_string(at) + " bytes into the chunk claims " +
                                                       std::to_string(length) + " bytes, only " +
                                                       std::to_string(r.remaining()) + " remain"};
      }
      mcap::ByteReader content(r.bytes(length, "record"), 0);
      try {
        if (op == static_cast<uint8_t>(mcap::Opcode::Channel)) {
          RecordingChannel channel = parseChannel(content);
          summary.channels.try_emplace(channel.id, std::move(channel));
        } else if (op == static_cast<uint8_t>(mcap::Opcode::Message)) {
          RecordedMessage message;
          const uint16_t channelId = content.u16();
          message.sequence = content.u32();
          message.logTimeNs = content.u64();
          message.publishTimeNs = content.u64();
          message.payload = content.rest();
          auto channel = summary.channels.find(channelId);
          if (channel == summary.channels.end()) {
            throw mcap::ParseError{0, "message on channel " + std::to_string(channelId) + ", which was never defined"};
          }
          message.channel = &channel->second;
          if (!onMessage(message)) return;
        }
      } catch (const mcap::ParseError& error) {
        throw mcap::ParseError{chunk.info.offset,
                               error.what + " (in the " + opcodeName(op) + " record " + std::to_string(at) +
                                   " bytes into the chunk)"};
      }
    }
  }

  bool readSummary() {
    if (size < mcap::kMagic.size() * 2 + mcap::kRecordPrefix + mcap::kFooterContent) return false;
    const uint64_t footerAt = size - mcap::kMagic.size() - mcap::kRecordPrefix - mcap::kFooterContent;
    if (file().substr(size - mcap::kMagic.size()) != mcap::kMagic) return false;
    mcap::ByteReader footer(file().substr(footerAt), footerAt);
    if (footer.u8() != static_cast<uint8_t>(mcap::Opcode::Footer) || footer.u64() != mcap::kFooterContent) {
      problems.push_back({footerAt, "the file ends with the MCAP magic but no valid footer precedes it"});
      return false;
    }
    const uint64_t summaryStart = footer.u64();
    const uint64_t summaryOffsetStart = footer.u64();
    const uint32_t summaryCrc = footer.u32();
    if (summaryStart == 0) return false;  // closed without a summary
    const uint64_t summaryEnd = summaryOffsetStart != 0 ? summaryOffsetStart : footerAt;
    if (summaryStart < mcap::kMagic.size() || summaryStart > summaryEnd || summaryEnd > footerAt) {
      problems.push_back({footerAt, "the footer points at a summary section outside the file"});
      return false;
    }
    if (summaryCrc != 0 &&
        mcap::crc32(file().substr(summaryStart, footerAt + mcap::kRecordPrefix + 16 - summaryStart)) != summaryCrc) {
      problems.push_back({summaryStart, "the summary section does not match its CRC"});
      return false;
    }
    RecordingSummary parsed;
    try {
      mcap::ByteReader r(file().substr(summaryStart, summaryEnd - summaryStart), summaryStart);
      bool haveStatistics = false;
      while (r.remaining() > 0) {
        const uint8_t op = r.u8();
        const uint64_t length = r.u64();
        mcap::ByteReader content(r.bytes(length, opcodeName(op) + " record"), r.offset() - length);
        if (op == static_cast<uint8_t>(mcap::Opcode::Channel)) {
          RecordingChannel channel = parseChannel(content);
          parsed.channels[channel.id] = std::move(channel);
        } else if (op == static_cast<uint8_t>(mcap::Opcode::Statistics)) {
          haveStatistics = true;
          parsed.messageCount = content.u64();
          content.u16();  // schemas
          content.u32();  // channels
          content.u32();  // attachments
          content.u32();  // metadata
          content.u32();  // chunks
          parsed.startTimeNs = content.u64();
          parsed.endTimeNs = content.u64();
          mcap::ByteReader counts(content.string("channel message counts"), content.offset());
          while (counts.remaining() > 0) {
            const uint16_t id = counts.u16();
            parsed.messageCounts[id] = counts.u64();
          }
        } else if (op == static_cast<uint8_t>(mcap::Opcode::ChunkIndex)) {
          RecordingChunk chunk;
          chunk.startTimeNs = content.u64();
          chunk.endTimeNs = content.u64();
          chunk.offset = content.u64();
          chunk.length = content.u64();
          content.string("message index offsets");
          content.u64();  // message index length
          chunk.compression = std::string(content.string("compression name"));
          chunk.compressedSize = content.u64();
          chunk.uncompressedSize = content.u64();
          if (chunk.offset > size || chunk.length > size - chunk.offset) {
            content.fail("chunk index points outside the file");
          }
          parsed.compressedBytes += chunk.compressedSize;
          parsed.uncompressedBytes += chunk.uncompressedSize;
          parsed.chunks.push_back(std::move(chunk));
        }
      }
      if (!haveStatistics) {
        problems.push_back({summaryStart, "the summary section has no Statistics record"});
        return false;
      }
    } catch (const mcap::ParseError& error) {
      problems.push_back({error.offset, "summary section: " + error.what});
      return false;
    }
    parsed.fileSize = size;
    summary = std::move(parsed);
    return true;
  }

  // Reads the data section record by record: the way to open a file its writer never closed.
  void scan(const Progress& progress) {
    RecordingSummary scanned;
    scanned.fileSize = size;
    summary.channels.clear();
    uint64_t at = mcap::kMagic.size();
    uint64_t start = std::numeric_limits<uint64_t>::max();
    bool sawEnd = false;
    while (at < size) {
      if (progress) progress(at, size);
      if (size - at < mcap::kRecordPrefix) {
        problems.push_back({at, "the file ends inside a record header: the recording was cut off here"});
        break;
      }
      mcap::ByteReader prefix(file().substr(at, mcap::kRecordPrefix), at);
      const uint8_t op = prefix.u8();
      const uint64_t length = prefix.u64();
      if (length > size - at - mcap::kRecordPrefix) {
        problems.push_back({at, "the " + opcodeName(op) + " record here claims " + std::to_string(length) +
                                    " bytes but the file ends after " +
                                    std::to_string(size - at - mcap::kRecordPrefix) +
                                    ": the recording was cut off here"});
        break;
      }
      const std::string_view content = file().substr(at + mcap::kRecordPrefix, length);
      const uint64_t next = at + mcap::kRecordPrefix + length;
      if (op == static_cast<uint8_t>(mcap::Opcode::DataEnd) || op == static_cast<uint8_t>(mcap::Opcode::Footer)) {
        // Scanning at all means the summary could not be used.
        problems.push_back({next, "the summary section after the data is missing or cut off; all data before it "
                                  "is readable"});
        sawEnd = true;
        break;
      }
      try {
        if (op == static_cast<uint8_t>(mcap::Opcode::Channel)) {
          mcap::ByteReader r(content, at + mcap::kRecordPrefix);
          RecordingChannel channel = parseChannel(r);
          summary.channels.try_emplace(channel.id, std::move(channel));
        } else if (op == static_cast<uint8_t>(mcap::Opcode::Chunk)) {
          ChunkView chunk = parseChunkHeader(content, at, next - at);
          walkChunk(chunk, decompress(chunk), [&](const RecordedMessage& m) {
            ++scanned.messageCounts[m.channel->id];
            ++chunk.info.messageCounts[m.channel->id];
            ++scanned.messageCount;
            start = std::min(start, m.logTimeNs);
            scanned.endTimeNs = std::max(scanned.endTimeNs, m.logTimeNs);
            return true;
          });
          scanned.compressedBytes += chunk.info.compressedSize;
          scanned.uncompressedBytes += chunk.info.uncompressedSize;
          scanned.chunks.push_back(std::move(chunk.info));
        }
      } catch (const mcap::ParseError& error) {
        problems.push_back({error.offset, error.what});
      }
      at = next;
    }
    if (at == size && !sawEnd) {
      problems.push_back({at, "the file ends here without a summary: the recording was not closed (every complete "
                              "chunk before this point is readable)"});
    }
    if (progress) progress(size, size);
    scanned.startTimeNs = scanned.messageCount ? start : 0;
    scanned.channels = std::move(summary.channels);
    summary = std::move(scanned);
  }
};

RecordingReader::RecordingReader(std::string path, const Progress& progress) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.path = std::move(path);
  s.fd = ::open(s.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s.fd < 0) throw RecordingError(s.path, std::nullopt, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(s.fd, &st) != 0) {
    const int error = errno;
    ::close(s.fd);
    throw RecordingError(s.path, std::nullopt, std::string("cannot stat: ") + std::strerror(error));
  }
  s.size = static_cast<uint64_t>(st.st_size);
  if (s.size < mcap::kMagic.size()) {
    ::close(s.fd);
    throw RecordingError(s.path, 0, "not an MCAP recording: the file has only " + std::to_string(s.size) + " bytes");
  }
  void* mapped = ::mmap(nullptr, s.size, PROT_READ, MAP_PRIVATE, s.fd, 0);
  if (mapped == MAP_FAILED) {
    const int error = errno;
    ::close(s.fd);
    throw RecordingError(s.path, std::nullopt, std::string("cannot map: ") + std::strerror(error));
  }
  s.data = static_cast<const char*>(mapped);
  if (s.file().substr(0, mcap::kMagic.size()) != mcap::kMagic) {
    throw RecordingError(s.path, 0, "not an MCAP recording: it does not start with the MCAP magic bytes");
  }
  if (s.size < mcap::kMagic.size() + mcap::kRecordPrefix ||
      static_cast<uint8_t>(s.data[mcap::kMagic.size()]) != static_cast<uint8_t>(mcap::Opcode::Header)) {
    throw RecordingError(s.path, mcap::kMagic.size(), "the MCAP magic is not followed by a Header record");
  }
  s.indexed = s.readSummary();
  if (!s.indexed) s.scan(progress);
}

RecordingReader::~RecordingReader() {
  if (state_->data) ::munmap(const_cast<char*>(state_->data), state_->size);
  if (state_->fd >= 0) ::close(state_->fd);
}

const std::string& RecordingReader::path() const noexcept { return state_->path; }
const RecordingSummary& RecordingReader::summary() const noexcept { return state_->summary; }
bool RecordingReader::indexed() const noexcept { return state_->indexed; }
const std::vector<RecordingProblem>& RecordingReader::problems() const noexcept { return state_->problems; }

void RecordingReader::forEachMessage(uint64_t fromNs, uint64_t toNs,
                                     const std::function<bool(const RecordedMessage&)>& onMessage,
                                     const Progress& progress) {
  State& s = *state_;
  std::vector<const RecordingChunk*> wanted;
  for (const auto& chunk : s.summary.chunks) {
    if (chunk.endTimeNs >= fromNs && chunk.startTimeNs <= toNs) wanted.push_back(&chunk);
  }
  uint64_t done = 0;
  for (const RecordingChunk* chunk : wanted) {
    if (progress) progress(done, wanted.size());
    ++done;
    bool keepGoing = true;
    try {
      mcap::ByteReader prefix(s.file().substr(chunk->offset, mcap::kRecordPrefix), chunk->offset);
      if (prefix.u8() != static_cast<uint8_t>(mcap::Opcode::Chunk)) {
        prefix.fail("the chunk index points at a record that is not a chunk");
      }
      const uint64_t length = prefix.u64();
      if (length > s.size - chunk->offset - mcap::kRecordPrefix) prefix.fail("the chunk runs past the end of the file");
      const ChunkView view =
          parseChunkHeader(s.file().substr(chunk->offset + mcap::kRecordPrefix, length), chunk->offset, length);
      s.walkChunk(view, s.decompress(view), [&](const RecordedMessage& message) {
        if (message.logTimeNs < fromNs || message.logTimeNs > toNs) return true;
        keepGoing = onMessage(message);
        return keepGoing;
      });
    } catch (const mcap::ParseError& error) {
      s.problems.push_back({error.offset, error.what});
    }
    if (!keepGoing) break;
  }
  if (progress) progress(done, wanted.size());
}

}  // namespace livemon::transport
