#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <livemon/clock.h>

// Recordings are MCAP files (https://mcap.dev/spec): zstd-compressed chunks, one channel per
// event name with message encoding "msgpack", and a summary section with chunk indexes, message
// indexes and statistics. Each MCAP message holds a version-1 wire payload (docs/wire-format.md)
// of one or more events, as it was received, so a recording decodes like the live stream.
// docs/recording-format.md describes the layout and its versions.

namespace livemon::transport {

// What a recording may hold. Anything beyond is damage or a hostile file, refused before it costs
// memory or work; the writer never produces it.
//
// A chunk's records, uncompressed (livemon writes 1 MiB chunks).
inline constexpr uint64_t kMaxRecordingChunkBytes = uint64_t{1} << 30;
// Uncompressed bytes per stored byte of a zstd chunk. livemon's chunks stay far below (events
// differ in their times and sequence numbers: 15-25x typical, ~110x for events that repeat a
// 1000-character string); for records more repetitive still the writer adds a zstd skippable
// frame of padding rather than exceed it. Chunks of up to kRecordingSmallChunkAllowance
// uncompressed bytes are not held to it.
inline constexpr uint64_t kMaxRecordingCompressionRatio = 1000;
inline constexpr uint64_t kRecordingSmallChunkAllowance = 4096;
// Event names in one recording: MCAP channel ids are 16 bits and 0 is not used.
inline constexpr std::size_t kMaxRecordingChannels = 65535;
// The longest event name (channel topic) a recording holds: four times the wire format's.
inline constexpr std::size_t kMaxRecordingTopicBytes = 4096;
// Problems a reader lists; beyond, they are only counted (RecordingReader::unlistedProblems()).
inline constexpr std::size_t kMaxRecordingProblems = 1000;

// The recording format (docs/recording-format.md, "Versions"). Version 1 holds one event per
// message; version 2 holds wire messages as they were received, a batch of events each. A
// version-2 writer names its version in every channel's metadata, under kRecordingFormatKey;
// channels without the key are version 1.
inline constexpr int kRecordingFormatVersion = 2;
inline constexpr std::string_view kRecordingFormatKey = "livemon.format";

// Thread-safety: a plain value type.
//
// A recording could not be written or read. what() names the file, the byte offset where the
// problem is (when there is one) and what was wrong, e.g.
// "run.mcap: byte 1048631: chunk data does not match its CRC".
class RecordingError : public std::runtime_error {
 public:
  RecordingError(std::string path, std::optional<uint64_t> offset, std::string reason);
  ~RecordingError() override;

  const std::string& path() const noexcept { return path_; }
  std::optional<uint64_t> offset() const noexcept { return offset_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_;
  std::optional<uint64_t> offset_;
  std::string reason_;
};

// Thread-safety: a plain value type.
//
// Reading stopped because the caller's stop flag was set (Ctrl-C): not damage.
class RecordingStopped : public RecordingError {
 public:
  RecordingStopped(std::string path, uint64_t offset);
  ~RecordingStopped() override;
};

// Thread-safety: a plain value type.
struct RecordingWriterOptions {
  // A chunk is written once it holds this many uncompressed bytes...
  std::size_t chunkBytes = 1 << 20;
  // ...or once its first message is this old, whichever comes first, so a crash loses at most
  // about this much. (Age is checked on write() and on flushIfDue().)
  std::chrono::milliseconds maxChunkAge{1000};
  int zstdLevel = 3;
  // The Header record's library field.
  std::string library = "livemon";
  // Measures chunk age; nullptr means livemon::systemClock(). Must outlive the writer.
  Clock* clock = nullptr;
  // Refuse a path that exists ("File exists") instead of replacing the file there.
  bool exclusive = false;
};

// Not thread-safe: one owner at a time; one thread writes.
//
// Writes an MCAP recording. Every chunk reaches the operating system (write(2)) as soon
// as it is complete, so a process killed afterwards leaves it readable. A write that fails (disk
// full, RLIMIT_FSIZE exceeded) throws RecordingError; the file is then readable up to its last
// complete chunk, and later calls throw the same error.
// Overflow policy: a recording holds kMaxRecordingChannels topics of at most
// kMaxRecordingTopicBytes; a message on a topic beyond them is not written, and is counted in
// droppedCount(). Recording goes on.
class RecordingWriter {
 public:
  using Options = RecordingWriterOptions;

