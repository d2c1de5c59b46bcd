#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/transport/subscriber.h>

namespace livemon::ui {

// A finished run and a broken one read differently: only Silent and Unreachable are trouble.
enum class EndpointState {
  Connected,    // a publisher on it was heard within the stale timeout
  Silent,       // a publisher heard on it went quiet without saying goodbye (crashed, hung, cut off)
  Finished,     // every publisher heard on it said goodbye: the run ended
  Waiting,      // nothing heard yet, but a peer is connected, or it is bound or inproc:// (listening)
  Unreachable,  // nothing heard and nothing connected: no publisher there, or the host is down
  Refused,      // nothing heard, and the security handshake failed (EndpointStatus::handshakeError)
};

// "connected" "silent" "finished" "waiting" "unreachable" "refused"
std::string_view endpointStateName(EndpointState state) noexcept;

// Whether the state asks the user to look: Silent, Unreachable and Refused.
bool endpointStateIsTrouble(EndpointState state) noexcept;

// An endpoint with more sources than this, or with a relay on it, reads as one summary
// ("relay tcp://head:5555 · 256 sources · 3 stale"): a line per rank would not fit.
inline constexpr std::size_t kSummarizeAboveSources = 4;
// How many stale sources a summary names (its tooltip); the rest are only counted.
inline constexpr std::size_t kMaxNamedStaleSources = 8;

// A relay reports itself as a source: its run is "relay" (RelayOptions::runName's default), or it
// sends the livemon.relay.* Stats (a relay given another run name).
bool isRelaySource(const transport::SourceStatus& source);

// The endpoints on which a relay was last heard: relays the dashboard connects to, and the
// relays they chain.
std::set<std::string> relayEndpoints(const std::vector<transport::SourceStatus>& sources);

// Thread-safety: a plain value type.
// One endpoint's line in the status bar.
struct EndpointHealth {
  std::string endpoint;
  EndpointState state = EndpointState::Unreachable;
  std::size_t sources = 0;        // publishers last heard on it
  double eventsPerSecond = 0.0;   // over the last few seconds
  uint64_t events = 0;            // in total
  uint64_t gaps = 0;              // times events went missing in transit
  uint64_t missedEvents = 0;      // events that went missing in transit
  uint64_t publisherDrops = 0;    // events its publishers reported dropping (queue full, too large)
  uint64_t protocolErrors = 0;    // connections remade after a peer broke the protocol
  std::string handshakeError;     // why the latest security handshake failed (EndpointStatus)
  std::size_t relays = 0;         // of `sources`, relays reporting themselves (isRelaySource)
  std::size_t staleSources = 0;   // of the others, not heard from within their stale window
  std::vector<std::string> staleNames;  // the first kMaxNamedStaleSources of them, described
  // How its history came (describeHistory: "history from 10:41:07 (older not kept)"); empty when
  // none was fetched. Filled by the Dashboard, not by the tracker.
  std::string history;

  // The sources that are not relays: the ranks behind a relay.
  std::size_t publishers() const noexcept { return sources - relays; }
  // One summary line rather than the plain one: a relay, or many sources.
  bool summarized() const noexcept { return relays > 0 || sources > kSummarizeAboveSources; }
};

// Not thread-safe: one owner at a time (the GUI's status timer).
// Summarizes every endpoint from the subscriber's status, computing events/s over the last
// `window` of calls: Stat windows arrive in bursts (once a second, at the same moment), so a rate
// over one second alone would flicker between 0 and twice the truth.
class EndpointHealthTracker {
 public:
  explicit EndpointHealthTracker(std::chrono::milliseconds window = std::chrono::seconds(5)) : window_(window) {}

  std::vector<EndpointHealth> update(const std::vector<transport::EndpointStatus>& endpoints,
                                     const std::vector<transport::SourceStatus>& sources,
                                     std::chrono::steady_clock::time_point now);

 private:
  struct Sample {
    uint64_t events = 0;
    std::chrono::steady_clock::time_point at;
  };
  std::chrono::milliseconds window_;
  std::map<std::string, std::deque<Sample>> history_;
};

// One endpoint's health from its status and all sources' (those last heard on it count).
// `eventsPerSecond` is left 0; the tracker fills it in.
EndpointHealth summarizeEndpoint(const transport::EndpointStatus& endpoint,
                                 const std::vector<transport::SourceStatus>& sources);

}  // namespace livemon::ui
