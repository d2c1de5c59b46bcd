#include "publisher_setup.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <optional>
#include <set>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include <livemon/detail/wire_codec.h>
#include <livemon/transport/error.h>

#include "peer_guard.h"

// Weak: defined only in a program that links livemon::exporters.
#pragma weak livemon_exporters_publisher_metrics

namespace livemon::transport::detail {

namespace {

std::string hostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown";
  return buffer;
}

// The integer in environment variable `name`, or nothing when it is unset or not an integer.
std::optional<int64_t> environmentInteger(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return std::nullopt;
  return value;
}

// The time the process first needed a default run name, as "20261127-224501" in local time: every
// Publisher of the process (made then or later) names the same run.
const std::string& processRunTime() {
  static const std::string text = [] {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm local{};
    localtime_r(&now, &local);
    char buffer[32] = {};
    std::strftime(buffer, sizeof(buffer), "%Y%m%d-%H%M%S", &local);
    return std::string(buffer);
  }();
  return text;
}

// The job id its launcher gives every rank alike: torchrun's rendezvous id (not its default
// "none"), else Slurm's job id; empty when neither is set. Cut to 16 characters, as torchrun's
// --standalone makes it a UUID.
std::string launcherJobId() {
  for (const char* name : {"TORCHELASTIC_RUN_ID", "SLURM_JOB_ID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0' && std::string_view(value) != "none") return std::string(value).substr(0, 16);
  }
  return {};
}

}  // namespace

SourceInfo makeIdentity(const PublisherOptions& options) {
  SourceInfo identity;
  identity.host = hostName();
  identity.pid = getpid();
  identity.rank = options.rank ? options.rank : environmentInteger("RANK");
  identity.worldSize = options.worldSize ? options.worldSize : environmentInteger("WORLD_SIZE");
  identity.localRank = options.localRank ? options.localRank : environmentInteger("LOCAL_RANK");
  identity.run = options.runName.empty() ? defaultRunName({}, identity.rank) : options.runName;
  if (const char* broken = identityBroken(identity)) {
    auto text = [](const std::optional<int64_t>& value) { return value ? std::to_string(*value) : "unset"; };
    throw std::invalid_argument("rank " + text(identity.rank) + ", worldSize " + text(identity.worldSize) +
                                ", localRank " + text(identity.localRank) +
                                " (from PublisherOptions, else RANK, WORLD_SIZE, LOCAL_RANK): " + broken);
  }
  std::random_device random;
  while (identity.instanceId == 0) {
    identity.instanceId = (static_cast<uint64_t>(random()) << 32) ^ random();
  }
  identity.startTime = std::chrono::system_clock::now();
  const WireLimits limits;
  if (identity.run.size() > limits.maxIdentityStringBytes) identity.run.resize(limits.maxIdentityStringBytes);
  return identity;
}

// A port that cannot be served is said once per address on stderr.
std::shared_ptr<PublisherMetrics> publisherMetricsFor(const PublisherOptions& options, bool& unavailable) {
  unavailable = false;
  // The address is null unless livemon::exporters is linked (its target has the linker take it).
  if (livemon_exporters_publisher_metrics != nullptr) {
    std::shared_ptr<PublisherMetrics> metrics;
    try {
      livemon_exporters_publisher_metrics(options, metrics);
    } catch (const TransportError& error) {
      // Anyone on the node may hold the port (by accident or not): the job goes on unwatched by
      // Prometheus rather than not at all.
      unavailable = true;
      static std::mutex mutex;
      static std::set<std::string>* const warned = new std::set<std::string>();  // read until exit
      std::lock_guard lock(mutex);
      if (warned->size() < 64 && warned->insert(error.endpoint()).second) {
        std::fprintf(stderr, "livemon: %s; this job runs without its Prometheus metrics\n", error.what());
      }
      return nullptr;
    }
    return metrics;
  }
  if (options.metricsPort != 0) {
    throw std::invalid_argument("PublisherOptions: metricsPort " + std::to_string(options.metricsPort) +
                                ": this program serves no metrics (link it with livemon::exporters)");
  }
  const char* port = std::getenv("LIVEMON_METRICS_PORT");
  static std::atomic<bool> told{false};
  if (port != nullptr && *port != '\0' && std::string_view(port) != "0" && !told.exchange(true)) {
    std::fprintf(stderr, "livemon: LIVEMON_METRICS_PORT is set, but this program serves no metrics "
                         "(it does not link livemon::exporters)\n");
  }
  return nullptr;
}

SystemStatsHandle systemStatsFor(const PublisherOptions& options) {
  const bool requested = systemStatsRequested();  // checks LIVEMON_SYSTEM_STATS whatever the option says
  if (!options.systemStats && !requested) return {};
  if (!options.handleLoggedEvents) return {};  // its Stats would never reach this publisher
  return enableSystemStats(options.statWindow);
}

void validatePublisherOptions(const PublisherOptions& options) {
  auto bad = [](const std::string& message) { throw std::invalid_argument("PublisherOptions: " + message); };
  if (options.bind.empty() && options.connect.empty()) bad("no endpoint: bind and connect are both empty");
  for (const auto* list : {&options.bind, &options.connect}) {
    for (const std::string& endpoint : *list) {
      if (endpoint.empty()) bad("an endpoint is empty");
    }
  }
  if (options.queueCapacityBytes < 1024) {
    bad("queueCapacityBytes must be at least 1024, got " + std::to_string(options.queueCapacityBytes));
  }
  if (options.sendHighWaterMark < 0) bad("sendHighWaterMark must not be negative, got " + std::to_string(options.sendHighWaterMark));
  if (options.linger.count() < 0) bad("linger must not be negative, got " + std::to_string(options.linger.count()) + " ms");
  if (options.heartbeatInterval.count() < 1 || options.heartbeatInterval.count() > 1000) {
    bad("heartbeatInterval must be 1..1000 ms, got " + std::to_string(options.heartbeatInterval.count()) + " ms");
  }
  const WireLimits limits;
  if (options.maxBatchEvents < 1 || options.maxBatchEvents > limits.maxEventsPerMessage) {
    bad("maxBatchEvents must be 1.." + std::to_string(limits.maxEventsPerMessage) + ", got " +
        std::to_string(options.maxBatchEvents));
  }
  const std::size_t maxBytes = limits.maxPayloadBytes - kPayloadHeaderReserve;
  if (options.maxBatchBytes < 1024 || options.maxBatchBytes > maxBytes) {
    bad("maxBatchBytes must be 1024.." + std::to_string(maxBytes) + ", got " + std::to_string(options.maxBatchBytes));
  }
  if (!options.statName.empty() && options.statWindow.count() < 1) {
    bad("statWindow must be at least 1 ms, got " + std::to_string(options.statWindow.count()) + " ms");
  }
  checkSubscriberLimits(
      {options.maxSubscriberBytes, options.maxTotalSubscriberBytes, options.maxSubscriberConnections},
      "PublisherOptions");
}

// options.historyBytes, else LIVEMON_HISTORY_MB (MiB), else the default.
std::size_t historyBytesFor(const PublisherOptions& options) {
  if (options.historyBytes) return *options.historyBytes;
  const std::string variable(kHistoryEnvironmentVariable);
  const char* text = std::getenv(variable.c_str());
  if (text == nullptr || *text == '\0') return kDefaultHistoryBytes;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  constexpr long long kMaxMiB = 1024 * 1024;  // 1 TiB
  if (errno != 0 || *end != '\0' || value < 0 || value > kMaxMiB) {
    throw std::invalid_argument(variable + " must be a size in MiB, 0.." + std::to_string(kMaxMiB) + " (0 turns history off), got \"" +
                                text + "\"");
  }
  return static_cast<std::size_t>(value) * 1024 * 1024;
}

}  // namespace livemon::transport::detail

