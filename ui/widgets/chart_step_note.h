#pragma once

#include <QString>
#include <QStringList>

class QGraphicsSimpleTextItem;
QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace livemon::ui {

// GUI thread only, as the chart it belongs to.
// What a chart on the Step axis says about lines that carry no step: its points cannot be placed
// on that axis, and a blank chart would look like no data at all. When no shown line has a step,
// "No step data" in the middle of the plot, with how to set one; when only some lack one, a line
// naming them at the top of the plot.
class ChartStepNote {
 public:
  explicit ChartStepNote(QChart* chart);

  // `stepAxis`: whether the chart shows steps (no note otherwise). `stepless`: the shown lines
  // without any step; `anyStepped`: whether another shown line has steps.
  void update(bool stepAxis, const QStringList& stepless, bool anyStepped);
  // The note shown; empty when there is none.
  QString text() const;

 private:
  QChart* chart_;
  QGraphicsSimpleTextItem* note_;  // owned by the chart
};

}  // namespace livemon::ui
