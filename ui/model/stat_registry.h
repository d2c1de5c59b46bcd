#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <QString>

#include <livemon/transport/wire_format.h>
#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/model/lazy_deque.h>
#include <livemon/ui/model/series_store.h>
#include <livemon/ui/model/time_view.h>

namespace livemon::ui {

// Thread-safety: a plain value type.
// A publisher as the dashboard shows it.
struct SourceEntry {
  SourceId id = 0;
  std::shared_ptr<const transport::SourceInfo> info;
  QString description;  // transport::describe(): "run@host:pid rank N"
  QString label;        // short, unique among the sources: "train", "train r1", "train:4242"
  QString endpoint;
  std::optional<double> startMs;  // run start (publisher start), ms since the Unix epoch
};

// What a series is to the charts: a publisher's own line, or one of the lines a rank group
// (RankGroups) derives from its ranks' series of one (Stat, aggregation).
enum class SeriesRole : uint8_t {
  Plain,
  RankMedian,  // the median across the group's ranks
  RankLow,     // the lowest across them: the lower edge of the median's band
  RankHigh,    // the highest: the upper edge
};

// Thread-safety: a plain value type.
// A rank group's edge point: which rank held the extreme at x (ms since the Unix epoch).
struct RankAtX {
  double x = 0.0;
  int64_t rank = 0;
};

// GUI thread only. Owned by the StatRegistry.
// One line: a (source, Stat, aggregation) triple, or a (source, event field) pair, and its samples.
struct SeriesEntry {
  SeriesId id = 0;
  SourceId source = 0;
  QString stat;
  QString aggregation;
  SeriesKind kind = SeriesKind::StatWindow;
  SeriesStore store;
  SeriesRole role = SeriesRole::Plain;
  SeriesId median = 0;  // RankLow, RankHigh: the RankMedian line whose band they edge
  std::size_t rankCount = 0;  // RankMedian: the ranks its newest point was taken across
  // RankLow, RankHigh: the rank at each of the newest points, oldest first (bounded by
  // RankGroups), for the tooltip's "which rank".
  LazyDeque<RankAtX> ranks;  // empty for every other role

  // The rank at the edge point nearest to x; std::nullopt for other roles or none kept.
  std::optional<int64_t> rankNear(double x) const;
};

// Thread-safety: a plain value type.
// What applying a batch changed.
struct RegistryChanges {
  std::vector<SeriesId> newSeries;
  std::vector<SourceId> newSources;
  bool labelsChanged = false;  // an existing source's short label changed
  std::size_t samples = 0;
};

// Thread-safety: a plain value type.
// What removing sources took away, for the views that show them to drop too.
struct RegistryRemoval {
  std::vector<SourceId> sources;
  std::vector<SeriesId> series;
  bool labelsChanged = false;  // a remaining source's short label changed (it may be shorter now)

  bool empty() const noexcept { return sources.empty(); }
};

// GUI thread only.
// Every source and series seen (until removed), with their samples: the data behind the charts.
class StatRegistry {
 public:
  explicit StatRegistry(SeriesStore::Limits limits = {});
  // The limits of the series of sources that carry a rank, made from now on (default: the
  // others'). A run of 256 ranks sends 80 times more series than its rank groups draw; kept at
  // the full limits they would take 3 GiB after a few hours, growing all the while.
  // A run that states a world size over kRankedLimitsWorld keeps proportionally fewer samples and
  // buckets per rank (at least kMinRankedPoints of each; buckets merge, so the run's whole span
  // stays, coarser): its ranks together hold what kRankedLimitsWorld ranks would.
  void setRankedLimits(SeriesStore::Limits limits) { rankedLimits_ = limits; }
  static constexpr int64_t kRankedLimitsWorld = 64;
  static constexpr std::size_t kMinRankedPoints = 8;
  // The ranked limits for a series of a run of `worldSize` ranks (none stated: as given).
  static SeriesStore::Limits rankedLimitsFor(SeriesStore::Limits limits, std::optional<int64_t> worldSize);