namespace livemon::transport {

std::string defaultRunName(std::string_view program, std::optional<int64_t> rank) {
  const char* named = std::getenv(std::string(kRunEnvironmentVariable).c_str());
  if (named != nullptr && *named != '\0') return named;
  const std::string name(program.empty() ? std::string_view(program_invocation_short_name) : program);
  if (!rank && !detail::environmentInteger("RANK")) return name + "-" + detail::processRunTime();
  // The ranks of a job start apart, each at its own second: they share the launcher's id.
  const std::string job = detail::launcherJobId();
  return job.empty() ? name : name + "-" + job;
}

std::vector<std::string> defaultPublisherConnect() {
  std::vector<std::string> endpoints;
  const char* value = std::getenv(std::string(kConnectEnvironmentVariable).c_str());
  if (value == nullptr) return endpoints;
  std::string_view rest(value);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view endpoint = rest.substr(0, comma);
    while (!endpoint.empty() && endpoint.front() == ' ') endpoint.remove_prefix(1);
    while (!endpoint.empty() && endpoint.back() == ' ') endpoint.remove_suffix(1);
    if (!endpoint.empty()) endpoints.emplace_back(endpoint);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return endpoints;
}

std::vector<std::string> defaultPublisherBind() {
  if (!defaultPublisherConnect().empty()) return {};
  return {std::string(kDefaultEndpoint)};
}

}  // namespace livemon::transport
