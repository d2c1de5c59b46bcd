#include <livemon/ui/ingest/event_converter.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <functional>
#include <span>
#include <string_view>
#include <type_traits>
#include <variant>

#include <livemon/run_config.h>

#include <livemon/ui/data/stat_key.h>

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

// The ingest thread's buffer a log row's text is written into, emptied for the next; the row then
// takes a copy of exactly its length. A million rows are kept: a string grown by appending holds
// up to twice its length (about 60 MiB over a full log of Stat windows, issue 32 goal 6).
constexpr std::size_t kScratchKept = 64 * 1024;
std::string& renderScratch() {
  thread_local std::string scratch;
  if (scratch.capacity() > kScratchKept) std::string().swap(scratch);  // after a rare huge event
  scratch.clear();
  return scratch;
}

std::string renderAll(const transport::EventView& event) {
  std::vector<const transport::FieldView*> fields;
  fields.reserve(event.fields().size());
  for (const transport::FieldView& field : event.fields()) fields.push_back(&field);
  std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) { return a->key < b->key; });
  std::string& out = renderScratch();
  for (const transport::FieldView* field : fields) {
    if (!out.empty()) out.append(", ");
    out.append(field->key);
    out.push_back('=');
    if (const std::string_view* text = std::get_if<std::string_view>(&field->value)) {
      out.push_back('"');
      out.append(*text);
      out.push_back('"');
    } else {
      appendValue(out, transport::toDataValue(field->value));
    }
  }
  return std::string(out);
}

// What convertEvent reads of either kind of event.
const Event& eventOf(const transport::ReceivedEvent& received) { return received.event; }
const transport::EventView& eventOf(const transport::ReceivedEventView& received) { return received.event; }
std::string_view nameOf(const Event& event) { return event.name; }
std::string_view nameOf(const transport::EventView& event) { return event.name(); }
std::optional<int64_t> stepOf(const Event& event) { return statedStep(event); }
std::optional<int64_t> stepOf(const transport::EventView& event) { return event.statedStep(); }
std::chrono::system_clock::time_point timeOf(const Event& event) { return event.timestamp; }
std::chrono::system_clock::time_point timeOf(const transport::EventView& event) { return event.timestamp(); }
const auto& fieldsOf(const Event& event) { return event.data; }
std::span<const transport::FieldView> fieldsOf(const transport::EventView& event) { return event.fields(); }
std::string_view keyOf(const std::pair<const std::string, DataValue>& field) { return field.first; }
std::string_view keyOf(const transport::FieldView& field) { return field.key; }
std::optional<double> numberOf(const std::pair<const std::string, DataValue>& field) {
  if (const double* d = std::get_if<double>(&field.second)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&field.second)) return static_cast<double>(*i);
  return std::nullopt;
}
std::optional<double> numberOf(const transport::FieldView& field) {
  if (const double* d = std::get_if<double>(&field.value)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&field.value)) return static_cast<double>(*i);
  return std::nullopt;
}

