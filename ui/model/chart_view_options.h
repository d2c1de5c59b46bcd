#pragma once

#include <map>

#include <QObject>
#include <QString>

#include <livemon/ui/model/smoothing.h>

namespace livemon::ui {

// Thread-safety: a plain value type.
// What ChartViewOptions keeps between sessions (DashboardSettings).
struct ChartViewState {
  double smoothing = kDefaultSmoothing;
  bool logScaleAll = false;
  std::map<QString, bool> logScale;  // per chart, where it differs from logScaleAll
};

// GUI thread only.
// How the charts draw their values, as the user chose and as settings keep it: the smoothing
// weight of every line, a log scale for all charts, and per chart a log scale that differs from
// it. changed() follows every change that alters a chart, and version() counts them so that a
// chart knows to redraw.
class ChartViewOptions : public QObject {
  Q_OBJECT

 public:
  explicit ChartViewOptions(QObject* parent = nullptr);

  // 0..kMaxSmoothing (clamped); 0 draws the raw lines alone.
  double smoothing() const noexcept { return smoothing_; }
  void setSmoothing(double weight);
  bool logScaleAll() const noexcept { return logAll_; }
  void setLogScaleAll(bool on);
  // Whether the chart of `statName` uses a log scale: its own choice, else the one for all.
  bool logScale(const QString& statName) const;
  // The chart's own choice; choosing what all charts use forgets it (it follows them again).
  void setLogScale(const QString& statName, bool on);
  unsigned version() const noexcept { return version_; }

  ChartViewState state() const;
  // Takes `state` (the smoothing clamped, per-chart choices equal to logScaleAll dropped) and
  // signals changed() once.
  void restore(const ChartViewState& state);

 signals:
  void changed();

 private:
  void bump();

  double smoothing_;
  bool logAll_ = false;
  std::map<QString, bool> logPerChart_;
  unsigned version_ = 0;
};

}  // namespace livemon::ui
