#pragma once

#include <cstddef>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <livemon/alert_rules.h>
#include <livemon/run_config.h>
#include <livemon/transport/wire_format.h>
#include <livemon/ui/data/history_note.h>

namespace livemon::ui {

// Ids handed out by the EventConverter, dense from 0, stable for the life of the dashboard.
using SourceId = uint32_t;
using NameId = uint32_t;
using SeriesId = uint32_t;

// Thread-safety: a plain value type.
// A publisher seen for the first time.
struct SourceDescriptor {
  SourceId id = 0;
  std::shared_ptr<const transport::SourceInfo> info;
  std::string endpoint;  // where it was first heard
};

// Thread-safety: a plain value type.
// An event name seen for the first time.
struct NameDescriptor {
  NameId id = 0;
  std::string name;
};

// What a series' values are.
enum class SeriesKind : uint8_t {
  // An aggregation of a Stat's windows: a value per window.
  StatWindow,
  // A numeric field of an event other than a Stat: a value per event ("eval" with "accuracy" is
  // chart "eval.accuracy", aggregation "value").
  EventField,
  // A running total a Stat reports (livemon.publisher.published): charted as its rate per second
  // between consecutive windows, aggregation "rate/s".
  CounterRate,
};

// Thread-safety: a plain value type.
// A (source, Stat key) or (source, event name and field) pair seen for the first time: one line
// on one chart.
struct SeriesDescriptor {
  SeriesId id = 0;
  SourceId source = 0;
  std::string stat;         // chart: the key up to its last dot, or "<event name>.<field>"
  std::string aggregation;  // line: the key after its last dot, or "value" for an event field
  SeriesKind kind = SeriesKind::StatWindow;
};

// A sample's step when its event stated none (see hasStep).
inline constexpr double kNoStep = std::numeric_limits<double>::quiet_NaN();
// Whether a sample's step is a step: kNoStep (NaN) is none.
inline bool hasStep(double step) noexcept { return !std::isnan(step); }

// Thread-safety: a plain value type.
// One value of one Stat window (or of one event's field).
struct StatSample {
  SeriesId series = 0;
  double x = 0.0;  // the window's (or event's) timestamp, milliseconds since the Unix epoch
  double y = 0.0;
  // The event's step (livemon::statedStep; exact up to 2^53), kNoStep when it stated none.
  double step = kNoStep;
};

// Thread-safety: a plain value type.
// One event as the log shows it, rendered off the GUI thread.
struct LogEntry {
  // A row whose event stated no step.
  static constexpr int64_t kNoStep = std::numeric_limits<int64_t>::min();

  int64_t timeNs = 0;  // event timestamp, nanoseconds since the Unix epoch
  SourceId source = 0;
  NameId name = 0;
  std::string data;  // "key=value, ..." sorted by key
  int64_t step = kNoStep;  // livemon::statedStep of the event
};

// Thread-safety: a plain value type.
// A run's config as one of its sources logged it (a livemon.run_config event): the run's config is
// the newest of its sources'. The event is logged too, but not charted.
struct RunConfigNote {
  SourceId source = 0;
  int64_t timeNs = 0;  // the event's timestamp, nanoseconds since the Unix epoch
  RunConfig config;
};

// Thread-safety: a plain value type.
// A rule the ingest thread's AlertEngine found triggered, staged behind the data that triggered it.
struct StagedAlert {
  Alert alert;
  std::optional<SourceId> source;  // the source's id; none when the limits refused it
};

// Thread-safety: a plain value type. Moved from the ingest thread to the GUI thread.
// Everything decoded since the GUI last looked, in the order it must be applied: new sources,
// names and series come before the samples and log entries that use them.
struct IngestBatch {
  std::vector<SourceDescriptor> sources;
  std::vector<NameDescriptor> names;
  std::vector<SeriesDescriptor> series;
  // Configs received, each after its source's descriptor; one per source, its newest (addConfig),
  // so a flood of configs holds no more than one config per source.
  std::vector<RunConfigNote> configs;
  std::vector<StatSample> samples;
  std::vector<LogEntry> log;
  // After the samples and log entries of the events that triggered them (a log row each, too).
  std::vector<StagedAlert> alerts;
  // Histories fetched, after their events and log rows (a log row each, too).
  std::vector<HistoryNote> history;
  uint64_t events = 0;  // events converted into this batch

  bool empty() const noexcept {
    return sources.empty() && names.empty() && series.empty() && configs.empty() && samples.empty() && log.empty() && alerts.empty() &&
           history.empty() && events == 0;
  }
  void clear() noexcept;
  // Adds a source's config, in place of one of the same source this batch holds.
  void addConfig(RunConfigNote note);
  // Appends `later`, which must come after this batch; `later` is left empty.
  void append(IngestBatch&& later);
};

}  // namespace livemon::ui