std::string renderAll(const Event& event) {
  std::vector<const std::pair<const std::string, DataValue>*> fields;
  fields.reserve(event.data.size());
  for (const auto& field : event.data) fields.push_back(&field);
  std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  std::string& out = renderScratch();
  for (const auto* field : fields) {
    if (!out.empty()) out.append(", ");
    out.append(field->first);
    out.push_back('=');
    appendValue(out, field->second);
  }
  return std::string(out);
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

EventConverter::EventConverter(IngestLimits limits, double foldSlotMs) : limits_(limits), folder_(foldSlotMs) {}

void EventConverter::finish(IngestBatch& out) { folder_.fold(out.samples, fieldSeriesIds_); }

LimitDrops EventConverter::drops() const {
  LimitDrops result = drops_;
  const auto distinct = [](LimitDrop& drop, const DistinctCounter& counter) {
    drop.distinct = counter.count();
    drop.atLeast = counter.saturated();
  };
  distinct(result.sources, refusedSources_);
  distinct(result.charts, refusedCharts_);
  distinct(result.fieldCharts, refusedFieldCharts_);
  distinct(result.sourceSeries, refusedSourceSeries_);
  distinct(result.series, refusedSeries_);
  distinct(result.eventNames, refusedNames_);
  return result;
}

std::optional<SourceId> EventConverter::sourceId(const std::shared_ptr<const transport::SourceInfo>& source,
                                                 const std::string* endpoint, IngestBatch& out) {
  static const auto unknown = std::make_shared<const transport::SourceInfo>(transport::SourceInfo{"unknown", "", 0, {}, 0, {}, {}, {}});
  const auto& info = source ? source : unknown;
  if (const auto found = sourceByAddress_.find(info.get()); found != sourceByAddress_.end()) return found->second.id;
  std::optional<SourceId> id;
  if (const auto found = sourceByValue_.find(*info); found != sourceByValue_.end()) {
    id = found->second;
  } else if (sourceByValue_.size() < limits_.maxSources) {
    id = static_cast<SourceId>(seriesBySource_.size());
    sourceByValue_.emplace(*info, *id);
    seriesBySource_.emplace_back().ranked = info->rank.has_value() && limits_.maxRankedSeries > 0;
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
  const auto release = [this](const std::string& chart, const SeriesRef& ref, bool ranked) {
    const auto unref = [&chart](std::unordered_map<std::string, std::size_t>& counts) {
      if (const auto found = counts.find(chart); found != counts.end() && --found->second == 0) counts.erase(found);
    };
    unref(seriesByStat_);
    if (ref.kind == SeriesKind::EventField) {
      unref(seriesByFieldChart_);
      fieldSeriesIds_.erase(ref.id);
    }
    if (ref.kind == SeriesKind::CounterRate) counters_.erase(ref.id);
    --(ranked ? presentRankedSeries_ : presentSeries_);
  };
  for (SourceId id : ids) {
    if (id >= seriesBySource_.size()) continue;
    SourceSeries& bySource = seriesBySource_[id];
    for (const auto& [key, ref] : bySource.statKeys) release(statOf(key), ref, bySource.ranked);
    for (const auto& [name, fields] : bySource.fields) {
      for (const auto& [field, ref] : fields) release(*nameById_[name] + '.' + field, ref, bySource.ranked);
    }
    bySource = {};
  }
}

std::optional<NameId> EventConverter::nameId(std::string_view name, IngestBatch& out) {
  if (const auto found = names_.find(name); found != names_.end()) return found->second;
  if (names_.size() >= limits_.maxEventNames && !isStatEventName(name)) {
    refusedNames_.add(std::hash<std::string_view>{}(name));
    return std::nullopt;
  }
  const auto id = static_cast<NameId>(names_.size());
  const auto inserted = names_.emplace(std::string(name), id).first;
  nameById_.push_back(&inserted->first);
  out.names.push_back(NameDescriptor{id, std::string(name)});
  return id;
}

std::optional<EventConverter::SeriesRef> EventConverter::newSeries(SourceId source, std::string stat,
                                                                   std::string aggregation, SeriesKind kind,
                                                                   uint64_t keyHash, IngestBatch& out) {
  SourceSeries& bySource = seriesBySource_[source];
  auto chart = seriesByStat_.find(stat);
  const bool field = kind == SeriesKind::EventField;
  auto fieldChart = field ? seriesByFieldChart_.find(stat) : seriesByFieldChart_.end();
  // The most specific reason first: a new event-field chart, a new chart, then the source's
  // share, then the total.
  if (field && fieldChart == seriesByFieldChart_.end() && seriesByFieldChart_.size() >= limits_.maxFieldCharts) {
    refusedFieldCharts_.add(std::hash<std::string>{}(stat));
    ++drops_.fieldCharts.dropped;
    return std::nullopt;
  }
  if (chart == seriesByStat_.end() && seriesByStat_.size() >= limits_.maxCharts) {
    refusedCharts_.add(std::hash<std::string>{}(stat));
    ++drops_.charts.dropped;
    return std::nullopt;
  }
  if (bySource.count >= limits_.maxSeriesPerSource) {
    refusedSourceSeries_.add(combineHash(source, keyHash));
    ++drops_.sourceSeries.dropped;
    return std::nullopt;
  }
  std::size_t& present = bySource.ranked ? presentRankedSeries_ : presentSeries_;
  if (present >= (bySource.ranked ? limits_.maxRankedSeries : limits_.maxSeries)) {
    refusedSeries_.add(combineHash(source, keyHash));
    ++drops_.series.dropped;
    return std::nullopt;
  }
  if (chart == seriesByStat_.end()) chart = seriesByStat_.emplace(stat, 0).first;
  ++chart->second;
  if (field) {
    if (fieldChart == seriesByFieldChart_.end()) fieldChart = seriesByFieldChart_.emplace(stat, 0).first;
    ++fieldChart->second;
  }
  ++present;
  ++bySource.count;
  const SeriesId id = nextSeries_++;
  if (kind == SeriesKind::CounterRate) counters_.emplace(id, std::nullopt);
  if (field) fieldSeriesIds_.insert(id);
  SeriesDescriptor descriptor;
  descriptor.id = id;
  descriptor.source = source;
  descriptor.stat = std::move(stat);
  descriptor.aggregation = std::move(aggregation);
  descriptor.kind = kind;
  out.series.push_back(std::move(descriptor));
  return SeriesRef{id, kind};
}

std::optional<EventConverter::SeriesRef> EventConverter::statSeries(SourceId source, std::string_view key,
                                                                    IngestBatch& out) {
  if (const auto found = seriesBySource_[source].statKeys.find(key); found != seriesBySource_[source].statKeys.end()) {
    return found->second;
  }
  const std::optional<StatKeyParts> parts = splitStatKey(key);
  std::string stat = parts ? std::string(parts->stat) : std::string(key);
  std::string aggregation = parts ? std::string(parts->aggregation) : std::string("value");
  SeriesKind kind = SeriesKind::StatWindow;
  if (isCumulativeCounter(stat, aggregation)) {
    kind = SeriesKind::CounterRate;
    aggregation = kRateAggregation;
  }
  const std::optional<SeriesRef> ref =
      newSeries(source, std::move(stat), std::move(aggregation), kind, std::hash<std::string_view>{}(key), out);
  if (ref) seriesBySource_[source].statKeys.emplace(std::string(key), *ref);
  return ref;
}

std::optional<EventConverter::SeriesRef> EventConverter::fieldSeries(SourceId source, NameId name,
                                                                     std::string_view field, IngestBatch& out) {
  auto& fields = seriesBySource_[source].fields[name];
  if (const auto found = fields.find(field); found != fields.end()) return found->second;
  const uint64_t keyHash = combineHash(0x6669656c64ULL ^ name, std::hash<std::string_view>{}(field));
  const std::optional<SeriesRef> ref =
      newSeries(source, *nameById_[name] + '.' + std::string(field), "value", SeriesKind::EventField, keyHash, out);
  if (ref) fields.emplace(std::string(field), *ref);
  return ref;
}

std::optional<double> EventConverter::counterRate(SeriesId id, double x, double y) {
  const auto found = counters_.find(id);
  if (found == counters_.end()) return std::nullopt;
  // Not a total to difference: shown as it is (the store counts it), and the next window is taken
  // against the last good one.
  if (!std::isfinite(y)) return y;
  const std::optional<CounterSample> before = found->second;
  found->second = CounterSample{x, y};
  if (!before || !(x > before->x) || y < before->y) return std::nullopt;
  return (y - before->y) * 1000.0 / (x - before->x);
}

void EventConverter::convert(transport::ReceivedEvent& received, IngestBatch& out) { convertEvent(received, out); }

void EventConverter::convert(const transport::ReceivedEventView& received, IngestBatch& out) {
  if (received.event.name() == kRunConfigEventName) {
    // A run's config, once per run: read from an owning copy, as the config keeps its values.
    transport::ReceivedEvent owned = received.toReceivedEvent();
    convertEvent(owned, out);
    return;
  }
  convertEvent(received, out);
}

template <typename Received>
void EventConverter::convertEvent(const Received& received, IngestBatch& out) {
  const auto& event = eventOf(received);
  const std::optional<SourceId> source = sourceId(received.source, received.endpoint.get(), out);
  if (!source) {
    ++drops_.sources.dropped;
    return;
  }
  ++out.events;

  const std::string_view eventName = nameOf(event);
  const std::optional<NameId> name = nameId(eventName, out);
  const bool stat = isStatEventName(eventName);
  const std::optional<int64_t> stated = stepOf(event);
  const auto timestamp = timeOf(event);
  const int64_t timeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(timestamp.time_since_epoch()).count();
  // A run's config describes the run (the Runs panel's columns): logged, not charted.
  std::optional<RunConfig> config;
  if constexpr (std::is_same_v<Received, transport::ReceivedEvent>) config = runConfigOf(event);
  if (config) out.addConfig(RunConfigNote{*source, timeNs, std::move(*config)});
  // An event whose name was refused is dropped whole, its fields' points with it.
  if (!config && (stat || name)) {
    const double x = epochMilliseconds(timestamp);
    const double step = stated ? static_cast<double>(*stated) : kNoStep;
    for (const auto& field : fieldsOf(event)) {
      const std::optional<double> number = numberOf(field);
      if (!number) continue;
      const double y = *number;
      const std::string_view key = keyOf(field);
      if (stat) {
        const std::optional<SeriesRef> series = statSeries(*source, key, out);
        if (!series) continue;
        if (series->kind == SeriesKind::CounterRate) {
          const std::optional<double> rate = counterRate(series->id, x, y);
          if (rate) out.samples.push_back(StatSample{series->id, x, *rate, step});
        } else {
          out.samples.push_back(StatSample{series->id, x, y, step});
        }
      } else if (isChartedEventField(key)) {
        if (const std::optional<SeriesRef> series = fieldSeries(*source, *name, key, out)) {
          out.samples.push_back(StatSample{series->id, x, y, step});
        }
      }
    }
  }

  if (!name) {
    ++drops_.eventNames.dropped;
    return;
  }
  LogEntry entry;
  entry.timeNs = timeNs;
  entry.step = stated.value_or(LogEntry::kNoStep);
  entry.source = *source;
  entry.name = *name;
  entry.data = renderAll(event);
  if (cutToLimit(entry.data, limits_.maxLogDataBytes)) ++drops_.logData.dropped;
  out.log.push_back(std::move(entry));
}

}  // namespace livemon::ui
