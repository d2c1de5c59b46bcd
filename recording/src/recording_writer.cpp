#include <livemon/transport/recording.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <utility>

#include <livemon/detail/exclusive_file.h>

#include "mcap_format.h"

namespace livemon::transport {
namespace {

std::string describeError(const std::string& path, const std::optional<uint64_t>& offset, const std::string& reason) {
  std::string text = path + ": ";
  if (offset) text += "byte " + std::to_string(*offset) + ": ";
  return text + reason;
}

[[noreturn]] void throwCannotCreate(const std::string& path, const std::string& why) {
  throw RecordingError(path, std::nullopt, "cannot create: " + why);
}

// A new file at `path`, never written through a symbolic link or into an existing file's bytes
// (a hard link or a reader may hold them). Unless `exclusive`, a regular file already there is
// replaced: the recording is written to a new file of an unguessable name beside it, renamed
// over it at once.
int openNewFile(const std::string& path, bool exclusive) {
  constexpr mode_t kMode = 0644;
  int fd = detail::createExclusive(path, kMode);
  if (fd >= 0) return fd;
  if (errno != EEXIST || exclusive) throwCannotCreate(path, std::strerror(errno));
  struct stat there {};
  if (::lstat(path.c_str(), &there) == 0 && S_ISLNK(there.st_mode)) {
    throwCannotCreate(path, "it is a symbolic link, and recordings are not written through one");
  }
  std::string temporary;
  fd = detail::createTemporaryBeside(path, kMode, temporary);
  if (fd < 0) throwCannotCreate(path, std::strerror(errno));
  // rename() replaces whatever is at `path` now, a link put there since the check included, and
  // never follows it; it fails on a directory.
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    ::close(fd);
    throwCannotCreate(path, std::strerror(error));
  }
  return fd;
}

}  // namespace

RecordingError::RecordingError(std::string path, std::optional<uint64_t> offset, std::string reason)
    : std::runtime_error(describeError(path, offset, reason)),
      path_(std::move(path)),
      offset_(offset),
      reason_(std::move(reason)) {}

RecordingError::~RecordingError() = default;

RecordingStopped::RecordingStopped(std::string path, uint64_t offset)
    : RecordingError(std::move(path), offset, "reading was stopped") {}

RecordingStopped::~RecordingStopped() = default;

// Not thread-safe: one writer's state.
struct RecordingWriter::State {
  struct ChunkIndexEntry {
    RecordingChunk chunk;
    std::map<uint16_t, uint64_t> messageIndexOffsets;
    uint64_t messageIndexLength = 0;
  };

  std::string path;
  Options options;
  Clock* clock = nullptr;
  int fd = -1;
  uint64_t written = 0;   // bytes in the file
  uint32_t dataCrc = 0;   // CRC-32 of every byte written before the Data End record
  std::optional<RecordingError> failure;
  bool closed = false;

  std::map<std::string, uint16_t, std::less<>> channelIds;
  std::map<uint16_t, RecordingChannel> channels;
  std::map<uint16_t, uint32_t> nextSequence;
  std::map<uint16_t, uint64_t> messageCounts;
  uint64_t messageCount = 0;
  uint64_t dropped = 0;  // messages whose topic found no channel id left
  uint64_t startTime = std::numeric_limits<uint64_t>::max();
  uint64_t endTime = 0;
  uint64_t uncompressed = 0;
  uint64_t compressedTotal = 0;
  std::vector<ChunkIndexEntry> chunkIndex;

  // The open chunk.
  std::string records;
  std::set<uint16_t> channelsInChunk;
  std::map<uint16_t, std::vector<std::pair<uint64_t, uint64_t>>> messageIndex;  // (log time, offset)
  uint64_t chunkStart = std::numeric_limits<uint64_t>::max();
  uint64_t chunkEnd = 0;
  std::optional<std::chrono::steady_clock::time_point> chunkOpenedAt;

