#include <livemon/ui/widgets/runs_panel.h>

#include <set>

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIcon>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMainWindow>
#include <QMenu>
#include <QMouseEvent>
#include <QPixmap>
#include <QStyle>
#include <QStyleOptionViewItem>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/runs_model.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

// GUI thread only. The run's swatch in the colour its lines are drawn in: themedLine() of the
// model's, so that on the light theme a swatch matches its darkened line.
class SwatchDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;

 protected:
  void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
    QStyledItemDelegate::initStyleOption(option, index);
    const QVariant colour = index.data(Qt::DecorationRole);
    if (!colour.canConvert<QColor>() || !(option->features & QStyleOptionViewItem::HasDecoration)) return;
    QPixmap swatch(option->decorationSize);
    swatch.fill(themedLine(colour.value<QColor>()));
    option->icon = QIcon(swatch);
  }
};

}  // namespace

RunsPanel::RunsPanel(Dashboard& dashboard, QWidget* parent) : QDockWidget(tr("Runs"), parent), dashboard_(dashboard) {
  setObjectName(QStringLiteral("runsDock"));
  RunsModel& runs = dashboard_.runs();
  proxy_ = new RunsFilterModel(runs, this);
  auto* content = new QWidget(this);
  // The dock's title names it: the row holds the filter and the summary choices alone.
  auto* column = new QVBoxLayout(content);
  column->setContentsMargins(0, 0, 0, 0);
  column->setSpacing(0);
  auto* header = new QHBoxLayout;
  header->setContentsMargins(6, 6, 6, 6);
  column->addLayout(header);
  filter_ = new QLineEdit(content);
  filter_->setObjectName(QStringLiteral("runsFilter"));
  filter_->setPlaceholderText(tr("Filter runs: lr>1e-3 optimizer=adam, or part of a name…"));
  filter_->setClearButtonEnabled(true);
  filter_->setToolTip(tr("Expressions separated by spaces or commas, all of which must hold: a config key or summary "
                         "column (loss.min, loss.last), then = != < <= > >=, then a value; other words match the run's name"));
  header->addWidget(filter_, 1);
  summaries_ = new QToolButton(content);
  summaries_->setText(tr("Summaries"));
  summaries_->setToolTip(tr("The Stats summarised in columns: last, lowest, highest and the step at the best"));
  summaries_->setPopupMode(QToolButton::InstantPopup);
  summaries_->setMenu(new QMenu(summaries_));
  connect(summaries_->menu(), &QMenu::aboutToShow, this, &RunsPanel::buildSummaryMenu);
  header->addWidget(summaries_);
  best_ = new QComboBox(content);
  best_->addItem(tr("best: lowest"));
  best_->addItem(tr("best: highest"));
  best_->setToolTip(tr("Which value of a summarised Stat is the best, for its \"best step\" column"));
  best_->setCurrentIndex(runs.best() == RunsModel::Best::Max ? 1 : 0);
  connect(best_, &QComboBox::currentIndexChanged, this, [this](int index) {
    dashboard_.runs().setBest(index == 1 ? RunsModel::Best::Max : RunsModel::Best::Min);
    dashboard_.settings().setRunBestIsMax(index == 1);
  });
  header->addWidget(best_);
  errors_ = new QLabel(content);
  errors_->setStyleSheet(errorTextStyle());
  errors_->setWordWrap(true);
  errors_->setContentsMargins(6, 0, 6, 0);
  errors_->hide();
  column->addWidget(errors_);
  table_ = new QTableView(content);
  table_->setObjectName(QStringLiteral("runsTable"));
  table_->setModel(proxy_);
  table_->setItemDelegateForColumn(0, new SwatchDelegate(table_));
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);  // the order heard until a header is clicked
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setWordWrap(false);
  table_->setToolTip(tr("Tick a run to show its lines; select runs to show exactly those"));
  column->addWidget(table_, 1);
  limit_ = new QLabel(content);
  limit_->setObjectName(QStringLiteral("runsLimit"));
  limit_->setWordWrap(true);
  limit_->setStyleSheet(dimTextStyle());
  limit_->setContentsMargins(6, 2, 6, 2);
  limit_->hide();
  column->addWidget(limit_);
  setWidget(content);

  connect(filter_, &QLineEdit::textChanged, proxy_, &RunsFilterModel::setFilterText);
  connect(proxy_, &RunsFilterModel::errorsChanged, this, &RunsPanel::showErrors);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsPanel::selectionChanged);
  table_->viewport()->installEventFilter(this);
  connect(&runs, &QAbstractItemModel::rowsInserted, this, &RunsPanel::runsChanged);
  connect(&runs, &QAbstractItemModel::dataChanged, this, &RunsPanel::runsChanged);
  connect(&runs, &QAbstractItemModel::modelReset, this, &RunsPanel::runsChanged);  // new config columns
  autoPicked_ = !runs.summaryKeys().isEmpty();
}

