#include <livemon/ui/widgets/alerts_dock.h>

#include <cstdint>

#include <QHeaderView>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QPixmap>
#include <QSystemTrayIcon>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/alert_list_model.h>
#include <livemon/ui/model/time_view.h>
#include <livemon/ui/widgets/chart_alert_markers.h>
#include <livemon/ui/widgets/chart_alert_menu.h>
#include <livemon/ui/widgets/chart_flash.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

// Live, a jump shows this much on either side of the alert.
constexpr double kJumpHalfWidthMs = 30'000.0;

QIcon alertIcon() {
  QPixmap pixmap(16, 16);
  pixmap.fill(QColor(colours::bad()));
  return QIcon(pixmap);
}

}  // namespace

AlertsDock::AlertsDock(Dashboard& dashboard, ChartGrid& grid, QWidget* parent)
    : QDockWidget(tr("Alerts"), parent), dashboard_(dashboard), grid_(grid) {
  setObjectName(QStringLiteral("alertsDock"));
  table_ = new QTableView(this);
  table_->setModel(&dashboard_.alertCentre().alerts());
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setWordWrap(false);
  table_->setToolTip(tr("Double-click an alert to jump to it"));
  rules_ = new QListWidget(this);
  rules_->setToolTip(tr("Your rules, beside the built-in nan, silent and loss; add one from a chart title's context menu"));
  rules_->setMaximumHeight(90);
  auto* remove = new QToolButton(this);
  remove->setText(tr("Remove rule"));
  connect(remove, &QToolButton::clicked, this, &AlertsDock::removeSelectedRule);
  auto* rulesHeader = new QHBoxLayout;
  rulesHeader->addWidget(new QLabel(tr("Rules (right-click a chart's title to add one):"), this), 1);
  rulesHeader->addWidget(remove);
  auto* content = new QWidget(this);
  auto* layout = new QVBoxLayout(content);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(table_, 1);
  layout->addLayout(rulesHeader);
  layout->addWidget(rules_);
  setWidget(content);
  chartMenu_ = new ChartAlertMenu(dashboard_, grid_, this);
  chartMarkers_ = new ChartAlertMarkers(dashboard_, grid_, this);
  connect(&dashboard_.alertCentre(), &AlertCentre::rulesChanged, this, &AlertsDock::showRules);
  showRules();
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    if (const AlertEntry* alert = dashboard_.alertCentre().alerts().entry(index.row())) showAlert(*alert);
  });

  badge_ = new QToolButton(this);
  badge_->setAutoRaise(true);
  badge_->setToolTip(tr("Alerts raised by the rules; click to show the list"));
  badge_->hide();
  connect(badge_, &QToolButton::clicked, this, [this] {
    show();
    raise();
    dashboard_.alertCentre().alerts().markSeen();
  });

  connect(&dashboard_.alertCentre(), &AlertCentre::alertRaised, this, &AlertsDock::alertRaised);
  connect(&dashboard_.alertCentre().alerts(), &AlertListModel::unseenChanged, this, &AlertsDock::updateBadge);
  connect(&dashboard_.alertCentre().alerts(), &QAbstractItemModel::rowsInserted, table_, [this] { table_->scrollToBottom(); });
}

void AlertsDock::showRules() {
  rules_->clear();
  rules_->addItems(dashboard_.alertCentre().rules());
}

void AlertsDock::removeSelectedRule() {
  if (const QListWidgetItem* item = rules_->currentItem()) dashboard_.alertCentre().removeRule(item->text());
}

void AlertsDock::showEvent(QShowEvent* event) {
  QDockWidget::showEvent(event);
  dashboard_.alertCentre().alerts().markSeen();
}

void AlertsDock::updateBadge() {
  const uint64_t unseen = dashboard_.alertCentre().alerts().unseen();
  const int total = dashboard_.alertCentre().alerts().rowCount();
  badge_->setVisible(total > 0);
  const QString count = QLocale().toString(static_cast<qulonglong>(unseen > 0 ? unseen : static_cast<uint64_t>(total)));
  if (unseen > 0) {
    badge_->setText(unseen == 1 ? tr("⚠ %1 new alert").arg(count) : tr("⚠ %1 new alerts").arg(count));
  } else {
    badge_->setText(total == 1 ? tr("%1 alert").arg(count) : tr("%1 alerts").arg(count));
  }
  badge_->setStyleSheet(unseen > 0 ? QStringLiteral("QToolButton { color: %1; font-weight: bold; }").arg(QColor(colours::bad()).name())
                                   : dimTextStyle());
}

void AlertsDock::alertRaised(const AlertEntry& alert) {
  // Seen at once when the list is in view.
  if (isVisible() && !visibleRegion().isEmpty()) dashboard_.alertCentre().alerts().markSeen();
  updateBadge();
  lastNotification_ = QStringLiteral("%1: %2").arg(alert.source, alert.message);
  if (!QSystemTrayIcon::isSystemTrayAvailable() || !QSystemTrayIcon::supportsMessages()) return;
  if (tray_ == nullptr) {
    tray_ = new QSystemTrayIcon(alertIcon(), this);
    tray_->setToolTip(QStringLiteral("livemon"));
    tray_->show();
  }
  tray_->showMessage(tr("livemon alert: %1").arg(alert.rule), lastNotification_, QSystemTrayIcon::Warning);
}

void AlertsDock::showAlert(const AlertEntry& alert) {
  jumpTo(alert.timeMs);
  StatChartView* chart = chartMarkers_->chartOf(alert);
  if (chart != nullptr && grid_.revealChart(chart->statName())) ChartFlash::flash(*chart);
}

void AlertsDock::jumpTo(double timeMs) {
  if (ReplaySession* replay = dashboard_.replays().replay(); replay != nullptr && replay->isOpen()) {
    replay->seek(static_cast<int64_t>(timeMs * 1e6));
  } else if (grid_.timeView().mode() == TimeAxisMode::WallClock) {
    grid_.showRange(XRange{timeMs - kJumpHalfWidthMs, timeMs + kJumpHalfWidthMs});
  }
  emit jumped(timeMs);
}

}  // namespace livemon::ui
