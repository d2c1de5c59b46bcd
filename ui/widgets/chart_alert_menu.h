#pragma once

#include <optional>

#include <QObject>
#include <QPoint>
#include <QString>

namespace livemon::ui {

class ChartGrid;
class Dashboard;
class StatChartView;

// Thread-safety: a plain value type.
// What a chart proposes for a new rule: the key of its main line and that line's last value.
struct ChartRuleProposal {
  QString key;
  double lastValue = 0.0;
};

// GUI thread only.
// The context menu on a chart's title ("Alert when … is above/below…"): opens an AlertRuleDialog
// prefilled with the chart's key and last value and adds the rule to the Dashboard. It watches
// every chart the grid makes; a right click on the plot itself still pans.
class ChartAlertMenu : public QObject {
  Q_OBJECT

 public:
  // `dashboard` and `grid` must outlive it.
  ChartAlertMenu(Dashboard& dashboard, ChartGrid& grid, QObject* parent = nullptr);

  // The key and last value a rule on `chart` starts from: its "mean" line, else "value", else the
  // first; nothing when the chart has no line yet.
  std::optional<ChartRuleProposal> proposal(const StatChartView& chart) const;
  // Opens the dialog for `chart` and adds the rule when accepted; returns whether one was added.
  bool askForRule(StatChartView& chart, bool above);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void watch(StatChartView* chart);

  Dashboard& dashboard_;
  ChartGrid& grid_;
};

}  // namespace livemon::ui
