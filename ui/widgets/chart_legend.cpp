#include <livemon/ui/widgets/chart_legend.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include <QCursor>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QtCharts/QChart>

#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

constexpr qreal kMarkerWidth = 16.0;
constexpr qreal kMarkerGap = 4.0;
constexpr qreal kEntryGap = 12.0;  // between entries of a row
constexpr qreal kSide = 6.0;       // the chart's side margins
constexpr qreal kBelow = 2.0;      // under the last row

QFont legendFont() { return smallFont(8); }

}  // namespace

// One entry, drawn and clicked on the chart.
class ChartLegend::Item : public QGraphicsItem {
 public:
  Item(const ChartLegend& legend, std::size_t index, QGraphicsItem* parent)
      : QGraphicsItem(parent), legend_(legend), index_(index) {
    setAcceptedMouseButtons(Qt::LeftButton);
    setCursor(QCursor(Qt::PointingHandCursor));
    setZValue(10.0);
  }

  void set(const LegendEntry& entry, const QString& text, qreal width, qreal height) {
    prepareGeometryChange();
    entry_ = entry;
    text_ = text;
    size_ = QSizeF(width, height);
    setToolTip(entry.label);
    update();
  }
  const QString& text() const noexcept { return text_; }

  QRectF boundingRect() const override { return QRectF(QPointF(), size_); }

  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    painter->setRenderHint(QPainter::Antialiasing);
    const qreal middle = size_.height() / 2.0;
    const int alpha = entry_.dimmed ? 60 : 255;
    if (entry_.pen.style() != Qt::NoPen) {
      QPen pen(entry_.pen);
      QColor colour = pen.color();
      colour.setAlpha(alpha);
      pen.setColor(colour);
      pen.setWidthF(std::max(2.0, pen.widthF()));  // a few pixels long: thin dashes would not show
      painter->setPen(pen);
      painter->drawLine(QPointF(1.0, middle), QPointF(kMarkerWidth - 1.0, middle));
    } else {
      QColor fill = entry_.fill.color();
      if (entry_.dimmed) fill.setAlpha(fill.alpha() / 3);
      painter->setPen(Qt::NoPen);
      painter->setBrush(fill);
      painter->drawRect(QRectF(0.0, middle - 5.0, kMarkerWidth, 10.0));
    }
    painter->setFont(legendFont());
    painter->setPen(entry_.dimmed ? QColor(colours::dimText()).darker(140) : QColor(colours::text()));
    painter->drawText(QRectF(kMarkerWidth + kMarkerGap, 0.0, size_.width() - kMarkerWidth - kMarkerGap, size_.height()),
                      Qt::AlignLeft | Qt::AlignVCenter, text_);
  }

 protected:
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override { event->accept(); }
  void mouseReleaseEvent(QGraphicsSceneMouseEvent* event) override {
    if (boundingRect().contains(event->pos())) legend_.click(index_);
  }

 private:
  const ChartLegend& legend_;
  std::size_t index_;
  LegendEntry entry_;
  QString text_;
  QSizeF size_;
};

ChartLegend::ChartLegend(QChart* chart, std::function<void(int64_t)> clicked)
    : chart_(chart), clicked_(std::move(clicked)) {
  resized_ = QObject::connect(chart_, &QGraphicsWidget::geometryChanged, [this] { layout(); });
}

ChartLegend::~ChartLegend() {
  QObject::disconnect(resized_);
  for (Item* item : items_) delete item;
}

void ChartLegend::setEntries(std::vector<LegendEntry> entries) {
  if (entries == entries_) return;
  entries_ = std::move(entries);
  while (items_.size() > entries_.size()) {
    delete items_.back();
    items_.pop_back();
  }
  while (items_.size() < entries_.size()) items_.push_back(new Item(*this, items_.size(), chart_));
  layout();
}

void ChartLegend::layout() {
  const qreal width = chart_->size().width();
  const qreal available = width - 2.0 * kSide;
  if (available <= kMarkerWidth * 2.0) return;
  const QFontMetricsF metrics(legendFont());
  const qreal rowHeight = std::ceil(metrics.height()) + 2.0;

  // Rows of (item, width): an entry goes on the next row when it does not fit the present one.
  std::vector<std::vector<std::pair<std::size_t, qreal>>> rows;
  qreal used = 0.0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const qreal room = available - kMarkerWidth - kMarkerGap;
    const QString text = metrics.horizontalAdvance(entries_[i].label) <= room
                             ? entries_[i].label
                             : metrics.elidedText(entries_[i].label, Qt::ElideRight, room);
    const qreal entryWidth = kMarkerWidth + kMarkerGap + std::ceil(metrics.horizontalAdvance(text)) + 1.0;
    if (rows.empty() || used + kEntryGap + entryWidth > available) {
      rows.emplace_back();
      used = 0.0;
    } else {
      used += kEntryGap;
    }
    rows.back().emplace_back(i, entryWidth);
    used += entryWidth;
    items_[i]->set(entries_[i], text, entryWidth, rowHeight);
  }

  const qreal height = rows.empty() ? 0.0 : rowHeight * static_cast<qreal>(rows.size()) + kBelow;
  qreal y = chart_->size().height() - height;
  for (const auto& row : rows) {
    qreal rowWidth = -kEntryGap;
    for (const auto& [index, entryWidth] : row) rowWidth += entryWidth + kEntryGap;
    qreal x = std::floor((width - rowWidth) / 2.0);  // centred, as Qt's legend was
    for (const auto& [index, entryWidth] : row) {
      items_[index]->setPos(x, y);
      x += entryWidth + kEntryGap;
    }
    y += rowHeight;
  }
  QMargins margins = chart_->margins();
  const int bottom = 2 + static_cast<int>(height);
  if (margins.bottom() != bottom) {
    margins.setBottom(bottom);
    chart_->setMargins(margins);
  }
}

QString ChartLegend::shownText(std::size_t entry) const { return items_.at(entry)->text(); }

QString ChartLegend::toolTip(std::size_t entry) const { return items_.at(entry)->toolTip(); }

QRectF ChartLegend::entryRect(std::size_t entry) const {
  const Item* item = items_.at(entry);
  return item->mapRectToParent(item->boundingRect());
}

void ChartLegend::click(std::size_t entry) const {
  if (entry < entries_.size() && clicked_) clicked_(entries_[entry].key);
}

}  // namespace livemon::ui
