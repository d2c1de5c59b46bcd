#include <livemon/ui/model/rank_scores_model.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <QColor>

#include <livemon/analysis_feed.h>
#include <livemon/ui/model/stat_registry.h>

namespace livemon::ui {

namespace {

double wallMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count();
}

QString number(double value, int precision) {
  if (std::isnan(value)) return QStringLiteral("–");
  if (std::isinf(value)) return value > 0 ? QStringLiteral("+Inf") : QStringLiteral("-Inf");
  return QString::number(value, 'g', precision);
}

}  // namespace

RankScoresModel::RankScoresModel(const StatRegistry& registry, Clock* clock, std::chrono::milliseconds window,
                                 QObject* parent)
    : QAbstractTableModel(parent), registry_(registry), clock_(clock != nullptr ? clock : &systemClock()), window_(window) {
  setKey(QString::fromUtf8(kDefaultRankScoreKey.data(), static_cast<qsizetype>(kDefaultRankScoreKey.size())));
}

RankScoresModel::~RankScoresModel() = default;

void RankScoresModel::setKey(const QString& key) {
  RankScorerOptions options;
  options.key = key.toStdString();
  // As `livemonctl ranks`: stale after three windows without a value (at least 3 s).
  options.staleAfter = std::max<std::chrono::milliseconds>(3 * window_, std::chrono::milliseconds(3000));
  options.forgetAfter = 10 * options.staleAfter;
  options.clock = clock_;
  auto scorer = std::make_unique<RankScorer>(options);  // throws for an empty key, before anything changes
  beginResetModel();
  scorer_ = std::move(scorer);
  for (auto& [run, state] : runs_) {
    state.latest.reset();
    state.heat.clear();
    state.heatRanks.clear();
  }
  keySeries_.clear();
  nextWindow_.reset();
  endResetModel();
  emit scored();
}

QString RankScoresModel::key() const { return QString::fromStdString(scorer_->options().key); }
const RankScorerOptions& RankScoresModel::scoring() const { return scorer_->options(); }

void RankScoresModel::setRun(const QString& run) {
  if (run == run_) return;
  beginResetModel();
  run_ = run;
  endResetModel();
  emit scored();
}

QStringList RankScoresModel::runs() const {
  QStringList names;
  for (const auto& [run, state] : runs_) names << run;
  return names;
}

const RankScoresModel::RunState* RankScoresModel::shown() const {
  if (!run_.isEmpty()) {
    const auto found = runs_.find(run_);
    return found != runs_.end() ? &found->second : nullptr;
  }
  return runs_.empty() ? nullptr : &runs_.begin()->second;
}

QString RankScoresModel::shownRun() const {
  if (!run_.isEmpty()) return run_;
  return runs_.empty() ? QString() : runs_.begin()->first;
}

bool RankScoresModel::isKeySeries(SeriesId id) {
  const auto cached = keySeries_.find(id);
  if (cached != keySeries_.end()) return cached->second;
  const SeriesEntry* series = registry_.series(id);
  const SourceEntry* source = series != nullptr ? registry_.source(series->source) : nullptr;
  const bool isKey = source != nullptr && source->info && source->info->rank && series->role == SeriesRole::Plain &&
                     (series->stat + QLatin1Char('.') + series->aggregation).toStdString() == scorer_->options().key;
  keySeries_.emplace(id, isKey);
  return isKey;
}

void RankScoresModel::observe(const IngestBatch& batch) {
  for (const SeriesDescriptor& descriptor : batch.series) {
    const SourceEntry* source = registry_.source(descriptor.source);
    if (descriptor.kind != SeriesKind::StatWindow || source == nullptr || !source->info || !source->info->rank) continue;
    if (keys_.size() < 4096) keys_[QString::fromStdString(descriptor.stat + "." + descriptor.aggregation)] = true;
    RunState& run = runs_[QString::fromStdString(source->info->run)];
    if (run.sources.size() < scorer_->options().maxRanks) run.sources[*source->info->rank] = source->id;
  }
  for (const StatSample& sample : batch.samples) {
    if (!isKeySeries(sample.series)) continue;
    const SeriesEntry* series = registry_.series(sample.series);
    const SourceEntry* source = series != nullptr ? registry_.source(series->source) : nullptr;
    if (source != nullptr) scorer_->observeValue(AnalysisFeed::source(source->info), sample.y);
  }
}

