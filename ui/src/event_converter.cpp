#include <livemon/ui/event_converter.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <type_traits>
#include <variant>

#include <livemon/ui/stat_key.h>

namespace livemon::ui {

namespace {

double epochMilliseconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count();
}

void appendNumber(std::string& out, double value) {
  char buffer[32];
  // Ten significant digits: readable, and more than a plotted value needs.
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 10);
  out.append(buffer, result.ptr);
}

void appendValue(std::string& out, const DataValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out.push_back('"');
          out.append(v);
          out.push_back('"');
        } else if constexpr (std::is_same_v<T, double>) {
          appendNumber(out, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          out.append(v ? "true" : "false");
        } else {
          out.append(std::to_string(v));
        }
      },
      value);
}

}  // namespace

std::string EventConverter::renderData(const Event& event) {
  std::vector<const std::pair<const std::string, DataValue>*> fields;
  fields.reserve(event.data.size());
  for (const auto& field : event.data) fields.push_back(&field);
  std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  std::string out;
  out.reserve(fields.size() * 24);
  for (const auto* field : fields) {
    if (!out.empty()) out.append(", ");
    out.append(field->first);
    out.push_back('=');
    appendValue(out, field->second);
  }
  return out;
}

SourceId EventConverter::sourceId(const std::shared_ptr<const transport::SourceInfo>& source,
                                  const std::string* endpoint, IngestBatch& out) {
  static const auto unknown = std::make_shared<const transport::SourceInfo>(transport::SourceInfo{"unknown", "", 0, {}, 0, {}});
  const auto& info = source ? source : unknown;
  if (const auto found = sourceByAddress_.find(info.get()); found != sourceByAddress_.end()) return found->second;
  // The subscriber shares one SourceInfo per source, so the address lookup above normally hits;
  // the value lookup keeps ids right should it ever hand out copies.
  SourceId id = 0;
  if (const auto found = sourceByValue_.find(*info); found != sourceByValue_.end()) {
    id = found->second;
  } else {
    id = static_cast<SourceId>(seriesBySource_.size());
    sourceByValue_.emplace(*info, id);
    seriesBySource_.emplace_back();
    out.sources.push_back(SourceDescriptor{id, info, endpoint != nullptr ? *endpoint : std::string()});
  }
  sources_.push_back(info);  // keeps the address valid while it is a key
  sourceByAddress_.emplace(info.get(), id);
  return id;
}

void EventConverter::forgetSources(const std::vector<SourceId>& ids) {
  const auto forgotten = [&ids](SourceId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  std::erase_if(sourceByValue_, [&forgotten](const auto& entry) { return forgotten(entry.second); });
  std::erase_if(sourceByAddress_, [&forgotten](const auto& entry) { return forgotten(entry.second); });
  // The infos were kept only to keep their addresses valid as keys.
  std::erase_if(sources_, [this](const auto& info) { return !sourceByAddress_.contains(info.get()); });
  for (SourceId id : ids) {
    if (id < seriesBySource_.size()) seriesBySource_[id] = {};
  }
}

NameId EventConverter::nameId(const std::string& name, IngestBatch& out) {
  const auto [it, inserted] = names_.try_emplace(name, static_cast<NameId>(names_.size()));
  if (inserted) out.names.push_back(NameDescriptor{it->second, name});
  return it->second;
}

SeriesId EventConverter::seriesId(SourceId source, const std::string& key, IngestBatch& out) {
  auto& bySource = seriesBySource_[source];
  const auto found = bySource.find(key);
  if (found != bySource.end()) return found->second;
  const SeriesId id = seriesCount_++;
  bySource.emplace(key, id);
  SeriesDescriptor descriptor;
  descriptor.id = id;
  descriptor.source = source;
  if (const auto parts = splitStatKey(key)) {
    descriptor.stat.assign(parts->stat);
    descriptor.aggregation.assign(parts->aggregation);
  } else {
    descriptor.stat = key;
    descriptor.aggregation = "value";
  }
  out.series.push_back(std::move(descriptor));
  return id;
}

void EventConverter::convert(transport::ReceivedEvent& received, IngestBatch& out) {
  Event& event = received.event;
  const SourceId source = sourceId(received.source, received.endpoint.get(), out);
  ++out.events;

  if (isStatEventName(event.name)) {
    const double x = epochMilliseconds(event.timestamp);
    for (const auto& [key, value] : event.data) {
      double y = 0.0;
      if (const double* d = std::get_if<double>(&value)) {
        y = *d;
      } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
        y = static_cast<double>(*i);
      } else {
        continue;
      }
      out.samples.push_back(StatSample{seriesId(source, key, out), x, y});
    }
  }

  LogEntry entry;
  entry.timeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(event.timestamp.time_since_epoch()).count();
  entry.source = source;
  entry.name = nameId(event.name, out);
  entry.data = renderData(event);
  out.log.push_back(std::move(entry));
}

}  // namespace livemon::ui
