#include <livemon/ui/widgets/help_menu.h>

#include <utility>
#include <vector>

#include <QAction>
#include <QApplication>
#include <QCoreApplication>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QMenuBar>
#include <QMessageBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace livemon::ui {

namespace {

// What the charts, the log and the timeline take beside the menus' shortcuts (docs/dashboard.md).
std::vector<std::pair<QString, QString>> gestures() {
  return {
      {QObject::tr("Mouse wheel"), QObject::tr("Scroll the charts")},
      {QObject::tr("Ctrl + mouse wheel"), QObject::tr("Zoom every chart in or out, about the cursor")},
      {QObject::tr("Left-drag on a chart"), QObject::tr("Zoom into the rectangle")},
      {QObject::tr("Right- or middle-drag on a chart"), QObject::tr("Pan")},
      {QObject::tr("Double-click a chart"), QObject::tr("Follow live data again (undo zoom and pan)")},
      {QObject::tr("Click a legend entry"), QObject::tr("Hide or show that line")},
      {QObject::tr("Right-click a chart"), QObject::tr("Log scale, alerts, save as PNG, SVG or CSV")},
      {QObject::tr("Escape"), QObject::tr("Back from an enlarged chart to the grid")},
      {QObject::tr("Ctrl+C in the event log"), QObject::tr("Copy the selected rows as tab-separated text")},
      {QObject::tr("Double-click an alert"), QObject::tr("Jump to it")},
  };
}

QString plainText(QString text) { return text.remove(QLatin1Char('&')); }

void openGuide(QWidget& parent) {
  const QUrl url = dashboardGuideUrl();
  if (url.isEmpty() || !QDesktopServices::openUrl(url)) {
    auto* box = new QMessageBox(QMessageBox::Information, QObject::tr("Dashboard guide"),
                                QObject::tr("The guide is docs/dashboard.md in the livemon sources."), QMessageBox::Ok,
                                &parent);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  }
}

void showAbout(QWidget& parent) {
  const QString version = QCoreApplication::applicationVersion();
  auto* box = new QMessageBox(
      QMessageBox::NoIcon, QObject::tr("About livemon"),
      QObject::tr("<b>livemon %1</b><p>Live monitoring for machine-learning training runs: Stats, events and "
                  "ranges from your job, charted as they arrive, recorded and replayed.</p><p>Qt %2</p>")
          .arg(version.isEmpty() ? QObject::tr("(development build)") : version, QString::fromLatin1(qVersion())),
      QMessageBox::Ok, &parent);
  box->setObjectName(QStringLiteral("aboutBox"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

}  // namespace

QUrl dashboardGuideUrl() {
  // Installed (the .deb's /usr/share/doc/livemon) first, then the sources this one was built from.
  const QDir app(QCoreApplication::applicationDirPath());
  QStringList candidates{app.filePath(QStringLiteral("../share/doc/livemon/dashboard.md"))};
#ifdef LIVEMON_SOURCE_DOCS
  candidates << QStringLiteral(LIVEMON_SOURCE_DOCS "/dashboard.md");
#endif
  for (const QString& path : candidates) {
    if (QFileInfo::exists(path)) return QUrl::fromLocalFile(QFileInfo(path).canonicalFilePath());
  }
  return {};
}

QDialog* showShortcuts(QMainWindow& window) {
  std::vector<std::pair<QString, QString>> rows;
  for (QAction* menu : window.menuBar()->actions()) {
    if (menu->menu() == nullptr) continue;
    for (QAction* action : menu->menu()->actions()) {
      if (action->shortcut().isEmpty()) continue;
      rows.emplace_back(action->shortcut().toString(QKeySequence::NativeText),
                        plainText(menu->text()) + QStringLiteral(" › ") + plainText(action->text()));
    }
  }
  for (auto& gesture : gestures()) rows.push_back(std::move(gesture));

  auto* dialog = new QDialog(&window);
  dialog->setObjectName(QStringLiteral("shortcutsDialog"));
  dialog->setWindowTitle(QObject::tr("Keyboard shortcuts"));
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  auto* layout = new QVBoxLayout(dialog);
  auto* table = new QTableWidget(static_cast<int>(rows.size()), 2, dialog);
  table->setHorizontalHeaderLabels({QObject::tr("Keys or mouse"), QObject::tr("Does")});
  table->verticalHeader()->hide();
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->setSelectionMode(QAbstractItemView::NoSelection);
  table->setShowGrid(false);
  for (int row = 0; row < static_cast<int>(rows.size()); ++row) {
    table->setItem(row, 0, new QTableWidgetItem(rows[static_cast<std::size_t>(row)].first));
    table->setItem(row, 1, new QTableWidgetItem(rows[static_cast<std::size_t>(row)].second));
  }
  table->resizeColumnToContents(0);
  table->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(table);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  layout->addWidget(buttons);
  dialog->resize(620, 520);
  dialog->open();
  return dialog;
}

void addHelpMenu(QMainWindow& window) {
  QMenu* help = window.menuBar()->addMenu(QObject::tr("&Help"));
  QAction* shortcuts = help->addAction(QObject::tr("&Keyboard shortcuts"));
  shortcuts->setObjectName(QStringLiteral("helpShortcuts"));
  shortcuts->setShortcut(QKeySequence(Qt::Key_F1));
  QObject::connect(shortcuts, &QAction::triggered, &window, [&window] { showShortcuts(window); });
  QAction* guide = help->addAction(QObject::tr("Dashboard &guide (docs/dashboard.md)"));
  guide->setObjectName(QStringLiteral("helpGuide"));
  guide->setToolTip(dashboardGuideUrl().toLocalFile());
  QObject::connect(guide, &QAction::triggered, &window, [&window] { openGuide(window); });
  help->addSeparator();
  QAction* about = help->addAction(QObject::tr("&About livemon"));
  about->setObjectName(QStringLiteral("helpAbout"));
  QObject::connect(about, &QAction::triggered, &window, [&window] { showAbout(window); });
}

}  // namespace livemon::ui
