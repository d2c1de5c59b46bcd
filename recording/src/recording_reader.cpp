#include <livemon/transport/recording.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <tuple>
#include <utility>

#include "chunk_inflater.h"
#include "mcap_format.h"
#include "mcap_records.h"
#include "recording_file.h"

namespace livemon::transport {
namespace {

// The longest compression name a chunk may give ("zstd", "lz4", "").
constexpr std::size_t kMaxCompressionNameBytes = 32;
// A Chunk record's fields before its records.
constexpr uint64_t kChunkHeaderBytes = 8 + 8 + 8 + 4 + 4 + kMaxCompressionNameBytes + 8;
// Statistics and Chunk Index records hold a map entry per channel at most (10 bytes each).
constexpr uint64_t kMaxSummaryRecordBytes = 1 << 20;

bool is(uint8_t op, mcap::Opcode opcode) { return op == static_cast<uint8_t>(opcode); }

using mcap::kMaxChannelRecordBytes;
using mcap::parseChannel;
using mcap::recordName;
using mcap::File;
using mcap::kBlockBytes;

}  // namespace

// Not thread-safe: one reader's state.
struct RecordingReader::State {
  std::string path;
  File file;
  const std::atomic<bool>* stop = nullptr;
  uint64_t dataStart = 0;  // the first record after the Header
  RecordingSummary summary;
  bool indexed = false;
  bool summaryRefused = false;  // a summary exists but could not be used
  std::vector<RecordingProblem> problems;
  std::set<std::pair<uint64_t, std::string>> listed;  // problems already in `problems`
  uint64_t unlisted = 0;
  RecordingReadStats stats;
  std::string storedBuffer;    // a Chunk record's content
  ChunkInflater inflater;      // a chunk's records, decompressed
  std::string recordBuffer;    // any other record's content
  // A scan of a file without a usable summary: where it goes on.
  uint64_t scanAt = 0;
  bool scanDone = true;

  bool stopped() const noexcept { return stop != nullptr && stop->load(std::memory_order_relaxed); }

  // Lists a problem once, however often its chunk is read.
  void addProblem(uint64_t offset, std::string what) {
    if (listed.count({offset, what})) return;
    if (problems.size() >= kMaxRecordingProblems) {
      ++unlisted;
      return;
    }
    listed.emplace(offset, what);
    problems.push_back({offset, std::move(what)});
  }

  // Loads the Chunk record at `offset` whose content has `length` bytes, checks its header
  // against the file and the limits, decompresses it and checks its CRC. Fills `chunk` and
  // returns the chunk's records. Throws mcap::ParseError naming where it broke, and
  // RecordingStopped.
  std::string_view loadChunk(uint64_t offset, uint64_t length, RecordingChunk& chunk) {
    if (length > kMaxRecordingChunkBytes + kChunkHeaderBytes) {
      throw mcap::ParseError{offset, "a Chunk record of " + std::to_string(length) +
                                         " bytes, more than any recording chunk holds"};
    }
    if (storedBuffer.capacity() > (uint64_t{64} << 20) && storedBuffer.capacity() / 4 > length) {
      std::string().swap(storedBuffer);
    }
    file.read(offset + mcap::kRecordPrefix, static_cast<std::size_t>(length), storedBuffer, stats);
    ++stats.chunksRead;
    mcap::ByteReader r(storedBuffer, offset + mcap::kRecordPrefix);
    chunk.offset = offset;
    chunk.length = mcap::kRecordPrefix + length;
    chunk.startTimeNs = r.u64();
    chunk.endTimeNs = r.u64();
    chunk.uncompressedSize = r.u64();
    const uint32_t crc = r.u32();
    chunk.compression = std::string(r.string("compression name"));
    if (chunk.compression.size() > kMaxCompressionNameBytes) r.fail("a compression name longer than any");
    const uint64_t storedSize = r.u64();
    const uint64_t dataOffset = r.offset();
    const std::string_view data = r.bytes(static_cast<std::size_t>(std::min<uint64_t>(storedSize, SIZE_MAX)), "chunk records");
    chunk.compressedSize = storedSize;

    std::string_view result;
    if (chunk.compression.empty()) {
      if (data.size() != chunk.uncompressedSize) throw mcap::ParseError{dataOffset, "chunk size does not match its header"};
      result = data;
    } else if (chunk.compression == "zstd") {
      result = inflater.inflate(chunk, data, dataOffset, stop, path, stats);
    } else {
      throw mcap::ParseError{offset, "chunk compression '" + chunk.compression + "' is not supported"};
    }
    if (crc != 0 && mcap::crc32(result) != crc) throw mcap::ParseError{dataOffset, "chunk data does not match its CRC"};
    return result;
  }

