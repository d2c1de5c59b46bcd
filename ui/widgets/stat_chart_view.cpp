#include <livemon/ui/widgets/stat_chart_view.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include <QGraphicsLayout>
#include <QGraphicsLineItem>
#include <QMouseEvent>
#include <QRubberBand>
#include <QToolTip>
#include <QWheelEvent>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QCategoryAxis>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

constexpr int kMinimumDragPixels = 6;

StatChartView::StatChartView(const QString& statName, const StatRegistry& registry, TimeAxisMode mode,
                             QWidget* parent)
    : QChartView(parent), statName_(statName), registry_(registry), mode_(mode) {
  auto* chart = new QChart();
  chart->setTitle(statName_);
  styleChart(chart);
  chart->legend()->setShowToolTips(true);  // the full label of an entry cut short
  setChart(chart);
  setRenderHint(QPainter::Antialiasing);
  setRubberBand(QChartView::NoRubberBand);
  setMouseTracking(true);
  setFrameShape(QFrame::NoFrame);
  setBackgroundBrush(QColor(colours::kWindow));
  setMinimumSize(320, 240);

  yAxis_ = new QValueAxis();
  styleAxis(yAxis_);
  yAxis_->setTickType(QValueAxis::TicksDynamic);
  yAxis_->setTickAnchor(0.0);
  chart->addAxis(yAxis_, Qt::AlignLeft);
  installXAxis(mode_);

  crosshair_ = new QGraphicsLineItem();
  crosshair_->setPen(QPen(QColor(colours::kDimText), 1, Qt::DashLine));
  crosshair_->setZValue(1000);
  crosshair_->hide();
  scene()->addItem(crosshair_);
  rubberBand_ = new QRubberBand(QRubberBand::Rectangle, viewport());
}

StatChartView::~StatChartView() {
  // The areas refer to their edge series, which this view owns: remove the chart's series first.
  chart()->removeAllSeries();
}

bool StatChartView::addSeries(SeriesId id) {
  // Both searches are short: a chart holds at most maxLines_ lines.
  for (const auto& line : lines_) {
    if (line->id == id) return true;
  }
  if (std::find(pendingSeries_.begin(), pendingSeries_.end(), id) != pendingSeries_.end()) return true;
  if (lineCount() >= maxLines_) return false;
  pendingSeries_.push_back(id);
  return true;
}

