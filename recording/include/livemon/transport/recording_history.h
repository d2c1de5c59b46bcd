#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <vector>

#include <livemon/transport/history_archive.h>

namespace livemon::transport {

// Thread-safe: add() may be called from any thread; next() and resume() by the thread that answers
// history requests (a relay's worker), each answer with a Cursor of its own.
//
// A relay's history older than it holds in memory, from the MCAP recordings it writes of what it
// forwards (`livemonctl relay --record DIR`): RelayOptions::historyArchive. It serves only the files
// it is told of with add(), the ones the relay's recorder opened in this run, never the others in
// the directory (earlier runs, files put there by others), and each only if its name still leads,
// without a symbolic link, to the file that was there when it was added. Read a piece of a few
// hundred messages (at most kPieceBytes) at a time, file by file in the order added, so an answer
// holds one piece in memory and one next() call opens at most one file. A relay writes a file per
// run, several at once: within a file log times only grow, which a piece resumes from, each file
// from where its own pieces ended; across files they interleave, so an answer is in time order per
// file (per run, and so per source), not over all of them. A file without a summary (the one the relay is writing)
// is scanned kScanBytesPerCall at a time, a next() call either reading a piece from what was
// scanned or scanning on, never the whole file at once. Damaged, vanished or replaced files are
// skipped.
class RecordingHistoryArchive : public HistoryArchive {
 public:
  // A file without a summary yet (the one the relay is writing) is scanned on by about this many
  // bytes (read and decompressed) per next() call, at least one record: not whole at once.
  static constexpr uint64_t kScanBytesPerCall = uint64_t{4} << 20;
  // A piece ends after 512 messages or once its payloads reach this many bytes, whichever comes
  // first (at least one message): a piece of large batches is not hundreds of MiB in memory.
  static constexpr std::size_t kPieceBytes = std::size_t{8} << 20;

  RecordingHistoryArchive() = default;

  // Serves `file` too, after those added before. Takes its identity (device, inode) now; false,
  // and not served, when it is not a regular file here (a symbolic link, a FIFO, missing).
  bool add(const std::filesystem::path& file);

  bool next(Cursor& cursor, int64_t beforeNs, std::vector<HistoryMessage>& out) override;
  void resume(Cursor& cursor) override;

 private:
  // Thread-safety: a plain value type. A file added, as it was then.
  struct Recording {
    std::filesystem::path path;
    uint64_t device = 0;
    uint64_t inode = 0;
  };

  std::size_t count() const;
  Recording at(std::size_t index) const;

  mutable std::mutex mutex_;
  std::vector<Recording> files_;
};

}  // namespace livemon::transport
