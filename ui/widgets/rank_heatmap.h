#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <QColor>
#include <QWidget>

class QScrollBar;

namespace livemon::ui {

class RankScoresModel;

// GUI thread only.
// The Ranks view's heatmap: a row per rank of the shown run (ascending), a column per scored
// window (oldest left), coloured by the key's value from the lowest shown (dark) to the highest
// (bright); a window without a value is left blank. Rows keep a legible height (kMinRowHeight,
// every one labelled): when they do not all fit, the rows scroll under a vertical scroll bar,
// while the ranks the scorer flags stay pinned above them (at most kMaxPinned), outlined in red
// and labelled "⚑ rN", so a straggler among 1 024 ranks is seen without scrolling. A click on a
// row picks its rank.
class RankHeatmap : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kMinRowHeight = 14;
  static constexpr int kMaxPinned = 8;

  explicit RankHeatmap(const RankScoresModel& model, QWidget* parent = nullptr);

  // The rank of the row at a widget position; std::nullopt off the rows.
  std::optional<int64_t> rankAt(QPoint pos) const;
  // The colour of a value between low and high (for the legend and tests).
  static QColor colourOf(double value, double low, double high);
  // The rows' scroll bar (hidden while every row fits).
  QScrollBar& scrollBar() const noexcept { return *scroll_; }
  // The height of one row, in pixels.
  double rowHeight() const;
  // The ranks pinned above the scrolled rows: those flagged in the latest window.
  const std::vector<int64_t>& pinnedRanks() const noexcept { return pinned_; }

 signals:
  void rankClicked(int64_t rank);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  QSize sizeHint() const override { return {600, 320}; }

 private:
  void takeRows();
  void layOutRows();
  QRect gridRect() const;
  // The pinned rows' height and the top of the scrolled rows.
  int pinnedHeight() const;

  const RankScoresModel& model_;
  QScrollBar* scroll_ = nullptr;
  std::vector<int64_t> ranks_;   // the rows, ascending (the model's heatRanks, once per scoring)
  std::vector<int64_t> pinned_;  // the flagged ranks, pinned at the top
};

}  // namespace livemon::ui