  void writeAll(std::string_view bytes, bool countInDataCrc = true) {
    if (failure) throw *failure;
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int error = n < 0 ? errno : ENOSPC;
        failure.emplace(path, written + done,
                        std::string("cannot write: ") + std::strerror(error) +
                            "; the recording is readable up to its last complete chunk");
        throw *failure;
      }
      done += static_cast<std::size_t>(n);
    }
    if (countInDataCrc) dataCrc = mcap::crc32(bytes, dataCrc);
    written += bytes.size();
  }

  void writeChannelRecord(std::string& out, const RecordingChannel& channel) {
    mcap::ByteWriter w(out);
    const auto at = w.beginRecord(mcap::Opcode::Channel);
    w.u16(channel.id);
    w.u16(0);  // no schema: payloads are self-describing MessagePack
    w.string(channel.topic);
    w.string(channel.messageEncoding);
    w.stringMap(channel.metadata);
    w.endRecord(at);
  }

  void flushChunk() {
    if (records.empty()) return;
    std::string compressed(ZSTD_compressBound(records.size()), '\0');
    const std::size_t size =
        ZSTD_compress(compressed.data(), compressed.size(), records.data(), records.size(), options.zstdLevel);
    if (ZSTD_isError(size)) {
      failure.emplace(path, written, std::string("zstd compression failed: ") + ZSTD_getErrorName(size));
      throw *failure;
    }
    compressed.resize(size);
    // Readers refuse chunks that inflate beyond kMaxRecordingCompressionRatio (a decompression
    // bomb looks like that). The rare chunk of records that repetitive gets a zstd skippable
    // frame of padding, which every zstd decoder passes over: the file grows by a thousandth of
    // the records.
    if (records.size() > kRecordingSmallChunkAllowance && records.size() / kMaxRecordingCompressionRatio >= size) {
      const std::size_t padding = std::max<std::size_t>(records.size() / kMaxRecordingCompressionRatio + 1 - size, 8);
      mcap::ByteWriter pad(compressed);
      pad.u32(0x184D2A50);  // skippable frame magic
      pad.u32(static_cast<uint32_t>(padding - 8));
      compressed.append(padding - 8, '\0');
    }

    std::string out;
    mcap::ByteWriter w(out);
    const auto at = w.beginRecord(mcap::Opcode::Chunk);
    w.u64(chunkStart);
    w.u64(chunkEnd);
    w.u64(records.size());
    w.u32(mcap::crc32(records));
    w.string("zstd");
    w.u64(compressed.size());
    w.raw(compressed);
    w.endRecord(at);
    const uint64_t chunkLength = out.size();

    ChunkIndexEntry entry;
    entry.chunk.offset = written;
    entry.chunk.length = chunkLength;
    entry.chunk.startTimeNs = chunkStart;
    entry.chunk.endTimeNs = chunkEnd;
    entry.chunk.compressedSize = compressed.size();
    entry.chunk.uncompressedSize = records.size();
    entry.chunk.compression = "zstd";
    for (auto& [channel, index] : messageIndex) {
      std::stable_sort(index.begin(), index.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      entry.messageIndexOffsets[channel] = written + out.size();
      entry.chunk.messageCounts[channel] = index.size();
      const auto indexAt = w.beginRecord(mcap::Opcode::MessageIndex);
      w.u16(channel);
      w.u32(static_cast<uint32_t>(index.size() * 16));
      for (const auto& [time, offset] : index) {
        w.u64(time);
        w.u64(offset);
      }
      w.endRecord(indexAt);
    }
    entry.messageIndexLength = out.size() - chunkLength;

    writeAll(out);
    uncompressed += records.size();
    compressedTotal += compressed.size();
    chunkIndex.push_back(std::move(entry));
    records.clear();
    channelsInChunk.clear();
    messageIndex.clear();
    chunkStart = std::numeric_limits<uint64_t>::max();
    chunkEnd = 0;
    chunkOpenedAt.reset();
  }

  void writeSummary() {
    std::string dataEnd;
    {
      mcap::ByteWriter w(dataEnd);
      const auto at = w.beginRecord(mcap::Opcode::DataEnd);
      w.u32(dataCrc);
      w.endRecord(at);
    }
    writeAll(dataEnd, /*countInDataCrc=*/false);

    const uint64_t summaryStart = written;
    std::string summary;
    mcap::ByteWriter w(summary);
    struct Group {
      mcap::Opcode opcode;
      uint64_t start;
      uint64_t length;
    };
    std::vector<Group> groups;

    uint64_t groupStart = summary.size();
    for (const auto& [id, channel] : channels) writeChannelRecord(summary, channel);
    if (!channels.empty()) groups.push_back({mcap::Opcode::Channel, summaryStart + groupStart, summary.size() - groupStart});

    groupStart = summary.size();
    {
      const auto at = w.beginRecord(mcap::Opcode::Statistics);
      w.u64(messageCount);
      w.u16(0);  // schemas
      w.u32(static_cast<uint32_t>(channels.size()));
      w.u32(0);  // attachments
      w.u32(0);  // metadata
      w.u32(static_cast<uint32_t>(chunkIndex.size()));
      w.u64(messageCount ? startTime : 0);
      w.u64(messageCount ? endTime : 0);
      std::string counts;
      mcap::ByteWriter c(counts);
      for (const auto& [id, count] : messageCounts) {
        c.u16(id);
        c.u64(count);
      }
      w.string(counts);
      w.endRecord(at);
    }
    groups.push_back({mcap::Opcode::Statistics, summaryStart + groupStart, summary.size() - groupStart});

    groupStart = summary.size();
    for (const auto& entry : chunkIndex) {
      const auto at = w.beginRecord(mcap::Opcode::ChunkIndex);
      w.u64(entry.chunk.startTimeNs);
      w.u64(entry.chunk.endTimeNs);
      w.u64(entry.chunk.offset);
      w.u64(entry.chunk.length);
      std::string offsets;
      mcap::ByteWriter o(offsets);
      for (const auto& [channel, offset] : entry.messageIndexOffsets) {
        o.u16(channel);
        o.u64(offset);
      }
      w.string(offsets);
      w.u64(entry.messageIndexLength);
      w.string(entry.chunk.compression);
      w.u64(entry.chunk.compressedSize);
      w.u64(entry.chunk.uncompressedSize);
      w.endRecord(at);
    }
    if (!chunkIndex.empty()) {
      groups.push_back({mcap::Opcode::ChunkIndex, summaryStart + groupStart, summary.size() - groupStart});
    }

    const uint64_t summaryOffsetStart = summaryStart + summary.size();
    for (const auto& group : groups) {
      const auto at = w.beginRecord(mcap::Opcode::SummaryOffset);
      w.u8(static_cast<uint8_t>(group.opcode));
      w.u64(group.start);
      w.u64(group.length);
      w.endRecord(at);
    }
    // The footer's CRC covers the summary, the summary offsets and the footer up to the CRC.
    w.u8(static_cast<uint8_t>(mcap::Opcode::Footer));
    w.u64(mcap::kFooterContent);
    w.u64(summaryStart);
    w.u64(summaryOffsetStart);
    w.u32(mcap::crc32(summary));
    w.raw(mcap::kMagic);
    writeAll(summary, /*countInDataCrc=*/false);
  }
};

