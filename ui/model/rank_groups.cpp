#include <livemon/ui/model/rank_groups.h>

#include <algorithm>
#include <cmath>

namespace livemon::ui {

namespace {

// Reorders `values` (and drops its non-finite ones): RankGroups hands it a buffer it reuses.
std::optional<RankCrossSection> crossSectionOf(std::vector<std::pair<int64_t, double>>& values) {
  std::erase_if(values, [](const auto& v) { return !std::isfinite(v.second); });
  if (values.empty()) return std::nullopt;
  RankCrossSection section;
  section.ranks = values.size();
  section.low = section.high = values.front().second;
  section.lowRank = section.highRank = values.front().first;
  // One pass for the extremes (a tie goes to the lowest rank), a selection for the median: this
  // runs for every line of a group on every refresh that brings its values.
  for (const auto& [rank, value] : values) {
    if (value < section.low || (value == section.low && rank < section.lowRank)) {
      section.low = value;
      section.lowRank = rank;
    }
    if (value > section.high || (value == section.high && rank < section.highRank)) {
      section.high = value;
      section.highRank = rank;
    }
  }
  const auto byValue = [](const auto& a, const auto& b) { return a.second < b.second; };
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end(), byValue);
  section.median = mid->second;
  if (values.size() % 2 == 0) section.median = (std::max_element(values.begin(), mid, byValue)->second + mid->second) / 2.0;
  return section;
}

}  // namespace

std::optional<RankCrossSection> rankCrossSection(std::vector<std::pair<int64_t, double>> values) {
  return crossSectionOf(values);
}

RankGroups::RankGroups(StatRegistry& registry, RankGroupsOptions options) : registry_(registry), options_(options) {}

RankGroups::Group* RankGroups::groupOf(const SourceEntry& source, bool create) {
  if (!source.info || !source.info->rank) return nullptr;
  const QString run = QString::fromStdString(source.info->run);
  const auto key = std::make_pair(source.endpoint, run);
  auto found = groups_.find(key);
  if (found != groups_.end()) return &found->second;
  if (!create) return nullptr;
  transport::SourceInfo info;
  info.run = source.info->run;
  info.startTime = source.info->startTime;
  const QString label = QStringLiteral("%1 ranks").arg(run.isEmpty() ? QStringLiteral("?") : run);
  Group group;
  group.run = run;
  group.endpoint = source.endpoint;
  group.source = registry_.addDerivedSource(std::make_shared<const transport::SourceInfo>(std::move(info)), label,
                                            QStringLiteral("run %1: the median across its ranks, shaded from the lowest to the highest").arg(run),
                                            source.endpoint);
  return &groups_.emplace(key, std::move(group)).first->second;
}

void RankGroups::addMember(const SeriesEntry& series, const SourceEntry& source, RankGroupUpdate& update) {
  Group* group = groupOf(source, true);
  const int64_t rank = *source.info->rank;
  update.ranksChanged = true;
  group->ranks[rank] = source.id;
  const LineKey key{series.stat, series.aggregation, series.kind};
  auto found = group->lines.find(key);
  if (found == group->lines.end()) {
    Line line;
    line.median = registry_.addDerivedSeries(group->source, series.stat, series.aggregation, series.kind, SeriesRole::RankMedian);
    line.low = registry_.addDerivedSeries(group->source, series.stat, series.aggregation, series.kind, SeriesRole::RankLow);
    line.high = registry_.addDerivedSeries(group->source, series.stat, series.aggregation, series.kind, SeriesRole::RankHigh);
    line.low->median = line.median->id;
    line.high->median = line.median->id;
    update.chartSeries.insert(update.chartSeries.end(), {line.median->id, line.low->id, line.high->id});
    found = group->lines.emplace(key, std::move(line)).first;
  }
  Line& line = found->second;
  const auto previous = std::find_if(line.members.begin(), line.members.end(), [rank](const Member& m) { return m.rank == rank; });
  std::size_t index = line.members.size();
  if (previous != line.members.end()) {
    index = static_cast<std::size_t>(previous - line.members.begin());
    members_[previous->series] = MemberRef{};  // a restarted rank
    *previous = Member{rank, series.id};
  } else {
    line.members.push_back(Member{rank, series.id});
  }
  if (members_.size() <= series.id) members_.resize(series.id + 1);
  members_[series.id] = MemberRef{&line, index};
}

RankGroupUpdate RankGroups::apply(const IngestBatch& batch, const RegistryChanges& changes) {
  RankGroupUpdate update = observe(batch, changes);
  addPoints();
  return update;
}

RankGroupUpdate RankGroups::observe(const IngestBatch& batch, const RegistryChanges& changes) {
  RankGroupUpdate update;
  if (!options_.enabled) {
    update.chartSeries = changes.newSeries;
    return update;
  }
  for (SeriesId id : changes.newSeries) {
    const SeriesEntry* series = registry_.series(id);
    const SourceEntry* source = series != nullptr ? registry_.source(series->source) : nullptr;
    if (source != nullptr && source->info && source->info->rank) {
      addMember(*series, *source, update);
    } else {
      update.chartSeries.push_back(id);
    }
  }
  for (const StatSample& sample : batch.samples) {
    if (sample.series >= members_.size()) continue;
    const MemberRef& ref = members_[sample.series];
    if (ref.line == nullptr) continue;
    Member& member = ref.line->members[ref.index];
    if (!(sample.x >= member.x)) continue;  // a late sample changes no rank's latest
    member.x = sample.x;
    member.y = sample.y;
    member.step = sample.step;
    if (!ref.line->dirty) dirty_.push_back(ref.line);
    ref.line->dirty = true;
  }
  return update;
}

