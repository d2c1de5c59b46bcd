#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/history_archive.h>
#include <livemon/transport/wire_format.h>

#include "history_store.h"
#include "peer_guard.h"

// Only transport/src includes this header.
namespace livemon::transport::detail {

class SocketSecurity;

// Thread-safety: a plain value type.
struct HistoryServerStats {
  uint64_t requests = 0;   // well-formed requests taken
  uint64_t answered = 0;   // answers sent to their end
  uint64_t refused = 0;    // requests answered "busy"
  uint64_t abandoned = 0;  // answers given up: the reader left, or read too slowly (kMinMessagesPerWindow)
  uint64_t evicted = 0;    // of them: ended to make room for another reader (kStallBeforeEviction)
  uint64_t malformed = 0;  // requests that were not valid
  uint64_t scanned = 0;    // stored messages looked at, matching the request's filters or not
  uint64_t pieces = 0;     // pieces read from the recordings (HistoryArchive::next calls)
};

// Not thread-safe: one owner at a time; owned by the thread that owns the HistoryStore it serves (a
// publisher's I/O thread, a relay's worker); stats() may be read from any thread.
//
// Answers history requests (docs/wire-format.md, "History") on a ROUTER socket of its own, so a
// request never touches the threads that log events. An answer is the stored messages, oldest
// first, up to the newest one held when the request came, then a history end. The config messages
// the store keeps of what it dropped (HistoryStore::configs()) go first, in the order they came. Sending never
// waits: each call sends what the reader's queue takes (ZMQ_ROUTER_MANDATORY tells when it is
// full) and resumes there on the next call. Payloads go out without a copy (they are shared with
// the store), so an answer costs the store's memory, not more.
// Bounded: at most kMaxAnswers answers at once (more get "busy"), a request frame of at most
// kMaxRequestBytes, the connections' bytes watched by a PeerGuard; one serve() call sends at most
// kSendBudget messages and does at most kWorkBudget units of work over all answers (a stored
// message looked at costs one per filter of its request, matching or not; a piece read from the
// recordings kArchivePieceCost), so filters that match nothing cost the thread no more per call
// than filters that match everything. An answer whose reader took fewer than
// kMinMessagesPerWindow messages in a kRateWindow while its queue was full is ended ("too slow"),
// and so is one still going after kAnswerDeadline, so a reader that takes one message now and then
// cannot hold a slot. When every place is taken and another reader asks, the answer whose reader
// has been stalled longest (its queue full, taking nothing, for at least kStallBeforeEviction) is
// ended ("too slow") to make room; only when none has been is the reader told "busy". A reader
// that asks again on its connection keeps the stall it had, so asking again does not hide one.
class HistoryServer {
 public:
  static constexpr std::size_t kMaxAnswers = 8;
  static constexpr std::size_t kMaxRequestBytes = 16 * 1024;
  static constexpr std::size_t kSendBudget = 256;
  static constexpr std::size_t kWorkBudget = 16 * 1024;
  static constexpr std::size_t kArchivePieceCost = kWorkBudget / 4;
  static constexpr std::chrono::seconds kRateWindow{30};
  static constexpr uint64_t kMinMessagesPerWindow = 64;
  static constexpr std::chrono::minutes kAnswerDeadline{10};
  static constexpr std::chrono::milliseconds kStallBeforeEviction{2000};

  // Binds `endpoint` ("tcp://host:*" picks a free port), secured as its owner's sockets are by
  // `security` (which must outlive it). Throws TransportError naming it. With `older`, an answer
  // begins with what the store dropped and `older` still has. `clock` (which must outlive it)
  // times the readers' rates.
  HistoryServer(void* context, const std::string& endpoint, const WireLimits& limits, SocketSecurity& security,
                std::shared_ptr<HistoryArchive> older = nullptr, Clock& clock = systemClock());
  ~HistoryServer();

  HistoryServer(const HistoryServer&) = delete;
  HistoryServer& operator=(const HistoryServer&) = delete;

  // As bound, with the port a "*" became.
  const std::string& endpoint() const noexcept { return endpoint_; }
  void* socket() const noexcept { return socket_; }

  // Takes waiting requests and sends what the readers take now. True when it did anything.
  bool serve(const HistoryStore& store);
  // An answer is in progress: call serve() again soon.
  bool answering() const noexcept { return !answers_.empty(); }
  // How long its owner may wait on socket() before calling serve() again: 0 when an answer can
  // go on now, a short recheck when every answer waits for its reader to take more, else `idleMs`.
  long pollTimeoutMs(long idleMs) const noexcept;

