#include <livemon/ui/widgets/ranges_view.h>

#include <algorithm>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtCharts/QChart>

#include <livemon/ui/model/ranges_model.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {
constexpr int kNumberColumnWidth = 92;
constexpr int kRangeColumnWidth = 240;
}  // namespace

RangesView::RangesView(const StatRegistry& registry, RangesModel& model, QWidget* parent)
    : QWidget(parent), registry_(registry), model_(&model) {
  proxy_ = new QSortFilterProxyModel(this);
  model_->setStaleForeground(QColor(colours::dimText()));
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(RangesModel::SortRole);
  proxy_->setSortCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setFilterKeyColumn(RangesModel::RangeColumn);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setDynamicSortFilter(true);  // new windows re-sort the rows

  QVBoxLayout* layout = nullptr;
  QHBoxLayout* barLayout = addPanelHeader(this, tr("Ranges"), &layout);
  QWidget* bar = barLayout->parentWidget();
  filter_ = new QLineEdit(bar);
  filter_->setPlaceholderText(tr("Filter ranges by name (* and ? allowed)…"));
  filter_->setClearButtonEnabled(true);
  filter_->setMaximumWidth(360);
  barLayout->addWidget(filter_, 1);
  summary_ = new QLabel(bar);
  summary_->setStyleSheet(dimTextStyle());
  barLayout->addWidget(summary_);
  barLayout->addStretch();
  connect(filter_, &QLineEdit::textChanged, this, &RangesView::setFilterText);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->setChildrenCollapsible(false);
  table_ = new QTableView(splitter);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  // Where the time goes first, as torch.profiler's table is read (sort_by="cpu_time_total").
  table_->sortByColumn(RangesModel::TotalTimeColumn, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->setShowGrid(false);
  table_->setWordWrap(false);
  table_->setTextElideMode(Qt::ElideMiddle);  // "aten::…_loss": both ends of a long name show
  table_->verticalHeader()->setVisible(false);
  table_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  QHeaderView* columns = table_->horizontalHeader();
  // The sort arrow is drawn at a section's right edge, where a number column's title ends: room
  // for it, so "Mean" (sorted at first) stays readable.
  columns->setStyleSheet(QStringLiteral("QHeaderView::section { padding-right: 18px; }"));
  columns->setHighlightSections(false);
  columns->setSectionResizeMode(QHeaderView::Interactive);
  // Names get room of their own (operators are long: "aten::cross_entropy_loss"); with the number
  // columns wider than the view the table scrolls sideways rather than squeeze the names, and
  // room to spare goes to the last column.
  columns->setStretchLastSection(true);
  columns->setMinimumSectionSize(60);
  // Each number column as wide as its title (with the sort arrow's room) or a typical value
  // ("888 ms/s"), whichever is wider: ten of them fit beside the names.
  const int valueWidth = fontMetrics().horizontalAdvance(QStringLiteral("888.8 ms/s")) + 12;
  for (int column = RangesModel::CallsColumn; column < RangesModel::ColumnCount; ++column) {
    const int titleWidth = fontMetrics().horizontalAdvance(model_->headerData(column, Qt::Horizontal).toString()) + 32;
    columns->resizeSection(column, std::min(kNumberColumnWidth, std::max(titleWidth, valueWidth)));
  }
  columns->resizeSection(RangesModel::SourceColumn, 130);
  columns->resizeSection(RangesModel::RangeColumn, kRangeColumnWidth);
  updateColumns();
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { currentChanged(current); });

  chartHolder_ = new QWidget(splitter);
  chartLayout_ = new QVBoxLayout(chartHolder_);
  chartLayout_->setContentsMargins(6, 6, 6, 6);
  chartPlaceholder_ = new QLabel(tr("No ranges yet.\n\nA range appears here when a publisher sends a Stat named "
                                    "range/<name> with its count, mean, p50, p99 and max in milliseconds."),
                                 chartHolder_);
  chartPlaceholder_->setAlignment(Qt::AlignCenter);
  chartPlaceholder_->setWordWrap(true);
  chartPlaceholder_->setStyleSheet(dimTextStyle(QStringLiteral("padding: 40px;")));
  chartLayout_->addWidget(chartPlaceholder_);

  splitter->addWidget(table_);
  splitter->addWidget(chartHolder_);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter, 1);
  updateSummary();
}

void RangesView::sourceLabelsChanged() {
  if (chart_ != nullptr) chart_->refreshSeriesNames();
  updateChartTitle();
}

void RangesView::beginRemove() {
  removingSelectedSource_ = model_->source(selected_);
  removingSelectedName_ = model_->rangeName(selected_);
  removingRows_ = true;
}

void RangesView::endRemove(const RegistryRemoval& removal) {
  removingRows_ = false;
  const int stillThere = selected_ >= 0 ? model_->rowOf(removingSelectedSource_, removingSelectedName_) : -1;
  if (stillThere >= 0) {
    selected_ = stillThere;  // the chart shows a remaining source's series: it stays
  } else if (selected_ >= 0) {
    showChart(-1);
    // Clearing the current index too, so that selecting the top row on the next refresh is a change.
    table_->selectionModel()->clear();
  }
  if (removal.labelsChanged && chart_ != nullptr) chart_->refreshSeriesNames();
  updateColumns();
  updateChartTitle();
  updateSummary();
}

