#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/clock.h>

// Recordings are MCAP files (https://mcap.dev/spec): zstd-compressed chunks, one channel per
// event name with message encoding "msgpack", and a summary section with chunk indexes, message
// indexes and statistics. Each MCAP message holds one event as a version-1 wire payload
// (docs/wire-format.md), so a recording decodes like the live stream. docs/recording-format.md
// describes the layout.

namespace livemon::transport {

// A recording could not be written or read. what() names the file, the byte offset where the
// problem is (when there is one) and what was wrong, e.g.
// "run.mcap: byte 1048631: chunk data does not match its CRC".
// Thread-safety: a plain value type.
class RecordingError : public std::runtime_error {
 public:
  RecordingError(std::string path, std::optional<uint64_t> offset, std::string reason);

  const std::string& path() const noexcept { return path_; }
  std::optional<uint64_t> offset() const noexcept { return offset_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_;
  std::optional<uint64_t> offset_;
  std::string reason_;
};

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
};

// Writes an MCAP recording.
//
// Not thread-safe: one thread writes. Every chunk reaches the operating system (write(2)) as soon
// as it is complete, so a process killed afterwards leaves it readable. A write that fails (disk
// full, RLIMIT_FSIZE exceeded) throws RecordingError; the file is then readable up to its last
// complete chunk, and later calls throw the same error.
class RecordingWriter {
 public:
  using Options = RecordingWriterOptions;

  // Creates or truncates `path`. Throws RecordingError naming the file and the reason.
  explicit RecordingWriter(std::string path, Options options = {});
  // Closes the file if close() was not called; errors are reported on stderr, not thrown.
  ~RecordingWriter();

  RecordingWriter(const RecordingWriter&) = delete;
  RecordingWriter& operator=(const RecordingWriter&) = delete;

  // Appends a message to `topic`'s channel, created the first time the topic is seen.
  // `logTimeNs` is when it was received, `publishTimeNs` when it happened, both in nanoseconds
  // since the Unix epoch.
  void write(std::string_view topic, uint64_t logTimeNs, uint64_t publishTimeNs, std::string_view payload);

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
  // Bytes written to the file so far (complete chunks only).
  uint64_t bytesWritten() const noexcept;
  // Chunk records written so far, before and after compression: the compression ratio.
  uint64_t uncompressedBytes() const noexcept;
  uint64_t compressedBytes() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct RecordingChannel {
  uint16_t id = 0;
  std::string topic;
  std::string messageEncoding;
  std::map<std::string, std::string> metadata;
};

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
};

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

// Something wrong in a file that was read anyway.
struct RecordingProblem {
  uint64_t offset = 0;
  std::string what;
};

struct RecordedMessage {
  const RecordingChannel* channel = nullptr;
  uint32_t sequence = 0;
  uint64_t logTimeNs = 0;
  uint64_t publishTimeNs = 0;
  std::string_view payload;  // valid during the callback only
};

// Reads an MCAP recording, including one cut off by a crash.
//
// A cleanly closed file is opened from its summary section without reading the data. A file with
// no summary (the writer was killed, the disk filled up) is scanned: every complete chunk is
// readable, and problems() says where the readable part ends and why. Damage inside the file
// (flipped bytes, a truncated chunk) is reported with its byte offset; it never crashes the
// reader. Not thread-safe.
class RecordingReader {
 public:
  // Reports progress while scanning a file without a summary: (bytes done, bytes in all).
  using Progress = std::function<void(uint64_t done, uint64_t total)>;

  // Throws RecordingError if the file cannot be opened or is not an MCAP file.
  explicit RecordingReader(std::string path, const Progress& progress = {});
  ~RecordingReader();
  RecordingReader(const RecordingReader&) = delete;
  RecordingReader& operator=(const RecordingReader&) = delete;

  const std::string& path() const noexcept;
  const RecordingSummary& summary() const noexcept;
  // True when the file has a valid summary section (it was closed cleanly).
  bool indexed() const noexcept;
  // Damage found so far: when opening, and in the chunks read since.
  const std::vector<RecordingProblem>& problems() const noexcept;

  // Calls `onMessage` for each message whose log time is in [fromNs, toNs], chunk by chunk in
  // file order, in file order within a chunk. Only chunks that overlap the range are read (found
  // with the chunk index). Returning false from `onMessage` stops. A damaged chunk is skipped and
  // added to problems(). `progress` gets (chunks done, chunks to read).
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
