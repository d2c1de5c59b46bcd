#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <livemon/event.h>
#include <livemon/transport/subscriber.h>
#include <livemon/ui/ingest/ingest_batch.h>
#include <livemon/ui/ingest/ingest_limits.h>

namespace livemon::ui {

// Thread-compatible: one thread at a time (IngestWorker serializes it).
// Turns received events into what the dashboard applies: a log entry for every event, and a
// Stat sample for every numeric value of a Stat event ("livemon.Stat" or "torch.monitor.Stat").
// Sources, event names and series are interned here, off the GUI thread, so the GUI works with
// dense ids and never hashes a string per event.
//
// A Stat key without a dot is charted as its own Stat with aggregation "value"; string and
// bool values of a Stat event are logged, not plotted.
//
// Limits (IngestLimits): what a peer names is kept for the session, so new sources, Stat names
// (charts), lines and event names are accepted only up to the limits. Beyond them the new one is
// refused, every time it comes back, and counted (drops()): a refused source's events are
// dropped whole, a refused line's values are not plotted, an event with a refused name is not
// logged, and a log row's data is cut at maxLogDataBytes. What was accepted before keeps
// converting as usual. The work per event stays bounded:
// a refusal costs the lookups an accepted name would, and the distinct refusals are counted in
// bounded memory (DistinctCounter).
class EventConverter {
 public:
  EventConverter();
  explicit EventConverter(IngestLimits limits);

  void convert(transport::ReceivedEvent& received, IngestBatch& out);

  // Renders event data as the log shows it: "key=value, ..." sorted by key; strings quoted. Beyond
  // `maxBytes` it is cut (between UTF-8 characters) and ends "… (N more bytes)".
  static std::string renderData(const Event& event,
                                std::size_t maxBytes = std::numeric_limits<std::size_t>::max());

  // Forgets sources the dashboard removed (a replayed recording that was closed): an equal source
  // seen again (the recording reopened) gets a new id, as the old ones are never shown again.
  // Their ids are not handed out again either. Their sources, lines and charts no longer count
  // against the limits.
  void forgetSources(const std::vector<SourceId>& ids);

  const IngestLimits& limits() const noexcept { return limits_; }
  LimitDrops drops() const;

  // Sources known (not forgotten).
  std::size_t sourceCount() const noexcept { return sourceByValue_.size(); }
  // Series of the sources known.
  std::size_t seriesCount() const noexcept { return presentSeries_; }
  // Distinct Stat names among those series: the charts.
  std::size_t chartCount() const noexcept { return seriesByStat_.size(); }
  std::size_t eventNameCount() const noexcept { return names_.size(); }
  // SourceInfo objects held to recognise sources by address (instrumentation: stays bounded
  // however many copies of a source arrive).
  std::size_t cachedSourceAddresses() const noexcept { return sourceByAddress_.size(); }

 private:
  // Where a source's events go: its id, or nothing when it was refused.
  struct CachedSource {
    std::shared_ptr<const transport::SourceInfo> info;  // keeps the address valid while it is a key
    std::optional<SourceId> id;
  };

  std::optional<SourceId> sourceId(const std::shared_ptr<const transport::SourceInfo>& source,
                                   const std::string* endpoint, IngestBatch& out);
  std::optional<NameId> nameId(const std::string& name, IngestBatch& out);
  std::optional<SeriesId> seriesId(SourceId source, const std::string& key, IngestBatch& out);

  IngestLimits limits_;
  // A cache in front of sourceByValue_ (the subscriber shares one SourceInfo per source, so
  // lookups by address normally hit). Emptied when it reaches its bound: a source evicted by the
  // subscriber and heard again comes with a new SourceInfo, so entries would otherwise pile up.
  std::unordered_map<const transport::SourceInfo*, CachedSource> sourceByAddress_;
  std::map<transport::SourceInfo, SourceId> sourceByValue_;
  std::unordered_map<std::string, NameId> names_;
  // Indexed by SourceId, one per id ever handed out (forgotten ones too): the next id is its size.
  std::vector<std::unordered_map<std::string, SeriesId>> seriesBySource_;
  // Series present per Stat name (the chart key up to its last dot).
  std::unordered_map<std::string, std::size_t> seriesByStat_;
  SeriesId nextSeries_ = 0;
  std::size_t presentSeries_ = 0;

  DistinctCounter refusedSources_;
  DistinctCounter refusedCharts_;
  DistinctCounter refusedSourceSeries_;
  DistinctCounter refusedSeries_;
  DistinctCounter refusedNames_;
  LimitDrops drops_;  // `dropped` counts; `distinct` is read from the counters
};

}  // namespace livemon::ui
