#include <livemon/ui/widgets/chart_band.h>

#include <QPen>
#include <QtCharts/QAreaSeries>
#include <QtCharts/QChart>
#include <QtCharts/QLegend>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>

namespace livemon::ui {

ChartBand::ChartBand(QChart* chart) : chart_(chart) { addArea(); }

void ChartBand::destroy() {
  takeOff();
  for (const Area& area : areas_) delete area.area;  // its edges with it
  areas_.clear();
}

void ChartBand::hideLegendEntry(QAreaSeries* area) {
  for (QLegendMarker* marker : chart_->legend()->markers(area)) marker->setVisible(false);
}

void ChartBand::addArea() {
  Area area;
  area.area = new QAreaSeries();
  // Children of their area, so they go after it (it refers to them to the end).
  area.lower = new QLineSeries(area.area);
  area.upper = new QLineSeries(area.area);
  area.area->setUpperSeries(area.upper);
  area.area->setLowerSeries(area.lower);
  area.area->setName(QStringLiteral("min–max"));
  area.area->setPen(Qt::NoPen);
  area.area->setBrush(brush_);
  area.area->setVisible(visible_);
  areas_.push_back(area);
  if (onChart_) {
    chart_->addSeries(area.area);
    if (x_ != nullptr) area.area->attachAxis(x_);
    if (y_ != nullptr) area.area->attachAxis(y_);
    hideLegendEntry(area.area);
  }
}

void ChartBand::putOn(QAbstractAxis* x, QAbstractAxis* y) {
  for (const Area& area : areas_) chart_->addSeries(area.area);
  onChart_ = true;
  attachX(x);
  attachY(y);
  for (const Area& area : areas_) hideLegendEntry(area.area);
}

void ChartBand::takeOff() {
  if (!onChart_) return;
  for (const Area& area : areas_) chart_->removeSeries(area.area);
  onChart_ = false;
}

void ChartBand::attachX(QAbstractAxis* x) {
  x_ = x;
  if (!onChart_ || x_ == nullptr) return;
  for (const Area& area : areas_) area.area->attachAxis(x_);
}

void ChartBand::attachY(QAbstractAxis* y) {
  y_ = y;
  if (!onChart_ || y_ == nullptr) return;
  for (const Area& area : areas_) area.area->attachAxis(y_);
}

void ChartBand::setBrush(const QBrush& brush) {
  brush_ = brush;
  for (const Area& area : areas_) area.area->setBrush(brush);
}

void ChartBand::setVisible(bool visible) {
  visible_ = visible;
  for (const Area& area : areas_) {
    area.area->setVisible(visible);
    hideLegendEntry(area.area);  // showing a series shows its legend entry again
  }
}

void ChartBand::empty() {
  for (const Area& area : areas_) {
    if (area.lower->count() > 0) area.lower->clear();
    if (area.upper->count() > 0) area.upper->clear();
  }
}

void ChartBand::setStretches(const std::vector<BandStretch>& stretches) {
  while (areas_.size() < stretches.size()) addArea();
  for (std::size_t i = 0; i < stretches.size(); ++i) {
    areas_[i].lower->replace(stretches[i].lower);
    areas_[i].upper->replace(stretches[i].upper);
  }
  for (std::size_t i = stretches.size(); i < areas_.size(); ++i) {
    if (areas_[i].lower->count() > 0) areas_[i].lower->clear();
    if (areas_[i].upper->count() > 0) areas_[i].upper->clear();
  }
  stretches_ = static_cast<int>(stretches.size());
}

}  // namespace livemon::ui