  // Creates `path` (O_EXCL | O_NOFOLLOW). A regular file already there is replaced, unless
  // options.exclusive: the recording goes to a new file beside it, under a name no one can guess,
  // renamed over it at once, so the earlier file's bytes are never written over. A symbolic link
  // at `path` is refused. Throws RecordingError naming the file and the reason.
  explicit RecordingWriter(std::string path, Options options = {});
  // Closes the file if close() was not called; errors are reported on stderr, not thrown.
  ~RecordingWriter();

  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  // Appends a message to `topic`'s channel, created the first time the topic is seen.
  // `logTimeNs` is when it was received, `publishTimeNs` when it happened, both in nanoseconds
  // since the Unix epoch. Returns false, and counts the message in droppedCount(), when `topic`
  // is longer than kMaxRecordingTopicBytes, or new when the recording already holds
  // kMaxRecordingChannels topics. A payload of more than kMaxRecordingChunkBytes / 2 bytes throws
  // std::invalid_argument.
  bool write(std::string_view topic, uint64_t logTimeNs, uint64_t publishTimeNs, std::string_view payload);

  // Writes the open chunk if its first message is older than maxChunkAge. Call it regularly
  // when messages may stop arriving.
  void flushIfDue();
  // Writes the open chunk now.
  void flush();
  // Writes the last chunk, the summary section and the footer, and closes the file. A second
  // call does nothing.
  void close();

  const std::string& path() const noexcept;
  uint64_t messageCount() const noexcept;
  // Messages not written because their topic was too long or found no channel id left.
  uint64_t droppedCount() const noexcept;
  // Bytes written to the file so far (complete chunks only).
  uint64_t bytesWritten() const noexcept;
  // Chunk records written so far, before and after compression: the compression ratio.
  uint64_t uncompressedBytes() const noexcept;
  uint64_t compressedBytes() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Thread-safety: a plain value type.
struct RecordingChannel {
  uint16_t id = 0;
  std::string topic;
  std::string messageEncoding;
  std::map<std::string, std::string> metadata;
};

// Thread-safety: a plain value type.
//
// Where a chunk is and what it holds, from the chunk index (or a scan of the file).
struct RecordingChunk {
  uint64_t offset = 0;  // of the Chunk record
  uint64_t length = 0;  // of the Chunk record, from its opcode
  uint64_t startTimeNs = 0;
  uint64_t endTimeNs = 0;
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
  std::string compression;
  std::map<uint16_t, uint64_t> messageCounts;  // per channel; empty when unknown
  // The channels it holds messages of, from the chunk index (its message index offsets), so a
  // reader of a few channels reads only their chunks; empty when unknown (a scanned file: then
  // messageCounts says).
  std::set<uint16_t> channels;
};

// Thread-safety: a plain value type.
struct RecordingSummary {
  std::map<uint16_t, RecordingChannel> channels;
  std::map<uint16_t, uint64_t> messageCounts;  // per channel
  uint64_t messageCount = 0;
  uint64_t startTimeNs = 0;  // earliest log time; 0 when there are no messages
  uint64_t endTimeNs = 0;    // latest log time
  std::vector<RecordingChunk> chunks;  // in file order, which is time order for livemon files
  uint64_t fileSize = 0;
  uint64_t compressedBytes = 0;    // chunk payloads as stored
  uint64_t uncompressedBytes = 0;  // chunk payloads decompressed
};

// Thread-safety: a plain value type. Something wrong in a file that was read anyway.
struct RecordingProblem {
  uint64_t offset = 0;
  std::string what;
};

// Thread-safety: a plain value type.
//
// The work a reader has done: it grows with the bytes of the file, never with what they claim.
struct RecordingReadStats {
  uint64_t chunksRead = 0;         // chunk records loaded (each read of a chunk counts)
  uint64_t bytesRead = 0;          // from the file
  uint64_t bytesDecompressed = 0;  // produced by zstd
  uint64_t recordsVisited = 0;     // records parsed inside chunks and the summary
};

// Thread-safety: a plain value type.
struct RecordedMessage {
  const RecordingChannel* channel = nullptr;
  uint32_t sequence = 0;
  uint64_t logTimeNs = 0;
  uint64_t publishTimeNs = 0;
  std::string_view payload;  // valid during the callback only
  // Where the message is: the file offset of its chunk's record, and the message record's offset
  // among the chunk's uncompressed records. For naming damage inside a payload.
  uint64_t chunkOffset = 0;
  uint64_t offsetInChunk = 0;
};

// The format version of a channel: the number under kRecordingFormatKey in its metadata, 1 when
// there is none (or it is not a number).
int recordingFormatVersion(const RecordingChannel& channel) noexcept;
// A recording's: the highest of its channels' (1 without channels). From version 2 on, a message
// may hold several events, so RecordingSummary::messageCount is not the number of events.
int recordingFormatVersion(const RecordingSummary& summary) noexcept;

// Thread-safety: a plain value type. What a RecordingReader checks of the file it opens, besides
// its being a regular file (which it checks without waiting on a FIFO).
struct RecordingFileCheck {
  bool followSymlinks = true;  // false: a symbolic link is refused (O_NOFOLLOW)
  // The (st_dev, st_ino) the file must have: another file under the name is refused.
  std::optional<std::pair<uint64_t, uint64_t>> identity;
};

// Thread-safety: a plain value type. Tells RecordingReader to open a file without a summary without
// scanning it yet: RecordingReader::scanOn() scans it a part at a time.
struct RecordingScanLater {};

// Not thread-safe: one owner at a time; one thread uses a reader; the stop flag may be set from any
// thread or a signal handler.
//
// Reads an MCAP recording, including one cut off by a crash.
//
// A cleanly closed file is opened from its summary section without reading the data. A file with
// no summary (the writer was killed, the disk filled up) is scanned: every complete chunk is
// readable, and problems() says where the readable part ends and why. Damage inside the file
// (flipped bytes, a truncated chunk) is reported with its byte offset; it never crashes the
// reader. The file is read with pread(2) into bounded buffers, so one that another process
// truncates or rewrites meanwhile is damage too ("the file ends here: it was truncated while
// being read"), never a signal.
//
// The file is untrusted: what it claims (chunk sizes, compression, the chunk index) is checked
// against the file's own bytes and the limits above before it costs memory, so the memory and
// work of a read grow with the bytes of the file, not with what they claim. A chunk index that
// lists a chunk twice or chunks that overlap is refused, and the file is scanned instead.
class RecordingReader {
 public:
  // Reports progress while scanning a file without a summary: (bytes done, bytes in all).
  using Progress = std::function<void(uint64_t done, uint64_t total)>;

