#include <livemon/transport/metrics_exporter.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <compare>
#include <condition_variable>
#include <thread>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <prometheus/check_names.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <livemon/detail/utf8.h>
#include <livemon/transport/error.h>
#include <livemon/value_key.h>

namespace livemon::transport {

namespace {

// Sources are checked for silence at most this often between scrapes.
constexpr std::chrono::seconds kExpiryInterval{1};
// Extra counters are set by the program, not by peers; the cap only catches a runaway caller.
constexpr std::size_t kMaxExtraCounters = 1000;
constexpr std::string_view kOwnPrefix = "livemon_exporter_";
constexpr std::string_view kStatMetric = "livemon_stat";

// A label value Prometheus accepts: valid UTF-8 without control characters (each bad byte
// becomes '?'), at most `maxBytes` bytes, cut at a character boundary.
std::string labelValue(std::string_view text, std::size_t maxBytes) {
  std::string out;
  out.reserve(std::min(text.size(), maxBytes));
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t length = livemon::detail::utf8SequenceLength(text, i);
    const auto lead = static_cast<unsigned char>(text[i]);
    const bool bad = length == 0 || (length == 1 && (lead < 0x20 || lead == 0x7f));
    if (bad) length = 1;
    if (out.size() + (bad ? 1 : length) > maxBytes) break;
    if (bad) out.push_back('?');
    else out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

prometheus::ClientMetric::Label label(std::string name, std::string value) {
  return prometheus::ClientMetric::Label{std::move(name), std::move(value)};
}

prometheus::MetricFamily single(std::string name, std::string help, prometheus::MetricType type, double value) {
  prometheus::MetricFamily family{std::move(name), std::move(help), type, {}};
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) metric.counter.value = value;
  else metric.gauge.value = value;
  family.metric.push_back(std::move(metric));
  return family;
}

}  // namespace

// Thread-safe: every member below `mutex` is guarded by it; Collect() runs on the Exposer's
// HTTP threads and holds it only to copy the values.
struct MetricsExporter::State final : prometheus::Collectable {
  struct SourceKey {
    std::string run;
    std::string host;
    std::string rank;
    uint64_t instance = 0;
    friend auto operator<=>(const SourceKey&, const SourceKey&) = default;
  };
  // Thread-safety: a plain value type, immutable once made, shared by a scrape's copy.
  // The labels of a source's series (id empty unless another source held the same labels).
  struct SourceLabels {
    std::string run;
    std::string host;
    std::string rank;
    std::string id;
  };
  // Thread-safety: a plain value type, immutable once made, shared by a scrape's copy.
  // "<stat>\0<aggregation>" after sanitising: the key of the series in its source.
  struct SeriesName {
    std::string key;
    std::string_view stat() const { return std::string_view(key).substr(0, key.find('\0')); }
    std::string_view aggregation() const { return std::string_view(key).substr(key.find('\0') + 1); }
  };
  // Thread-safety: a plain value type.
  struct Series {
    std::shared_ptr<const SeriesName> name;
    double value = 0;
  };
  // Thread-safety: a plain value type.
  struct Source {
    // Its last message, heartbeat or goodbye: forgetAfter later it is removed.
    std::chrono::steady_clock::time_point lastSeen;
    std::shared_ptr<const SourceLabels> labels;
    // Keyed by a view of the series' own name, so two keys that sanitise alike share one series
    // instead of serving a duplicate.
    std::map<std::string_view, Series, std::less<>> series;
  };
  // Thread-safety: a plain value type.
  struct Counter {
    std::string help;
    double value = 0;
  };
  // Thread-safety: a plain value type. One series as a scrape copied it.
  struct Row {
    std::shared_ptr<const SourceLabels> source;
    std::shared_ptr<const SeriesName> name;
    double value;
  };

  explicit State(MetricsExporterOptions opts) : options(std::move(opts)), clock(options.clock ? *options.clock : systemClock()) {}

  std::vector<prometheus::MetricFamily> Collect() const override;

  SourceKey keyOf(const SourceInfo& source) const {
    return SourceKey{labelValue(source.run, options.maxLabelBytes), labelValue(source.host, options.maxLabelBytes),
                     source.rank ? std::to_string(*source.rank) : std::string(), source.instanceId};
  }
  std::map<SourceKey, Source>::iterator addSourceLocked(const SourceKey& key, std::chrono::steady_clock::time_point now);
  // `forEachField(visit)` calls visit(std::string_view key, std::optional<double> number) for
  // each field of the event named `name`: an owning Event's or a borrowed EventView's.
  template <typename ForEachField>
  void observeLocked(const SourceKey& key, std::string_view name, ForEachField&& forEachField,
                     std::chrono::steady_clock::time_point now);
  void observeLocked(const SourceKey& key, const Event& event, std::chrono::steady_clock::time_point now) {
    observeLocked(key, event.name, [&event](const auto& visit) {
      for (const auto& field : event.data) visit(std::string_view(field.first), numericValue(field.second));
    }, now);
  }
  void touchLocked(const SourceInfo& source, std::chrono::steady_clock::time_point now);
  void expireLocked(std::chrono::steady_clock::time_point now) const;

