#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

#include "curve_security.h"
#include "source_table.h"

// The Subscriber's side of the history protocol. Only transport/src includes this header.
namespace livemon::transport::detail {

// Not thread-safe: one owner at a time (the polling thread, under the Subscriber's socket lock).
//
// One connected endpoint's history while it is fetched (SubscriberOptions::history), after the
// ZeroMQ guide's Clone pattern: it waits up to historyWait for a heartbeat that advertises a
// history, asks for it on a DEALER socket of its own, hands the answer's messages on as they come
// (until historyTimeout passes without one), then releases the live messages held back meanwhile
// (up to historyHoldBytes). Sequence numbers (SourceTable) make the seam exact. The outcome is one
// HistoryStatus delivery.
class HistoryFetch {
 public:
  // Decodes and delivers one message of the answer, or one released: the events delivered, or
  // nothing when it was rejected.
  using Handler = std::function<std::optional<std::size_t>(std::string_view topic, std::string_view payload,
                                                           bool wellFramed, Origin origin)>;

  // Starts waiting for an advertisement on `endpoint`. `options`, `clock` and `context` must
  // outlive the fetch; `security` secures the request as it does the endpoint.
  HistoryFetch(const SubscriberOptions& options, Clock& clock, void* context,
               std::shared_ptr<const std::string> endpoint, std::shared_ptr<SocketSecurity> security);
  ~HistoryFetch();
  HistoryFetch(const HistoryFetch&) = delete;
  HistoryFetch& operator=(const HistoryFetch&) = delete;

  // The socket the answer comes on, while it is awaited; null otherwise.
  void* answerSocket() const noexcept { return dealer_; }
  // The outcome is known and the live messages held back are being released: the endpoint's own
  // live messages wait until they are out.
  bool releasing() const noexcept { return phase_ == Phase::Releasing; }
  // Released everything: the fetch may be dropped.
  bool finished() const noexcept { return phase_ == Phase::Releasing && held_.empty(); }

  // A live message on the endpoint: true when it was held back (service() releases it later).
  // Heartbeats pass at once: they carry the advertisement, and no events.
  bool holdBack(std::string_view topic, std::string_view payload, bool wellFramed, std::vector<Delivery>& deliveries);
  // After a live message was decoded as `message`: an advertisement starts the request.
  void noticeAdvertisement(const WireMessage& message);
  // Checks the deadlines and takes what came: the answer's messages, then those released, each
  // through `handle`. Stops within the poll's bounds (`bytes` so far, the deliveries). Returns the
  // messages taken.
  std::size_t service(std::vector<Delivery>& deliveries, std::size_t& bytes, const Handler& handle);

 private:
  enum class Phase { Waiting, Requesting, Releasing };
  // A live message held back while the history comes.
  struct Held {
    std::string topic;
    std::string payload;
    bool wellFramed = true;
  };

  void request(const std::string& server);
  void receiveAnswer(std::vector<Delivery>& deliveries, std::size_t& bytes, std::size_t& taken, const Handler& handle);
  void finish(HistoryOutcome outcome, std::string error, std::vector<Delivery>& deliveries);
  void closeDealer() noexcept;

  const SubscriberOptions& options_;
  Clock& clock_;
  void* context_;
  std::shared_ptr<SocketSecurity> security_;
  Phase phase_ = Phase::Waiting;
  std::chrono::steady_clock::time_point since_;  // Clock::now() when the phase began or the answer last moved
  void* dealer_ = nullptr;                       // DEALER connected to the history socket
  std::deque<Held> held_;
  std::size_t heldBytes_ = 0;
  HistoryStatus status_;
};

}  // namespace livemon::transport::detail