  HistoryServerStats stats() const noexcept;

 private:
  // Thread-safety: a plain value type. What one serve() call may still do.
  struct Budget {
    std::size_t sends = kSendBudget;
    std::size_t work = kWorkBudget;
    bool left() const noexcept { return sends > 0 && work > 0; }
    void spend(std::size_t units) noexcept { work -= std::min(work, units); }
  };
  // Thread-safety: a plain value type. One reader's answer in progress.
  struct Answer {
    std::string routingId;
    uint64_t next = 0;  // the store's numbering; below its begin() only kept configs are left
    uint64_t end = 0;
    uint64_t sent = 0;
    std::vector<std::string> filters;
    // The reader's rate: what it took in the window that began at windowStart, and whether its
    // queue was full meanwhile; blocked: the last send found it full.
    std::chrono::steady_clock::time_point started;
    std::chrono::steady_clock::time_point windowStart;
    uint64_t sentInWindow = 0;
    bool fullInWindow = false;
    bool blocked = false;
    // Since when its queue has been full without taking a message (none: it took the last one sent).
    std::optional<std::chrono::steady_clock::time_point> stalledSince;
    // When its reader was last given a message (when it asked, before the first): an answer whose
    // filters match nothing for long gives nothing, and cannot find out that its reader left.
    std::chrono::steady_clock::time_point givenAt;
    // Before the store: what it dropped, from `older`, up to when its oldest message was kept.
    bool fromOlder = false;
    int64_t olderBeforeNs = 0;
    HistoryArchive::Cursor olderCursor;
    std::vector<HistoryStore::Entry> olderPiece;
    std::size_t olderNext = 0;
    uint64_t olderSent = 0;
    std::optional<int64_t> oldestSentNs;
  };
  enum class Send { Sent, Full, Gone };

  void takeRequests(const HistoryStore& store);
  bool progress(Answer& answer, const HistoryStore& store, Budget& budget, bool& finished);
  // Sends from `older` while the answer is there; false when the reader's queue is full, it left,
  // or the budget ran out.
  bool progressOlder(Answer& answer, Budget& budget, bool& worked, bool& finished);
  // Sends the configs kept of the messages the store dropped before the answer reached them
  // (those that came in the recordings' part aside); false when the reader's queue is full, it
  // left, or the budget ran out.
  bool offerDroppedConfigs(Answer& answer, const HistoryStore& store, Budget& budget, bool& worked, bool& finished);
  // Sends `entry` when it matches the answer's filters, spending the budget; false when the
  // reader's queue is full or it left (`finished`).
  bool offer(Answer& answer, const HistoryStore::Entry& entry, Budget& budget, bool& worked, bool& finished);
  // Ends the answer when its reader took too little in a window while its queue was full.
  bool tooSlow(Answer& answer);
  // Makes room for another answer by ending the one stalled longest, if one stalled long enough.
  bool evictStalled();
  // Ends `answer` as "too slow", telling its reader if its queue takes it.
  void endTooSlow(const Answer& answer);
  // The send to `answer`'s reader found its queue full.
  void markFull(Answer& answer);
  Send sendEntry(const std::string& routingId, const HistoryStore::Entry& entry);
  Send sendEnd(const std::string& routingId, const HistoryEnd& end);

  void* socket_ = nullptr;
  std::string endpoint_;
  WireLimits limits_;
  std::unique_ptr<PeerGuard> guard_;
  std::shared_ptr<HistoryArchive> older_;
  Clock& clock_;
  std::vector<Answer> answers_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> answered_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> abandoned_{0};
  std::atomic<uint64_t> evicted_{0};
  std::atomic<uint64_t> malformed_{0};
  std::atomic<uint64_t> scanned_{0};
  std::atomic<uint64_t> pieces_{0};
};

// The endpoint a history socket binds by default beside `endpoint`, the first endpoint its
// source binds for subscribers: the same host with a free port for tcp://, the name with
// ".history" appended for ipc:// and inproc://.
std::string defaultHistoryEndpoint(const std::string& endpoint);

// Where a reader that reached a source at `endpoint` (connected, or bound when `bound`) finds
// the history the source advertises as `advertised`: a tcp:// port is taken on the host the reader
// connected to (the source sees itself by another name, or behind a tunnel); a wildcard host on
// a bound endpoint becomes 127.0.0.1. Others are taken as they are.
std::string resolveHistoryEndpoint(const std::string& advertised, const std::string& endpoint, bool bound);

}  // namespace livemon::transport::detail
