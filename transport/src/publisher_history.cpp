#include "publisher_history.h"

#include <chrono>
#include <new>

#include <livemon/detail/msgpack_reader.h>

#include "curve_security.h"
#include "publisher_setup.h"

namespace livemon::transport::detail {

namespace {

// The timestamp of the first event entry of a batch body ([timestamp, data], ...), in wire time.
int64_t firstEventTime(std::string_view body) {
  try {
    MsgpackReader reader(body);
    reader.arrayHeader("event");
    return reader.int64("timestamp");
  } catch (const DecodeFailure&) {
    return 0;
  }
}

}  // namespace

PublisherHistory::PublisherHistory(std::size_t bytes, void* context, const std::string& endpoint,
                                   const WireLimits& limits, SocketSecurity& security)
    : store_(bytes, limits), server_(context, endpoint, limits, security) {}

void PublisherHistory::keep(std::string_view topic, std::shared_ptr<const std::string> payload, std::string_view body) {
  store_.append(topic, std::move(payload), firstEventTime(body), toWireTime(std::chrono::system_clock::now()));
  counters_.update(store_);
}

bool PublisherHistory::serve() {
  try {
    return server_.serve(store_);
  } catch (const std::bad_alloc&) {
    return false;  // an answer waits for memory; logging goes on
  }
}

void PublisherHistory::copyTo(PublisherStats& stats) const noexcept {
  counters_.copyTo(stats);
  stats.historyRequests = server_.stats().requests;
}

std::unique_ptr<PublisherHistory> makePublisherHistory(const PublisherOptions& options, void* context,
                                                       const std::string& firstEndpoint, const WireLimits& limits,
                                                       SocketSecurity& security) {
  const std::size_t bytes = historyBytesFor(options);
  if (bytes == 0 || !options.connect.empty()) return nullptr;
  const std::string endpoint =
      options.historyEndpoint.empty() ? defaultHistoryEndpoint(firstEndpoint) : options.historyEndpoint;
  return std::make_unique<PublisherHistory>(bytes, context, endpoint, limits, security);
}

}  // namespace livemon::transport::detail
