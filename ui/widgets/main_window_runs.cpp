// MainWindow and the runs: the Runs panel, and the x axis that turns to Step when several runs
// are shown.
#include <limits>

#include <QComboBox>

#include <livemon/ui/model/run_display.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/runs_panel.h>

namespace livemon::ui {

void MainWindow::followRunsOnAxis() {
  if (axisChosen_) return;
  // Several runs compare by step (their wall-clock times need not overlap at all), when they state
  // steps; the registry's step extent is none until a point carries one.
  const bool steps = dashboard_->runDisplay().shownCount() > 1 &&
                     dashboard_->registry().stepExtent({-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()});
  const TimeAxisMode mode = steps ? TimeAxisMode::Step : TimeAxisMode::WallClock;
  const int index = axisBox_->findData(timeAxisModeKey(mode));
  if (index >= 0 && index != axisBox_->currentIndex()) axisBox_->setCurrentIndex(index);
}

RunsPanel& MainWindow::runsPanel() const { return *findChild<RunsPanel*>(); }

}  // namespace livemon::ui
