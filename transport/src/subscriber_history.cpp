// The Subscriber's side of the history protocol (docs/wire-format.md, "History"), after the
// ZeroMQ guide's Clone pattern: subscribe live, hold the live messages back, ask the source for
// its history on a socket of its own, deliver the answer, then release what was held. Sequence
// numbers make the seam exact.
#include "subscriber_history.h"

#include <cerrno>
#include <cstring>

#include <zmq.h>

#include <livemon/transport/error.h>

#include "history_server.h"
#include "subscriber_endpoint.h"
#include "zmq_support.h"

namespace livemon::transport {

namespace {

// Answer messages taken per call, so a long answer shares the poll with the live endpoints.
constexpr std::size_t kAnswerBurst = 256;
// Messages queued from the history socket: each may be a batch of up to a few hundred KiB.
constexpr int kAnswerHighWaterMark = 64;

std::string milliseconds(std::chrono::milliseconds duration) { return std::to_string(duration.count()) + " ms"; }

}  // namespace

std::string_view historyOutcomeName(HistoryOutcome outcome) noexcept {
  switch (outcome) {
    case HistoryOutcome::Received: return "received";
    case HistoryOutcome::Unavailable: return "unavailable";
    case HistoryOutcome::Refused: return "refused";
    case HistoryOutcome::Failed: return "failed";
  }
  return "unknown";
}

namespace detail {

HistoryFetch::HistoryFetch(const SubscriberOptions& options, Clock& clock, void* context,
                           std::shared_ptr<const std::string> endpoint, std::shared_ptr<SocketSecurity> security)
    : options_(options), clock_(clock), context_(context), security_(std::move(security)), since_(clock.now()) {
  status_.endpoint = std::move(endpoint);
}

HistoryFetch::~HistoryFetch() { closeDealer(); }

void HistoryFetch::closeDealer() noexcept {
  if (dealer_ == nullptr) return;
  zmq_close(dealer_);
  dealer_ = nullptr;
}

bool HistoryFetch::holdBack(std::string_view topic, std::string_view payload, bool wellFramed,
                            std::vector<Delivery>& deliveries) {
  if (phase_ == Phase::Releasing || topic == kHeartbeatTopic) return false;
  held_.push_back(Held{std::string(topic), std::string(payload), wellFramed});
  heldBytes_ += topic.size() + payload.size();
  if (heldBytes_ > options_.historyHoldBytes) {
    finish(HistoryOutcome::Failed,
           "live messages outgrew historyHoldBytes (" + std::to_string(options_.historyHoldBytes) +
               " bytes) while the history came",
           deliveries);
  }
  return true;
}

void HistoryFetch::noticeAdvertisement(const WireMessage& message) {
  if (phase_ != Phase::Waiting || message.kind != MessageKind::Heartbeat || message.history.empty()) return;
  // Only endpoints the subscriber connects to fetch a history.
  request(resolveHistoryEndpoint(message.history, *status_.endpoint, false));
}

// Asks `server` for the history. A failure leaves the fetch without a dealer: the answer's
// deadline ends it.
void HistoryFetch::request(const std::string& server) {
  status_.server = server;
  phase_ = Phase::Requesting;
  since_ = clock_.now();
  void* dealer = zmq_socket(context_, ZMQ_DEALER);
  if (dealer == nullptr) return;
  dealer_ = dealer;
  try {
    setIntOption(dealer, ZMQ_LINGER, 0, "ZMQ_LINGER");
    setIntOption(dealer, ZMQ_RCVHWM, kAnswerHighWaterMark, "ZMQ_RCVHWM");
    setInt64Option(dealer, ZMQ_MAXMSGSIZE, maxFrameBytes(options_.limits), "ZMQ_MAXMSGSIZE");
    setIntOption(dealer, ZMQ_RECONNECT_IVL, static_cast<int>(options_.reconnectInterval.count()), "ZMQ_RECONNECT_IVL");
  } catch (const TransportError&) {
    // Defaults then; the answer still comes.
  }
  try {
    security_->prepareConnect(dealer);
  } catch (const std::exception& error) {
    status_.error = std::string("cannot secure the request to ") + server + ": " + error.what();
    closeDealer();
    return;
  }
  HistoryRequest request;
  request.filters = options_.filters;
  const std::string payload = encodeHistoryRequest(request);
  // The request waits in the DEALER's queue until the connection is up.
  if (zmq_connect(dealer, server.c_str()) != 0 ||
      zmq_send(dealer, kHistoryTopic.data(), kHistoryTopic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
      zmq_send(dealer, payload.data(), payload.size(), ZMQ_DONTWAIT) < 0) {
    status_.error = "cannot ask " + server + ": " + zmq_strerror(errno);
    closeDealer();
  }
}

void HistoryFetch::finish(HistoryOutcome outcome, std::string error, std::vector<Delivery>& deliveries) {
  closeDealer();
  phase_ = Phase::Releasing;
  status_.outcome = outcome;
  if (!error.empty()) status_.error = std::move(error);
  deliveries.emplace_back(status_);
}

void HistoryFetch::receiveAnswer(std::vector<Delivery>& deliveries, std::size_t& bytes, std::size_t& taken,
                                 const Handler& handle) {
  const auto now = clock_.now();
  auto withinBounds = [&] {
    return taken < kAnswerBurst && deliveries.size() < kMaxDeliveriesPerPoll && bytes < kMaxPayloadBytesPerPoll;
  };
  while (phase_ == Phase::Requesting && dealer_ != nullptr && withinBounds()) {
    ReceivedFrames frames;
    if (!frames.receive(dealer_)) break;
    ++taken;
    bytes += frames.bytes();
    since_ = now;
    if (frames.topic() == kHistoryTopic) {
      HistoryEnd end;
      std::string error;
      if (!frames.wellFramed() || decodeHistoryEnd(frames.payload(), end, &error) != DecodeStatus::Ok) {
        finish(HistoryOutcome::Failed, "a malformed end of the history: " + error, deliveries);
        break;
      }
      status_.truncated = end.truncated;
      status_.oldest = end.oldest;
      finish(end.error.empty() ? HistoryOutcome::Received : HistoryOutcome::Refused, end.error, deliveries);
      break;
    }
    ++status_.messages;
    const auto delivered = handle(frames.topic(), frames.payload(), frames.wellFramed(), Origin::History);
    status_.events += delivered.value_or(0);
  }
  if (phase_ == Phase::Requesting && (dealer_ == nullptr || now - since_ > options_.historyTimeout)) {
    std::string error = status_.error.empty()
                            ? "the history from " + status_.server + " stopped for " + milliseconds(options_.historyTimeout)
                            : status_.error;
    finish(HistoryOutcome::Failed, std::move(error), deliveries);
  }
}

std::size_t HistoryFetch::service(std::vector<Delivery>& deliveries, std::size_t& bytes, const Handler& handle) {
  std::size_t taken = 0;
  if (phase_ == Phase::Waiting && clock_.now() - since_ > options_.historyWait) {
    finish(HistoryOutcome::Unavailable, "no source advertised a history within " + milliseconds(options_.historyWait),
           deliveries);
  }
  receiveAnswer(deliveries, bytes, taken, handle);
  while (phase_ == Phase::Releasing && !held_.empty() && taken < kAnswerBurst &&
         deliveries.size() < kMaxDeliveriesPerPoll && bytes < kMaxPayloadBytesPerPoll) {
    const Held& held = held_.front();
    ++taken;
    bytes += held.topic.size() + held.payload.size();
    handle(held.topic, held.payload, held.wellFramed, Origin::Released);
    heldBytes_ -= held.topic.size() + held.payload.size();
    held_.pop_front();
  }
  return taken;
}

}  // namespace detail

}  // namespace livemon::transport
