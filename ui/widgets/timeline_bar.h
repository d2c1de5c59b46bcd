#pragma once

#include <cstdint>

#include <QElapsedTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QSlider;
class QToolButton;

namespace livemon::ui {

class AlertListModel;
class ReplaySession;
class StatRegistry;
class TimelineStrip;

// GUI thread only.
// The replay timeline under the charts: step back, play/stop, step forward, a slider over the
// whole recording with the playhead's time (from the start, and as wall-clock time) and the
// recording's length, and the speed (0.25× to 64×). Dragging the slider seeks when it is let go;
// a click on its track jumps the playhead there (seeking when the button is let go); the keyboard
// seeks at once. Under the slider a strip (TimelineStrip) labels the steps and marks the
// recording's events and alerts, as far as the dashboard has read them.
class TimelineBar : public QWidget {
  Q_OBJECT

 public:
  explicit TimelineBar(QWidget* parent = nullptr);

  // Follows `session` (nullptr: none; the bar is then disabled). The session must outlive the
  // bar or be replaced first.
  void setSession(ReplaySession* session);
  ReplaySession* session() const noexcept { return session_; }

  QSlider* slider() const noexcept { return slider_; }
  QToolButton* playButton() const noexcept { return play_; }
  QComboBox* speedBox() const noexcept { return speed_; }
  QString positionText() const;
  TimelineStrip* strip() const noexcept { return strip_; }
  // Takes the marks of the recording's sources from what the registry holds of them and from
  // `alerts` (timelineMarks). That costs a pass over their points: unless `now`, it is done at
  // most every kMarksInterval, so it may be called on every refresh.
  void updateMarks(const StatRegistry& registry, const AlertListModel* alerts, bool now = false);
  static constexpr qint64 kMarksIntervalMs = 1000;

  // "1:02.5" for 62.5 s; hours when needed: "1:00:00.0".
  static QString formatDuration(int64_t ns);

 signals:
  // The close button: the dashboard should stop replaying.
  void closeRequested();

 private:
  void updatePosition();
  void updatePlaying(bool playing);

  ReplaySession* session_ = nullptr;
  QToolButton* stepBack_ = nullptr;
  QToolButton* play_ = nullptr;
  QToolButton* stepForward_ = nullptr;
  QSlider* slider_ = nullptr;
  TimelineStrip* strip_ = nullptr;
  QElapsedTimer marksAge_;  // since the marks were last taken; invalid: take them on the next call
  QLabel* position_ = nullptr;
  QLabel* name_ = nullptr;
  QComboBox* speed_ = nullptr;
  QToolButton* close_ = nullptr;
};

}  // namespace livemon::ui
