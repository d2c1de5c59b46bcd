#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <livemon/transport/publisher.h>
#include <livemon/transport/wire_format.h>

#include "history_server.h"
#include "history_store.h"

// Only transport/src (and tests) include this header.
namespace livemon::transport::detail {

class SocketSecurity;

// Not thread-safe: one owner at a time (a Publisher's I/O thread, once the Publisher is made);
// copyTo() may be called from any thread.
//
// The history a Publisher serves to subscribers that join late (PublisherOptions::historyBytes):
// the event messages it sent, the newest within its bytes (a HistoryStore), and the socket that
// answers history requests with them (a HistoryServer, docs/wire-format.md "History"). The
// Publisher keeps each message it sends with keep() and answers requests with serve(), both from
// its I/O thread, never from the logging threads.
class PublisherHistory {
 public:
  // Holds `bytes` of messages and binds the history socket at `endpoint` ("tcp://host:*" picks a
  // free port), secured as the publisher's sockets are by `security` (which must outlive it).
  // Throws TransportError naming the endpoint.
  PublisherHistory(std::size_t bytes, void* context, const std::string& endpoint, const WireLimits& limits,
                   SocketSecurity& security);

  // Keeps a message as sent: `payload` (header, event entries, trailer) is shared, so ZeroMQ may
  // still be sending it. `body`, its event entries, tells the message's time (its first event's).
  void keep(std::string_view topic, std::shared_ptr<const std::string> payload, std::string_view body);
  // Takes waiting requests and sends what the readers take now; true when it did anything. Lack
  // of memory leaves an answer waiting (false), never the publisher stopped.
  bool serve();

  // As bound, with the port a "*" became; the heartbeats advertise it.
  const std::string& endpoint() const noexcept { return server_.endpoint(); }
  // The socket to wait on for requests.
  void* socket() const noexcept { return server_.socket(); }
  // An answer is in progress: call serve() again soon.
  bool answering() const noexcept { return server_.answering(); }
  // The history counters of PublisherStats (held, dropped, requests).
  void copyTo(PublisherStats& stats) const noexcept;

 private:
  HistoryStore store_;
  HistoryServer server_;
  HistoryCounters counters_;
};

// The history of a Publisher made with `options`, bound beside `firstEndpoint` (its first bound
// or connected endpoint) unless options.historyEndpoint says where; null when it keeps none:
// history off (historyBytesFor() is 0) or a publisher that connects (its relay keeps history).
std::unique_ptr<PublisherHistory> makePublisherHistory(const PublisherOptions& options, void* context,
                                                       const std::string& firstEndpoint, const WireLimits& limits,
                                                       SocketSecurity& security);

}  // namespace livemon::transport::detail