RecordingWriter::RecordingWriter(std::string path, Options options) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.path = std::move(path);
  s.options = std::move(options);
  s.clock = s.options.clock ? s.options.clock : &systemClock();
  if (s.options.chunkBytes == 0) throw std::invalid_argument("RecordingWriter: chunkBytes must be at least 1");
  s.fd = openNewFile(s.path, s.options.exclusive);
  std::string start(mcap::kMagic);
  mcap::ByteWriter w(start);
  const auto at = w.beginRecord(mcap::Opcode::Header);
  w.string("");  // profile: none of the registered ones
  w.string(s.options.library);
  w.endRecord(at);
  try {
    s.writeAll(start);
  } catch (...) {
    ::close(s.fd);
    throw;
  }
}

RecordingWriter::~RecordingWriter() {
  try {
    close();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "livemon: closing recording: %s\n", error.what());
  }
}

bool RecordingWriter::write(std::string_view topic, uint64_t logTimeNs, uint64_t publishTimeNs,
                            std::string_view payload) {
  State& s = *state_;
  if (s.failure) throw *s.failure;
  if (s.closed) throw RecordingError(s.path, std::nullopt, "write after close");
  // So that every chunk stays within what readers accept (kMaxRecordingChunkBytes).
  if (payload.size() > kMaxRecordingChunkBytes / 2) {
    throw std::invalid_argument("RecordingWriter: a payload of " + std::to_string(payload.size()) +
                                " bytes is larger than a chunk may hold");
  }
  auto found = s.channelIds.find(topic);
  if (found == s.channelIds.end()) {
    if (s.channels.size() >= kMaxRecordingChannels || topic.size() > kMaxRecordingTopicBytes) {
      ++s.dropped;
      return false;
    }
    const auto id = static_cast<uint16_t>(s.channels.size() + 1);
    found = s.channelIds.emplace(std::string(topic), id).first;
    s.channels[id] = RecordingChannel{id, std::string(topic), "msgpack",
                                      {{std::string(kRecordingFormatKey), std::to_string(kRecordingFormatVersion)}}};
  }
  const uint16_t channel = found->second;
  // Channel record, message record and their prefixes.
  const uint64_t adding = 2 * topic.size() + payload.size() + 128;
  if (!s.records.empty() && s.records.size() + adding > kMaxRecordingChunkBytes) s.flushChunk();
  if (s.channelsInChunk.insert(channel).second) {
    // Every chunk carries the channels it uses, so each chunk can be read on its own.
    s.writeChannelRecord(s.records, s.channels[channel]);
  }
  const uint64_t offset = s.records.size();
  mcap::ByteWriter w(s.records);
  const auto at = w.beginRecord(mcap::Opcode::Message);
  w.u16(channel);
  w.u32(s.nextSequence[channel]++);
  w.u64(logTimeNs);
  w.u64(publishTimeNs);
  w.raw(payload);
  w.endRecord(at);

  s.messageIndex[channel].emplace_back(logTimeNs, offset);
  s.chunkStart = std::min(s.chunkStart, logTimeNs);
  s.chunkEnd = std::max(s.chunkEnd, logTimeNs);
  s.startTime = std::min(s.startTime, logTimeNs);
  s.endTime = std::max(s.endTime, logTimeNs);
  ++s.messageCounts[channel];
  ++s.messageCount;
  if (!s.chunkOpenedAt) s.chunkOpenedAt = s.clock->now();

  if (s.records.size() >= s.options.chunkBytes) {
    s.flushChunk();
  } else {
    flushIfDue();
  }
  return true;
}

