#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <livemon/event.h>
#include <livemon/transport/subscriber.h>
#include <livemon/ui/ingest_batch.h>

namespace livemon::ui {

// Thread-compatible: one thread at a time (IngestWorker serializes it).
// Turns received events into what the dashboard applies: a log entry for every event, and a
// Stat sample for every numeric value of a Stat event ("livemon.Stat" or "torch.monitor.Stat").
// Sources, event names and series are interned here, off the GUI thread, so the GUI works with
// dense ids and never hashes a string per event.
//
// A Stat key without a dot is charted as its own Stat with aggregation "value"; string and
// bool values of a Stat event are logged, not plotted.
class EventConverter {
 public:
  void convert(transport::ReceivedEvent& received, IngestBatch& out);

  // Renders event data as the log shows it: "key=value, ..." sorted by key; strings quoted.
  static std::string renderData(const Event& event);

  // Forgets sources the dashboard removed (a replayed recording that was closed): an equal source
  // seen again (the recording reopened) gets a new id, as the old ones are never shown again.
  // Their ids are not handed out again either.
  void forgetSources(const std::vector<SourceId>& ids);

  // Sources known (not forgotten).
  std::size_t sourceCount() const noexcept { return sourceByValue_.size(); }
  std::size_t seriesCount() const noexcept { return seriesCount_; }

 private:
  SourceId sourceId(const std::shared_ptr<const transport::SourceInfo>& source, const std::string* endpoint,
                    IngestBatch& out);
  NameId nameId(const std::string& name, IngestBatch& out);
  SeriesId seriesId(SourceId source, const std::string& key, IngestBatch& out);

  std::vector<std::shared_ptr<const transport::SourceInfo>> sources_;
  std::unordered_map<const transport::SourceInfo*, SourceId> sourceByAddress_;
  std::map<transport::SourceInfo, SourceId> sourceByValue_;
  std::unordered_map<std::string, NameId> names_;
  // Indexed by SourceId, one per id ever handed out (forgotten ones too): the next id is its size.
  std::vector<std::unordered_map<std::string, SeriesId>> seriesBySource_;
  SeriesId seriesCount_ = 0;
};

}  // namespace livemon::ui