  const MetricsExporterOptions options;
  Clock& clock;

  mutable std::mutex mutex;
  // Mutable: a scrape forgets expired sources as it copies.
  mutable std::map<SourceKey, Source> sources;
  mutable std::size_t seriesCount = 0;
  mutable MetricsExporterStats counters;
  mutable std::chrono::steady_clock::time_point lastExpiry{};
  std::map<std::string, Counter> extra;
};

// A source whose run, host and rank another live source already serves carries its instance id
// as the label "id", so neither overwrites the other's series.
std::map<MetricsExporter::State::SourceKey, MetricsExporter::State::Source>::iterator
MetricsExporter::State::addSourceLocked(const SourceKey& key, std::chrono::steady_clock::time_point now) {
  const auto sameLabels = sources.lower_bound(SourceKey{key.run, key.host, key.rank, 0});
  const bool taken = sameLabels != sources.end() && sameLabels->first.run == key.run &&
                     sameLabels->first.host == key.host && sameLabels->first.rank == key.rank;
  std::string id;
  if (taken) {
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(key.instance));
    id = text;
  }
  auto labels = std::make_shared<const SourceLabels>(SourceLabels{key.run, key.host, key.rank, std::move(id)});
  return sources.emplace(key, Source{now, std::move(labels), {}}).first;
}

template <typename ForEachField>
void MetricsExporter::State::observeLocked(const SourceKey& key, std::string_view eventName, ForEachField&& forEachField,
                                           std::chrono::steady_clock::time_point now) {
  ++counters.events;
  auto found = sources.find(key);
  if (found != sources.end()) found->second.lastSeen = now;
  if (!isStatEventName(eventName)) return;
  std::string seriesKey;
  forEachField([&](std::string_view field, std::optional<double> number) {
    if (!number || field == kStepKey) return;
    const std::size_t dot = field.rfind('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == field.size()) {
      ++counters.malformedKeys;
      return;
    }
    seriesKey.assign(labelValue(std::string_view(field).substr(0, dot), options.maxLabelBytes)).push_back('\0');
    seriesKey.append(labelValue(std::string_view(field).substr(dot + 1), options.maxLabelBytes));
    if (found != sources.end()) {
      auto series = found->second.series.find(std::string_view(seriesKey));
      if (series != found->second.series.end()) {
        series->second.value = *number;
        ++counters.statValues;
        return;
      }
      if (found->second.series.size() >= options.maxSeriesPerSource) {
        ++counters.seriesDropped;
        ++counters.seriesDroppedSourceCap;
        return;
      }
    }
    if (seriesCount >= options.maxSeries) {
      ++counters.seriesDropped;
      return;
    }
    if (found == sources.end()) found = addSourceLocked(key, now);
    auto name = std::make_shared<const SeriesName>(SeriesName{seriesKey});
    const std::string_view view(name->key);
    found->second.series.emplace(view, Series{std::move(name), *number});
    ++seriesCount;
    ++counters.statValues;
  });
}

// A goodbye counts as a last message: the values stay forgetAfter for the scrapes after it.
void MetricsExporter::State::touchLocked(const SourceInfo& source, std::chrono::steady_clock::time_point now) {
  // Only sources that have series are remembered, so liveness news costs no memory.
  const auto found = sources.find(keyOf(source));
  if (found != sources.end()) found->second.lastSeen = now;
}