  // Applies a batch's sources, names-free descriptors and samples (log entries are the log's).
  RegistryChanges apply(const IngestBatch& batch);

  // nullptr for an id never seen or removed.
  const SourceEntry* source(SourceId id) const;
  const SeriesEntry* series(SeriesId id) const;
  // Those present (not removed).
  std::size_t sourceCount() const noexcept;
  std::size_t seriesCount() const noexcept;
  // One past the highest id seen, removed ones included: ids below it look up to an entry or,
  // when removed, to nullptr.
  SourceId sourceIdEnd() const noexcept { return static_cast<SourceId>(sources_.size()); }
  SeriesId seriesIdEnd() const noexcept { return static_cast<SeriesId>(series_.size()); }

  // Maps a series' store x (ms since the epoch) into a mode's chart units and back; for Step,
  // whose x is not a time but each point's step (StepPoints), the identity.
  PlotTransform transform(const SeriesEntry& series, TimeAxisMode mode) const;
  // The span of all samples in a mode's units; std::nullopt before the first sample. For Step,
  // stepExtent() over all time.
  std::optional<XRange> extent(TimeAxisMode mode) const;
  // The steps the Step axis shows for the samples timed in `window` (ms since the Unix epoch):
  // the union of every series' SeriesStore::stepExtent; std::nullopt when none carries a step.
  std::optional<XRange> stepExtent(XRange window) const;

  // Forgets the samples of every series whose source `which` selects (a replayed recording that
  // seeks); sources and series stay. The extents are recomputed from what remains.
  void clearSamples(const std::function<bool(const SourceEntry&)>& which);
  // Removes the sources `which` selects and all their series (a replayed recording that is
  // closed). Their ids are never handed out again, so anything still holding one looks it up to
  // nullptr; descriptors and samples that still arrive for them are dropped. The remaining sources
  // are relabelled (a label made unique against a removed source may get shorter) and the extents
  // recomputed.
  RegistryRemoval removeSources(const std::function<bool(const SourceEntry&)>& which);

  // Bytes held by all series stores.
  std::size_t storedBytes() const;

  // Sources and series derived on the GUI thread (rank groups: RankGroups), with ids from
  // kFirstDerivedSource / kFirstDerivedSeries up, so they never meet the ingest's dense ids. They
  // take part in lookups, extents, clearSamples and removeSources like received ones; their label
  // is the one given (relabel() leaves it).
  SourceId addDerivedSource(std::shared_ptr<const transport::SourceInfo> info, const QString& label,
                            const QString& description, const QString& endpoint);
  // nullptr when `source` is not a derived source present.
  SeriesEntry* addDerivedSeries(SourceId source, const QString& stat, const QString& aggregation, SeriesKind kind,
                                SeriesRole role);
  SeriesEntry* derivedSeries(SeriesId id);
  // Widens the extents for a sample appended to a derived series' store.
  void noteDerivedSample(const SeriesEntry& series, double x);
  static bool isDerived(SeriesId id) noexcept { return id >= kFirstDerivedSeries; }

  static constexpr SourceId kFirstDerivedSource = 0x8000'0000U;
  static constexpr SeriesId kFirstDerivedSeries = 0x8000'0000U;

 private:
  // Returns whether a label that was already set changed.
  bool relabel();
  void recomputeExtents();

  SeriesStore::Limits limits_;
  std::optional<SeriesStore::Limits> rankedLimits_;
  std::vector<std::unique_ptr<SourceEntry>> sources_;
  std::vector<std::unique_ptr<SeriesEntry>> series_;
  std::vector<std::unique_ptr<SourceEntry>> derivedSources_;
  std::vector<std::unique_ptr<SeriesEntry>> derivedSeries_;
  // Every series present, received and derived.
  template <typename Visit>
  void forEachSeries(Visit&& visit) const;
  std::optional<XRange> wallExtent_;
  std::optional<XRange> runExtent_;
};

}  // namespace livemon::ui