void RecordingWriter::flushIfDue() {
  State& s = *state_;
  if (s.closed || !s.chunkOpenedAt) return;
  if (s.clock->now() - *s.chunkOpenedAt >= s.options.maxChunkAge) s.flushChunk();
}

void RecordingWriter::flush() {
  if (state_->closed) return;
  state_->flushChunk();
}

void RecordingWriter::close() {
  State& s = *state_;
  if (s.closed) return;
  s.closed = true;
  try {
    if (!s.failure) {
      s.flushChunk();
      s.writeSummary();
    }
  } catch (...) {
    ::close(s.fd);
    s.fd = -1;
    throw;
  }
  const int fd = s.fd;
  s.fd = -1;
  if (::close(fd) != 0 && !s.failure) {
    s.failure.emplace(s.path, s.written, std::string("cannot close: ") + std::strerror(errno));
  }
  if (s.failure) throw *s.failure;
}

const std::string& RecordingWriter::path() const noexcept { return state_->path; }
uint64_t RecordingWriter::messageCount() const noexcept { return state_->messageCount; }
uint64_t RecordingWriter::droppedCount() const noexcept { return state_->dropped; }
uint64_t RecordingWriter::bytesWritten() const noexcept { return state_->written; }
uint64_t RecordingWriter::uncompressedBytes() const noexcept { return state_->uncompressed; }
uint64_t RecordingWriter::compressedBytes() const noexcept { return state_->compressedTotal; }

}  // namespace livemon::transport