void RangesView::refresh(const ChartRenderContext& context) {
  if (!paused_) {
    const int before = model_->rowCount();
    model_->publish();
    if (model_->rowCount() != before) {
      updateColumns();
      updateChartTitle();
      updateSummary();
    }
  }
  // Something to look at from the start: the top row, until the user picks another.
  if ((selected_ < 0 || followTop_) && proxy_->rowCount() > 0 && proxy_->mapToSource(proxy_->index(0, 0)).row() != selected_) {
    selectingTop_ = true;
    table_->selectRow(0);
    selectingTop_ = false;
  }
  if (chart_ != nullptr) {
    for (SeriesId id : model_->durationSeries(selected_)) chart_->addSeries(id);  // windows may add aggregations
    chart_->render(context);
  }
}

void RangesView::setPaused(bool paused) { paused_ = paused; }

void RangesView::setFilterText(const QString& filter) {
  const QString trimmed = filter.trimmed();
  if (filter_->text().trimmed() != trimmed) filter_->setText(trimmed);
  if (trimmed.contains(QLatin1Char('*')) || trimmed.contains(QLatin1Char('?'))) {
    proxy_->setFilterRegularExpression(QRegularExpression(
        QRegularExpression::wildcardToRegularExpression(trimmed, QRegularExpression::UnanchoredWildcardConversion),
        QRegularExpression::CaseInsensitiveOption));
  } else {
    proxy_->setFilterFixedString(trimmed);
  }
  updateSummary();
}

bool RangesView::selectRow(int modelRow) {
  const QModelIndex shown = proxy_->mapFromSource(model_->index(modelRow, RangesModel::RangeColumn));
  if (!shown.isValid()) return false;
  table_->selectRow(shown.row());
  table_->scrollTo(shown);
  return selected_ == modelRow;
}

void RangesView::currentChanged(const QModelIndex& current) {
  if (removingRows_) return;
  const int row = current.isValid() ? proxy_->mapToSource(current).row() : -1;
  if (!selectingTop_ && row >= 0) followTop_ = false;
  if (row != selected_) showChart(row);
}

void RangesView::showChart(int modelRow) {
  selected_ = modelRow;
  if (chart_ != nullptr) {
    chartLayout_->removeWidget(chart_);
    chart_->hide();
    chart_->deleteLater();
    chart_ = nullptr;
  }
  if (modelRow < 0) {
    chartPlaceholder_->show();
    return;
  }
  chartPlaceholder_->hide();
  // The mode is the grid's: render() switches the axis if the context says otherwise.
  chart_ = new StatChartView(model_->statName(modelRow), registry_, TimeAxisMode::WallClock, chartHolder_);
  chart_->setViewOptions(viewOptions_);
  updateChartTitle();
  for (SeriesId id : model_->durationSeries(modelRow)) chart_->addSeries(id);
  connect(chart_, &StatChartView::rangeRequested, this, &RangesView::rangeRequested);
  connect(chart_, &StatChartView::resetRequested, this, &RangesView::resetRequested);
  chartLayout_->addWidget(chart_);
  chart_->show();  // now, not when the layout gets to it: the next refresh draws it
}

void RangesView::setViewOptions(ChartViewOptions* options) {
  viewOptions_ = options;
  if (chart_ != nullptr) chart_->setViewOptions(options);
}

void RangesView::updateChartTitle() {
  if (chart_ == nullptr) return;
  QString title = tr("%1 · duration (ms)").arg(model_->rangeName(selected_));
  const SourceEntry* source = model_->sourceCount() > 1 ? registry_.source(model_->source(selected_)) : nullptr;
  if (source != nullptr) title += QStringLiteral(" · ") + source->label;
  chart_->chart()->setTitle(title);
}

void RangesView::updateColumns() {
  table_->setColumnHidden(RangesModel::SourceColumn, model_->sourceCount() < 2);  // until a second source times ranges
  table_->setColumnHidden(RangesModel::SelfTimeColumn, !model_->nestingKnown());  // "—" on every row otherwise
}

QString RangesView::summaryText() const { return summary_->text(); }

void RangesView::updateSummary() {
  const int total = model_->rowCount();
  const int shown = proxy_->rowCount();
  QString text = tr("%n range(s)", nullptr, total);
  if (model_->sourceCount() > 1) text += tr(" from %n source(s)", nullptr, model_->sourceCount());
  if (shown != total) text += tr(" · %1 match the filter").arg(shown);
  // Which range "% of step" divides by, or what to name one.
  QString step;
  for (int row = 0; row < total && step.isEmpty(); ++row) step = model_->stepRange(model_->source(row));
  if (total > 0) {
    text += step.isEmpty() ? tr(" · no step range (time each step as train_step)") : tr(" · step: %1").arg(step);
  }
  summary_->setText(text);
}

}  // namespace livemon::ui
