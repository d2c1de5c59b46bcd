#pragma once

#include <memory>

#include <livemon/system_stats.h>
#include <livemon/transport/publisher.h>
#include <livemon/transport/publisher_metrics.h>
#include <livemon/transport/wire_format.h>

// What a Publisher takes from its options and the environment when it is made: its endpoints'
// defaults, its identity, its history's size, its metrics sink and the system Stats.
namespace livemon::transport::detail {

// The publisher's identity: options first, then the environment (RANK, WORLD_SIZE, LOCAL_RANK),
// and a fresh instance id and start time. Throws std::invalid_argument naming the values when
// identityBroken() would make readers refuse every message.
SourceInfo makeIdentity(const PublisherOptions& options);

// Throws std::invalid_argument naming the option for a bad PublisherOptions.
void validatePublisherOptions(const PublisherOptions& options);

// options.historyBytes, else LIVEMON_HISTORY_MB (MiB), else the default. Throws
// std::invalid_argument for a bad LIVEMON_HISTORY_MB.
std::size_t historyBytesFor(const PublisherOptions& options);

// The publisher's metrics sink, from livemon::exporters when the program links it (see
// livemon_exporters_publisher_metrics), null for off. Without livemon::exporters: throws
// std::invalid_argument for an explicit metricsPort, and says once on stderr that
// LIVEMON_METRICS_PORT is ignored. A port that cannot be served (another process holds it) must
// not stop the job: null, `unavailable` set, and a warning on stderr, once per address.
// Thread-safe.
std::shared_ptr<PublisherMetrics> publisherMetricsFor(const PublisherOptions& options, bool& unavailable);

// A share of the process's system Stats (enableSystemStats) when `options` or LIVEMON_SYSTEM_STATS
// ask for them (see PublisherOptions::systemStats), else an empty handle. Throws
// std::invalid_argument for a LIVEMON_SYSTEM_STATS other than 0, 1 or empty.
SystemStatsHandle systemStatsFor(const PublisherOptions& options);

}  // namespace livemon::transport::detail
