#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_set>

#include <QString>

namespace livemon::ui {

// Thread-safety: a plain value type.
// How much a publisher (or a recording) can make the dashboard hold. Everything a peer names (its
// identity, its event names, its Stat keys) is interned once and kept for the session, so without
// these limits a peer inventing names would grow the dashboard without end. The EventConverter
// applies them on the ingest thread, before the GUI pays for anything: what is new beyond a limit
// is dropped and counted (LimitDrops), and everything already known keeps updating. A replayed
// recording that is closed gives back what it used.
struct IngestLimits {
  // Publishers (run, host, pid, rank) at once, live and replayed: a 1024-rank run, a recording of
  // it and a baseline fit.
  std::size_t maxSources = 4096;
  // Distinct Stat names: a chart each.
  std::size_t maxCharts = 1024;
  // Distinct charts of event fields ("eval.accuracy": the numeric fields of events other than
  // Stats), within maxCharts. Half of them, so that events inventing field names can never leave
  // the Stats without a chart.
  std::size_t maxFieldCharts = 512;
  // Lines (source, Stat key or event field) in all. Each keeps a SeriesStore of up to about 107 KB (2056 samples
  // and 1024 buckets at the default SeriesStore::Limits), so this bounds the charts' memory: about
  // 7 GB if every line ran for hours at full rate, about 3 GB for an hour of one window a second.
  // Lines of sources that carry a rank count against maxRankedSeries instead.
  std::size_t maxSeries = 65536;
  // Lines of sources that carry a rank, while the dashboard groups ranks (DashboardOptions::
  // groupRanks): each keeps a rank's small store (DashboardOptions::rankSeriesLimits: 64 windows
  // and 64 buckets, fewer past 64 ranks; a few KB), so they have a bound of their own, in which
  // 1024 ranks x 32 Stats x 4 aggregations fit. 0: they count against maxSeries like any line (as
  // they do when each rank is drawn at full size).
  std::size_t maxRankedSeries = 131072;
  // Lines of one source: a job has tens to a few hundred Stat keys (five per timed range). Keeps
  // one runaway publisher (a step number in a Stat name) from taking every line.
  std::size_t maxSeriesPerSource = 4096;
  // Distinct event names in the log (the two Stat event names are always accepted).
  std::size_t maxEventNames = 1024;
  // Bytes of one log row's data ("key=value, ..."); the rest is cut, saying how much. The log
  // keeps up to a million rows (and the staging buffer as many again), so without it a peer
  // sending megabyte events would fill memory through the log. Events are usually a few hundred
  // bytes; a row shows one line of it.
  std::size_t maxLogDataBytes = 4096;
};

// Lines one chart draws. Qt Charts re-adds every line of a chart when one joins, and lays its legend
// out anew: 256 lines take about 80 ms to add, 1024 about 0.4 s and 4096 about 4 s (offscreen, on
// the 2-core build machine). Lines beyond it keep their values in the registry (and their range
// rows) but are not drawn; the status bar counts them.
inline constexpr std::size_t kDefaultMaxLinesPerChart = 256;
// Rows of the Ranges table, one per (source, range): 1024 ranks timing 16 ranges each. A window
// landing on 16 384 rows costs about 14 ms to publish and repaint, 65 536 rows about 43 ms.
inline constexpr std::size_t kDefaultMaxRangeRows = 16384;

// Not thread-safe: one owner at a time.
// Counts distinct values by a 64-bit hash of each, remembering at most `capacity` hashes so a
// flood of new values costs bounded memory. Beyond that the count is a lower bound (saturated()).
class DistinctCounter {
 public:
  static constexpr std::size_t kDefaultCapacity = 65536;

  explicit DistinctCounter(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // Returns whether the hash was new (false also once saturated: it cannot tell any more).
  bool add(uint64_t hash);
  uint64_t count() const noexcept { return seen_.size(); }
  bool saturated() const noexcept { return saturated_; }

 private:
  std::size_t capacity_;
  std::unordered_set<uint64_t> seen_;
  bool saturated_ = false;
};

// Thread-safety: a plain value type.
// One limit's refusals: how many distinct new things it turned away, and what of theirs was
// dropped (events or Stat values, as the field says).
struct LimitDrop {
  uint64_t distinct = 0;
  bool atLeast = false;  // `distinct` is a lower bound: too many to remember them all
  uint64_t dropped = 0;

  bool any() const noexcept { return distinct > 0 || dropped > 0; }
};

// Thread-safety: a plain value type.
// What IngestLimits refused since the dashboard started.
struct LimitDrops {
  LimitDrop sources;         // new sources; dropped: their events, whole
  LimitDrop charts;          // new Stat names; dropped: their values
  LimitDrop fieldCharts;     // new event-field charts beyond maxFieldCharts; dropped: their values
  LimitDrop sourceSeries;    // new lines of a source at maxSeriesPerSource; dropped: their values
  LimitDrop series;          // new lines beyond maxSeries; dropped: their values
  LimitDrop eventNames;      // new event names; dropped: their events (not logged)
  LimitDrop logData;         // dropped: log rows whose data was cut (distinct: unused)

  bool any() const noexcept {
    return sources.any() || charts.any() || fieldCharts.any() || sourceSeries.any() || series.any() || eventNames.any() || logData.any();
  }
};

// Thread-safety: a plain value type.
// Everything the status bar says about limits: the ingest's, and those of the views, which keep
// what they cannot show in the registry but leave it off screen.
struct LimitReport {
  IngestLimits limits;
  LimitDrops drops;
  std::size_t maxLinesPerChart = 0;
  uint64_t undrawnLines = 0;   // lines in the registry on no chart, their chart being full
  std::size_t maxRangeRows = 0;
  uint64_t unlistedRanges = 0; // (source, range) pairs the Ranges table has no room for

  bool any() const noexcept { return drops.any() || undrawnLines > 0 || unlistedRanges > 0; }
};

// The status bar's line: the first limit reached, e.g. "dropped: 1,234 values of 812 new charts
// beyond the 1,024-chart limit", and "+N more" when others were reached too. Empty when nothing
// was dropped. Numbers in the default locale.
QString limitSummary(const LimitReport& report);
// Its tooltip: every limit reached, one per line, then what the limits are and why.
QString limitDetails(const LimitReport& report);

}  // namespace livemon::ui
