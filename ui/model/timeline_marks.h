#pragma once

#include <functional>
#include <vector>

#include <QString>

namespace livemon::ui {

class AlertListModel;
class StatRegistry;
struct SourceEntry;

// Thread-safety: a plain value type.
// Something that happened at a time of a recording, marked on the timeline.
struct TimelineMark {
  double ms = 0.0;  // ms since the Unix epoch
  QString label;    // "eval", or the alert's message
  bool alert = false;
  friend bool operator==(const TimelineMark&, const TimelineMark&) = default;
};

// Thread-safety: a plain value type.
// What the replay timeline labels and marks: the run's steps over time and its events.
struct TimelineMarks {
  std::vector<std::pair<double, double>> steps;  // (ms since the Unix epoch, step), by time
  std::vector<TimelineMark> marks;               // by time
};

// The marks of the sources `which` selects, from what the registry holds of them: a mark at each
// time an event other than a Stat window came (the eval events: their fields' charts), named by
// the event, and the steps of their series with the most steps; an alert mark where lines became
// NaN or infinite (named by their keys), and one per alert of `alerts` (nullptr: none) about such
// a source.
TimelineMarks timelineMarks(const StatRegistry& registry, const std::function<bool(const SourceEntry&)>& which,
                            const AlertListModel* alerts);

// The step at `ms` in `steps` (the last at or before it, else the first); NaN without steps.
double stepAt(const std::vector<std::pair<double, double>>& steps, double ms);

}  // namespace livemon::ui