void MetricsExporter::State::expireLocked(std::chrono::steady_clock::time_point now) const {
  lastExpiry = now;
  for (auto it = sources.begin(); it != sources.end();) {
    if (now - it->second.lastSeen >= options.forgetAfter) {
      seriesCount -= it->second.series.size();
      ++counters.sourcesForgotten;
      it = sources.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<prometheus::MetricFamily> MetricsExporter::State::Collect() const {
  // Under the lock only the copy: two shared pointers and a double per series.
  std::vector<Row> rows;
  MetricsExporterStats stats;
  std::map<std::string, Counter> extraCopy;
  {
    std::lock_guard lock(mutex);
    expireLocked(clock.now());
    rows.reserve(seriesCount);
    for (const auto& [key, source] : sources) {
      for (const auto& [unused, series] : source.series) rows.push_back(Row{source.labels, series.name, series.value});
    }
    stats = counters;
    stats.series = seriesCount;
    stats.sources = sources.size();
    extraCopy = extra;
  }
  if (options.whileRendering) options.whileRendering();
  std::vector<prometheus::MetricFamily> families;
  prometheus::MetricFamily statFamily{std::string(kStatMetric),
                                      "Latest value of each Stat aggregation, per source (run, host, rank; id "
                                      "when two live sources share those)",
                                      prometheus::MetricType::Gauge,
                                      {}};
  statFamily.metric.reserve(rows.size());
  for (const Row& row : rows) {
    prometheus::ClientMetric metric;
    metric.label.reserve(6);
    metric.label.push_back(label("aggregation", std::string(row.name->aggregation())));
    metric.label.push_back(label("host", row.source->host));
    if (!row.source->id.empty()) metric.label.push_back(label("id", row.source->id));
    metric.label.push_back(label("rank", row.source->rank));
    metric.label.push_back(label("run", row.source->run));
    metric.label.push_back(label("stat", std::string(row.name->stat())));
    metric.gauge.value = row.value;
    statFamily.metric.push_back(std::move(metric));
  }
  families.push_back(std::move(statFamily));
  using prometheus::MetricType;
  const std::string own(kOwnPrefix);
  families.push_back(single(own + "events_total", "Events observed", MetricType::Counter,
                            static_cast<double>(stats.events)));
  families.push_back(single(own + "series", "livemon_stat series served", MetricType::Gauge,
                            static_cast<double>(stats.series)));
  families.push_back(single(own + "sources", "Sources with series", MetricType::Gauge,
                            static_cast<double>(stats.sources)));
  families.push_back(single(own + "series_dropped_total", "New series refused at the series caps",
                            MetricType::Counter, static_cast<double>(stats.seriesDropped)));
  families.push_back(single(own + "series_dropped_source_cap_total", "New series refused at the per-source cap",
                            MetricType::Counter, static_cast<double>(stats.seriesDroppedSourceCap)));
  families.push_back(single(own + "malformed_keys_total", "Stat keys that are not <stat>.<aggregation>",
                            MetricType::Counter, static_cast<double>(stats.malformedKeys)));
  families.push_back(single(own + "sources_forgotten_total", "Sources removed after silence or goodbye",
                            MetricType::Counter, static_cast<double>(stats.sourcesForgotten)));
  for (const auto& [name, counter] : extraCopy) {
    families.push_back(single(name, counter.help, MetricType::Counter, counter.value));
  }
  return families;
}

// Not thread-safe: built by the constructor, then read only.
struct MetricsExporter::Server {
  ~Server();
  std::unique_ptr<prometheus::Exposer> exposer;
  std::string host;  // where the listening socket is reached, for the wake-up below
  uint16_t port = 0;
};

namespace {

// The address a client reaches a server bound to `bindAddress` at: a wildcard bind is reached on
// loopback; brackets of an IPv6 literal go.
std::string reachableHost(std::string address) {
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') address = address.substr(1, address.size() - 2);
  if (address == "0.0.0.0") return "127.0.0.1";
  if (address == "::") return "::1";
  return address;
}

// Opens and closes a TCP connection to host:port, ignoring failure.
void poke(const std::string& host, uint16_t port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  if (found != nullptr) {
    const int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
    if (fd >= 0) {
      connect(fd, found->ai_addr, found->ai_addrlen);
      close(fd);
    }
  }
  freeaddrinfo(found);
}

}  // namespace

// civetweb's accept thread waits up to 2 s in poll() before it sees that it should stop, so after
// a first scrape every stop took 2 s (a job's exit with it). Connections made while it stops
// wake it at once.
MetricsExporter::Server::~Server() {
  if (!exposer) return;
  std::mutex mutex;
  std::condition_variable stopped;
  bool done = false;
  std::thread waker([&] {
    std::unique_lock lock(mutex);
    while (!done) {
      lock.unlock();
      poke(host, port);
      lock.lock();
      stopped.wait_for(lock, std::chrono::milliseconds(20), [&] { return done; });
    }
  });
  exposer.reset();
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  stopped.notify_all();
  waker.join();
}

MetricsExporter::MetricsExporter(Options options) {
  auto bad = [](const std::string& message) { throw std::invalid_argument("MetricsExporterOptions: " + message); };
  if (options.maxSeries < 1) bad("maxSeries must be at least 1");
  if (options.maxSeriesPerSource < 1) bad("maxSeriesPerSource must be at least 1");
  if (options.maxLabelBytes < 16) bad("maxLabelBytes must be at least 16, got " + std::to_string(options.maxLabelBytes));
  if (options.forgetAfter.count() < 1) {
    bad("forgetAfter must be at least 1 ms, got " + std::to_string(options.forgetAfter.count()) + " ms");
  }
  if (options.serve && options.bindAddress.empty()) bad("bindAddress is empty");
  state_ = std::make_shared<State>(std::move(options));
  state_->lastExpiry = state_->clock.now();
  if (!state_->options.serve) return;
  const std::string address = state_->options.bindAddress + ":" + std::to_string(state_->options.port);
  server_ = std::make_unique<Server>();
  try {
    server_->exposer = std::make_unique<prometheus::Exposer>(address, 2);
  } catch (const std::exception& error) {
    throw TransportError(address, error.what(), "cannot serve metrics on " + address + ": " + error.what());
  }
  server_->exposer->RegisterCollectable(state_, "/metrics");
  const std::vector<int> ports = server_->exposer->GetListeningPorts();
  if (!ports.empty()) server_->port = static_cast<uint16_t>(ports.front());
  server_->host = reachableHost(state_->options.bindAddress);
}

// Stops the HTTP threads (server_ goes first) before the state they render.
MetricsExporter::~MetricsExporter() { server_.reset(); }

void MetricsExporter::observe(const SourceInfo& source, const Event& event) {
  State& state = *state_;
  State::SourceKey key = state.keyOf(source);
  std::lock_guard lock(state.mutex);
  const auto now = state.clock.now();
  state.observeLocked(key, event, now);
  if (now - state.lastExpiry >= kExpiryInterval) state.expireLocked(now);
}

void MetricsExporter::observe(const WireMessage& message) {
  State& state = *state_;
  if (message.kind != MessageKind::Events) {
    if (message.kind == MessageKind::Goodbye) sourceGone(message.source);
    else sourceAlive(message.source);
    return;
  }
  State::SourceKey key = state.keyOf(message.source);
  std::lock_guard lock(state.mutex);
  const auto now = state.clock.now();
  for (const Event& event : message.events) state.observeLocked(key, event, now);
  if (now - state.lastExpiry >= kExpiryInterval) state.expireLocked(now);
}

void MetricsExporter::observe(const EventBatchView& batch) {
  State& state = *state_;
  if (batch.kind() != MessageKind::Events) {
    if (batch.kind() == MessageKind::Goodbye) sourceGone(batch.source());
    else sourceAlive(batch.source());
    return;
  }
  State::SourceKey key = state.keyOf(batch.source());
  std::lock_guard lock(state.mutex);
  const auto now = state.clock.now();
  for (const EventView& event : batch) {
    state.observeLocked(key, event.name(), [&event](const auto& visit) {
      for (const FieldView& field : event.fields()) {
        std::optional<double> number;
        if (const double* d = std::get_if<double>(&field.value)) number = *d;
        if (const int64_t* i = std::get_if<int64_t>(&field.value)) number = static_cast<double>(*i);
        visit(field.key, number);
      }
    }, now);
  }
  if (now - state.lastExpiry >= kExpiryInterval) state.expireLocked(now);
}

void MetricsExporter::observe(const ReceivedEvent& event) {
  if (event.source) observe(*event.source, event.event);
}

void MetricsExporter::observe(const SourceChange& change) {
  if (!change.source) return;
  // A stale source is left to forgetAfter: it may only be slow.
  if (change.state == SourceState::Gone) sourceGone(*change.source);
  else if (change.state == SourceState::Alive) sourceAlive(*change.source);
}

void MetricsExporter::sourceAlive(const SourceInfo& source) {
  std::lock_guard lock(state_->mutex);
  state_->touchLocked(source, state_->clock.now());
}

void MetricsExporter::sourceGone(const SourceInfo& source) {
  std::lock_guard lock(state_->mutex);
  state_->touchLocked(source, state_->clock.now());
}

void MetricsExporter::setCounter(const std::string& name, const std::string& help, double value) {
  if (!prometheus::CheckMetricName(name)) {
    throw std::invalid_argument("MetricsExporter::setCounter: \"" + name + "\" is not a Prometheus metric name");
  }
  if (name == kStatMetric || name.starts_with(kOwnPrefix)) {
    throw std::invalid_argument("MetricsExporter::setCounter: \"" + name + "\" is the exporter's own");
  }
  std::lock_guard lock(state_->mutex);
  auto found = state_->extra.find(name);
  if (found == state_->extra.end()) {
    if (state_->extra.size() >= kMaxExtraCounters) {
      throw std::invalid_argument("MetricsExporter::setCounter: more than " + std::to_string(kMaxExtraCounters) +
                                  " counters");
    }
    found = state_->extra.emplace(name, State::Counter{help, value}).first;
  }
  found->second.help = help;
  found->second.value = value;
}

uint16_t MetricsExporter::port() const noexcept { return server_ ? server_->port : 0; }

std::string MetricsExporter::text() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, state_->Collect());
  return out.str();
}

MetricsExporterStats MetricsExporter::stats() const {
  std::lock_guard lock(state_->mutex);
  MetricsExporterStats stats = state_->counters;
  stats.series = state_->seriesCount;
  stats.sources = state_->sources.size();
  return stats;
}

}  // namespace livemon::transport
