#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <QString>

#include <livemon/transport/subscriber.h>

namespace livemon::ui {

// The event name of the log row each history note gets.
inline constexpr std::string_view kHistoryEventName = "livemon.history";

// Thread-safety: a plain value type. Moved from the ingest thread to the GUI thread.
// How fetching one endpoint's history went (transport::HistoryStatus), with what the ingest
// thread saw of the events it brought.
struct HistoryNote {
  std::string endpoint;
  transport::HistoryOutcome outcome = transport::HistoryOutcome::Unavailable;
  uint64_t events = 0;  // delivered from the history (not counting ones already delivered)
  // The source no longer held the run's start: what was received begins at oldestMs.
  bool truncated = false;
  std::optional<double> oldestMs;   // its oldest event, ms since the Unix epoch
  std::optional<double> firstStep;  // the lowest step its events stated: where it begins on the Step axis
  std::string error;

  // Whether the charts mark where the received history begins.
  bool marksBeginning() const noexcept { return truncated && oldestMs.has_value(); }
  // A history that came and held nothing: the run had not logged anything yet, so there is
  // nothing to tell in the log or the status bar (the endpoint's tooltip still says it).
  bool empty() const noexcept {
    return outcome == transport::HistoryOutcome::Received && events == 0 && !truncated;
  }
};

// The note in a line, for the event log and the status bar (local time):
// "history from 10:41:07 (older not kept)", "history: received 1234 events", "no history: <error>".
QString describeHistory(const HistoryNote& note);

// Makes the note from the subscriber's status; events, oldest and error as it says.
HistoryNote historyNoteFrom(const transport::HistoryStatus& status);

}  // namespace livemon::ui