RunsPanel* RunsPanel::addTo(QMainWindow& window, Dashboard& dashboard, QMenu& view) {
  auto* panel = new RunsPanel(dashboard, &window);
  window.addDockWidget(Qt::BottomDockWidgetArea, panel);
  panel->hide();  // until a second run appears
  QAction* action = panel->toggleViewAction();
  action->setText(tr("R&uns"));
  action->setObjectName(QStringLiteral("viewRuns"));
  view.addAction(action);
  return panel;
}

QString RunsPanel::errorText() const { return errors_->isHidden() ? QString() : errors_->text(); }

QString RunsPanel::limitText() const { return limit_->isHidden() ? QString() : limit_->text(); }

void RunsPanel::showErrors(const QStringList& errors) {
  errors_->setText(errors.join(QStringLiteral("; ")));
  errors_->setVisible(!errors.isEmpty());
  // The box says it too, where the eye is.
  filter_->setStyleSheet(errors.isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 1px solid %1; }").arg(QColor(colours::bad()).name()));
}

QRect RunsPanel::checkBoxRect(const QModelIndex& index) const {
  QStyleOptionViewItem option;
  option.initFrom(table_->viewport());
  option.rect = table_->visualRect(index);
  option.features = QStyleOptionViewItem::HasCheckIndicator | QStyleOptionViewItem::HasDecoration | QStyleOptionViewItem::HasDisplay;
  return table_->style()->subElementRect(QStyle::SE_ItemViewItemCheckIndicator, &option, table_);
}

bool RunsPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == table_->viewport() && event->type() == QEvent::MouseButtonPress) {
    const QPoint pos = static_cast<QMouseEvent*>(event)->position().toPoint();
    const QModelIndex index = table_->indexAt(pos);
    pressOnCheckBox_ = index.isValid() && index.column() == 0 && checkBoxRect(index).contains(pos);
  } else if (watched == table_->viewport() && event->type() == QEvent::MouseButtonRelease) {
    pressOnCheckBox_ = false;  // the press selected what it selects
  }
  return QDockWidget::eventFilter(watched, event);
}

void RunsPanel::selectionChanged() {
  // A tick is about that run alone: the others stay as they are.
  if (pressOnCheckBox_) return;
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return;  // the boxes say what is shown
  std::set<QString> runs;
  for (const QModelIndex& row : rows) runs.insert(dashboard_.runs().runName(proxy_->mapToSource(row).row()));
  dashboard_.runDisplay().showOnly(runs);
}

QStringList RunsPanel::summaryChoices() const { return dashboard_.runs().availableKeys(); }

void RunsPanel::setSummaryKeys(const QStringList& keys) {
  autoPicked_ = true;
  dashboard_.runs().setSummaryKeys(keys);
  dashboard_.settings().setRunSummaryKeys(dashboard_.runs().summaryKeys());
}

void RunsPanel::buildSummaryMenu() {
  QMenu* menu = summaries_->menu();
  menu->clear();
  const QStringList chosen = dashboard_.runs().summaryKeys();
  QStringList choices = summaryChoices();
  for (const QString& key : chosen) {
    if (!choices.contains(key)) choices << key;  // kept from a session, not charted yet
  }
  if (choices.isEmpty()) menu->addAction(tr("No Stat charted yet"))->setEnabled(false);
  for (const QString& key : choices) {
    QAction* action = menu->addAction(key);
    action->setCheckable(true);
    action->setChecked(chosen.contains(key));
    action->setEnabled(chosen.contains(key) || chosen.size() < RunsModel::kMaxSummaryKeys);
    connect(action, &QAction::toggled, this, [this, key](bool on) {
      QStringList keys = dashboard_.runs().summaryKeys();
      if (on) keys << key;
      else keys.removeAll(key);
      setSummaryKeys(keys);
    });
  }
}

void RunsPanel::runsChanged() {
  RunsModel& runs = dashboard_.runs();
  // Said, not silent: a run whose config has more keys than the table has columns would otherwise
  // look as if it had no value for the keys left out.
  if (const std::size_t dropped = runs.droppedConfigKeys(); dropped > 0) {
    // Spelled out: there is no translator to pick "value" or "values" from "%n value(s)".
    const QString values = dropped == 1 ? tr("1 value") : tr("%1 values").arg(QLocale().toString(static_cast<qulonglong>(dropped)));
    limit_->setText(tr("The table has columns for the first %1 config keys; %2 of later keys not shown.")
                        .arg(RunsModel::kMaxConfigColumns)
                        .arg(values));
    limit_->setVisible(true);
  }
  if (!autoShown_ && runs.rowCount() > 1) {
    autoShown_ = true;
    show();
  }
  if (autoPicked_) return;
  for (const QString& key : runs.availableKeys()) {
    if (key.contains(QStringLiteral("loss"), Qt::CaseInsensitive)) {
      autoPicked_ = true;
      runs.setSummaryKeys({key});  // not saved: the user did not choose it
      return;
    }
  }
}

}  // namespace livemon::ui
