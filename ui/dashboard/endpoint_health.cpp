#include <livemon/ui/dashboard/endpoint_health.h>

namespace livemon::ui {

std::string_view endpointStateName(EndpointState state) noexcept {
  switch (state) {
    case EndpointState::Connected:
      return "connected";
    case EndpointState::Silent:
      return "silent";
    case EndpointState::Finished:
      return "finished";
    case EndpointState::Waiting:
      return "waiting";
    case EndpointState::Refused:
      return "refused";
    case EndpointState::Unreachable:
      break;
  }
  return "unreachable";
}

bool endpointStateIsTrouble(EndpointState state) noexcept {
  return state == EndpointState::Silent || state == EndpointState::Unreachable || state == EndpointState::Refused;
}

namespace {

// Nothing heard yet: is anything there? ZeroMQ reports live tcp:// and ipc:// connections of a
// connecting endpoint only; a bound or inproc:// one can only wait.
EndpointState nothingHeardState(const transport::EndpointStatus& endpoint, const std::string& name) {
  if (!endpoint.handshakeError.empty()) return EndpointState::Refused;
  if (endpoint.connections > 0 || endpoint.mode == transport::EndpointMode::Bind || name.starts_with("inproc://")) {
    return EndpointState::Waiting;
  }
  return EndpointState::Unreachable;
}

constexpr std::string_view kRelayRun = "relay";
constexpr std::string_view kRelayStatPrefix = "livemon.relay.";

}  // namespace

bool isRelaySource(const transport::SourceStatus& source) {
  if (source.source && source.source->run == kRelayRun) return true;
  // Topics are event names, sorted: the first at or after the prefix tells.
  const auto next = source.lastSequence.lower_bound(std::string(kRelayStatPrefix));
  return next != source.lastSequence.end() && next->first.starts_with(kRelayStatPrefix);
}

std::set<std::string> relayEndpoints(const std::vector<transport::SourceStatus>& sources) {
  std::set<std::string> result;
  for (const transport::SourceStatus& source : sources) {
    if (source.endpoint && isRelaySource(source)) result.insert(*source.endpoint);
  }
  return result;
}

EndpointHealth summarizeEndpoint(const transport::EndpointStatus& endpoint,
                                 const std::vector<transport::SourceStatus>& sources) {
  EndpointHealth health;
  health.endpoint = endpoint.endpoint ? *endpoint.endpoint : std::string();
  health.events = endpoint.events;
  health.protocolErrors = endpoint.protocolErrors;
  health.handshakeError = endpoint.handshakeError;
  bool anyAlive = false;
  bool anyStale = false;
  bool anyGone = false;
  for (const transport::SourceStatus& source : sources) {
    if (!source.endpoint || *source.endpoint != health.endpoint) continue;
    ++health.sources;
    anyAlive = anyAlive || source.state == transport::SourceState::Alive;
    anyStale = anyStale || source.state == transport::SourceState::Stale;
    anyGone = anyGone || source.state == transport::SourceState::Gone;
    health.gaps += source.gaps;
    health.missedEvents += source.missedEvents;
    if (source.lastCounters) health.publisherDrops += source.lastCounters->dropped;
    if (isRelaySource(source)) {
      ++health.relays;
    } else if (source.state == transport::SourceState::Stale) {
      ++health.staleSources;
      if (health.staleNames.size() < kMaxNamedStaleSources && source.source) {
        health.staleNames.push_back(transport::describe(*source.source));
      }
    }
  }
  // One publisher still running wins; then one that vanished without a goodbye is the news.
  health.state = anyAlive   ? EndpointState::Connected
                 : anyStale ? EndpointState::Silent
                 : anyGone  ? EndpointState::Finished
                            : nothingHeardState(endpoint, health.endpoint);
  return health;
}

std::vector<EndpointHealth> EndpointHealthTracker::update(const std::vector<transport::EndpointStatus>& endpoints,
                                                          const std::vector<transport::SourceStatus>& sources,
                                                          std::chrono::steady_clock::time_point now) {
  std::vector<EndpointHealth> result;
  std::map<std::string, std::deque<Sample>> current;
  for (const transport::EndpointStatus& endpoint : endpoints) {
    EndpointHealth health = summarizeEndpoint(endpoint, sources);
    std::deque<Sample> history;
    if (auto found = history_.find(health.endpoint); found != history_.end()) history.swap(found->second);
    // Keep the newest sample at least `window` old, to measure from.
    while (history.size() > 1 && now - history[1].at >= window_) history.pop_front();
    if (!history.empty() && health.events >= history.front().events) {
      const double seconds = std::chrono::duration<double>(now - history.front().at).count();
      if (seconds > 0.0) health.eventsPerSecond = static_cast<double>(health.events - history.front().events) / seconds;
    }
    history.push_back(Sample{health.events, now});
    current[health.endpoint] = std::move(history);
    result.push_back(std::move(health));
  }
  history_.swap(current);
  return result;
}

}  // namespace livemon::ui
