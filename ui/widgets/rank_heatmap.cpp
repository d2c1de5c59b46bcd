#include <livemon/ui/widgets/rank_heatmap.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

#include <livemon/ui/model/rank_scores_model.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

constexpr int kLabelWidth = 60;
constexpr int kScaleHeight = 22;
constexpr int kPinnedGap = 6;  // between the pinned rows and the scrolled ones
constexpr std::size_t kMinSlots = 60;
const QColor kFlaggedRed(0xd6, 0x27, 0x28);

}  // namespace

RankHeatmap::RankHeatmap(const RankScoresModel& model, QWidget* parent) : QWidget(parent), model_(model) {
  setMinimumHeight(160);
  scroll_ = new QScrollBar(Qt::Vertical, this);
  scroll_->hide();
  connect(scroll_, &QScrollBar::valueChanged, this, qOverload<>(&QWidget::update));
  connect(&model_, &RankScoresModel::scored, this, &RankHeatmap::takeRows);
  takeRows();
}

QColor RankHeatmap::colourOf(double value, double low, double high) {
  // A dark-to-bright ramp (blue, teal, green, yellow) that stays readable for colour-blind eyes.
  static const QColor stops[] = {QColor(0x30, 0x12, 0x5a), QColor(0x2c, 0x6f, 0x8e), QColor(0x2f, 0xb4, 0x7c),
                                 QColor(0xfd, 0xe7, 0x25)};
  const double t = high > low ? std::clamp((value - low) / (high - low), 0.0, 1.0) : 0.5;
  const double at = t * 3.0;
  const int i = std::min(2, static_cast<int>(at));
  const double f = at - i;
  const QColor& a = stops[i];
  const QColor& b = stops[i + 1];
  return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * f),
                          static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * f),
                          static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * f));
}

// The rows change once per scoring: taken then, not on every paint (heatRanks walks every column).
void RankHeatmap::takeRows() {
  ranks_ = model_.heatRanks();
  pinned_.clear();
  if (const RankWindow* window = model_.window()) {
    for (int64_t rank : window->flagged) {
      if (pinned_.size() < static_cast<std::size_t>(kMaxPinned) && std::binary_search(ranks_.begin(), ranks_.end(), rank)) {
        pinned_.push_back(rank);
      }
    }
  }
  layOutRows();
  update();
}

QRect RankHeatmap::gridRect() const {
  const int right = scroll_->isVisible() ? scroll_->sizeHint().width() + 2 : 8;
  return rect().adjusted(kLabelWidth, 4, -right, -kScaleHeight);
}

double RankHeatmap::rowHeight() const {
  const std::size_t rows = ranks_.size() + pinned_.size();
  if (rows == 0) return 0.0;
  const int space = gridRect().height() - (pinned_.empty() ? 0 : kPinnedGap);
  return std::max<double>(kMinRowHeight, static_cast<double>(space) / static_cast<double>(rows));
}

int RankHeatmap::pinnedHeight() const {
  return pinned_.empty() ? 0 : static_cast<int>(std::ceil(rowHeight() * static_cast<double>(pinned_.size()))) + kPinnedGap;
}

// The scroll bar covers the scrolled rows when they do not fit below the pinned ones.
void RankHeatmap::layOutRows() {
  const QRect grid = gridRect();
  const int area = grid.height() - pinnedHeight();
  const int content = static_cast<int>(std::ceil(rowHeight() * static_cast<double>(ranks_.size())));
  const bool scrolls = content > area && area > 0;
  scroll_->setRange(0, scrolls ? content - area : 0);
  scroll_->setPageStep(std::max(1, area));
  scroll_->setSingleStep(static_cast<int>(rowHeight()));
  const int width = scroll_->sizeHint().width();
  scroll_->setGeometry(width > 0 ? rect().right() - width + 1 : 0, grid.top() + pinnedHeight(), width, std::max(0, area));
  if (scroll_->isVisible() != scrolls) scroll_->setVisible(scrolls);
}

void RankHeatmap::resizeEvent(QResizeEvent* event) {
  layOutRows();
  QWidget::resizeEvent(event);
}

void RankHeatmap::wheelEvent(QWheelEvent* event) {
  if (!scroll_->isVisible()) return QWidget::wheelEvent(event);
  const int pixels = !event->pixelDelta().isNull() ? event->pixelDelta().y()
                                                   : static_cast<int>(event->angleDelta().y() / 120.0 * 3 * rowHeight());
  scroll_->setValue(scroll_->value() - pixels);
  event->accept();
}

std::optional<int64_t> RankHeatmap::rankAt(QPoint pos) const {
  const QRect grid = gridRect();
  const double row = rowHeight();
  if (ranks_.empty() || pos.y() < grid.top() || pos.y() > grid.bottom() || pos.x() > grid.right()) return std::nullopt;
  const int scrolledTop = grid.top() + pinnedHeight();
  if (pos.y() < scrolledTop) {
    const auto index = static_cast<std::size_t>((pos.y() - grid.top()) / row);
    return index < pinned_.size() ? std::optional<int64_t>(pinned_[index]) : std::nullopt;
  }
  const auto index = static_cast<std::size_t>((pos.y() - scrolledTop + scroll_->value()) / row);
  return index < ranks_.size() ? std::optional<int64_t>(ranks_[index]) : std::nullopt;
}

