#include <livemon/ui/widgets/chart_nan_regions.h>

#include <algorithm>

#include <QBrush>
#include <QColor>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QPen>
#include <QtCharts/QChart>
#include <QtCharts/QLineSeries>

#include <livemon/ui/model/chart_axes.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

constexpr double kMinBandWidth = 3.0;  // a single NaN window is a moment: still seen
constexpr int kBandAlpha = 48;
constexpr int kEdgeAlpha = 150;

}  // namespace

ChartNanRegions::ChartNanRegions(QChart* chart) : chart_(chart) {}

void ChartNanRegions::setRuns(const std::vector<LineRuns>& lines, TimeAxisMode mode) {
  mode_ = mode;
  struct Run {
    const NonFiniteStretch* stretch;
    const QString* name;
  };
  std::vector<Run> runs;
  for (const LineRuns& line : lines) {
    for (const NonFiniteStretch& stretch : line.runs) runs.push_back(Run{&stretch, &line.name});
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.stretch->from < b.stretch->from; });
  regions_.clear();
  for (const Run& run : runs) {
    const NonFiniteStretch& s = *run.stretch;
    if (regions_.empty() || s.from > regions_.back().to) {
      regions_.push_back(Region{s.from, s.to, s.nan, s.open, {*run.name}});
      continue;
    }
    Region& region = regions_.back();
    // A run that ends later decides whether the region is still open.
    if (s.to >= region.to) region.open = s.open || (region.open && s.to == region.to);
    region.to = std::max(region.to, s.to);
    region.nan = region.nan || s.nan;
    if (!region.lines.contains(*run.name)) region.lines << *run.name;
  }
  if (regions_.size() > kMaxRegions) {
    regions_.erase(regions_.begin(), regions_.end() - static_cast<std::ptrdiff_t>(kMaxRegions));
  }
}

QString ChartNanRegions::tooltipFor(const Region& region) const {
  const QString what = region.nan ? QObject::tr("Not a number (NaN)") : QObject::tr("Infinite");
  const QString end = region.open ? QObject::tr("still at the newest value")
                                  : QObject::tr("finite again at %1").arg(formatX(region.to, mode_));
  return QObject::tr("%1: %2\nfrom %3, %4")
      .arg(what, region.lines.join(QStringLiteral(", ")), formatX(region.from, mode_), end);
}

void ChartNanRegions::place(QLineSeries* reference) {
  while (bands_.size() < regions_.size()) {
    auto* band = new QGraphicsRectItem(chart_);
    QColor fill(colours::bad());
    fill.setAlpha(kBandAlpha);
    band->setBrush(fill);
    QColor edge(colours::bad());
    edge.setAlpha(kEdgeAlpha);
    band->setPen(QPen(edge, 1.0));
    band->setZValue(8.0);  // under the alert markers
    bands_.push_back(band);
    auto* label = new QGraphicsSimpleTextItem(chart_);
    label->setBrush(QColor(colours::bad()));
    label->setFont(smallFont(9));
    label->setZValue(8.5);
    labels_.push_back(label);
  }
  const QRectF area = chart_->plotArea();
  for (std::size_t i = 0; i < bands_.size(); ++i) {
    QGraphicsRectItem* band = bands_[i];
    QGraphicsSimpleTextItem* label = labels_[i];
    if (i >= regions_.size() || reference == nullptr) {
      band->hide();
      label->hide();
      continue;
    }
    const Region& region = regions_[i];
    // y does not matter: only x is read (0 is off a log axis, so 1).
    const double from = chart_->mapToPosition(QPointF(region.from, 1.0), reference).x();
    const double to = chart_->mapToPosition(QPointF(region.to, 1.0), reference).x();
    const double right = std::max(to, from + kMinBandWidth);
    const bool shown = right >= area.left() && from <= area.right();
    const double left = std::max(from, area.left());
    band->setRect(QRectF(left, area.top(), std::max(std::min(right, area.right()) - left, 1.0), area.height()));
    band->setToolTip(tooltipFor(region));
    band->setVisible(shown);
    label->setText(region.nan ? QStringLiteral("NaN") : QStringLiteral("Inf"));
    // Halfway down: the top edge is where the alert markers and the outlier note stand.
    label->setPos(left + 6.0, area.center().y() - label->boundingRect().height() / 2.0);
    label->setVisible(shown);
  }
}

std::vector<const QGraphicsRectItem*> ChartNanRegions::visibleRegions() const {
  std::vector<const QGraphicsRectItem*> shown;
  for (const QGraphicsRectItem* band : bands_) {
    if (band->isVisible()) shown.push_back(band);
  }
  return shown;
}

std::vector<const QGraphicsSimpleTextItem*> ChartNanRegions::visibleLabels() const {
  std::vector<const QGraphicsSimpleTextItem*> shown;
  for (const QGraphicsSimpleTextItem* label : labels_) {
    if (label->isVisible()) shown.push_back(label);
  }
  return shown;
}

}  // namespace livemon::ui
