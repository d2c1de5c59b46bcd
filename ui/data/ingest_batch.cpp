#include <livemon/ui/data/ingest_batch.h>

#include <iterator>

namespace livemon::ui {

namespace {

template <typename T>
void moveAppend(std::vector<T>& to, std::vector<T>& from) {
  if (to.empty()) {
    to.swap(from);
  } else {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }
  from.clear();
}

}  // namespace

void IngestBatch::clear() noexcept {
  sources.clear();
  names.clear();
  series.clear();
  configs.clear();
  samples.clear();
  log.clear();
  alerts.clear();
  history.clear();
  events = 0;
}

void IngestBatch::addConfig(RunConfigNote note) {
  for (RunConfigNote& held : configs) {
    if (held.source == note.source) {
      held = std::move(note);
      return;
    }
  }
  configs.push_back(std::move(note));
}

void IngestBatch::append(IngestBatch&& later) {
  moveAppend(sources, later.sources);
  moveAppend(names, later.names);
  moveAppend(series, later.series);
  for (RunConfigNote& note : later.configs) addConfig(std::move(note));
  later.configs.clear();
  moveAppend(samples, later.samples);
  moveAppend(log, later.log);
  moveAppend(alerts, later.alerts);
  moveAppend(history, later.history);
  events += later.events;
  later.events = 0;
}

}  // namespace livemon::ui
