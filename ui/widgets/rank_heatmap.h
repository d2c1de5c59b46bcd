#pragma once

#include <cstdint>
#include <optional>

#include <QColor>
#include <QWidget>

namespace livemon::ui {

class RankScoresModel;

// GUI thread only.
// The Ranks view's heatmap: a row per rank of the shown run (rank 0 at the top), a column per
// scored window (oldest left), coloured by the key's value from the lowest shown (dark) to the
// highest (bright); a window without a value is left blank. A straggler stands out as a row; a
// flagged rank's row is outlined in red with its label marked. A click on a row picks its rank.
class RankHeatmap : public QWidget {
  Q_OBJECT

 public:
  explicit RankHeatmap(const RankScoresModel& model, QWidget* parent = nullptr);

  // The rank of the row at a widget position; std::nullopt off the rows.
  std::optional<int64_t> rankAt(QPoint pos) const;
  // The colour of a value between low and high (for the legend and tests).
  static QColor colourOf(double value, double low, double high);

 signals:
  void rankClicked(int64_t rank);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  QSize sizeHint() const override { return {600, 320}; }

 private:
  QRect gridRect() const;

  const RankScoresModel& model_;
};

}  // namespace livemon::ui
