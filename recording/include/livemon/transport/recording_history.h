#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include <livemon/transport/history_archive.h>

namespace livemon::transport {

// Not thread-safe: one owner at a time; the thread that answers history requests (a relay's worker)
// reads it.
//
// A relay's history older than it holds in memory, from the MCAP recordings it writes of what it
// forwards (`livemonctl relay --record DIR`): RelayOptions::historyArchive. Read a piece of a few
// hundred messages at a time, oldest file first (by modification time), so an answer holds one
// piece in memory; a relay's recordings have log times that only grow, which a piece resumes
// from. Damaged or vanished files are skipped.
class RecordingHistoryArchive : public HistoryArchive {
 public:
  explicit RecordingHistoryArchive(std::filesystem::path dir) : dir_(std::move(dir)) {}

  bool next(Cursor& cursor, int64_t beforeNs, std::vector<HistoryMessage>& out) override;
  void resume(Cursor& cursor) override;

 private:
  std::filesystem::path dir_;
};

}  // namespace livemon::transport