  // Walks the records of a chunk: Schema, Channel and Message records only, so each record has
  // at least 23 bytes and the work is bounded by the chunk's size. Errors name the chunk's file
  // offset and the record's place in it. Returns false when stopped (by the flag or onMessage).
  template <typename OnMessage>
  bool walkChunk(const RecordingChunk& chunk, std::string_view records, OnMessage&& onMessage) {
    std::size_t at = 0;
    uint64_t index = 0;
    try {
      for (; at < records.size(); ++index) {
        if (stopped()) return false;
        ++stats.recordsVisited;
        if (records.size() - at < mcap::kRecordPrefix) {
          throw mcap::ParseError{0, "a record header is cut short: only " + std::to_string(records.size() - at) +
                                        " bytes remain"};
        }
        mcap::ByteReader prefix(records.substr(at, mcap::kRecordPrefix), 0);
        const uint8_t op = prefix.u8();
        const uint64_t length = prefix.u64();
        if (length > records.size() - at - mcap::kRecordPrefix) {
          throw mcap::ParseError{0, "the " + recordName(op) + " claims " + std::to_string(length) + " bytes, only " +
                                        std::to_string(records.size() - at - mcap::kRecordPrefix) + " remain"};
        }
        mcap::ByteReader content(records.substr(at + mcap::kRecordPrefix, static_cast<std::size_t>(length)), 0);
        if (is(op, mcap::Opcode::Message)) {
          RecordedMessage message;
          const uint16_t channelId = content.u16();
          message.sequence = content.u32();
          message.logTimeNs = content.u64();
          message.publishTimeNs = content.u64();
          message.payload = content.rest();
          message.chunkOffset = chunk.offset;
          message.offsetInChunk = at;
          auto channel = summary.channels.find(channelId);
          if (channel == summary.channels.end()) {
            throw mcap::ParseError{0, "a message on channel " + std::to_string(channelId) + ", which was never defined"};
          }
          message.channel = &channel->second;
          if (!onMessage(message)) return false;
        } else if (is(op, mcap::Opcode::Channel)) {
          if (length > kMaxChannelRecordBytes) throw mcap::ParseError{0, "a Channel record larger than any livemon writes"};
          RecordingChannel channel = parseChannel(content);
          summary.channels.try_emplace(channel.id, std::move(channel));
        } else if (is(op, mcap::Opcode::Schema)) {
          content.u16();  // id
          content.string("schema name");
          content.string("schema encoding");
          content.string("schema data");
        } else {
          throw mcap::ParseError{0, "the " + recordName(op) + " here does not belong in a chunk"};
        }
        at += mcap::kRecordPrefix + static_cast<std::size_t>(length);
      }
    } catch (const mcap::ParseError& error) {
      throw mcap::ParseError{chunk.offset, error.what + " (record " + std::to_string(index) + ", at byte " +
                                               std::to_string(at) + " of the chunk's " + std::to_string(records.size()) +
                                               " bytes of records)"};
    }
    return true;
  }

