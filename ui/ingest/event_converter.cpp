#include <livemon/ui/ingest/event_converter.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <type_traits>
#include <variant>

#include <livemon/ui/ingest/stat_key.h>

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

// Sources remembered by address at least (the bound is twice the source limit).
constexpr std::size_t kMinCachedAddresses = 64;

uint64_t combineHash(uint64_t seed, uint64_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

uint64_t hashOf(const transport::SourceInfo& info) {
  uint64_t hash = std::hash<std::string>{}(info.run);
  hash = combineHash(hash, std::hash<std::string>{}(info.host));
  hash = combineHash(hash, static_cast<uint64_t>(info.pid));
  hash = combineHash(hash, info.rank ? static_cast<uint64_t>(*info.rank) ^ 0x72616e6bULL : 0);
  hash = combineHash(hash, info.instanceId);
  return combineHash(hash, static_cast<uint64_t>(info.startTime.time_since_epoch().count()));
}

// The chart a Stat key belongs to: the key up to its last dot, or the whole key.
std::string statOf(const std::string& key) {
  const std::optional<StatKeyParts> parts = splitStatKey(key);
  return parts ? std::string(parts->stat) : key;
}

std::string renderAll(const Event& event) {
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

// Cuts `data` to at most `maxBytes` (and the note saying what went), into a string of its own so
// the rest's memory goes too. Returns whether it cut.
bool cutToLimit(std::string& data, std::size_t maxBytes) {
  if (data.size() <= maxBytes) return false;
  std::size_t keep = maxBytes;
  // Not inside a UTF-8 character: back up over continuation bytes (10xxxxxx).
  while (keep > 0 && (static_cast<unsigned char>(data[keep]) & 0xC0) == 0x80) --keep;
  std::string cut;
  const std::string note = " (" + std::to_string(data.size() - keep) + " more bytes)";
  cut.reserve(keep + 3 + note.size());
  cut.append(data, 0, keep);
  cut.append("\xE2\x80\xA6");  // …
  cut.append(note);
  data.swap(cut);
  return true;
}

}  // namespace

std::string EventConverter::renderData(const Event& event, std::size_t maxBytes) {
  std::string out = renderAll(event);
  cutToLimit(out, maxBytes);
  return out;
}

EventConverter::EventConverter() : EventConverter(IngestLimits{}) {}

EventConverter::EventConverter(IngestLimits limits) : limits_(limits) {}

LimitDrops EventConverter::drops() const {
  LimitDrops result = drops_;
  const auto distinct = [](LimitDrop& drop, const DistinctCounter& counter) {
    drop.distinct = counter.count();
    drop.atLeast = counter.saturated();
  };
  distinct(result.sources, refusedSources_);
  distinct(result.charts, refusedCharts_);
  distinct(result.sourceSeries, refusedSourceSeries_);
  distinct(result.series, refusedSeries_);
  distinct(result.eventNames, refusedNames_);
  return result;
}

std::optional<SourceId> EventConverter::sourceId(const std::shared_ptr<const transport::SourceInfo>& source,
                                                 const std::string* endpoint, IngestBatch& out) {
  static const auto unknown = std::make_shared<const transport::SourceInfo>(transport::SourceInfo{"unknown", "", 0, {}, 0, {}});
  const auto& info = source ? source : unknown;
  if (const auto found = sourceByAddress_.find(info.get()); found != sourceByAddress_.end()) return found->second.id;
  std::optional<SourceId> id;
  if (const auto found = sourceByValue_.find(*info); found != sourceByValue_.end()) {
    id = found->second;
  } else if (sourceByValue_.size() < limits_.maxSources) {
    id = static_cast<SourceId>(seriesBySource_.size());
    sourceByValue_.emplace(*info, *id);
    seriesBySource_.emplace_back();
    out.sources.push_back(SourceDescriptor{*id, info, endpoint != nullptr ? *endpoint : std::string()});
  } else {
    refusedSources_.add(hashOf(*info));
  }
  if (sourceByAddress_.size() >= std::max<std::size_t>(2 * limits_.maxSources, kMinCachedAddresses)) {
    sourceByAddress_.clear();
  }
  sourceByAddress_.emplace(info.get(), CachedSource{info, id});
  return id;
}

void EventConverter::forgetSources(const std::vector<SourceId>& ids) {
  const auto forgotten = [&ids](SourceId id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  std::erase_if(sourceByValue_, [&forgotten](const auto& entry) { return forgotten(entry.second); });
  // Refusals are cached too, and there may be room for them now.
  sourceByAddress_.clear();
  for (SourceId id : ids) {
    if (id >= seriesBySource_.size()) continue;
    for (const auto& [key, series] : seriesBySource_[id]) {
      if (const auto stat = seriesByStat_.find(statOf(key)); stat != seriesByStat_.end() && --stat->second == 0) {
        seriesByStat_.erase(stat);
      }
      --presentSeries_;
    }
    seriesBySource_[id] = {};
  }
}

std::optional<NameId> EventConverter::nameId(const std::string& name, IngestBatch& out) {
  if (const auto found = names_.find(name); found != names_.end()) return found->second;
  if (names_.size() >= limits_.maxEventNames && !isStatEventName(name)) {
    refusedNames_.add(std::hash<std::string>{}(name));
    return std::nullopt;
  }
  const auto id = static_cast<NameId>(names_.size());
  names_.emplace(name, id);
  out.names.push_back(NameDescriptor{id, name});
  return id;
}

std::optional<SeriesId> EventConverter::seriesId(SourceId source, const std::string& key, IngestBatch& out) {
  auto& bySource = seriesBySource_[source];
  const auto found = bySource.find(key);
  if (found != bySource.end()) return found->second;
  const std::optional<StatKeyParts> parts = splitStatKey(key);
  std::string stat = parts ? std::string(parts->stat) : key;
  auto chart = seriesByStat_.find(stat);
  // The most specific reason first: a new chart, then the source's share, then the total.
  if (chart == seriesByStat_.end() && seriesByStat_.size() >= limits_.maxCharts) {
    refusedCharts_.add(std::hash<std::string>{}(stat));
    ++drops_.charts.dropped;
    return std::nullopt;
  }
  if (bySource.size() >= limits_.maxSeriesPerSource) {
    refusedSourceSeries_.add(combineHash(source, std::hash<std::string>{}(key)));
    ++drops_.sourceSeries.dropped;
    return std::nullopt;
  }
  if (presentSeries_ >= limits_.maxSeries) {
    refusedSeries_.add(combineHash(source, std::hash<std::string>{}(key)));
    ++drops_.series.dropped;
    return std::nullopt;
  }
  if (chart == seriesByStat_.end()) chart = seriesByStat_.emplace(stat, 0).first;
  ++chart->second;
  ++presentSeries_;
  const SeriesId id = nextSeries_++;
  bySource.emplace(key, id);
  SeriesDescriptor descriptor;
  descriptor.id = id;
  descriptor.source = source;
  descriptor.stat = std::move(stat);
  descriptor.aggregation = parts ? std::string(parts->aggregation) : std::string("value");
  out.series.push_back(std::move(descriptor));
  return id;
}

void EventConverter::convert(transport::ReceivedEvent& received, IngestBatch& out) {
  Event& event = received.event;
  const std::optional<SourceId> source = sourceId(received.source, received.endpoint.get(), out);
  if (!source) {
    ++drops_.sources.dropped;
    return;
  }
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
      if (const std::optional<SeriesId> series = seriesId(*source, key, out)) out.samples.push_back(StatSample{*series, x, y});
    }
  }

  const std::optional<NameId> name = nameId(event.name, out);
  if (!name) {
    ++drops_.eventNames.dropped;
    return;
  }
  LogEntry entry;
  entry.timeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(event.timestamp.time_since_epoch()).count();
  entry.source = *source;
  entry.name = *name;
  entry.data = renderAll(event);
  if (cutToLimit(entry.data, limits_.maxLogDataBytes)) ++drops_.logData.dropped;
  out.log.push_back(std::move(entry));
}

}  // namespace livemon::ui
