#include <livemon/ui/widgets/chart_trace.h>

#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>

namespace livemon::ui {

namespace {
constexpr qreal kPointMarkerSize = 7.0;
}  // namespace

ChartTrace::ChartTrace(QChart* chart) : chart_(chart) {
  series_.push_back(new QLineSeries());
  series_.back()->setMarkerSize(kPointMarkerSize);
}

void ChartTrace::hideLegendEntry(QLineSeries* series) {
  for (QLegendMarker* marker : chart_->legend()->markers(series)) marker->setVisible(false);
}

void ChartTrace::putOn(QAbstractAxis* x, QAbstractAxis* y) {
  for (QLineSeries* series : series_) chart_->addSeries(series);
  onChart_ = true;
  attach(x, y);
  for (std::size_t i = 1; i < series_.size(); ++i) hideLegendEntry(series_[i]);
}

void ChartTrace::takeOff() {
  if (!onChart_) return;
  for (QLineSeries* series : series_) chart_->removeSeries(series);
  onChart_ = false;
}

void ChartTrace::attach(QAbstractAxis* x, QAbstractAxis* y) {
  attachX(x);
  attachY(y);
}

void ChartTrace::attachX(QAbstractAxis* x) {
  x_ = x;
  if (!onChart_ || x_ == nullptr) return;
  for (QLineSeries* series : series_) series->attachAxis(x_);
}

void ChartTrace::attachY(QAbstractAxis* y) {
  y_ = y;
  if (!onChart_ || y_ == nullptr) return;
  for (QLineSeries* series : series_) series->attachAxis(y_);
}

void ChartTrace::destroy() {
  takeOff();
  for (QLineSeries* series : series_) delete series;
  series_.clear();
}

void ChartTrace::setPointMarkers(bool on) {
  markers_ = on;
  for (QLineSeries* series : series_) series->setPointsVisible(on);
}

void ChartTrace::setPen(const QPen& pen) {
  pen_ = pen;
  for (QLineSeries* series : series_) series->setPen(penFor(series->count()));
}

void ChartTrace::setName(const QString& name) { head()->setName(name); }

void ChartTrace::setVisible(bool visible) {
  visible_ = visible;
  for (QLineSeries* series : series_) series->setVisible(visible);
  // A hidden series hides its legend entry too; the caller keeps the head's, the rest stay hidden.
  for (std::size_t i = 1; i < series_.size(); ++i) hideLegendEntry(series_[i]);
}

QLineSeries* ChartTrace::addSeries() {
  auto* series = new QLineSeries();
  series->setPen(pen_);
  series->setPointsVisible(markers_);
  series->setMarkerSize(kPointMarkerSize);
  series->setVisible(visible_);
  series_.push_back(series);
  if (onChart_) {
    chart_->addSeries(series);
    if (x_ != nullptr) series->attachAxis(x_);
    if (y_ != nullptr) series->attachAxis(y_);
    hideLegendEntry(series);
  }
  return series;
}

void ChartTrace::empty() {
  for (QLineSeries* series : series_) {
    if (series->count() > 0) series->clear();
  }
}

QPen ChartTrace::densePen(const QPen& pen) {
  QPen dense(pen);
  dense.setJoinStyle(Qt::BevelJoin);
  dense.setCapStyle(Qt::FlatCap);
  return dense;
}

QPen ChartTrace::penFor(qsizetype points) const {
  const bool dense = plotWidth_ > 0 && points * kRoundSpacing > plotWidth_;
  return dense ? densePen(pen_) : pen_;
}

void ChartTrace::replaceStretch(QLineSeries* series, const QList<QPointF>& points) {
  const QPen pen = penFor(points.size());
  // Before the points: a new pen makes the series work out its shape again.
  if (series->pen() != pen) series->setPen(pen);
  series->replace(points);
}

void ChartTrace::setPoints(const QList<QPointF>& points, const std::vector<qsizetype>& breaks, int plotWidth) {
  plotWidth_ = plotWidth;
  if (breaks.empty()) {
    replaceStretch(head(), points);
    stretches_ = points.isEmpty() ? 0 : 1;
  } else {
    qsizetype from = 0;
    std::size_t index = 0;
    for (std::size_t b = 0; b <= breaks.size(); ++b, ++index) {
      const qsizetype to = b < breaks.size() ? breaks[b] : points.size();
      if (index == series_.size()) addSeries();
      replaceStretch(series_[index], points.mid(from, to - from));
      from = to;
    }
    stretches_ = static_cast<int>(breaks.size()) + 1;
  }
  for (auto i = static_cast<std::size_t>(std::max(stretches_, 1)); i < series_.size(); ++i) {
    if (series_[i]->count() > 0) series_[i]->clear();
  }
  // A line of one point draws nothing: a lone point (a range called once, a window between two
  // gaps) is drawn as a marker.
  for (QLineSeries* series : series_) {
    const bool marked = markers_ || series->count() == 1;
    if (series->pointsVisible() != marked) series->setPointsVisible(marked);
  }
}

}  // namespace livemon::ui