void RankHeatmap::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), QColor(colours::window()));
  const auto& columns = model_.heatColumns();
  painter.setPen(QColor(colours::text()));
  if (ranks_.empty() || columns.empty()) {
    painter.drawText(rect(), Qt::AlignCenter,
                     tr("No ranked source sends %1 yet.\nPublishers of one run with ranks (e.g. livemonctl demo --ranks 8) appear here.")
                         .arg(model_.key()));
    return;
  }
  double low = std::numeric_limits<double>::infinity();
  double high = -low;
  for (const RankHeatColumn& column : columns) {
    for (const auto& [rank, value] : column.values) {
      if (!std::isfinite(value)) continue;
      low = std::min(low, value);
      high = std::max(high, value);
    }
  }
  const QRect grid = gridRect();
  const double rowH = rowHeight();
  // A minute's worth of slots at first, so the first windows are wide enough to see; then the
  // columns narrow until kHeatColumns fill the width.
  const std::size_t slotCount = std::clamp<std::size_t>(columns.size(), kMinSlots, RankScoresModel::kHeatColumns);
  const double columnWidth = static_cast<double>(grid.width()) / static_cast<double>(slotCount);
  // The newest column at the right edge, as on the charts.
  const double x0 = grid.right() + 1 - columnWidth * static_cast<double>(columns.size());
  const double dataLeft = std::max<double>(grid.left(), x0);
  QFont font = painter.font();
  font.setPointSizeF(std::clamp(rowH * 0.55, 7.0, 9.0));
  painter.setFont(font);

  // One row: its cells, its outline when flagged, its label.
  const auto drawRow = [&](int64_t rank, double top) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto found = columns[c].values.find(rank);
      if (found == columns[c].values.end() || !std::isfinite(found->second)) continue;
      painter.fillRect(QRectF(x0 + columnWidth * static_cast<double>(c), top, columnWidth + 0.5, rowH + 0.5),
                       colourOf(found->second, low, high));
    }
    const bool flagged = model_.isFlagged(rank);
    if (flagged) {
      painter.setPen(QPen(kFlaggedRed, 2.0));
      painter.setBrush(Qt::NoBrush);
      painter.drawRect(QRectF(dataLeft, top, grid.right() + 1 - dataLeft, rowH).adjusted(0, 1, -1, -1));
    }
    painter.setPen(flagged ? kFlaggedRed : QColor(colours::text()));
    painter.drawText(QRectF(0, top, kLabelWidth - 4, rowH), Qt::AlignRight | Qt::AlignVCenter,
                     (flagged ? QStringLiteral("⚑ r%1") : QStringLiteral("r%1")).arg(rank));
  };

  // The flagged ranks, pinned above the rest, and a rule under them.
  for (std::size_t i = 0; i < pinned_.size(); ++i) drawRow(pinned_[i], grid.top() + rowH * static_cast<double>(i));
  const int scrolledTop = grid.top() + pinnedHeight();
  if (!pinned_.empty()) {
    painter.setPen(QPen(kFlaggedRed, 1.0, Qt::DashLine));
    painter.drawLine(QPointF(4, scrolledTop - kPinnedGap / 2.0), QPointF(grid.right(), scrolledTop - kPinnedGap / 2.0));
  }
  // The scrolled rows: only those in view.
  painter.save();
  painter.setClipRect(QRect(0, scrolledTop, grid.right() + 1, grid.bottom() + 1 - scrolledTop));
  const double offset = scroll_->value();
  const auto first = static_cast<std::size_t>(std::max(0.0, offset / rowH));
  for (std::size_t r = first; r < ranks_.size(); ++r) {
    const double top = scrolledTop + rowH * static_cast<double>(r) - offset;
    if (top > grid.bottom()) break;
    drawRow(ranks_[r], top);
  }
  painter.restore();

  // The scale: lowest to highest shown.
  const QRect scale(grid.left(), grid.bottom() + 6, std::min(200, grid.width() / 3), 10);
  for (int i = 0; i < scale.width(); ++i) {
    painter.fillRect(QRect(scale.left() + i, scale.top(), 1, scale.height()), colourOf(i, 0, scale.width() - 1));
  }
  painter.setPen(QColor(colours::text()));
  const QString flaggedNote = pinned_.empty() ? QString() : tr("; flagged ranks pinned at the top");
  painter.drawText(QRect(scale.right() + 8, scale.top() - 4, grid.width() - scale.width() - 8, 18), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("%1: %2 … %3, a column per window, %4 ranks%5")
                       .arg(model_.key(), QString::number(low, 'g', 4), QString::number(high, 'g', 4))
                       .arg(ranks_.size())
                       .arg(flaggedNote));
}

void RankHeatmap::mousePressEvent(QMouseEvent* event) {
  if (const auto rank = rankAt(event->position().toPoint())) emit rankClicked(*rank);
  QWidget::mousePressEvent(event);
}

}  // namespace livemon::ui
