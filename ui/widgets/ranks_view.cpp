#include <livemon/ui/widgets/ranks_view.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <livemon/rank_scores.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/rank_groups.h>
#include <livemon/ui/model/rank_scores_model.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/rank_heatmap.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

RanksView::RanksView(Dashboard& dashboard, ChartGrid& grid, QWidget* parent)
    : QWidget(parent), dashboard_(dashboard), grid_(grid) {
  RankScoresModel& model = dashboard_.rankScores();
  auto* bar = new QHBoxLayout;
  keyBox_ = new QComboBox(this);
  keyBox_->setEditable(true);
  keyBox_->setMinimumContentsLength(28);
  keyBox_->setToolTip(tr("The Stat key ranks are scored by: the median across ranks divided by each rank's value"));
  keyBox_->addItem(model.key());
  runBox_ = new QComboBox(this);
  runBox_->setMinimumContentsLength(12);
  picker_ = new QLineEdit(this);
  picker_->setPlaceholderText(tr("e.g. 3, 7"));
  picker_->setToolTip(tr("Ranks drawn on the charts as lines of their own over their group's band; a click on a rank "
                         "in the heatmap or the table adds or removes it"));
  bar->addWidget(new QLabel(tr("Stat"), this));
  bar->addWidget(keyBox_, 2);
  bar->addWidget(new QLabel(tr("Run"), this));
  bar->addWidget(runBox_, 1);
  bar->addWidget(new QLabel(tr("Show ranks on charts"), this));
  bar->addWidget(picker_, 1);
  summary_ = new QLabel(this);
  summary_->setTextFormat(Qt::PlainText);
  summary_->setWordWrap(true);

  heatmap_ = new RankHeatmap(model, this);
  table_ = new QTableView(this);
  table_->setModel(&model);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setDefaultSectionSize(96);
  table_->horizontalHeader()->setStretchLastSection(true);  // the host
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(heatmap_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(split, 1);

  // On a choice or Enter, not on every keystroke: a new key starts the scoring afresh.
  connect(keyBox_, &QComboBox::textActivated, this, [this](const QString& key) {
    if (!key.trimmed().isEmpty() && key.trimmed() != dashboard_.rankScores().key()) dashboard_.rankScores().setKey(key.trimmed());
  });
  connect(runBox_, &QComboBox::currentTextChanged, this, [this](const QString& run) {
    dashboard_.rankScores().setRun(run);
    setPickedRanks(QString());  // picks are ranks of one run
  });
  connect(picker_, &QLineEdit::editingFinished, this, [this] { setPickedRanks(picker_->text()); });
  connect(heatmap_, &RankHeatmap::rankClicked, this, &RanksView::toggleRank);
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
    toggleRank(index.data(RankScoresModel::kRankRole).toLongLong());
  });
  connect(&model, &RankScoresModel::scored, this, [this] {
    updateChoices();
    updateSummary();
    applyPicks();  // flagged ranks come onto the charts and leave them
  });
  connect(&grid_, &ChartGrid::chartCreated, this, [this](StatChartView* chart) { chart->setFlaggedSources(flaggedSources_); });
  // A picked rank's series that arrive later join the charts too.
  connect(&dashboard_, &Dashboard::ranksChanged, this, &RanksView::applyPicks);
  updateSummary();
}

void RanksView::updateChoices() {
  const RankScoresModel& model = dashboard_.rankScores();
  for (const QString& key : model.knownKeys()) {
    if (keyBox_->findText(key) < 0) keyBox_->addItem(key);
  }
  for (const QString& run : model.runs()) {
    if (runBox_->findText(run) < 0) runBox_->addItem(run);
  }
}

QString RanksView::summary() const { return summary_->text(); }

void RanksView::updateSummary() {
  const RankScoresModel& model = dashboard_.rankScores();
  const RankWindow* window = model.window();
  if (window == nullptr) {
    summary_->setText(tr("Waiting for ranked sources sending %1.").arg(model.key()));
    return;
  }
  QStringList flagged;
  for (int64_t rank : window->flagged) flagged << QString::number(rank);
  const RankScorerOptions& scoring = model.scoring();
  summary_->setText(tr("Run %1: %2 ranks, %3 scored, median %4. Flagged (score below %5 for %6 windows): %7")
                        .arg(model.shownRun())
                        .arg(window->ranks.size())
                        .arg(window->scored)
                        .arg(std::isfinite(window->median) ? QString::number(window->median, 'g', 4) : QStringLiteral("–"))
                        .arg(scoring.threshold)
                        .arg(scoring.windows)
                        .arg(flagged.isEmpty() ? tr("none") : flagged.join(QStringLiteral(", "))));
}

void RanksView::toggleRank(int64_t rank) {
  if (!picked_.erase(rank)) picked_.insert(rank);
  QStringList text;
  for (int64_t r : picked_) text << QString::number(r);
  picker_->setText(text.join(QStringLiteral(", ")));
  applyPicks();
}

void RanksView::setPickedRanks(const QString& text) {
  picked_.clear();
  for (const QString& part : text.split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts)) {
    bool ok = false;
    const qlonglong rank = part.toLongLong(&ok);
    if (ok && picked_.size() < 64) picked_.insert(rank);  // a line per rank and aggregation: a few at a time
  }
  if (picker_->text() != text) picker_->setText(text);
  applyPicks();
}

// The picked ranks of the shown run and every run's flagged ranks are drawn; a flagged rank that
// is no longer flagged leaves the charts unless it is picked.
void RanksView::applyPicks() {
  const QString run = dashboard_.rankScores().shownRun();
  std::vector<SeriesId> wanted;
  for (int64_t rank : picked_) {
    for (SeriesId id : dashboard_.rankGroups().rankSeries(run, rank)) wanted.push_back(id);
  }
  std::set<SourceId> flagged;
  for (const RankFlagged& rank : dashboard_.rankScores().flaggedRanks()) {
    if (rank.source) flagged.insert(*rank.source);
    for (SeriesId id : dashboard_.rankGroups().rankSeries(rank.run, rank.score.rank)) wanted.push_back(id);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::vector<SeriesId> gone;
  std::set_difference(shownSeries_.begin(), shownSeries_.end(), wanted.begin(), wanted.end(), std::back_inserter(gone));
  if (!gone.empty()) grid_.removeSeries(gone);
  if (!wanted.empty()) grid_.addSeries(wanted);
  shownSeries_ = std::move(wanted);
  if (flagged != flaggedSources_) {
    flaggedSources_ = std::move(flagged);
    for (StatChartView* chart : grid_.charts()) chart->setFlaggedSources(flaggedSources_);
  }
}

}  // namespace livemon::ui