std::vector<RankFlagged> RankScoresModel::tick() {
  std::vector<RankFlagged> flagged;
  const auto now = clock_->now();
  if (!nextWindow_) nextWindow_ = now + window_;
  if (now < *nextWindow_) return flagged;
  // One window per tick however late it is: RankScorer counts windows, not time.
  while (*nextWindow_ <= now) *nextWindow_ += window_;
  beginResetModel();
  for (RankWindow& window : scorer_->evaluate()) {
    RunState& run = runs_[QString::fromStdString(window.run)];
    for (const RankScore& score : window.ranks) {
      const bool before = run.latest && std::any_of(run.latest->flagged.begin(), run.latest->flagged.end(),
                                                    [&score](int64_t rank) { return rank == score.rank; });
      if (!score.flagged || before) continue;
      const auto source = run.sources.find(score.rank);
      flagged.push_back(RankFlagged{QString::fromStdString(window.run), score,
                                    source != run.sources.end() ? std::optional<SourceId>(source->second) : std::nullopt,
                                    wallMs(window.time), window.median, window.scored});
    }
    RankHeatColumn column;
    column.timeMs = wallMs(window.time);
    for (const RankScore& score : window.ranks) {
      column.values[score.rank] = score.stale ? std::numeric_limits<double>::quiet_NaN() : score.value;
    }
    // The heatmap's rows are kept as the columns come and go: at 1 024 ranks, walking the 300
    // columns for them took 8 ms a window.
    for (const auto& [rank, value] : column.values) ++run.heatRanks[rank];
    run.heat.push_back(std::move(column));
    while (run.heat.size() > kHeatColumns) {
      for (const auto& [rank, value] : run.heat.front().values) {
        const auto count = run.heatRanks.find(rank);
        if (--count->second == 0) run.heatRanks.erase(count);
      }
      run.heat.pop_front();
    }
    run.latest = std::move(window);
  }
  endResetModel();
  emit scored();
  return flagged;
}

std::vector<RankFlagged> RankScoresModel::flaggedRanks() const {
  std::vector<RankFlagged> flagged;
  for (const auto& [name, run] : runs_) {
    if (!run.latest) continue;
    for (const RankScore& score : run.latest->ranks) {
      if (!score.flagged) continue;
      const auto source = run.sources.find(score.rank);
      flagged.push_back(RankFlagged{name, score,
                                    source != run.sources.end() ? std::optional<SourceId>(source->second) : std::nullopt,
                                    wallMs(run.latest->time), run.latest->median, run.latest->scored});
    }
  }
  return flagged;
}

const RankWindow* RankScoresModel::window() const {
  const RunState* run = shown();
  return run != nullptr && run->latest ? &*run->latest : nullptr;
}

const std::deque<RankHeatColumn>& RankScoresModel::heatColumns() const {
  static const std::deque<RankHeatColumn> none;
  const RunState* run = shown();
  return run != nullptr ? run->heat : none;
}

std::vector<int64_t> RankScoresModel::heatRanks() const {
  std::vector<int64_t> result;
  if (const RunState* run = shown()) {
    result.reserve(run->heatRanks.size());
    for (const auto& [rank, columns] : run->heatRanks) result.push_back(rank);
  }
  return result;
}

bool RankScoresModel::isFlagged(int64_t rank) const {
  const RankWindow* latest = window();
  return latest != nullptr && std::binary_search(latest->flagged.begin(), latest->flagged.end(), rank);
}

QStringList RankScoresModel::knownKeys() const {
  QStringList keys;
  for (const auto& [key, seen] : keys_) keys << key;
  return keys;
}

int RankScoresModel::rowCount(const QModelIndex& parent) const {
  const RankWindow* latest = window();
  return parent.isValid() || latest == nullptr ? 0 : static_cast<int>(latest->ranks.size());
}

int RankScoresModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RankScoresModel::data(const QModelIndex& index, int role) const {
  const RankWindow* latest = window();
  if (latest == nullptr || !index.isValid() || index.row() >= static_cast<int>(latest->ranks.size())) return {};
  const RankScore& score = latest->ranks[static_cast<std::size_t>(index.row())];
  if (role == kRankRole) return QVariant::fromValue<qint64>(score.rank);
  if (role == kFlaggedRole) return score.flagged;
  if (role == Qt::BackgroundRole && score.flagged) return QColor(0xd6, 0x27, 0x28, 70);
  if (role == Qt::TextAlignmentRole) {
    return index.column() == HostColumn ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
  switch (static_cast<Column>(index.column())) {
    case RankColumn:
      return QString::number(score.rank);
    case ValueColumn:
      return number(score.value, 4);
    case ScoreColumn:
      return score.stale ? QStringLiteral("stale") : number(score.score, 3);
    case FlagColumn:
      if (score.flagged) return tr("flagged");
      return score.below > 0 ? tr("low %1/%2").arg(score.below).arg(scorer_->options().windows) : QString();
    case HostColumn:
      return QString::fromStdString(score.host);
    case PidColumn:
      return QString::number(score.pid);
    case ColumnCount:
      break;
  }
  return {};
}

QVariant RankScoresModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (static_cast<Column>(section)) {
    case RankColumn: return tr("Rank");
    case ValueColumn: return tr("Latest");
    case ScoreColumn: return tr("Score");
    case FlagColumn: return tr("Flag");
    case HostColumn: return tr("Host");
    case PidColumn: return tr("PID");
    case ColumnCount: break;
  }
  return {};
}

}  // namespace livemon::ui
