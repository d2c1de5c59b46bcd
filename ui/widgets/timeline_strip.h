#pragma once

#include <QWidget>

#include <livemon/ui/model/timeline_marks.h>

namespace livemon::ui {

// GUI thread only.
// The strip under the replay timeline's slider: step labels along the recording ("step 1 200")
// and a mark at each event (an eval, in blue) and alert (in red), each with a tooltip; it spans
// the recording from its first event to its last, as the slider does.
class TimelineStrip : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineStrip(QWidget* parent = nullptr);

  // The recording's span, ms since the Unix epoch.
  void setSpan(double startMs, double endMs);
  void setMarks(TimelineMarks marks);
  const TimelineMarks& marks() const noexcept { return marks_; }
  // The step labels drawn, with their x: a few, evenly spread, none without steps.
  std::vector<std::pair<int, QString>> stepLabels() const;
  // The x of a time on the strip.
  int xOf(double ms) const;
  // The tooltip at x: the marks within a few pixels of it; empty when there are none.
  QString toolTipAt(int x) const;

  QSize sizeHint() const override;

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;

 private:
  double startMs_ = 0.0;
  double endMs_ = 0.0;
  TimelineMarks marks_;
};

}  // namespace livemon::ui
