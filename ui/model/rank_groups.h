#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <QString>

#include <livemon/ui/data/ingest_batch.h>
#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

// Thread-safety: a plain value type.
// A rank group's values of one line at one moment: the median, lowest and highest across ranks.
struct RankCrossSection {
  double median = 0.0;
  double low = 0.0;
  double high = 0.0;
  int64_t lowRank = 0;   // the rank at the lowest (on a tie, the lowest rank)
  int64_t highRank = 0;  // the rank at the highest (on a tie, the lowest rank)
  std::size_t ranks = 0;  // ranks that took part
};

// The cross-section of (rank, value) pairs. Non-finite values take no part; std::nullopt when
// none is left. An even count's median is the mean of the middle two.
std::optional<RankCrossSection> rankCrossSection(std::vector<std::pair<int64_t, double>> values);

// Thread-safety: a plain value type.
struct RankGroupsOptions {
  // Off: every series is charted as its own line, and no group is formed (the one-line-per-rank
  // view, as before groups).
  bool enabled = true;
  // A rank whose newest value is this much older than the group's newest takes no part in the
  // group's next points (a rank that left); at least three of the rank's usual intervals.
  std::chrono::milliseconds staleAfter{3000};
  // Edge points whose rank the tooltip can name, per edge line.
  std::size_t ranksKept = 4096;
};

// Thread-safety: a plain value type.
struct RankGroupUpdate {
  // New series for the charts: the groups' new lines (median and both edges), and the new series
  // of sources in no group. A ranked source's own series are not among them (see rankSeries).
  std::vector<SeriesId> chartSeries;
  // A group, a rank in one or a rank's series appeared (a picked rank's new Stat joins its charts).
  bool ranksChanged = false;
};

// Thread-safety: a plain value type.
struct RankGroupInfo {
  QString run;
  QString endpoint;
  SourceId source = 0;  // the group's derived source
  std::vector<int64_t> ranks;  // ascending
};

// GUI thread only. It sits beside the StatRegistry it derives into.
// Rank groups: the sources of one run (from one endpoint) that carry a rank form a group, and for
// every (Stat, aggregation) the group derives three series into the registry: the median across
// its ranks (SeriesRole::RankMedian) and the lowest and highest (RankLow, RankHigh, the edges of
// the median's band, which also remember the rank at each point). Whenever a batch brings values
// of a line, the line gets a point at the newest value's time from every rank's latest value that
// is not stale (RankGroupsOptions::staleAfter), so ranks whose windows close at slightly
// different moments are compared by what they last said (values within half the ranks' usual
// interval of the newest point refine that point instead of adding one: one point per window
// however many batches its ranks take to arrive, so a line of 1 024 ranks is not broken by the
// gap rule), a rank that joins late takes part from
// its first value, and one that leaves drops out once stale. A group of one rank is still a group.
// The work per batch is one lookup per sample plus, per line that changed, O(ranks · log ranks).
class RankGroups {
 public:
  explicit RankGroups(StatRegistry& registry, RankGroupsOptions options = {});

  const RankGroupsOptions& options() const noexcept { return options_; }

  // After registry.apply(batch) returned `changes`: observe(), then addPoints().
  RankGroupUpdate apply(const IngestBatch& batch, const RegistryChanges& changes);
  // The ranks' latest values from a batch, without the groups' points yet: a batch applied in
  // pieces over several refreshes (Dashboard) adds its points once, after its last piece, so a
  // window's point is not made from half its ranks.
  RankGroupUpdate observe(const IngestBatch& batch, const RegistryChanges& changes);
  // A point on every line whose ranks brought values since the last call.
  void addPoints();
  // After the registry cleared the samples of the sources from `endpoint` (a seek): their
  // groups start afresh.
  void clearSamples(const QString& endpoint);
  // After the registry removed sources: forgets the removed ranks and groups.
  void removed(const RegistryRemoval& removal);

  std::vector<RankGroupInfo> groups() const;
  // A rank's own series in the groups of `run` (every endpoint), to chart it over the band.
  std::vector<SeriesId> rankSeries(const QString& run, int64_t rank) const;
  // Whether a series is shown through its group rather than as a line of its own.
  bool isGrouped(SeriesId series) const { return series < members_.size() && members_[series].line != nullptr; }

 private:
  struct Member {
    int64_t rank = 0;
    SeriesId series = 0;
    double x = -std::numeric_limits<double>::infinity();
    double y = 0.0;
    double step = kNoStep;
  };
  struct Line {
    SeriesEntry* median = nullptr;
    SeriesEntry* low = nullptr;
    SeriesEntry* high = nullptr;
    // One per rank, in the order they joined (a restarted rank takes its predecessor's place):
    // flat, as every point walks all of them.
    std::vector<Member> members;
    double lastX = -std::numeric_limits<double>::infinity();   // the newest rank value taken
    double pointX = -std::numeric_limits<double>::infinity();  // the newest point's x
    bool dirty = false;
  };
  using LineKey = std::tuple<QString, QString, SeriesKind>;  // stat, aggregation, kind
  struct Group {
    QString run;
    QString endpoint;
    SourceId source = 0;
    std::map<int64_t, SourceId> ranks;
    std::map<LineKey, Line> lines;
  };
  struct MemberRef {
    Line* line = nullptr;  // none: the series is in no group
    std::size_t index = 0;  // in line->members
  };

  Group* groupOf(const SourceEntry& source, bool create);
  void addMember(const SeriesEntry& series, const SourceEntry& source, RankGroupUpdate& update);
  void addPoint(Line& line);

  StatRegistry& registry_;
  RankGroupsOptions options_;
  std::map<std::pair<QString, QString>, Group> groups_;  // by (endpoint, run)
  // By SeriesId (dense from 0): a lookup per sample of every batch.
  std::vector<MemberRef> members_;
  std::vector<Line*> dirty_;  // lines with values since the last addPoints()
  std::vector<std::pair<int64_t, double>> scratch_;  // a point's (rank, value) pairs
};

}  // namespace livemon::ui