  // Reads the record header at `at`: (opcode, content length).
  std::pair<uint8_t, uint64_t> recordHeader(uint64_t at) {
    mcap::ByteReader prefix(file.view(at, mcap::kRecordPrefix, stats), at);
    const uint8_t op = prefix.u8();
    return {op, prefix.u64()};
  }

  void readHeader() {
    const uint64_t size = file.size();
    if (size < mcap::kMagic.size()) {
      throw RecordingError(path, 0, "not an MCAP recording: the file has only " + std::to_string(size) + " bytes");
    }
    try {
      if (file.view(0, mcap::kMagic.size(), stats) != mcap::kMagic) {
        throw RecordingError(path, 0, "not an MCAP recording: it does not start with the MCAP magic bytes");
      }
      const uint64_t headerAt = mcap::kMagic.size();
      if (size - headerAt < mcap::kRecordPrefix || !is(recordHeader(headerAt).first, mcap::Opcode::Header)) {
        throw RecordingError(path, headerAt, "the MCAP magic is not followed by a Header record");
      }
      const uint64_t length = recordHeader(headerAt).second;
      if (length > size - headerAt - mcap::kRecordPrefix) {
        addProblem(headerAt, "the Header record claims " + std::to_string(length) + " bytes but the file ends after " +
                                 std::to_string(size - headerAt - mcap::kRecordPrefix) + ": the recording was cut off here");
        dataStart = size;
      } else {
        dataStart = headerAt + mcap::kRecordPrefix + length;
      }
    } catch (const mcap::ParseError& error) {
      throw RecordingError(path, error.offset, error.what);
    }
  }

  bool readSummary() {
    const uint64_t size = file.size();
    constexpr uint64_t kTail = mcap::kRecordPrefix + mcap::kFooterContent + mcap::kMagic.size();
    if (size < dataStart || size - dataStart < kTail) return false;
    const uint64_t footerAt = size - kTail;
    try {
      std::string tail(file.view(footerAt, kTail, stats));
      if (std::string_view(tail).substr(kTail - mcap::kMagic.size()) != mcap::kMagic) return false;
      mcap::ByteReader footer(tail, footerAt);
      if (footer.u8() != static_cast<uint8_t>(mcap::Opcode::Footer) || footer.u64() != mcap::kFooterContent) {
        addProblem(footerAt, "the file ends with the MCAP magic but no valid footer precedes it");
        return false;
      }
      const uint64_t summaryStart = footer.u64();
      const uint64_t summaryOffsetStart = footer.u64();
      const uint32_t summaryCrc = footer.u32();
      if (summaryStart == 0) return false;  // closed without a summary
      const uint64_t summaryEnd = summaryOffsetStart != 0 ? summaryOffsetStart : footerAt;
      if (summaryStart < dataStart || summaryStart > summaryEnd || summaryEnd > footerAt) {
        addProblem(footerAt, "the footer points at a summary section outside the file");
        return false;
      }
      summaryRefused = true;
      if (summaryCrc != 0) {
        // Covers the summary, the summary offsets and the footer up to the CRC.
        const uint64_t crcEnd = footerAt + mcap::kRecordPrefix + 16;
        uint32_t crc = 0;
        for (uint64_t at = summaryStart; at < crcEnd;) {
          if (stopped()) throw RecordingStopped(path, at);
          const auto n = static_cast<std::size_t>(std::min<uint64_t>(kBlockBytes, crcEnd - at));
          crc = mcap::crc32(file.view(at, n, stats), crc);
          at += n;
        }
        if (crc != summaryCrc) {
          addProblem(summaryStart, "the summary section does not match its CRC");
          return false;
        }
      }
      RecordingSummary parsed = parseSummary(summaryStart, summaryEnd);
      parsed.fileSize = size;
      summary = std::move(parsed);
      summaryRefused = false;
      return true;
    } catch (const mcap::ParseError& error) {
      addProblem(error.offset, "summary section: " + error.what + "; reading the data section instead");
      return false;
    }
  }

