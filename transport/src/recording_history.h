#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "history_store.h"

// Only transport/src includes this header.
namespace livemon::transport::detail {

// Not thread-safe: owned by the thread of the HistoryServer that reads it.
//
// History older than a HistoryStore holds, where it went when the store dropped it: the MCAP
// recordings a relay writes of what it forwards (`livemonctl relay --record DIR`). Read a piece of
// a few hundred messages at a time, oldest file first (by modification time), so an answer holds
// one piece in memory; a relay's recordings have log times that only grow, which a piece resumes
// from.
class OlderHistory {
 public:
  // Where an answer is in the recordings.
  struct Cursor {
    std::shared_ptr<void> state;
  };

  explicit OlderHistory(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // Appends to `out` the next piece of the event messages recorded before
  // `beforeNs` (wall time, as recorded); false when there are no more. Damaged or vanished
  // files are skipped.
  bool next(Cursor& cursor, int64_t beforeNs, std::vector<HistoryStore::Entry>& out);
  // After next() ran out: reads on from where it ended, in the file being written (read anew) and
  // any started since.
  void resume(Cursor& cursor);

 private:
  std::filesystem::path dir_;
};

}  // namespace livemon::transport::detail
