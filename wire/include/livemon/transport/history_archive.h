#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace livemon::transport {

// Thread-safety: a plain value type. One event message of a source's history as it was sent: its
// topic frame and its payload, shared rather than copied.
struct HistoryMessage {
  std::string topic;
  std::shared_ptr<const std::string> payload;
  int64_t firstEventNs = 0;  // the timestamp of its first event (wire time), or INT64_MIN when not known
  int64_t keptNs = 0;        // when it was kept (wall clock, wire time)
};

// Not thread-safe: one owner at a time; the thread that answers history requests (a relay's worker)
// reads it; each answer keeps its place in a Cursor of its own.
//
// History older than a relay holds in memory: where the messages went that the relay dropped to
// stay within RelayOptions::historyBytes (docs/wire-format.md, "History"). Transport only asks;
// livemon::recording's RecordingHistoryArchive answers from the MCAP files that
// `livemonctl relay --record DIR` writes.
class HistoryArchive {
 public:
  // Thread-safety: a plain value type.
  //
  // Where an answer is in the archive; default-constructed at its start.
  struct Cursor {
    std::shared_ptr<void> state;
  };

  virtual ~HistoryArchive() = default;

  // Appends to `out` the next piece of the event messages kept before `beforeNs` (wall time, as
  // kept), oldest first: a few hundred messages, so an answer holds one piece in memory. False
  // when there are no more; true with nothing appended when a call passed over something (a file
  // that held nothing more): call again. Each call does a bounded part of the work (opens at most
  // one file), and its caller counts the calls against its own budget. What cannot be read (a
  // damaged or vanished file) is skipped.
  virtual bool next(Cursor& cursor, int64_t beforeNs, std::vector<HistoryMessage>& out) = 0;
  // After next() ran out: reads on from where it ended, through what was kept since.
  virtual void resume(Cursor& cursor) = 0;
};

}  // namespace livemon::transport
