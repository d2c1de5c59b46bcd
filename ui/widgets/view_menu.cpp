#include <livemon/ui/widgets/view_menu.h>

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QEvent>
#include <QMenu>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>

#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/event_log_view.h>

namespace livemon::ui {

ViewMenu::ViewMenu(QMenu& menu, QSplitter& splitter, QTabWidget& views, EventLogView& log, ChartGrid& grid,
                   QDockWidget& alerts)
    : QObject(&menu), splitter_(splitter), log_(log) {
  auto* tabs = new QActionGroup(this);
  for (int i = 0; i < views.count(); ++i) {
    QAction* tab = menu.addAction(views.tabText(i));
    tab->setObjectName(QStringLiteral("viewTab%1").arg(i));
    tab->setCheckable(true);
    tab->setChecked(views.currentIndex() == i);
    tab->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    tabs->addAction(tab);
    connect(tab, &QAction::triggered, &views, [&views, i] { views.setCurrentIndex(i); });
  }
  connect(&views, &QTabWidget::currentChanged, this, [tabs](int index) {
    if (index >= 0 && index < tabs->actions().size()) tabs->actions()[index]->setChecked(true);
  });
  menu.addSeparator();

  logAction_ = menu.addAction(tr("&Event log"));
  logAction_->setObjectName(QStringLiteral("viewEventLog"));
  logAction_->setCheckable(true);
  logAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  logAction_->setToolTip(tr("Show the event log beside the charts, or collapse it"));
  connect(logAction_, &QAction::triggered, this, &ViewMenu::setLogShown);
  connect(&splitter_, &QSplitter::splitterMoved, this, &ViewMenu::syncLogAction);

  statWindowsAction_ = menu.addAction(tr("&Stat windows in the log"));
  statWindowsAction_->setObjectName(QStringLiteral("viewStatWindows"));
  statWindowsAction_->setCheckable(true);
  statWindowsAction_->setChecked(log_.showStatWindows());
  statWindowsAction_->setToolTip(log_.statWindowsBox()->toolTip());
  connect(statWindowsAction_, &QAction::triggered, &log_, &EventLogView::setShowStatWindows);
  connect(&log_, &EventLogView::statWindowsShownChanged, statWindowsAction_, &QAction::setChecked);

  QAction* alertsAction = alerts.toggleViewAction();
  alertsAction->setText(tr("&Alerts"));
  alertsAction->setObjectName(QStringLiteral("viewAlerts"));
  menu.addAction(alertsAction);
  menu.addSeparator();

  QMenu* themes = menu.addMenu(tr("&Theme"));
  auto* themeGroup = new QActionGroup(this);
  darkAction_ = themes->addAction(tr("&Dark"));
  darkAction_->setObjectName(QStringLiteral("viewThemeDark"));
  lightAction_ = themes->addAction(tr("&Light"));
  lightAction_->setObjectName(QStringLiteral("viewThemeLight"));
  for (QAction* action : {darkAction_, lightAction_}) {
    action->setCheckable(true);
    themeGroup->addAction(action);
  }
  (currentTheme() == Theme::Light ? lightAction_ : darkAction_)->setChecked(true);
  connect(darkAction_, &QAction::triggered, this, [this] { setTheme(Theme::Dark); });
  connect(lightAction_, &QAction::triggered, this, [this] { setTheme(Theme::Light); });

  connect(&grid, &ChartGrid::enlargedChanged, this, &ViewMenu::enlargedChanged);
  // The splitter's sizes are known once it is shown (a restored state among them).
  splitter_.installEventFilter(this);
  syncLogAction();
}

bool ViewMenu::logShown() const {
  const QList<int> sizes = splitter_.sizes();
  return !log_.isHidden() && sizes.size() > 1 && sizes[1] > 0;
}

void ViewMenu::setLogShown(bool shown) {
  QList<int> sizes = splitter_.sizes();
  if (sizes.size() < 2) return;
  const int total = sizes[0] + sizes[1];
  if (shown) {
    if (log_.isHidden()) {
      log_.show();
      sizes = splitter_.sizes();
    }
    if (sizes[1] == 0) {
      const int width = logWidth_ > 0 ? logWidth_ : static_cast<int>(total * kDefaultLogShare);
      splitter_.setSizes({total - width, width});
    }
  } else if (log_.isHidden()) {
    // A chart is enlarged: the log stays collapsed when the grid comes back.
    if (beforeEnlarge_.size() > 1 && beforeEnlarge_[1] > 0) {
      logWidth_ = beforeEnlarge_[1];
      beforeEnlarge_ = {beforeEnlarge_[0] + beforeEnlarge_[1], 0};
    }
  } else if (sizes[1] > 0) {
    logWidth_ = sizes[1];
    splitter_.setSizes({total, 0});
  }
  syncLogAction();
}

void ViewMenu::giveLogDefaultWidthOnShow() { defaultWidthPending_ = true; }

void ViewMenu::setTheme(Theme theme) {
  if (theme != currentTheme()) applyTheme(*qApp, theme);
  (theme == Theme::Light ? lightAction_ : darkAction_)->setChecked(true);
}

bool ViewMenu::eventFilter(QObject* watched, QEvent* event) {
  if (watched == &splitter_ && event->type() == QEvent::Show) {
    const QList<int> sizes = splitter_.sizes();
    const int total = sizes.value(0) + sizes.value(1);
    if (defaultWidthPending_ && sizes.value(1) > 0 && total > 0) {
      const int log = static_cast<int>(total * kDefaultLogShare);
      splitter_.setSizes({total - log, log});
    }
    defaultWidthPending_ = false;
    syncLogAction();
  }
  return QObject::eventFilter(watched, event);
}

void ViewMenu::enlargedChanged(bool enlarged) {
  if (enlarged) {
    beforeEnlarge_ = splitter_.sizes();
    log_.hide();
  } else if (log_.isHidden()) {
    log_.show();
    if (!beforeEnlarge_.isEmpty()) splitter_.setSizes(beforeEnlarge_);
  }
  syncLogAction();
}

void ViewMenu::syncLogAction() {
  const QSignalBlocker blocker(logAction_);
  logAction_->setChecked(logShown());
}

}  // namespace livemon::ui