  // Parses the records of the summary section and checks the chunk index against the file.
  RecordingSummary parseSummary(uint64_t summaryStart, uint64_t summaryEnd) {
    RecordingSummary parsed;
    bool haveStatistics = false;
    for (uint64_t at = summaryStart; at < summaryEnd;) {
      if (stopped()) throw RecordingStopped(path, at);
      ++stats.recordsVisited;
      if (summaryEnd - at < mcap::kRecordPrefix) throw mcap::ParseError{at, "a record header is cut short"};
      const auto [op, length] = recordHeader(at);
      const uint64_t contentAt = at + mcap::kRecordPrefix;
      if (length > summaryEnd - contentAt) {
        throw mcap::ParseError{at, "the " + recordName(op) + " claims " + std::to_string(length) + " bytes, only " +
                                       std::to_string(summaryEnd - contentAt) + " remain in the summary section"};
      }
      at = contentAt + length;
      if (!is(op, mcap::Opcode::Channel) && !is(op, mcap::Opcode::Statistics) && !is(op, mcap::Opcode::ChunkIndex)) continue;
      if (length > kMaxSummaryRecordBytes) {
        throw mcap::ParseError{contentAt - mcap::kRecordPrefix, "a " + recordName(op) + " of " +
                                                                    std::to_string(length) + " bytes, larger than any"};
      }
      file.read(contentAt, static_cast<std::size_t>(length), recordBuffer, stats);
      mcap::ByteReader c(recordBuffer, contentAt);
      if (is(op, mcap::Opcode::Channel)) {
        if (length > kMaxChannelRecordBytes) c.fail("a Channel record larger than any livemon writes");
        RecordingChannel channel = parseChannel(c);
        parsed.channels[channel.id] = std::move(channel);
      } else if (is(op, mcap::Opcode::Statistics)) {
        haveStatistics = true;
        parsed.messageCount = c.u64();
        c.u16();  // schemas
        c.u32();  // channels
        c.u32();  // attachments
        c.u32();  // metadata
        c.u32();  // chunks
        parsed.startTimeNs = c.u64();
        parsed.endTimeNs = c.u64();
        mcap::ByteReader counts(c.string("channel message counts"), c.offset());
        while (counts.remaining() > 0) {
          const uint16_t id = counts.u16();
          parsed.messageCounts[id] = counts.u64();
        }
      } else {
        RecordingChunk chunk;
        chunk.startTimeNs = c.u64();
        chunk.endTimeNs = c.u64();
        chunk.offset = c.u64();
        chunk.length = c.u64();
        for (mcap::ByteReader keys(c.string("message index offsets"), c.offset()); keys.remaining() > 0; keys.u64()) {
          chunk.channels.insert(keys.u16());  // a channel with messages in the chunk
        }
        c.u64();  // message index length
        chunk.compression = std::string(c.string("compression name"));
        chunk.compressedSize = c.u64();
        chunk.uncompressedSize = c.u64();
        // Chunks lie in the data section, between the header and the summary.
        if (chunk.offset < dataStart || chunk.offset > summaryStart || chunk.length < mcap::kRecordPrefix ||
            chunk.length > summaryStart - chunk.offset) {
          c.fail("the chunk index points outside the data section");
        }
        parsed.compressedBytes += chunk.compressedSize;
        parsed.uncompressedBytes += chunk.uncompressedSize;
        parsed.chunks.push_back(std::move(chunk));
      }
    }
    if (!haveStatistics) throw mcap::ParseError{summaryStart, "no Statistics record"};
    // Each chunk once: listed twice, or overlapping, a chunk would be read again and again.
    std::stable_sort(parsed.chunks.begin(), parsed.chunks.end(),
                     [](const RecordingChunk& a, const RecordingChunk& b) { return a.offset < b.offset; });
    for (std::size_t i = 1; i < parsed.chunks.size(); ++i) {
      const RecordingChunk& before = parsed.chunks[i - 1];
      const RecordingChunk& chunk = parsed.chunks[i];
      if (chunk.offset == before.offset) {
        throw mcap::ParseError{summaryStart, "the chunk index lists the chunk at byte " + std::to_string(chunk.offset) + " twice"};
      }
      if (before.offset + before.length > chunk.offset) {
        throw mcap::ParseError{summaryStart, "the chunk index has the chunk at byte " + std::to_string(before.offset) +
                                                 " overlap the one at byte " + std::to_string(chunk.offset)};
      }
    }
    return parsed;
  }

