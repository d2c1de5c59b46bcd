// The Subscriber's side of the history protocol (docs/wire-format.md, "History"), after the
// ZeroMQ guide's Clone pattern: subscribe live, hold the live messages back, ask the source for
// its history on a socket of its own, deliver the answer, then release what was held. Sequence
// numbers make the seam exact.
#include <cerrno>
#include <cstring>

#include <zmq.h>

#include <livemon/transport/error.h>

#include "history_server.h"
#include "subscriber_state.h"
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

void Subscriber::State::startHistory(Socket& socket) {
  socket.history = std::make_unique<HistoryFetch>();
  socket.history->since = clock.now();
  socket.history->status.endpoint = socket.endpoint;
}

void Subscriber::State::closeHistory(HistoryFetch& fetch) {
  if (fetch.dealer == nullptr) return;
  zmq_close(fetch.dealer);
  fetch.dealer = nullptr;
}

bool Subscriber::State::holdBack(Socket& socket, std::string_view topic, std::string_view payload, bool wellFramed,
                                 std::vector<detail::Delivery>& deliveries) {
  HistoryFetch& fetch = *socket.history;
  // Heartbeats go through at once: they carry the advertisement, and no events.
  if (fetch.phase == HistoryFetch::Phase::Releasing || topic == kHeartbeatTopic) return false;
  fetch.held.push_back(Held{std::string(topic), std::string(payload), wellFramed});
  fetch.heldBytes += topic.size() + payload.size();
  if (fetch.heldBytes > options.historyHoldBytes) {
    finishHistory(socket, HistoryOutcome::Failed,
                  "live messages outgrew historyHoldBytes (" + std::to_string(options.historyHoldBytes) +
                      " bytes) while the history came",
                  deliveries);
  }
  return true;
}

void Subscriber::State::noticeAdvertisement(Socket& socket) {
  HistoryFetch& fetch = *socket.history;
  if (fetch.phase != HistoryFetch::Phase::Waiting || message.kind != MessageKind::Heartbeat || message.history.empty()) return;
  const std::string server =
      detail::resolveHistoryEndpoint(message.history, *socket.endpoint, socket.mode == EndpointMode::Bind);
  fetch.status.server = server;
  fetch.phase = HistoryFetch::Phase::Requesting;
  fetch.since = clock.now();
  void* dealer = zmq_socket(context.get(), ZMQ_DEALER);
  if (dealer == nullptr) return;  // the answer's deadline ends the fetch
  fetch.dealer = dealer;
  try {
    detail::setIntOption(dealer, ZMQ_LINGER, 0, "ZMQ_LINGER");
    detail::setIntOption(dealer, ZMQ_RCVHWM, kAnswerHighWaterMark, "ZMQ_RCVHWM");
    detail::setInt64Option(dealer, ZMQ_MAXMSGSIZE, detail::maxFrameBytes(options.limits), "ZMQ_MAXMSGSIZE");
    detail::setIntOption(dealer, ZMQ_RECONNECT_IVL, static_cast<int>(options.reconnectInterval.count()),
                         "ZMQ_RECONNECT_IVL");
  } catch (const TransportError&) {
    // Defaults then; the answer still comes.
  }
  try {
    socket.security->prepareConnect(dealer);
  } catch (const std::exception& error) {
    fetch.status.error = std::string("cannot secure the request to ") + server + ": " + error.what();
    closeHistory(fetch);  // the answer's deadline ends the fetch
    return;
  }
  HistoryRequest request;
  request.filters = options.filters;
  const std::string payload = encodeHistoryRequest(request);
  // The request waits in the DEALER's queue until the connection is up.
  if (zmq_connect(dealer, server.c_str()) != 0 ||
      zmq_send(dealer, kHistoryTopic.data(), kHistoryTopic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
      zmq_send(dealer, payload.data(), payload.size(), ZMQ_DONTWAIT) < 0) {
    fetch.status.error = "cannot ask " + server + ": " + zmq_strerror(errno);
    closeHistory(fetch);  // the answer's deadline ends the fetch
  }
}

void Subscriber::State::finishHistory(Socket& socket, HistoryOutcome outcome, std::string error,
                                      std::vector<detail::Delivery>& deliveries) {
  HistoryFetch& fetch = *socket.history;
  closeHistory(fetch);
  fetch.phase = HistoryFetch::Phase::Releasing;
  fetch.status.outcome = outcome;
  if (!error.empty()) fetch.status.error = std::move(error);
  deliveries.emplace_back(fetch.status);
}

std::size_t Subscriber::State::serviceHistory(Socket& socket, std::vector<detail::Delivery>& deliveries,
                                              std::size_t& bytes) {
  HistoryFetch& fetch = *socket.history;
  std::size_t taken = 0;
  auto withinBounds = [&] {
    return taken < kAnswerBurst && deliveries.size() < detail::kMaxDeliveriesPerPoll &&
           bytes < detail::kMaxPayloadBytesPerPoll;
  };
  const auto now = clock.now();
  if (fetch.phase == HistoryFetch::Phase::Waiting && now - fetch.since > options.historyWait) {
    finishHistory(socket, HistoryOutcome::Unavailable,
                  "no source advertised a history within " + milliseconds(options.historyWait), deliveries);
  }
  while (fetch.phase == HistoryFetch::Phase::Requesting && fetch.dealer != nullptr && withinBounds()) {
    detail::ReceivedFrames frames;
    if (!frames.receive(fetch.dealer)) break;
    ++taken;
    bytes += frames.bytes();
    fetch.since = now;
    if (frames.topic() == kHistoryTopic) {
      HistoryEnd end;
      std::string error;
      if (!frames.wellFramed() || decodeHistoryEnd(frames.payload(), end, &error) != DecodeStatus::Ok) {
        finishHistory(socket, HistoryOutcome::Failed, "a malformed end of the history: " + error, deliveries);
        break;
      }
      fetch.status.truncated = end.truncated;
      fetch.status.oldest = end.oldest;
      finishHistory(socket, end.error.empty() ? HistoryOutcome::Received : HistoryOutcome::Refused, end.error,
                    deliveries);
      break;
    }
    ++fetch.status.messages;
    const auto delivered = handle(socket.endpoint, frames.topic(), frames.payload(), frames.wellFramed(), deliveries,
                                  Origin::History);
    fetch.status.events += delivered.value_or(0);
  }
  if (fetch.phase == HistoryFetch::Phase::Requesting && (fetch.dealer == nullptr || now - fetch.since > options.historyTimeout)) {
    std::string error = fetch.status.error.empty()
                            ? "the history from " + fetch.status.server + " stopped for " + milliseconds(options.historyTimeout)
                            : fetch.status.error;
    finishHistory(socket, HistoryOutcome::Failed, std::move(error), deliveries);
  }
  while (fetch.phase == HistoryFetch::Phase::Releasing && !fetch.held.empty() && withinBounds()) {
    const Held& held = fetch.held.front();
    ++taken;
    bytes += held.topic.size() + held.payload.size();
    handle(socket.endpoint, held.topic, held.payload, held.wellFramed, deliveries, Origin::Released);
    fetch.heldBytes -= held.topic.size() + held.payload.size();
    fetch.held.pop_front();
  }
  if (fetch.phase == HistoryFetch::Phase::Releasing && fetch.held.empty()) socket.history.reset();
  return taken;
}

}  // namespace livemon::transport
