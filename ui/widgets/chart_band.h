#pragma once

#include <vector>

#include <QBrush>
#include <QString>

#include <livemon/ui/model/line_trace.h>

QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QAreaSeries;
class QChart;
class QLineSeries;
QT_END_NAMESPACE

namespace livemon::ui {

// GUI thread only, as the chart it draws on.
// A shaded min–max band that breaks where its lines do (a stall): a QAreaSeries per unbroken
// stretch (splitBand), as one area would bridge the gap. None has a legend entry. Areas are made
// as stretches need them and kept for the next draw; the chart owns them (it deletes them with
// itself), each area its edge series, and destroy() takes them off the chart for good.
class ChartBand {
 public:
  explicit ChartBand(QChart* chart);
  ChartBand(const ChartBand&) = delete;
  ChartBand& operator=(const ChartBand&) = delete;

  // The first stretch's area.
  QAreaSeries* head() const noexcept { return areas_.front().area; }
  // Stretches drawn by the last setStretches().
  int stretchCount() const noexcept { return stretches_; }
  QAreaSeries* area(int stretch) const { return areas_.at(static_cast<std::size_t>(stretch)).area; }

  // Puts every area on the chart (again, after takeOff()), attached to `x` and `y`.
  void putOn(QAbstractAxis* x, QAbstractAxis* y);
  void takeOff();
  void attachX(QAbstractAxis* x);
  void attachY(QAbstractAxis* y);
  // Takes the areas off the chart and deletes them; the band is unusable after.
  void destroy();

  void setBrush(const QBrush& brush);
  void setVisible(bool visible);
  bool isVisible() const noexcept { return visible_; }
  // Hands each stretch to an area (one replace() per edge); areas left over are emptied.
  void setStretches(const std::vector<BandStretch>& stretches);
  void clear() { setStretches({}); }
  // Empties every area, keeping the stretch count for the next setStretches().
  void empty();

 private:
  struct Area {
    QAreaSeries* area = nullptr;
    QLineSeries* lower = nullptr;
    QLineSeries* upper = nullptr;
  };
  void addArea();
  void hideLegendEntry(QAreaSeries* area);

  QChart* chart_;
  std::vector<Area> areas_;
  QAbstractAxis* x_ = nullptr;
  QAbstractAxis* y_ = nullptr;
  bool onChart_ = false;
  bool visible_ = true;
  int stretches_ = 0;
  QBrush brush_;
};

}  // namespace livemon::ui
