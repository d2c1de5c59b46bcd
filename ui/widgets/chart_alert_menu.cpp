#include <livemon/ui/widgets/chart_alert_menu.h>

#include <QContextMenuEvent>
#include <QMenu>
#include <QMessageBox>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/alert_rule_dialog.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

namespace {

int preference(const SeriesEntry& series) {
  if (series.aggregation == QLatin1String("mean")) return 0;
  if (series.aggregation == QLatin1String("value")) return 1;
  return 2;
}

}  // namespace

ChartAlertMenu::ChartAlertMenu(Dashboard& dashboard, ChartGrid& grid, QObject* parent)
    : QObject(parent), dashboard_(dashboard), grid_(grid) {
  connect(&grid_, &ChartGrid::chartCreated, this, &ChartAlertMenu::watch);
}

void ChartAlertMenu::watch(StatChartView* chart) { chart->viewport()->installEventFilter(this); }

std::optional<ChartRuleProposal> ChartAlertMenu::proposal(const StatChartView& chart) const {
  const SeriesEntry* best = nullptr;
  for (SeriesId id : chart.seriesIds()) {
    const SeriesEntry* series = dashboard_.registry().series(id);
    if (series != nullptr && (best == nullptr || preference(*series) < preference(*best))) best = series;
  }
  if (best == nullptr) return std::nullopt;
  ChartRuleProposal result;
  // An event's field is charted under its own key; a Stat's line is "<stat>.<aggregation>".
  result.key = best->kind == SeriesKind::EventField ? best->stat : best->stat + u'.' + best->aggregation;
  result.lastValue = best->store.lastY().value_or(0.0);
  return result;
}

bool ChartAlertMenu::askForRule(StatChartView& chart, bool above) {
  const std::optional<ChartRuleProposal> start = proposal(chart);
  AlertRuleDialog dialog(start ? start->key : chart.statName(), start ? start->lastValue : 0.0, &chart);
  dialog.setAbove(above);
  if (dialog.exec() != QDialog::Accepted) return false;
  QString error;
  if (!dashboard_.alertCentre().addRule(dialog.ruleText(), &error)) {
    QMessageBox::warning(&chart, tr("Alert rule"), error);
    return false;
  }
  return true;
}

bool ChartAlertMenu::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() != QEvent::ContextMenu) return QObject::eventFilter(watched, event);
  auto* chart = qobject_cast<StatChartView*>(watched->parent());
  auto* menuEvent = static_cast<QContextMenuEvent*>(event);
  // The title is above the plot area; the plot's own right button pans.
  if (chart == nullptr || menuEvent->pos().y() >= chart->plotRect().top()) return QObject::eventFilter(watched, event);
  const std::optional<ChartRuleProposal> start = proposal(*chart);
  const QString key = start ? start->key : chart->statName();
  QMenu menu(chart);
  QAction* above = menu.addAction(tr("Alert when %1 is above…").arg(key));
  QAction* below = menu.addAction(tr("Alert when %1 is below…").arg(key));
  QAction* chosen = menu.exec(menuEvent->globalPos());
  if (chosen == above || chosen == below) askForRule(*chart, chosen == above);
  return true;
}

}  // namespace livemon::ui