void StatChartView::removeSeries(const std::vector<SeriesId>& ids) {
  const auto removed = [&ids](SeriesId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  std::erase_if(pendingSeries_, removed);
  const auto goes = [&removed](const Line* line) { return line != nullptr && removed(line->id); };
  if (std::none_of(lines_.begin(), lines_.end(), [&goes](const auto& line) { return goes(line.get()); })) return;
  hideHover();  // its text may name a line that goes
  QChart* chart = this->chart();
  // A band loses its area with either edge; one left with no edge at all goes too.
  for (Band& band : bands_) {
    if (!goes(band.min) && !goes(band.max)) continue;
    if (band.area != nullptr) {
      chart->removeSeries(band.area);
      delete band.area;  // before its edge series, which it refers to
      delete band.lower;
      delete band.upper;
      band.area = nullptr;
      band.lower = nullptr;
      band.upper = nullptr;
    }
    if (goes(band.min)) band.min = nullptr;
    if (goes(band.max)) band.max = nullptr;
  }
  std::erase_if(bands_, [](const Band& band) { return band.min == nullptr && band.max == nullptr; });
  std::erase_if(lines_, [&](const std::unique_ptr<Line>& line) {
    if (!removed(line->id)) return false;
    chart->removeSeries(line->series);
    delete line->series;
    return true;
  });
  // Fewer sources may mean one: the legend returns below the plot, in aggregation colours.
  styleLines();
  connectLegend();
  ++layoutVersion_;
}

bool StatChartView::multiSource() const {
  for (const auto& line : lines_) {
    if (line->entry->source != lines_.front()->entry->source) return true;
  }
  return false;
}

QString StatChartView::lineName(const Line& line) const {
  if (!multiSource()) return line.entry->aggregation;
  const SourceEntry* source = registry_.source(line.entry->source);
  return QStringLiteral("%1 · %2").arg(line.entry->aggregation, source != nullptr ? source->label : QStringLiteral("?"));
}

// Re-adds every series in legend order (bands first, so lines draw over them).
void StatChartView::rebuildSeries() {
  QChart* chart = this->chart();
  for (const auto& line : lines_) chart->removeSeries(line->series);
  for (const Band& band : bands_) {
    if (band.area != nullptr) chart->removeSeries(band.area);  // a max without a min has no area
  }

  for (SeriesId id : pendingSeries_) {
    const SeriesEntry* entry = registry_.series(id);
    if (entry == nullptr) continue;
    auto line = std::make_unique<Line>();
    line->id = id;
    line->entry = entry;
    line->series = new QLineSeries();
    lines_.push_back(std::move(line));
  }
  pendingSeries_.clear();
  std::stable_sort(lines_.begin(), lines_.end(), [](const auto& a, const auto& b) {
    const int orderA = aggregationOrder(a->entry->aggregation);
    const int orderB = aggregationOrder(b->entry->aggregation);
    if (orderA != orderB) return orderA < orderB;
    if (a->entry->aggregation != b->entry->aggregation) return a->entry->aggregation < b->entry->aggregation;
    return a->entry->source < b->entry->source;
  });

  // A band for every source with both a min and a max line.
  for (const auto& line : lines_) {
    const bool isMin = line->entry->aggregation == QLatin1String("min");
    const bool isMax = line->entry->aggregation == QLatin1String("max");
    if (!isMin && !isMax) continue;
    auto band = std::find_if(bands_.begin(), bands_.end(), [&](const Band& b) { return b.source == line->entry->source; });
    if (band == bands_.end()) {
      bands_.push_back(Band{});
      band = std::prev(bands_.end());
      band->source = line->entry->source;
    }
    (isMin ? band->min : band->max) = line.get();
  }
  for (Band& band : bands_) {
    if (band.area != nullptr || band.min == nullptr || band.max == nullptr) continue;
    band.lower = new QLineSeries(this);
    band.upper = new QLineSeries(this);
    band.area = new QAreaSeries(band.upper, band.lower);
  }

  for (const Band& band : bands_) {
    if (band.area == nullptr) continue;
    chart->addSeries(band.area);
    band.area->attachAxis(xAxis_);
    band.area->attachAxis(yAxis_);
  }
  for (const auto& line : lines_) {
    chart->addSeries(line->series);
    line->series->attachAxis(xAxis_);
    line->series->attachAxis(yAxis_);
  }
  styleLines();
  connectLegend();
  ++layoutVersion_;
}

void StatChartView::styleLines() {
  const bool several = multiSource();
  // Below the plot the entries share one row; with several sources ("mean · train r1", ...) their
  // labels no longer fit and Qt cuts them to nothing. On the right each entry has a row of its own.
  chart()->legend()->setAlignment(several ? Qt::AlignRight : Qt::AlignBottom);
  // Colour tells sources apart where several share the chart.
  const auto colourIndex = [&](SourceId id) -> std::optional<unsigned> {
    const SourceEntry* source = registry_.source(id);
    return several && source != nullptr ? std::optional<unsigned>(source->id) : std::nullopt;
  };
  for (const auto& line : lines_) {
    line->series->setPen(linePen(line->entry->aggregation, colourIndex(line->entry->source)));
    line->series->setName(lineName(*line));
    line->series->setVisible(!line->hidden);
  }
  for (const Band& band : bands_) {
    if (band.area == nullptr) continue;
    band.area->setBrush(bandFill(colourIndex(band.source)));
    band.area->setPen(Qt::NoPen);
    band.area->setName(QStringLiteral("min–max"));
    band.area->setVisible(!band.min->hidden && !band.max->hidden);
  }
}

void StatChartView::connectLegend() {
  QLegend* legend = chart()->legend();
  for (const Band& band : bands_) {
    if (band.area == nullptr) continue;
    for (QLegendMarker* marker : legend->markers(band.area)) marker->setVisible(false);
  }
  for (const auto& line : lines_) {
    for (QLegendMarker* marker : legend->markers(line->series)) {
      styleLegendMarker(marker, line->series->pen().color(), line->hidden);
      const SeriesId id = line->id;
      disconnect(marker, &QLegendMarker::clicked, this, nullptr);  // called again on renames
      connect(marker, &QLegendMarker::clicked, this, [this, id] { setSeriesVisible(id, !isSeriesVisible(id)); });
    }
  }
}

void StatChartView::refreshSeriesNames() {
  styleLines();
  connectLegend();
  ++layoutVersion_;
}

void StatChartView::installXAxis(TimeAxisMode mode) {
  QChart* chart = this->chart();
  if (xAxis_ != nullptr) {
    chart->removeAxis(xAxis_);
    delete xAxis_;
  }
  if (mode == TimeAxisMode::WallClock) {
    // A category axis rather than QDateTimeAxis, which can only split its range evenly: its ticks
    // would fall on odd times (19:03:35, 19:04:18) that move as the range follows the data.
    auto* axis = new QCategoryAxis();
    axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
    xAxis_ = axis;
  } else {
    auto* axis = new QValueAxis();
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTickAnchor(0.0);
    xAxis_ = axis;
  }
  styleAxis(xAxis_);
  chart->addAxis(xAxis_, Qt::AlignBottom);
  for (const auto& line : lines_) line->series->attachAxis(xAxis_);
  for (const Band& band : bands_) {
    if (band.area != nullptr) band.area->attachAxis(xAxis_);
  }
  mode_ = mode;
}

void StatChartView::setTimeAxisMode(TimeAxisMode mode) {
  if (mode == mode_) return;
  installXAxis(mode);
  ++layoutVersion_;
}

// The viewport's region: the view's own is empty, as the viewport is an opaque child covering it.
bool StatChartView::isOnScreen() const { return isVisible() && !viewport()->visibleRegion().isEmpty(); }

uint64_t StatChartView::dataVersion() const {
  uint64_t version = 0;
  for (const auto& line : lines_) version += line->entry->store.version();
  return version;
}

QRect StatChartView::plotRect() const {
  const QRectF inScene = chart()->mapRectToScene(chart()->plotArea());
  return mapFromScene(inScene).boundingRect();
}

StatChartView::RenderKey StatChartView::keyFor(const ChartRenderContext& context) const {
  const QRectF plot = chart()->plotArea();
  RenderKey key;
  key.mode = context.mode;
  key.x = context.x;
  key.columns = std::max(16, static_cast<int>(plot.width() > 0 ? plot.width() : width() - 80));
  key.rows = std::max(16, static_cast<int>(plot.height() > 0 ? plot.height() : height() - 80));
  key.data = context.frozen && lastKey_ ? frozenData_ : dataVersion();
  key.layout = layoutVersion_ + pendingSeries_.size() + (context.mode != mode_ ? 1 : 0);
  key.manualY = manualY_;
  return key;
}

bool StatChartView::needsRender(const ChartRenderContext& context) const {
  return isOnScreen() && (!lastKey_ || !(*lastKey_ == keyFor(context)));
}

bool StatChartView::render(const ChartRenderContext& context, bool force) {
  if (!force && !isOnScreen()) return false;
  if (!pendingSeries_.empty()) rebuildSeries();
  if (context.mode != mode_) setTimeAxisMode(context.mode);

  RenderKey key = keyFor(context);
  if (!force && lastKey_ && *lastKey_ == key) return false;
  draw(context, key);
  // New axis labels may have resized the plot: draw again at once for its new width, rather than
  // on the next refresh (which would cost a second paint).
  if (const RenderKey settled = keyFor(context); !(settled == key)) draw(context, settled);
  emit rendered();
  return true;
}

void StatChartView::draw(const ChartRenderContext& context, const RenderKey& key) {
  lastKey_ = key;
  frozenData_ = key.data;

  // Plot x back to store x: plot = (store - offset) * scale.
  const auto toStore = [](double x, const PlotTransform& transform) { return x / transform.scale + transform.offset; };
  const auto cutoff = [&context, &toStore](const PlotTransform& transform) {
    return context.cutoff ? toStore(*context.cutoff, transform) : std::numeric_limits<double>::infinity();
  };
  double yLow = std::numeric_limits<double>::infinity();
  double yHigh = -std::numeric_limits<double>::infinity();
  for (Band& band : bands_) {
    if (band.area == nullptr) continue;
    QList<QPointF> scratch;
    QList<QPointF> lower;
    QList<QPointF> upper;
    const PlotTransform transformMin = registry_.transform(*band.min->entry, context.mode);
    const PlotTransform transformMax = registry_.transform(*band.max->entry, context.mode);
    band.min->entry->store.decimate(toStore(context.x.min, transformMin), toStore(context.x.max, transformMin),
                                    key.columns, transformMin, scratch, &lower, nullptr, cutoff(transformMin));
    band.max->entry->store.decimate(toStore(context.x.min, transformMax), toStore(context.x.max, transformMax),
                                    key.columns, transformMax, scratch, nullptr, &upper, cutoff(transformMax));
    band.lower->replace(lower);
    band.upper->replace(upper);
  }
  for (const auto& line : lines_) {
    const PlotTransform transform = registry_.transform(*line->entry, context.mode);
    const DecimationSummary summary =
        line->entry->store.decimate(toStore(context.x.min, transform), toStore(context.x.max, transform), key.columns,
                                    transform, line->points, nullptr, nullptr, cutoff(transform));
    line->series->replace(line->points);
    if (!line->hidden && !summary.empty()) {
      yLow = std::min(yLow, summary.yMin);
      yHigh = std::max(yHigh, summary.yMax);
    }
  }
  updateAxes(context, manualY_ ? *manualY_ : (yLow <= yHigh ? paddedY(yLow, yHigh) : shownY_));
  // Lay the chart out now (new axis labels change the plot area): left to the event loop, it
  // would happen after the first paint and cost a second one.
  chart()->layout()->activate();
}

void StatChartView::updateAxes(const ChartRenderContext& context, XRange y) {
  const QRectF plot = chart()->plotArea();
  const double width = plot.width() > 0 ? plot.width() : 400.0;
  const double height = plot.height() > 0 ? plot.height() : 160.0;
  shownX_ = context.x;
  shownY_ = y;
  if (auto* wall = qobject_cast<QCategoryAxis*>(xAxis_)) {
    for (const QString& label : wall->categoriesLabels()) wall->remove(label);
    wall->setStartValue(context.x.min);
    for (const WallClockTick& tick : wallClockTickMarks(context.x, width)) wall->append(tick.label, tick.ms);
    wall->setRange(context.x.min, context.x.max);
  } else if (auto* run = qobject_cast<QValueAxis*>(xAxis_)) {
    const double step = tickStep(context.x.max - context.x.min, width, 110.0);
    run->setTickInterval(step);
    run->setLabelFormat(step >= 1.0 ? QStringLiteral("%.0f s") : QStringLiteral("%.1f s"));
    run->setRange(context.x.min, context.x.max);
  }
  const double yStep = tickStep(y.max - y.min, height, 45.0);
  yAxis_->setTickInterval(yStep);
  yAxis_->setLabelFormat(labelFormatFor(yStep, std::max(std::abs(y.min), std::abs(y.max))));
  yAxis_->setRange(y.min, y.max);
}

std::vector<SeriesId> StatChartView::seriesIds() const {
  std::vector<SeriesId> ids;
  for (const auto& line : lines_) ids.push_back(line->id);
  for (SeriesId id : pendingSeries_) ids.push_back(id);
  return ids;
}

QLineSeries* StatChartView::line(SeriesId id) const {
  for (const auto& line : lines_) {
    if (line->id == id) return line->series;
  }
  return nullptr;
}

QLineSeries* StatChartView::line(const QString& aggregation, SourceId source) const {
  for (const auto& line : lines_) {
    if (line->entry->aggregation == aggregation && line->entry->source == source) return line->series;
  }
  return nullptr;
}

QAreaSeries* StatChartView::band(SourceId source) const {
  for (const Band& band : bands_) {
    if (band.source == source) return band.area;
  }
  return nullptr;
}

XRange StatChartView::xRange() const { return shownX_; }

XRange StatChartView::yRange() const { return shownY_; }

StatChartView::Line* StatChartView::findLine(const QLineSeries* series) const {
  for (const auto& line : lines_) {
    if (line->series == series) return line.get();
  }
  return nullptr;
}

bool StatChartView::isSeriesVisible(SeriesId id) const {
  for (const auto& line : lines_) {
    if (line->id == id) return !line->hidden;
  }
  return false;
}

void StatChartView::setSeriesVisible(SeriesId id, bool visible) {
  for (const auto& line : lines_) {
    if (line->id != id || line->hidden == !visible) continue;
    line->hidden = !visible;
    line->series->setVisible(visible);
    for (const Band& band : bands_) {
      if (band.area != nullptr && (band.min == line.get() || band.max == line.get())) {
        band.area->setVisible(!band.min->hidden && !band.max->hidden);
        for (QLegendMarker* marker : chart()->legend()->markers(band.area)) marker->setVisible(false);
      }
    }
    // Hiding a series hides its legend entry too; keep it, dimmed, so it can be clicked back.
    for (QLegendMarker* marker : chart()->legend()->markers(line->series)) {
      styleLegendMarker(marker, line->series->pen().color(), line->hidden);
    }
    ++layoutVersion_;
  }
}

std::optional<QPointF> StatChartView::valueAt(QPoint viewportPos) const {
  if (lines_.empty() || !plotRect().contains(viewportPos)) return std::nullopt;
  const QPointF inChart = chart()->mapFromScene(mapToScene(viewportPos));
  return chart()->mapToValue(inChart, lines_.front()->series);
}

QString StatChartView::tooltipAt(QPoint viewportPos) const {
  const std::optional<QPointF> value = valueAt(viewportPos);
  if (!value) return {};
  const double x = value->x();
  QString rows;
  for (const auto& line : lines_) {
    if (line->hidden || line->points.isEmpty()) continue;
    const auto& points = line->points;
    auto at = std::lower_bound(points.begin(), points.end(), x, [](const QPointF& p, double v) { return p.x() < v; });
    if (at == points.end()) --at;
    if (at != points.begin() && std::abs(std::prev(at)->x() - x) < std::abs(at->x() - x)) --at;
    // Only values near the cursor: not a line that ended long before it.
    const double tolerance = (shownX_.max - shownX_.min) * 0.05;
    if (std::abs(at->x() - x) > tolerance) continue;
    const QString colour = line->series->pen().color().name();
    rows += QStringLiteral("<tr><td><span style='color:%1'>&#9632;</span> %2</td><td align='right'>&nbsp;%3</td></tr>")
                .arg(colour, lineName(*line).toHtmlEscaped(), QString::number(at->y(), 'g', 6));
  }
  if (rows.isEmpty()) return {};
  QString sources;
  if (!lines_.empty()) {
    std::vector<SourceId> seen;
    for (const auto& line : lines_) {
      if (std::find(seen.begin(), seen.end(), line->entry->source) != seen.end()) continue;
      seen.push_back(line->entry->source);
      if (const SourceEntry* source = registry_.source(line->entry->source)) {
        sources += QStringLiteral("<br/><span style='color:%1'>%2</span> %3")
                       .arg(sourceColour(source->id).name(), source->label.toHtmlEscaped(), source->description.toHtmlEscaped());
      }
    }
  }
  return QStringLiteral("<b>%1</b> &nbsp;%2<table cellspacing='0'>%3</table><small>%4</small>")
      .arg(statName_.toHtmlEscaped(), formatX(x, mode_), rows, sources.mid(5));
}

void StatChartView::showHover(QPoint viewportPos) {
  const QString text = tooltipAt(viewportPos);
  if (text.isEmpty()) {
    hideHover();
    return;
  }
  const QRectF plot = chart()->mapRectToScene(chart()->plotArea());
  const QPointF scenePos = mapToScene(viewportPos);
  crosshair_->setLine(scenePos.x(), plot.top(), scenePos.x(), plot.bottom());
  crosshair_->show();
  QToolTip::showText(viewport()->mapToGlobal(viewportPos + QPoint(16, 16)), text, this);
}

void StatChartView::hideHover() {
  crosshair_->hide();
  QToolTip::hideText();
}

void StatChartView::mousePressEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (!plotRect().contains(pos)) {
    QChartView::mousePressEvent(event);  // the legend takes its clicks here
    return;
  }
  hideHover();
  if (event->button() == Qt::LeftButton) {
    selecting_ = true;
    rubberOrigin_ = pos;
    rubberBand_->setGeometry(QRect(pos, QSize()));
    rubberBand_->show();
  } else if (event->button() == Qt::RightButton || event->button() == Qt::MiddleButton) {
    panning_ = true;
    panOrigin_ = pos;
    panStart_ = shownX_;
    setCursor(Qt::ClosedHandCursor);
  }
  event->accept();
}

