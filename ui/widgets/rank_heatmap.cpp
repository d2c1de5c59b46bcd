#include <livemon/ui/widgets/rank_heatmap.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <QMouseEvent>
#include <QPainter>

#include <livemon/ui/model/rank_scores_model.h>
#include <livemon/ui/widgets/dashboard_style.h>

namespace livemon::ui {

namespace {

constexpr int kLabelWidth = 44;
constexpr int kScaleHeight = 22;
constexpr std::size_t kMinSlots = 60;

}  // namespace

RankHeatmap::RankHeatmap(const RankScoresModel& model, QWidget* parent) : QWidget(parent), model_(model) {
  setMinimumHeight(160);
  connect(&model_, &RankScoresModel::scored, this, qOverload<>(&QWidget::update));
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

QRect RankHeatmap::gridRect() const { return rect().adjusted(kLabelWidth, 4, -8, -kScaleHeight); }

std::optional<int64_t> RankHeatmap::rankAt(QPoint pos) const {
  const std::vector<int64_t> ranks = model_.heatRanks();
  const QRect grid = gridRect();
  if (ranks.empty() || pos.y() < grid.top() || pos.y() > grid.bottom()) return std::nullopt;
  const auto row = static_cast<std::size_t>((pos.y() - grid.top()) * static_cast<double>(ranks.size()) / grid.height());
  return row < ranks.size() ? std::optional<int64_t>(ranks[row]) : std::nullopt;
}

void RankHeatmap::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), QColor(colours::window()));
  const std::vector<int64_t> ranks = model_.heatRanks();
  const auto& columns = model_.heatColumns();
  painter.setPen(QColor(colours::text()));
  if (ranks.empty() || columns.empty()) {
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
  const double rowHeight = static_cast<double>(grid.height()) / static_cast<double>(ranks.size());
  // A minute's worth of slots at first, so the first windows are wide enough to see; then the
  // columns narrow until kHeatColumns fill the width.
  const std::size_t slotCount = std::clamp<std::size_t>(columns.size(), kMinSlots, RankScoresModel::kHeatColumns);
  const double columnWidth = static_cast<double>(grid.width()) / static_cast<double>(slotCount);
  // The newest column at the right edge, as on the charts.
  const double x0 = grid.right() + 1 - columnWidth * static_cast<double>(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const double left = x0 + columnWidth * static_cast<double>(c);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const auto found = columns[c].values.find(ranks[r]);
      if (found == columns[c].values.end() || !std::isfinite(found->second)) continue;
      painter.fillRect(QRectF(left, grid.top() + rowHeight * static_cast<double>(r), columnWidth + 0.5, rowHeight + 0.5),
                       colourOf(found->second, low, high));
    }
  }
  // Rank labels, as many as fit; a flagged rank's always, in red, with its row outlined.
  const int every = std::max(1, static_cast<int>(std::ceil(14.0 / rowHeight)));
  QFont font = painter.font();
  font.setPointSizeF(std::max(6.0, std::min(9.0, rowHeight * 0.8)));
  painter.setFont(font);
  std::vector<std::size_t> flaggedRows;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (model_.isFlagged(ranks[r])) flaggedRows.push_back(r);
  }
  const auto nearFlagged = [&](std::size_t r) {
    return std::any_of(flaggedRows.begin(), flaggedRows.end(),
                       [&](std::size_t f) { return f != r && (f > r ? f - r : r - f) < static_cast<std::size_t>(every); });
  };
  const double dataLeft = std::max<double>(grid.left(), x0);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const bool flagged = std::find(flaggedRows.begin(), flaggedRows.end(), r) != flaggedRows.end();
    const QRectF row(dataLeft, grid.top() + rowHeight * static_cast<double>(r), grid.right() + 1 - dataLeft, rowHeight);
    if (flagged) {
      painter.setPen(QPen(QColor(0xd6, 0x27, 0x28), 2.0));
      painter.setBrush(Qt::NoBrush);
      painter.drawRect(row.adjusted(-1, -1, 0, 0));
    }
    // Every few rows a label, none crowding a flagged rank's.
    if (!flagged && (static_cast<int>(r) % every != 0 || nearFlagged(r))) continue;
    painter.setPen(flagged ? QColor(0xd6, 0x27, 0x28) : QColor(colours::text()));
    painter.drawText(QRectF(0, row.top() - 6, kLabelWidth - 4, row.height() + 12), Qt::AlignRight | Qt::AlignVCenter,
                     (flagged ? QStringLiteral("⚑ r%1") : QStringLiteral("r%1")).arg(ranks[r]));
  }
  // The scale: lowest to highest shown.
  const QRect scale(grid.left(), grid.bottom() + 6, std::min(200, grid.width() / 3), 10);
  for (int i = 0; i < scale.width(); ++i) {
    painter.fillRect(QRect(scale.left() + i, scale.top(), 1, scale.height()), colourOf(i, 0, scale.width() - 1));
  }
  painter.setPen(QColor(colours::text()));
  painter.drawText(QRect(scale.right() + 8, scale.top() - 4, grid.width() - scale.width() - 8, 18), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("%1: %2 … %3, a column per window").arg(model_.key(), QString::number(low, 'g', 4), QString::number(high, 'g', 4)));
}

void RankHeatmap::mousePressEvent(QMouseEvent* event) {
  if (const auto rank = rankAt(event->position().toPoint())) emit rankClicked(*rank);
  QWidget::mousePressEvent(event);
}

}  // namespace livemon::ui
