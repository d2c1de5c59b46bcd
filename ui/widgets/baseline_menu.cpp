#include <livemon/ui/widgets/baseline_menu.h>

#include <vector>

#include <QAction>
#include <QFileInfo>
#include <QMenu>

#include <livemon/ui/dashboard/replay_controller.h>

namespace livemon::ui {

namespace {

QString baselineName(const ReplaySession& baseline) {
  // The session's path, as opened; its endpoint label adds "baseline: ".
  const QString label = baseline.endpointLabel();
  const QString prefix = QStringLiteral("baseline: ");
  return QFileInfo(label.startsWith(prefix) ? label.mid(prefix.size()) : label).fileName();
}

}  // namespace

BaselineMenu::BaselineMenu(ReplayController& replays, QMenu& file) : QObject(&file), replays_(replays) {
  close_ = file.addAction(tr("Close &baseline"));
  closeMenu_ = file.addMenu(tr("Close &baseline"));
  follow_ = file.addAction(tr("Baselines &follow the live run"));
  follow_->setCheckable(true);
  follow_->setChecked(replays_.baselinesFollowLive());
  follow_->setToolTip(tr("Show each baseline only up to the live run's elapsed time, so both are compared at the same age"));
  connect(follow_, &QAction::toggled, &replays_, &ReplayController::setBaselinesFollowLive);
  connect(close_, &QAction::triggered, this, [this] {
    const std::vector<ReplaySession*> open = replays_.baselines();
    if (open.size() == 1) replays_.closeBaseline(open.front());
  });
  connect(&replays_, &ReplayController::baselinesChanged, this, &BaselineMenu::rebuild);
  rebuild();
}

void BaselineMenu::rebuild() {
  const std::vector<ReplaySession*> open = replays_.baselines();
  close_->setVisible(open.size() == 1);
  if (open.size() == 1) close_->setText(tr("Close &baseline %1").arg(baselineName(*open.front())));
  closeMenu_->clear();
  closeMenu_->menuAction()->setVisible(open.size() > 1);
  for (ReplaySession* baseline : open) {
    QAction* entry = closeMenu_->addAction(baselineName(*baseline));
    entry->setToolTip(baseline->endpointLabel());
    // By the session, not by its place in the list: the list may change before the click.
    connect(entry, &QAction::triggered, this, [this, baseline] { replays_.closeBaseline(baseline); });
  }
}

}  // namespace livemon::ui