void StatChartView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (selecting_) {
    rubberBand_->setGeometry(QRect(rubberOrigin_, pos).normalized().intersected(plotRect()));
  } else if (panning_) {
    const double plotWidth = std::max(1, plotRect().width());
    const double shift = (pos.x() - panOrigin_.x()) / plotWidth * (panStart_.max - panStart_.min);
    emit rangeRequested(panStart_.min - shift, panStart_.max - shift);
  } else {
    showHover(pos);
    QChartView::mouseMoveEvent(event);
    return;
  }
  event->accept();
}

void StatChartView::mouseReleaseEvent(QMouseEvent* event) {
  if (selecting_ && event->button() == Qt::LeftButton) {
    selecting_ = false;
    rubberBand_->hide();
    const QRect selected = rubberBand_->geometry();
    if (selected.width() >= kMinimumDragPixels && !lines_.empty()) {
      auto* series = lines_.front()->series;
      const QPointF topLeft = chart()->mapToValue(chart()->mapFromScene(mapToScene(selected.topLeft())), series);
      const QPointF bottomRight =
          chart()->mapToValue(chart()->mapFromScene(mapToScene(selected.bottomRight())), series);
      if (selected.height() >= kMinimumDragPixels) manualY_ = XRange{bottomRight.y(), topLeft.y()};
      emit rangeRequested(topLeft.x(), bottomRight.x());
    }
    event->accept();
    return;
  }
  if (panning_) {
    panning_ = false;
    unsetCursor();
    event->accept();
    return;
  }
  QChartView::mouseReleaseEvent(event);
}

void StatChartView::mouseDoubleClickEvent(QMouseEvent* event) {
  if (!plotRect().contains(event->position().toPoint())) {
    QChartView::mouseDoubleClickEvent(event);
    return;
  }
  manualY_.reset();
  ++layoutVersion_;
  emit resetRequested();
  event->accept();
}

void StatChartView::wheelEvent(QWheelEvent* event) {
  const QPoint pos = event->position().toPoint();
  const std::optional<QPointF> value = valueAt(pos);
  if (!value || event->angleDelta().y() == 0) {
    QChartView::wheelEvent(event);
    return;
  }
  // Zoom the x axis about the cursor: 20 % per wheel notch.
  const double factor = std::pow(0.8, event->angleDelta().y() / 120.0);
  const double centre = value->x();
  emit rangeRequested(centre - (centre - shownX_.min) * factor, centre + (shownX_.max - centre) * factor);
  event->accept();
}

void StatChartView::leaveEvent(QEvent* event) {
  hideHover();
  QChartView::leaveEvent(event);
}

}  // namespace livemon::ui