  // Reads the data section record by record, the way to open a file its writer never closed, into
  // `summary`: on from where the last call stopped, until about `budget` more bytes were read and
  // decompressed (at least one record). True once the whole file is scanned.
  bool scanOn(uint64_t budget, const Progress& progress = {}) {
    const auto spent = [&] { return stats.bytesRead + stats.bytesDecompressed; };
    const uint64_t before = spent();
    for (uint64_t nextProgress = 0; !scanDone && spent() - before < budget;) {
      if (progress && scanAt >= nextProgress) {
        progress(scanAt, file.size());
        nextProgress = scanAt + (1 << 20);
      }
      scanDone = !scanRecord();
    }
    if (scanDone && progress) progress(file.size(), file.size());
    return scanDone;
  }

  // Scans the record at scanAt and moves past it; false when the readable data ends there.
  bool scanRecord() {
    const uint64_t size = file.size();
    uint64_t& at = scanAt;
    const auto ends = [&](uint64_t offset, std::string what) {
      addProblem(offset, std::move(what));
      return false;
    };
    if (at == size) {
      return ends(at, "the file ends here without a summary: the recording was not closed (every complete chunk "
                      "before this point is readable)");
    }
    if (stopped()) throw RecordingStopped(path, at);
    if (size - at < mcap::kRecordPrefix) return ends(at, "the file ends inside a record header: the recording was cut off here");
    uint8_t op = 0;
    uint64_t length = 0;
    try {
      std::tie(op, length) = recordHeader(at);
    } catch (const mcap::ParseError& error) {
      return ends(error.offset, error.what);
    }
    if (length > size - at - mcap::kRecordPrefix) {
      return ends(at, "the " + recordName(op) + " here claims " + std::to_string(length) + " bytes but the file ends after " +
                          std::to_string(size - at - mcap::kRecordPrefix) + ": the recording was cut off here");
    }
    const uint64_t next = at + mcap::kRecordPrefix + length;
    // Scanning at all means the summary could not be used; a refused one was reported.
    if (is(op, mcap::Opcode::DataEnd) || is(op, mcap::Opcode::Footer)) {
      return summaryRefused ? false
                            : ends(next, "the summary section after the data is missing or cut off; all data before it is "
                                         "readable");
    }
    // Opcode 0 is reserved: zeros, as a file system may leave after a crash.
    if (op == 0) return ends(at, "no record here (opcode 0x00): the readable data ends here");
    try {
      if (is(op, mcap::Opcode::Channel)) {
        if (length > kMaxChannelRecordBytes) throw mcap::ParseError{at, "a Channel record larger than any livemon writes"};
        file.read(at + mcap::kRecordPrefix, static_cast<std::size_t>(length), recordBuffer, stats);
        mcap::ByteReader r(recordBuffer, at + mcap::kRecordPrefix);
        RecordingChannel channel = parseChannel(r);
        summary.channels.try_emplace(channel.id, std::move(channel));
      } else if (is(op, mcap::Opcode::Chunk)) {
        RecordingChunk chunk;
        const std::string_view records = loadChunk(at, length, chunk);
        const bool complete = walkChunk(chunk, records, [&](const RecordedMessage& m) {
          ++summary.messageCounts[m.channel->id];
          ++chunk.messageCounts[m.channel->id];
          ++summary.messageCount;
          summary.startTimeNs = summary.messageCount == 1 ? m.logTimeNs : std::min(summary.startTimeNs, m.logTimeNs);
          summary.endTimeNs = std::max(summary.endTimeNs, m.logTimeNs);
          return true;
        });
        if (!complete) throw RecordingStopped(path, at);
        summary.compressedBytes += chunk.compressedSize;
        summary.uncompressedBytes += chunk.uncompressedSize;
        summary.chunks.push_back(std::move(chunk));
      }
    } catch (const mcap::ParseError& error) {
      addProblem(error.offset, error.what);
    }
    at = next;
    return true;
  }