  // Throws RecordingError if the file cannot be opened or is not an MCAP file, and
  // RecordingStopped if `*stop` became true while it was being opened (checking a summary,
  // scanning a file without one). `stop` (may be null) is also checked between the records
  // forEachMessage reads; it must outlive the reader.
  explicit RecordingReader(std::string path, const Progress& progress = {}, const std::atomic<bool>* stop = nullptr);
  // As above, opening the file only if it passes `check`.
  RecordingReader(std::string path, const RecordingFileCheck& check, const Progress& progress = {},
                  const std::atomic<bool>* stop = nullptr);
  // As above, scanning a file without a summary only as scanOn() is called.
  RecordingReader(std::string path, const RecordingFileCheck& check, RecordingScanLater);
  ~RecordingReader();
  RecordingReader(const RecordingReader&) = delete;
  RecordingReader& operator=(const RecordingReader&) = delete;

  const std::string& path() const noexcept;
  const RecordingSummary& summary() const noexcept;
  // True when the file has a valid summary section (it was closed cleanly).
  bool indexed() const noexcept;
  // Damage found so far: when opening, and in the chunks read since. Each problem is listed
  // once however often its chunk is read, and at most kMaxRecordingProblems are listed.
  const std::vector<RecordingProblem>& problems() const noexcept;
  // Problems found beyond kMaxRecordingProblems.
  uint64_t unlistedProblems() const noexcept;
  const RecordingReadStats& readStats() const noexcept;
  // Opened with RecordingScanLater: scans on through a file without a summary by about `bytes`
  // bytes (read and decompressed; at least one record), adding what it finds to summary() and
  // problems(). True once the whole file is scanned, at once for a file with a summary.
  bool scanOn(uint64_t bytes);

  // Calls `onMessage` for each message whose log time is in [fromNs, toNs], chunk by chunk in
  // file order, in file order within a chunk. Only chunks that overlap the range are read (found
  // with the chunk index). Returning false from `onMessage` stops. A damaged chunk is skipped and
  // added to problems(). `progress` gets (chunks done, chunks to read). Returns early, without
  // an error, when the stop flag is set.
  void forEachMessage(uint64_t fromNs, uint64_t toNs, const std::function<bool(const RecordedMessage&)>& onMessage,
                      const Progress& progress = {});
  void forEachMessage(const std::function<bool(const RecordedMessage&)>& onMessage) {
    forEachMessage(0, UINT64_MAX, onMessage);
  }

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace livemon::transport
