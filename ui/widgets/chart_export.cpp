#include <livemon/ui/widgets/chart_export.h>

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSvgGenerator>

#include <livemon/ui/model/chart_csv.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

namespace {

void setError(QString* error, const QString& text) {
  if (error != nullptr) *error = text;
}

// Asks where to save, then saves; a failure is told in a message box.
void saveAs(StatChartView& chart, const QString& title, const QString& suffix, const QString& filter,
            bool (*save)(StatChartView&, const QString&, QString*)) {
  const QString suggested = QDir::home().filePath(chartFileStem(chart.statName()) + suffix);
  const QString path = QFileDialog::getSaveFileName(&chart, title, suggested, filter);
  if (path.isEmpty()) return;
  QString error;
  if (!save(chart, path, &error)) QMessageBox::warning(&chart, title, error);
}

}  // namespace

QString chartFileStem(const QString& statName) {
  static const QRegularExpression refused(QStringLiteral("[^A-Za-z0-9._-]+"));
  QString stem = statName;
  stem.replace(refused, QStringLiteral("_"));
  return stem.isEmpty() ? QStringLiteral("chart") : stem;
}

bool saveChartPng(StatChartView& chart, const QString& path, QString* error) {
  const QPixmap picture = chart.grab();
  if (picture.isNull() || !picture.save(path, "PNG")) {
    setError(error, QObject::tr("Could not write the picture to %1").arg(path));
    return false;
  }
  return true;
}

bool saveChartSvg(StatChartView& chart, const QString& path, QString* error) {
  {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(chart.size());
    svg.setViewBox(QRect(QPoint(0, 0), chart.size()));
    svg.setTitle(chart.statName());
    svg.setDescription(QObject::tr("A livemon chart"));
    QPainter painter;
    if (!painter.begin(&svg)) {
      setError(error, QObject::tr("Could not write the drawing to %1").arg(path));
      return false;
    }
    chart.QGraphicsView::render(&painter);
  }
  // QSvgGenerator says nothing of a file it could not write: look.
  if (QFile(path).size() <= 0) {
    setError(error, QObject::tr("Could not write the drawing to %1").arg(path));
    return false;
  }
  return true;
}

bool saveChartCsv(const StatChartView& chart, const QString& path, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) ||
      !writeChartCsv(file, chart.csvColumns(), chart.xRange(), chart.timeAxisMode()) || !file.commit()) {
    setError(error, QObject::tr("Could not write %1: %2").arg(path, file.errorString()));
    return false;
  }
  return true;
}

QMenu* makeChartMenu(StatChartView& chart, QWidget* parent) {
  auto* menu = new QMenu(parent);
  QAction* log = menu->addAction(QObject::tr("Log scale"));
  log->setObjectName(QStringLiteral("logScale"));
  log->setCheckable(true);
  log->setChecked(chart.isLogScale());
  log->setEnabled(chart.viewOptions() != nullptr);
  QObject::connect(log, &QAction::toggled, menu, [&chart](bool on) {
    if (chart.viewOptions() != nullptr) chart.viewOptions()->setLogScale(chart.statName(), on);
  });
  QAction* live = menu->addAction(QObject::tr("Follow the data (undo zoom)"));
  live->setObjectName(QStringLiteral("followLive"));
  live->setToolTip(QObject::tr("Undo zoom and pan (or double-click the chart)"));
  QObject::connect(live, &QAction::triggered, menu, [&chart] { chart.resetView(); });
  menu->addSeparator();
  QObject::connect(menu->addAction(QObject::tr("Save as PNG…")), &QAction::triggered, menu, [&chart] {
    saveAs(chart, QObject::tr("Save chart as PNG"), QStringLiteral(".png"), QObject::tr("PNG pictures (*.png)"), &saveChartPng);
  });
  QObject::connect(menu->addAction(QObject::tr("Save as SVG…")), &QAction::triggered, menu, [&chart] {
    saveAs(chart, QObject::tr("Save chart as SVG"), QStringLiteral(".svg"), QObject::tr("SVG drawings (*.svg)"), &saveChartSvg);
  });
  QObject::connect(menu->addAction(QObject::tr("Save data as CSV…")), &QAction::triggered, menu, [&chart] {
    saveAs(chart, QObject::tr("Save chart data as CSV"), QStringLiteral(".csv"), QObject::tr("CSV files (*.csv)"),
           [](StatChartView& c, const QString& path, QString* error) { return saveChartCsv(c, path, error); });
  });
  return menu;
}

}  // namespace livemon::ui