  // Opens the file; one without a usable summary is to be scanned from the start of its data.
  void open(const RecordingFileCheck& check) {
    file.open(path, check);
    readHeader();
    indexed = readSummary();
    if (indexed) return;
    summary.fileSize = file.size();  // the rest as the scan finds it
    scanAt = dataStart;
    scanDone = false;
  }
};

RecordingReader::RecordingReader(std::string path, const Progress& progress, const std::atomic<bool>* stop)
    : RecordingReader(std::move(path), RecordingFileCheck{}, progress, stop) {}

RecordingReader::RecordingReader(std::string path, const RecordingFileCheck& check, const Progress& progress,
                                 const std::atomic<bool>* stop)
    : state_(std::make_unique<State>()) {
  State& s = *state_;  // owns the descriptor: a throw below closes it
  s.path = std::move(path);
  s.stop = stop;
  s.open(check);
  s.scanOn(UINT64_MAX, progress);
}

RecordingReader::RecordingReader(std::string path, const RecordingFileCheck& check, RecordingScanLater)
    : state_(std::make_unique<State>()) {
  state_->path = std::move(path);
  state_->open(check);
}

bool RecordingReader::scanOn(uint64_t bytes) { return state_->scanOn(std::max<uint64_t>(bytes, 1)); }

RecordingReader::~RecordingReader() = default;

const std::string& RecordingReader::path() const noexcept { return state_->path; }
const RecordingSummary& RecordingReader::summary() const noexcept { return state_->summary; }
bool RecordingReader::indexed() const noexcept { return state_->indexed; }
const std::vector<RecordingProblem>& RecordingReader::problems() const noexcept { return state_->problems; }
uint64_t RecordingReader::unlistedProblems() const noexcept { return state_->unlisted; }
const RecordingReadStats& RecordingReader::readStats() const noexcept { return state_->stats; }

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
    if (s.stopped()) break;
    if (progress) progress(done, wanted.size());
    ++done;
    bool keepGoing = true;
    try {
      const auto [op, length] = s.recordHeader(chunk->offset);
      if (!is(op, mcap::Opcode::Chunk)) {
        throw mcap::ParseError{chunk->offset, "the chunk index points at a record that is not a chunk (" + recordName(op) + ")"};
      }
      if (length != chunk->length - mcap::kRecordPrefix) {
        throw mcap::ParseError{chunk->offset, "the chunk index says the chunk here has " + std::to_string(chunk->length) +
                                                  " bytes, its record " + std::to_string(length + mcap::kRecordPrefix)};
      }
      RecordingChunk loaded;
      const std::string_view records = s.loadChunk(chunk->offset, length, loaded);
      keepGoing = s.walkChunk(loaded, records, [&](const RecordedMessage& message) {
        if (message.logTimeNs < fromNs || message.logTimeNs > toNs) return true;
        return onMessage(message);
      });
    } catch (const mcap::ParseError& error) {
      s.addProblem(error.offset, error.what);
    } catch (const RecordingStopped&) {
      keepGoing = false;
    }
    if (!keepGoing) break;
  }
  if (progress) progress(done, wanted.size());
}

}  // namespace livemon::transport
