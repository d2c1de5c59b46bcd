#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <livemon/clock.h>
#include <livemon/event.h>
#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/publisher_metrics.h>
#include <livemon/transport/subscriber.h>
#include <livemon/transport/wire_format.h>

namespace livemon::transport {

// Thread-safety: a plain value type.
struct MetricsExporterOptions {
  // Where /metrics is served: "ADDRESS:PORT". Port 0 picks a free port (MetricsExporter::port()
  // tells which). Loopback unless the user asks otherwise.
  std::string bindAddress = "127.0.0.1";
  uint16_t port = 0;
  // False: nothing is served; text() still renders the exposition (tests, embedding).
  bool serve = true;
  // Series of livemon_stat kept at most, in all and per source (so one source, a runaway job or
  // a peer inventing Stat keys, cannot take every other's room); a new series beyond either is
  // dropped and counted in livemon_exporter_series_dropped_total (and, at the per-source cap, in
  // livemon_exporter_series_dropped_source_cap_total).
  std::size_t maxSeries = 100'000;
  std::size_t maxSeriesPerSource = 10'000;
  // Label values (stat, aggregation, run, host, rank) are cut to this many bytes.
  std::size_t maxLabelBytes = 256;
  // A source silent for this long, or this long after its goodbye, is removed with its series.
  std::chrono::milliseconds forgetAfter{std::chrono::minutes{5}};
  // Measures silence; nullptr means livemon::systemClock(). Must outlive the exporter.
  Clock* clock = nullptr;
  // Called on the scraping thread while a scrape renders, after it took the values and let go
  // of the lock the feeding calls take (tests use it to show that an update is not held up by a
  // scrape). Empty: nothing is called.
  std::function<void()> whileRendering;
};

// Thread-safety: a plain value type.
struct MetricsExporterStats {
  uint64_t events = 0;          // events observed, Stat or not
  uint64_t statValues = 0;      // Stat values stored
  std::size_t series = 0;       // livemon_stat series now
  std::size_t sources = 0;      // sources with at least one series
  uint64_t seriesDropped = 0;   // new series refused at maxSeries or maxSeriesPerSource
  uint64_t seriesDroppedSourceCap = 0;  // of those, refused at maxSeriesPerSource
  uint64_t malformedKeys = 0;   // Stat keys that are not "<stat>.<aggregation>"
  uint64_t sourcesForgotten = 0;  // removed after silence or goodbye
};

// Thread-safe: every member may be called from any thread; the feeding calls and the HTTP
// threads that render /metrics share one mutex, held for one event's values, or for as long as a
// scrape takes to copy the values (shared pointers to the labels and a double per series): the
// rendering itself runs without it, so a large scrape never holds up the thread feeding events
// (a Publisher's I/O thread, a relay's worker).
//
// Serves the latest value of every Stat aggregation in the Prometheus text format, through
// prometheus-cpp's Exposer (two HTTP threads of its own). Fed with decoded events and their
// sources, it keeps, for each Stat event (named livemon.Stat or torch.monitor.Stat) and each of
// its numeric fields "<stat>.<aggregation>" (split at the last dot), the gauge
//   livemon_stat{stat="<stat>",aggregation="<aggregation>",run="…",host="…",rank="…"}
// where rank is empty for a source without one (Prometheus treats an empty label as absent).
// Sources are told apart by their instance (SourceInfo::instanceId): a restarted process, or a
// forger claiming a live source's run, host and rank, never overwrites another's series. The
// first live source with given run, host and rank is served with those labels alone; one that
// comes while another holds them also carries id="<instance id, 16 hex digits>" (as `livemonctl
// tail --json` shows it), so the series stay distinct.
// Other events only count in livemon_exporter_events_total.
//
// Bounded: at most maxSeries series, maxSeriesPerSource of one source (more are dropped and
// counted); label values are cut to
// maxLabelBytes and invalid UTF-8 or control characters are replaced, since one bad label value
// would make Prometheus reject the whole scrape. A source silent for forgetAfter, or forgetAfter
// after its goodbye, is removed with its series (checked on every call and every scrape).
// Extra counters (a relay's own) are set with setCounter().
//
// It is also the sink a Publisher with a metricsPort feeds (PublisherMetrics): the Publisher hands
// it the Stat events it is given, as events, from its I/O thread.
class MetricsExporter final : public PublisherMetrics {
 public:
  using Options = MetricsExporterOptions;

  // Starts serving. Throws TransportError naming the address when it cannot be bound, and
  // std::invalid_argument naming the option for a bad option, or saying that this livemon was
  // built without Prometheus (LIVEMON_WITH_PROMETHEUS=OFF).
  explicit MetricsExporter(Options options = {});
  ~MetricsExporter() override;

  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  // One event from `source`; a Stat event's values replace the previous ones. The source is alive.
  void observe(const SourceInfo& source, const Event& event) override;
  // A decoded wire message: its events, a heartbeat (the source is alive) or a goodbye.
  void observe(const WireMessage& message);
  // The same, borrowed (what `livemonctl relay --metrics-port` observes): nothing of it is kept.
  void observe(const EventBatchView& batch);
  // What a Subscriber delivers (its callbacks can forward here).
  void observe(const ReceivedEvent& event);
  void observe(const SourceChange& change);
  // The source is alive / said goodbye (removed forgetAfter later unless it speaks again).
  void sourceAlive(const SourceInfo& source) override;
  void sourceGone(const SourceInfo& source);

  // Sets a counter served beside livemon_stat, e.g. a relay's "livemon_relay_forwarded_total".
  // Throws std::invalid_argument for a name that is not a valid Prometheus metric name or is one
  // of the exporter's own.
  void setCounter(const std::string& name, const std::string& help, double value);

  // The port /metrics is served on (0 when not serving).
  uint16_t port() const noexcept override;
  // The exposition text a scrape of /metrics would get now.
  std::string text() const;
  MetricsExporterStats stats() const;

 private:
  struct State;
  struct Server;
  std::shared_ptr<State> state_;  // shared with the HTTP threads
  std::unique_ptr<Server> server_;
};

}  // namespace livemon::transport
