#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <livemon/event.h>
#include <livemon/transport/subscriber.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/data/ingest_limits.h>
#include <livemon/ui/ingest/sample_folder.h>

namespace livemon::ui {

// Not thread-safe: one owner at a time (IngestWorker serializes it).
// Turns received events into what the dashboard applies: a log entry for every event, and a
// chart sample for every number in it. A Stat event's ("livemon.Stat" or "torch.monitor.Stat")
// key "<stat>.<aggregation>" is a line of chart <stat>; any other event's numeric field is a line
// "value" of chart "<event name>.<field>" with a point per event ("eval" {accuracy, loss} charts
// "eval.accuracy" and "eval.loss"), except the fields that place the event in the run ("step",
// "epoch": isChartedEventField). A run's config (kRunConfigEventName) is logged and handed on as
// a RunConfigNote, not charted. livemon's own running totals (isCumulativeCounter) are charted
// as their rate per second between consecutive windows. Sources, event names and series are
// interned here, off the GUI thread, so the GUI works with dense ids and never hashes a string
// per event.
//
// A Stat key without a dot is charted as its own Stat with aggregation "value"; string and
// bool values are logged, not plotted.
//
// Limits (IngestLimits): what a peer names is kept for the session, so new sources, Stat names
// (charts), lines and event names are accepted only up to the limits. Beyond them the new one is
// refused, every time it comes back, and counted (drops()): a refused source's events are
// dropped whole, a refused line's values are not plotted (event fields' lines count against the
// same chart and line limits as Stats'), an event with a refused name is not
// logged, and a log row's data is cut at maxLogDataBytes. What was accepted before keeps
// converting as usual. The work per event stays bounded:
// a refusal costs the lookups an accepted name would, and the distinct refusals are counted in
// bounded memory (DistinctCounter).
//
// Fast event fields: finish() folds a batch's event-field points into at most a few per
// `foldSlotMs` of each line (SampleFolder: first, lowest, highest, last, and any NaN or Inf), so
// a field logged 30 000 times a second costs the GUI thread what a chart can show, not what was
// sent. Stat windows and rates are never folded.
class EventConverter {
 public:
  EventConverter();
  explicit EventConverter(IngestLimits limits, double foldSlotMs = SampleFolder::kDefaultSlotMs);

  void convert(transport::ReceivedEvent& received, IngestBatch& out);
  // The same for an event lent by the Subscriber (SubscriberCallbacks::onEventView): read in
  // place, nothing of it copied but what the batch keeps (names, lines, the log row's text).
  void convert(const transport::ReceivedEventView& received, IngestBatch& out);
  // Call once a batch is complete, before it is staged: folds its event-field samples (see above).
  void finish(IngestBatch& out);
  // Event-field samples finish() folded away.
  uint64_t foldedSamples() const noexcept { return folder_.foldedCount(); }

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
  std::size_t seriesCount() const noexcept { return presentSeries_ + presentRankedSeries_; }
  // Distinct chart names among those series: the charts.
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
  // A series as a source's lookups find it.
  struct SeriesRef {
    SeriesId id = 0;
    SeriesKind kind = SeriesKind::StatWindow;
  };
  // Hashes strings and string views alike, so a lent event's names are looked up without a copy.
  struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept { return std::hash<std::string_view>{}(text); }
  };
  template <typename Value>
  using TextMap = std::unordered_map<std::string, Value, TextHash, std::equal_to<>>;
  // The lines of one source: by Stat key, and by event name and field.
  struct SourceSeries {
    TextMap<SeriesRef> statKeys;
    std::unordered_map<NameId, TextMap<SeriesRef>> fields;
    std::size_t count = 0;
    bool ranked = false;  // its lines count against IngestLimits::maxRankedSeries
  };
  // The previous window of a running total charted as a rate.
  struct CounterSample {
    double x = 0.0;
    double y = 0.0;
  };

  // convert()'s work for either kind of event.
  template <typename Received>
  void convertEvent(const Received& received, IngestBatch& out);
  std::optional<NameId> nameId(std::string_view name, IngestBatch& out);
  std::optional<SeriesRef> statSeries(SourceId source, std::string_view key, IngestBatch& out);
  std::optional<SeriesRef> fieldSeries(SourceId source, NameId name, std::string_view field, IngestBatch& out);
  // Admits a new line within the limits (or counts its refusal); `keyHash` tells refused lines apart.
  std::optional<SeriesRef> newSeries(SourceId source, std::string stat, std::string aggregation, SeriesKind kind,
                                     uint64_t keyHash, IngestBatch& out);
  // The rate per second since the counter's previous window; std::nullopt for its first window, a
  // window not after the previous one (a replay seeking back) and a total that went down.
  std::optional<double> counterRate(SeriesId id, double x, double y);

  IngestLimits limits_;
  // A cache in front of sourceByValue_ (the subscriber shares one SourceInfo per source, so
  // lookups by address normally hit). Emptied when it reaches its bound: a source evicted by the
  // subscriber and heard again comes with a new SourceInfo, so entries would otherwise pile up.
  std::unordered_map<const transport::SourceInfo*, CachedSource> sourceByAddress_;
  std::map<transport::SourceInfo, SourceId> sourceByValue_;
  TextMap<NameId> names_;
  std::vector<const std::string*> nameById_;  // the keys of names_, by id
  // Indexed by SourceId, one per id ever handed out (forgotten ones too): the next id is its size.
  std::vector<SourceSeries> seriesBySource_;
  // Series present per chart name (a Stat key up to its last dot, "<event name>.<field>").
  std::unordered_map<std::string, std::size_t> seriesByStat_;
  // Event-field series present per chart name: the charts maxFieldCharts bounds.
  std::unordered_map<std::string, std::size_t> seriesByFieldChart_;
  // The EventField series of known sources: the lines finish() folds.
  std::unordered_set<SeriesId> fieldSeriesIds_;
  SampleFolder folder_;
  // Per CounterRate series of a known source.
  std::unordered_map<SeriesId, std::optional<CounterSample>> counters_;
  SeriesId nextSeries_ = 0;
  std::size_t presentSeries_ = 0;
  std::size_t presentRankedSeries_ = 0;

  DistinctCounter refusedSources_;
  DistinctCounter refusedCharts_;
  DistinctCounter refusedFieldCharts_;
  DistinctCounter refusedSourceSeries_;
  DistinctCounter refusedSeries_;
  DistinctCounter refusedNames_;
  LimitDrops drops_;  // `dropped` counts; `distinct` is read from the counters
};

}  // namespace livemon::ui
