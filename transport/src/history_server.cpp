#include "history_server.h"

#include <algorithm>
#include <cerrno>

#include <zmq.h>

#include "curve_security.h"
#include "zmq_support.h"

namespace livemon::transport::detail {

namespace {

// How often an owner rechecks answers that all wait for their readers to take more.
constexpr long kBlockedRecheckMs = 10;
// Requests one serve() call takes at most.
constexpr int kRequestsPerServe = 16;
// Messages queued per reader: few, because each may be a batch of up to 256 KiB that the store
// may drop meanwhile (the queue then keeps it alive).
constexpr int kAnswerHighWaterMark = 64;
// What the readers of a history socket may send it: a request or two per connection.
constexpr PeerLimits kReaderLimits{64 * 1024, 1024 * 1024, 64};

// The timestamp of the first event held, decoding the oldest message when it was kept undecoded.
std::optional<int64_t> oldestEventNs(const HistoryStore& store, const WireLimits& limits) {
  const auto oldest = store.oldestNs();
  if (!oldest || *oldest != HistoryStore::kUnknownTime) return oldest;
  const HistoryStore::Entry& entry = store.at(store.begin());
  WireMessage message;
  if (decodeMessage(entry.topic, *entry.payload, limits, message) != DecodeStatus::Ok || message.events.empty()) {
    return std::nullopt;
  }
  return toWireTime(message.events.front().timestamp);
}

bool startsWithAny(const std::string& topic, const std::vector<std::string>& filters) {
  if (filters.empty()) return true;
  return std::any_of(filters.begin(), filters.end(),
                     [&](const std::string& filter) { return topic.compare(0, filter.size(), filter) == 0; });
}

// Receives one frame into `out`; false when none is waiting.
bool receiveFrame(void* socket, std::string& out, bool& more) {
  zmq_msg_t frame;
  zmq_msg_init(&frame);
  if (zmq_msg_recv(&frame, socket, ZMQ_DONTWAIT) < 0) {
    zmq_msg_close(&frame);
    return false;
  }
  annotateAfterReceive();
  out.assign(static_cast<const char*>(zmq_msg_data(&frame)), zmq_msg_size(&frame));
  more = zmq_msg_more(&frame) != 0;
  zmq_msg_close(&frame);
  return true;
}

}  // namespace

HistoryServer::HistoryServer(void* context, const std::string& endpoint, const WireLimits& limits, SocketSecurity& security,
                             std::shared_ptr<HistoryArchive> older, Clock& clock)
    : limits_(limits), older_(std::move(older)), clock_(clock) {
  socket_ = zmq_socket(context, ZMQ_ROUTER);
  if (socket_ == nullptr) throwEndpointError("open a history socket for", endpoint, errno);
  try {
    setIntOption(socket_, ZMQ_LINGER, 0, "ZMQ_LINGER");
    // A full reader queue says so (EAGAIN) instead of dropping the message silently, and a reader
    // that left says so too (EHOSTUNREACH).
    setIntOption(socket_, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    setIntOption(socket_, ZMQ_SNDHWM, kAnswerHighWaterMark, "ZMQ_SNDHWM");
    setIntOption(socket_, ZMQ_RCVHWM, 4, "ZMQ_RCVHWM");
    setInt64Option(socket_, ZMQ_MAXMSGSIZE, static_cast<int64_t>(kMaxRequestBytes), "ZMQ_MAXMSGSIZE");
    guard_ = std::make_unique<PeerGuard>(context, socket_, kReaderLimits);
    security.prepareBind(socket_, endpoint);
    if (zmq_bind(socket_, endpoint.c_str()) != 0) throwEndpointError("bind the history socket at", endpoint, errno);
    endpoint_ = lastEndpoint(socket_, endpoint);
  } catch (...) {
    guard_.reset();
    zmq_close(socket_);
    throw;
  }
}

HistoryServer::~HistoryServer() {
  guard_.reset();
  zmq_close(socket_);
}

HistoryServerStats HistoryServer::stats() const noexcept {
  HistoryServerStats stats;
  stats.requests = requests_.load(std::memory_order_relaxed);
  stats.answered = answered_.load(std::memory_order_relaxed);
  stats.refused = refused_.load(std::memory_order_relaxed);
  stats.abandoned = abandoned_.load(std::memory_order_relaxed);
  stats.evicted = evicted_.load(std::memory_order_relaxed);
  stats.malformed = malformed_.load(std::memory_order_relaxed);
  stats.scanned = scanned_.load(std::memory_order_relaxed);
  stats.pieces = pieces_.load(std::memory_order_relaxed);
  return stats;
}

bool HistoryServer::serve(const HistoryStore& store) {
  const uint64_t before = requests_.load(std::memory_order_relaxed) + malformed_.load(std::memory_order_relaxed);
  takeRequests(store);
  bool worked = requests_.load(std::memory_order_relaxed) + malformed_.load(std::memory_order_relaxed) != before;
  Budget budget;
  for (std::size_t i = 0; i < answers_.size();) {
    bool finished = tooSlow(answers_[i]);
    if (!finished && budget.left()) worked = progress(answers_[i], store, budget, finished) || worked;
    if (finished) {
      answers_.erase(answers_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  // The next call begins with the next answer, so one that uses the whole budget starves no other.
  if (answers_.size() > 1) std::rotate(answers_.begin(), answers_.begin() + 1, answers_.end());
  return worked;
}

long HistoryServer::pollTimeoutMs(long idleMs) const noexcept {
  if (answers_.empty()) return idleMs;
  const bool anyCanGoOn = std::any_of(answers_.begin(), answers_.end(), [](const Answer& answer) { return !answer.blocked; });
  return anyCanGoOn ? 0 : std::min(idleMs, kBlockedRecheckMs);
}

void HistoryServer::takeRequests(const HistoryStore& store) {
  std::string routingId;
  std::string topic;
  std::string payload;
  for (int i = 0; i < kRequestsPerServe; ++i) {
    bool more = false;
    if (!receiveFrame(socket_, routingId, more)) return;
    // [routing id][topic][payload]: anything else is read to its end and counted.
    bool wellFramed = more && receiveFrame(socket_, topic, more) && more && receiveFrame(socket_, payload, more) && !more;
    while (more && receiveFrame(socket_, payload, more)) wellFramed = false;
    HistoryRequest request;
    if (!wellFramed || topic != kHistoryTopic || decodeHistoryRequest(payload, limits_, request) != DecodeStatus::Ok) {
      malformed_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    requests_.fetch_add(1, std::memory_order_relaxed);
    // A reader that asks again starts over, its queue as full as it was.
    std::optional<std::chrono::steady_clock::time_point> stalledSince;
    std::chrono::steady_clock::time_point givenAt = clock_.now();
    const auto again = std::find_if(answers_.begin(), answers_.end(),
                                    [&](const Answer& answer) { return answer.routingId == routingId; });
    if (again != answers_.end()) {
      stalledSince = again->stalledSince;
      givenAt = again->givenAt;
      answers_.erase(again);
    }
    if (answers_.size() >= kMaxAnswers && !evictStalled()) {
      HistoryEnd busy;
      busy.truncated = store.truncated();
      busy.error = "busy";
      sendEnd(routingId, busy);
      refused_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    Answer& answer = answers_.emplace_back();
    answer.routingId = routingId;
    answer.next = 0;  // from the first message ever kept: of those dropped, the configs kept
    answer.end = store.end();
    answer.filters = std::move(request.filters);
    answer.started = clock_.now();
    answer.windowStart = answer.started;
    answer.stalledSince = stalledSince;
    answer.givenAt = givenAt;
    // What the store dropped may still be in the recordings.
    if (older_ && store.truncated()) {
      answer.fromOlder = true;
      answer.olderBeforeNs = store.completeSinceNs();
    }
  }
}

bool HistoryServer::tooSlow(Answer& answer) {
  const auto now = clock_.now();
  const auto elapsed = now - answer.windowStart;
  bool slow = now - answer.started >= kAnswerDeadline;
  if (elapsed >= kRateWindow) {
    // What the reader took against what the rate asks for the time that passed: a window may be
    // longer than kRateWindow when serve() came late.
    const auto windows = std::chrono::duration<double>(elapsed) / std::chrono::duration<double>(kRateWindow);
    slow = slow || (answer.fullInWindow && static_cast<double>(answer.sentInWindow) < windows * kMinMessagesPerWindow);
    answer.windowStart = now;
    answer.sentInWindow = 0;
    answer.fullInWindow = answer.blocked;
  }
  if (!slow) return false;
  endTooSlow(answer);
  return true;
}

// The answer that has given its reader nothing for longest: stalled (its queue full) or still
// looking for a message its filters match (a reader that left is found out only by a send).
bool HistoryServer::evictStalled() {
  const auto now = clock_.now();
  const auto idleSince = [](const Answer& answer) { return answer.stalledSince.value_or(answer.givenAt); };
  const auto idleLonger = [&](const Answer& a, const Answer& b) { return idleSince(b) < idleSince(a); };
  const auto longest = std::max_element(answers_.begin(), answers_.end(), idleLonger);
  if (longest == answers_.end() || now - idleSince(*longest) < kStallBeforeEviction) return false;
  evicted_.fetch_add(1, std::memory_order_relaxed);
  endTooSlow(*longest);
  answers_.erase(longest);
  return true;
}

void HistoryServer::endTooSlow(const Answer& answer) {
  abandoned_.fetch_add(1, std::memory_order_relaxed);
  // Told when its queue takes it; otherwise its own timeout tells it.
  HistoryEnd end;
  end.messages = answer.sent;
  end.error = "too slow";
  sendEnd(answer.routingId, end);
}

void HistoryServer::markFull(Answer& answer) {
  answer.blocked = true;
  answer.fullInWindow = true;
  if (!answer.stalledSince) answer.stalledSince = clock_.now();
}

bool HistoryServer::offer(Answer& answer, const HistoryStore::Entry& entry, Budget& budget, bool& worked,
                          bool& finished) {
  budget.spend(std::max<std::size_t>(1, answer.filters.size()));
  if (startsWithAny(entry.topic, answer.filters)) {
    const Send sent = sendEntry(answer.routingId, entry);
    if (sent == Send::Gone) {
      abandoned_.fetch_add(1, std::memory_order_relaxed);
      finished = true;
      return false;
    }
    if (sent == Send::Full) {
      markFull(answer);
      return false;  // looked at again when the reader takes more
    }
    answer.stalledSince.reset();
    answer.givenAt = clock_.now();
    ++answer.sent;
    ++answer.sentInWindow;
    --budget.sends;
  }
  scanned_.fetch_add(1, std::memory_order_relaxed);
  worked = true;
  return true;
}

bool HistoryServer::progressOlder(Answer& answer, Budget& budget, bool& worked, bool& finished) {
  while (budget.left() && answer.fromOlder) {
    if (answer.olderNext == answer.olderPiece.size()) {
      answer.olderPiece.clear();
      answer.olderNext = 0;
      bool more = false;
      budget.spend(kArchivePieceCost);
      pieces_.fetch_add(1, std::memory_order_relaxed);
      worked = true;
      try {
        more = older_->next(answer.olderCursor, answer.olderBeforeNs, answer.olderPiece);
      } catch (const std::exception&) {
        more = false;  // a recording that cannot be read: the store's part still goes out
      }
      if (!more) {
        answer.fromOlder = false;
        answer.olderPiece.shrink_to_fit();
        return true;
      }
      continue;
    }
    const HistoryStore::Entry& entry = answer.olderPiece[answer.olderNext];
    const uint64_t sentBefore = answer.sent;
    if (!offer(answer, entry, budget, worked, finished)) return false;
    ++answer.olderNext;
    if (answer.sent != sentBefore) {
      ++answer.olderSent;
      if (!answer.oldestSentNs || entry.firstEventNs < *answer.oldestSentNs) answer.oldestSentNs = entry.firstEventNs;
    }
  }
  return !answer.fromOlder;
}

bool HistoryServer::offerDroppedConfigs(Answer& answer, const HistoryStore& store, Budget& budget, bool& worked,
                                        bool& finished) {
  const uint64_t dropped = std::min(store.begin(), answer.end);
  while (answer.next < dropped) {
    if (!budget.left()) return false;
    const KeptConfigs::Kept* kept = store.configs().firstFrom(answer.next);
    if (kept == nullptr || kept->index >= dropped) break;
    // One kept before the recordings' part ends came in it.
    if (kept->message.keptNs >= answer.olderBeforeNs) {
      if (!offer(answer, kept->message, budget, worked, finished)) return false;
    } else {
      budget.spend(1);
    }
    answer.next = kept->index + 1;
  }
  return true;
}

bool HistoryServer::progress(Answer& answer, const HistoryStore& store, Budget& budget, bool& finished) {
  bool worked = false;
  answer.blocked = false;
  if (answer.fromOlder) {
    if (!progressOlder(answer, budget, worked, finished)) return worked || finished;
    // What the store dropped while the recordings were read is in them too: read on up to
    // what it holds now, then the store from there.
    if (store.completeSinceNs() > answer.olderBeforeNs) {
      older_->resume(answer.olderCursor);
      answer.fromOlder = true;
      answer.olderBeforeNs = store.completeSinceNs();
      return true;
    }
  }
  if (!offerDroppedConfigs(answer, store, budget, worked, finished)) return worked || finished;
  // What else the store dropped meanwhile is gone; the reader sees a gap in its sequence numbers.
  answer.next = std::max(answer.next, store.begin());
  while (budget.left() && answer.next < answer.end) {
    if (!offer(answer, store.at(answer.next), budget, worked, finished)) return worked || finished;
    ++answer.next;
  }
  if (answer.next < answer.end || budget.sends == 0) return worked;
  HistoryEnd end;
  end.messages = answer.sent;
  // With the recordings' part, the history reaches back to what they hold.
  end.truncated = store.truncated() && answer.olderSent == 0;
  if (answer.oldestSentNs) {
    end.oldest = fromWireTime(*answer.oldestSentNs);
  } else if (const auto oldest = oldestEventNs(store, limits_)) {
    end.oldest = fromWireTime(*oldest);
  }
  const Send sent = sendEnd(answer.routingId, end);
  if (sent == Send::Full) {
    markFull(answer);
    return worked;
  }
  (sent == Send::Sent ? answered_ : abandoned_).fetch_add(1, std::memory_order_relaxed);
  finished = true;
  return true;
}

HistoryServer::Send HistoryServer::sendEntry(const std::string& routingId, const HistoryStore::Entry& entry) {
  if (zmq_send(socket_, routingId.data(), routingId.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    return errno == EAGAIN ? Send::Full : Send::Gone;
  }
  // Once the routing frame is taken the others are too.
  zmq_send(socket_, entry.topic.data(), entry.topic.size(), ZMQ_SNDMORE);
  zmq_msg_t payload;
  if (!initSharedMessage(payload, entry.payload)) {
    zmq_send(socket_, "", 0, 0);
    return Send::Sent;
  }
  annotateBeforeSend();
  if (zmq_msg_send(&payload, socket_, 0) < 0) zmq_msg_close(&payload);
  return Send::Sent;
}

HistoryServer::Send HistoryServer::sendEnd(const std::string& routingId, const HistoryEnd& end) {
  if (zmq_send(socket_, routingId.data(), routingId.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    return errno == EAGAIN ? Send::Full : Send::Gone;
  }
  zmq_send(socket_, kHistoryTopic.data(), kHistoryTopic.size(), ZMQ_SNDMORE);
  const std::string payload = encodeHistoryEnd(end);
  annotateBeforeSend();
  zmq_send(socket_, payload.data(), payload.size(), 0);
  return Send::Sent;
}

std::string defaultHistoryEndpoint(const std::string& endpoint) {
  if (endpoint.rfind("tcp://", 0) == 0) {
    const auto colon = endpoint.rfind(':');
    if (colon != std::string::npos && colon > 5) return endpoint.substr(0, colon) + ":*";
    return "tcp://127.0.0.1:*";
  }
  return endpoint + ".history";
}

std::string resolveHistoryEndpoint(const std::string& advertised, const std::string& endpoint, bool bound) {
  constexpr std::string_view tcp = "tcp://";
  if (advertised.rfind(tcp, 0) != 0) return advertised;
  const auto portColon = advertised.rfind(':');
  if (portColon == std::string::npos || portColon < tcp.size()) return advertised;
  const std::string port = advertised.substr(portColon + 1);
  std::string host = advertised.substr(tcp.size(), portColon - tcp.size());
  if (!bound && endpoint.rfind(tcp, 0) == 0) {
    const auto colon = endpoint.rfind(':');
    if (colon != std::string::npos && colon > tcp.size()) host = endpoint.substr(tcp.size(), colon - tcp.size());
  }
  if (host == "*" || host == "0.0.0.0" || host == "[::]" || host == "::") host = "127.0.0.1";
  return std::string(tcp) + host + ":" + port;
}

}  // namespace livemon::transport::detail
