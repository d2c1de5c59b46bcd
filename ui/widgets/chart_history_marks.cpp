#include <livemon/ui/widgets/chart_history_marks.h>

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QPen>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/transport/publisher.h>
#include <livemon/ui/dashboard/dashboard.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/stat_chart_view.h>

namespace livemon::ui {

namespace {

constexpr double kLabelGap = 3.0;  // between the line and its label, in pixels

QString tooltipFor(const HistoryNote& note) {
  const QString from = QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(*note.oldestMs)).toString(QStringLiteral("HH:mm:ss"));
  return QObject::tr("The history received from %1 begins here, at %2: the source keeps only the newest part of the "
                     "run (a publisher the newest %3 MiB unless LIVEMON_HISTORY_MB says otherwise), so what came "
                     "before was not kept and is not shown.")
      .arg(QString::fromStdString(note.endpoint), from)
      .arg(transport::kDefaultHistoryBytes / (1024 * 1024));
}

}  // namespace

ChartHistoryMarks::ChartHistoryMarks(Dashboard& dashboard, ChartGrid& grid, QObject* parent)
    : QObject(parent), dashboard_(dashboard), grid_(grid) {
  connect(&grid_, &ChartGrid::chartCreated, this, &ChartHistoryMarks::watch);
  for (StatChartView* chart : grid_.charts()) watch(chart);
  // A later history of the same endpoint (connected again) moves its mark, or takes it away.
  connect(&dashboard_, &Dashboard::historyNoted, this, [this] {
    for (StatChartView* chart : grid_.charts()) place(chart);
  });
}

void ChartHistoryMarks::watch(StatChartView* chart) {
  connect(chart, &StatChartView::rendered, this, [this, chart] { place(chart); });
  connect(chart, &QObject::destroyed, this, [this, chart] { marks_.erase(chart); });
}

std::optional<SeriesId> ChartHistoryMarks::lineOf(const StatChartView& chart, const QString& endpoint) const {
  for (SeriesId id : chart.seriesIds()) {
    const SeriesEntry* entry = dashboard_.registry().series(id);
    if (entry == nullptr || chart.line(id) == nullptr) continue;
    const SourceEntry* source = dashboard_.registry().source(entry->source);
    if (source != nullptr && source->endpoint == endpoint) return id;
  }
  return std::nullopt;
}

void ChartHistoryMarks::place(StatChartView* chart) {
  const auto existing = marks_.find(chart);
  bool any = existing != marks_.end();
  for (const HistoryNote& note : dashboard_.historyNotes()) any = any || note.marksBeginning();
  if (!any) return;  // the common case: no history was cut, nothing to draw or hide

  std::map<QString, Mark>& marks = marks_[chart];
  for (auto& [endpoint, mark] : marks) {
    mark.line->hide();
    mark.label->hide();
  }
  QChart* plot = chart->chart();
  const QRectF area = plot->plotArea();
  const TimeAxisMode mode = grid_.timeView().mode();
  for (const HistoryNote& note : dashboard_.historyNotes()) {
    if (!note.marksBeginning() || (mode == TimeAxisMode::Step && !note.firstStep)) continue;
    const QString endpoint = QString::fromStdString(note.endpoint);
    const std::optional<SeriesId> id = lineOf(*chart, endpoint);
    if (!id) continue;
    Mark& mark = marks[endpoint];
    if (mark.line == nullptr) {
      mark.line = new QGraphicsLineItem(plot);
      QPen pen{QColor(colours::dimText()), 1.2, Qt::DashLine};
      mark.line->setPen(pen);
      mark.line->setZValue(8.0);
      mark.label = new QGraphicsSimpleTextItem(tr("history begins"), plot);
      mark.label->setFont(smallFont(8));
      mark.label->setBrush(QColor(colours::dimText()));
      mark.label->setZValue(8.0);
    }
    const QString tip = tooltipFor(note);
    mark.line->setToolTip(tip);
    mark.label->setToolTip(tip);
    const SeriesEntry& entry = *dashboard_.registry().series(*id);
    const double x = mode == TimeAxisMode::Step ? *note.firstStep
                                                : dashboard_.registry().transform(entry, mode).apply(*note.oldestMs);
    const double at = plot->mapToPosition(QPointF(x, 0.0), chart->line(*id)).x();
    if (at < area.left() || at > area.right()) continue;
    mark.line->setLine(at, area.top(), at, area.bottom());
    mark.line->show();
    // Right of the line, inside the plot: the history is what lies to its right.
    const QRectF text = mark.label->boundingRect();
    const double left = at + kLabelGap + text.width() <= area.right() ? at + kLabelGap : at - kLabelGap - text.width();
    mark.label->setPos(left, area.top() + kLabelGap);
    mark.label->show();
  }
}

std::vector<const QGraphicsLineItem*> ChartHistoryMarks::visibleMarks(const StatChartView& chart) const {
  std::vector<const QGraphicsLineItem*> shown;
  if (const auto found = marks_.find(&chart); found != marks_.end()) {
    for (const auto& [endpoint, mark] : found->second) {
      if (mark.line->isVisible()) shown.push_back(mark.line);
    }
  }
  return shown;
}

const QGraphicsSimpleTextItem* ChartHistoryMarks::labelOf(const QGraphicsLineItem* line) const {
  for (const auto& [chart, marks] : marks_) {
    for (const auto& [endpoint, mark] : marks) {
      if (mark.line == line) return mark.label;
    }
  }
  return nullptr;
}

}  // namespace livemon::ui