void RankGroups::addPoints() {
  for (Line* line : dirty_) {
    line->dirty = false;
    addPoint(*line);
  }
  dirty_.clear();
}

void RankGroups::addPoint(Line& line) {
  const Member* newest = nullptr;
  for (const Member& member : line.members) {
    if (newest == nullptr || member.x > newest->x) newest = &member;
  }
  if (newest == nullptr || !(newest->x > line.lastX)) return;
  const SeriesEntry* newestSeries = registry_.series(newest->series);
  const double interval = newestSeries != nullptr ? newestSeries->store.typicalInterval() : 0.0;
  const double staleMs = std::max(static_cast<double>(options_.staleAfter.count()), 3.0 * interval);
  std::vector<std::pair<int64_t, double>>& values = scratch_;
  values.clear();
  for (const Member& member : line.members) {
    if (member.x >= newest->x - staleMs) values.emplace_back(member.rank, member.y);
  }
  const std::optional<RankCrossSection> section = crossSectionOf(values);
  if (!section) return;
  const double x = newest->x;
  line.lastX = x;
  line.median->rankCount = section->ranks;
  // Ranks that close the same window within half their usual interval of the line's newest point
  // (many ranks take several batches to arrive) refine that point rather than add one each: a
  // point per window, so the gap rule measures the ranks' rhythm, not the batches'.
  if (x - line.pointX < 0.5 * interval && line.median->store.amendLast(section->median) &&
      line.low->store.amendLast(section->low) && line.high->store.amendLast(section->high)) {
    if (!line.low->ranks.empty()) line.low->ranks.back().rank = section->lowRank;
    if (!line.high->ranks.empty()) line.high->ranks.back().rank = section->highRank;
    return;  // the extents already hold the point's x
  }
  line.pointX = x;
  line.median->store.append(x, section->median, newest->step);
  line.low->store.append(x, section->low, newest->step);
  line.high->store.append(x, section->high, newest->step);
  line.low->ranks.push_back(RankAtX{x, section->lowRank});
  line.high->ranks.push_back(RankAtX{x, section->highRank});
  for (SeriesEntry* edge : {line.low, line.high}) {
    while (edge->ranks.size() > options_.ranksKept) edge->ranks.pop_front();
  }
  registry_.noteDerivedSample(*line.median, x);
}

void RankGroups::clearSamples(const QString& endpoint) {
  for (auto& [key, group] : groups_) {
    if (group.endpoint != endpoint) continue;
    for (auto& [lineKey, line] : group.lines) {
      line.lastX = -std::numeric_limits<double>::infinity();
      line.pointX = -std::numeric_limits<double>::infinity();
      line.low->ranks.clear();
      line.high->ranks.clear();
      for (Member& member : line.members) member = Member{member.rank, member.series};
    }
  }
}

void RankGroups::removed(const RegistryRemoval& removal) {
  addPoints();  // no pending point may outlive its line
  for (SeriesId id : removal.series) {
    if (id >= members_.size() || members_[id].line == nullptr) continue;
    const MemberRef ref = members_[id];
    members_[id] = MemberRef{};
    // The last member takes the removed one's place.
    std::vector<Member>& members = ref.line->members;
    if (ref.index + 1 < members.size()) {
      members[ref.index] = members.back();
      members_[members[ref.index].series].index = ref.index;
    }
    members.pop_back();
  }
  std::erase_if(groups_, [&removal](const auto& entry) {
    return std::find(removal.sources.begin(), removal.sources.end(), entry.second.source) != removal.sources.end();
  });
  for (auto& [key, group] : groups_) {
    std::erase_if(group.ranks, [&removal](const auto& rank) {
      return std::find(removal.sources.begin(), removal.sources.end(), rank.second) != removal.sources.end();
    });
  }
}

std::vector<RankGroupInfo> RankGroups::groups() const {
  std::vector<RankGroupInfo> result;
  for (const auto& [key, group] : groups_) {
    RankGroupInfo info{group.run, group.endpoint, group.source, {}};
    for (const auto& [rank, source] : group.ranks) info.ranks.push_back(rank);
    result.push_back(std::move(info));
  }
  return result;
}

std::vector<SeriesId> RankGroups::rankSeries(const QString& run, int64_t rank) const {
  std::vector<SeriesId> result;
  for (const auto& [key, group] : groups_) {
    if (group.run != run) continue;
    for (const auto& [lineKey, line] : group.lines) {
      for (const Member& member : line.members) {
        if (member.rank == rank) result.push_back(member.series);
      }
    }
  }
  return result;
}

}  // namespace livemon::ui
