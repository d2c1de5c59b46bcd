#include <livemonctl/event_format.h>

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <vector>

#include <livemon/detail/json_writer.h>
#include <livemon/json_text.h>
#include <livemonctl/command.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

using transport::SourceInfo;
using transport::toWireTime;

namespace {

// Six significant digits, still marked as a double.
std::string shortDoubleText(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  std::string text = buffer;
  if (std::isfinite(value) && text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string valueText(const DataValue& value) {
  switch (value.index()) {
    case 0: return quotedPrintableText(std::get<std::string>(value));
    case 1: return shortDoubleText(std::get<double>(value));
    case 2: return std::to_string(std::get<int64_t>(value));
    default: return std::get<bool>(value) ? "true" : "false";
  }
}

void writeValue(detail::JsonWriter& json, const DataValue& value) {
  switch (value.index()) {
    case 0: json.string(std::get<std::string>(value)); break;
    case 1: json.number(std::get<double>(value)); break;
    case 2: json.integer(std::get<int64_t>(value)); break;
    default: json.boolean(std::get<bool>(value));
  }
}

std::vector<const std::pair<const std::string, DataValue>*> sortedData(const Event& event) {
  std::vector<const std::pair<const std::string, DataValue>*> fields;
  fields.reserve(event.data.size());
  for (const auto& field : event.data) fields.push_back(&field);
  std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  return fields;
}

std::string localClock(std::chrono::system_clock::time_point t) {
  const auto ns = toWireTime(t);
  const time_t seconds = static_cast<time_t>(ns / 1'000'000'000 - (ns % 1'000'000'000 < 0 ? 1 : 0));
  const auto millis = ((ns % 1'000'000'000) + 1'000'000'000) % 1'000'000'000 / 1'000'000;
  tm parts{};
  localtime_r(&seconds, &parts);
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<int>(millis));
  return buffer;
}

void writeSource(detail::JsonWriter& json, const SourceInfo& source) {
  json.beginObject().key("run").string(source.run).key("host").string(source.host).key("pid").integer(source.pid);
  if (source.rank) json.key("rank").integer(*source.rank);
  if (source.worldSize) json.key("world_size").integer(*source.worldSize);
  if (source.localRank) json.key("local_rank").integer(*source.localRank);
  json.key("id").string(hex16(source.instanceId)).key("start").integer(toWireTime(source.startTime)).endObject();
}

// describe(), made safe to print.
std::string sourceName(const SourceInfo& source) { return printableText(describe(source)); }

std::string sourceText(const SourceInfo& source) { return sourceName(source) + " (id " + hex16(source.instanceId) + ")"; }

std::string_view changeName(const SourceChange& change) {
  if (change.joined) return "joined";
  return sourceStateName(change.state);
}

}  // namespace

std::string localTimeOfDay(std::chrono::system_clock::time_point t) { return localClock(t); }

// Total over every int64 nanosecond count (1677-09-21 to 2262-04-11): seconds are rounded down
// without the subtraction that overflows near INT64_MIN.
std::string isoUtc(std::chrono::system_clock::time_point t) {
  const auto ns = toWireTime(t);
  int64_t fraction = ns % 1'000'000'000;
  int64_t wholeSeconds = ns / 1'000'000'000;
  if (fraction < 0) {
    fraction += 1'000'000'000;
    wholeSeconds -= 1;
  }
  const auto seconds = static_cast<time_t>(wholeSeconds);
  tm parts{};
  gmtime_r(&seconds, &parts);
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02dT%02d:%02d:%02d.%09dZ", parts.tm_year + 1900, parts.tm_mon + 1,
                parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, static_cast<int>(fraction));
  return buffer;
}

// jsonString() escapes control characters, C1 controls, line separators and bidirectional
// overrides, so the text cannot move the cursor, fake a line or reorder what follows.
std::string quotedPrintableText(std::string_view text) { return jsonString(text); }

std::string printableText(std::string_view text) {
  const std::string quoted = quotedPrintableText(text);
  return quoted.substr(1, quoted.size() - 2);
}

namespace {

// What the two forms of an event have in common, for formatText and formatJson.
struct EventParts {
  std::string_view name;
  std::chrono::system_clock::time_point timestamp;
  std::optional<int64_t> step;
  const SourceInfo* source;
  const std::string* endpoint;
  uint64_t sequence;
  bool fromHistory;
};

EventParts partsOf(const ReceivedEvent& event) {
  return {event.event.name, event.event.timestamp, statedStep(event.event), event.source.get(), event.endpoint.get(),
          event.sequence, event.fromHistory};
}

EventParts partsOf(const transport::ReceivedEventView& event) {
  return {event.event.name(), event.event.timestamp(), event.event.statedStep(), event.source.get(),
          event.endpoint.get(), event.sequence, event.fromHistory};
}

std::vector<const transport::FieldView*> sortedFields(const transport::EventView& event) {
  std::vector<const transport::FieldView*> fields;
  fields.reserve(event.fields().size());
  for (const transport::FieldView& field : event.fields()) fields.push_back(&field);
  std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) { return a->key < b->key; });
  return fields;
}

std::string valueText(const transport::FieldValueView& value) {
  if (const std::string_view* text = std::get_if<std::string_view>(&value)) return quotedPrintableText(*text);
  return valueText(transport::toDataValue(value));
}

void writeValue(detail::JsonWriter& json, const transport::FieldValueView& value) {
  if (const std::string_view* text = std::get_if<std::string_view>(&value)) {
    json.string(*text);
  } else {
    writeValue(json, transport::toDataValue(value));
  }
}

std::string_view keyOf(const std::pair<const std::string, DataValue>* field) { return field->first; }
std::string_view keyOf(const transport::FieldView* field) { return field->key; }
const DataValue& valueOf(const std::pair<const std::string, DataValue>* field) { return field->second; }
const transport::FieldValueView& valueOf(const transport::FieldView* field) { return field->value; }

template <typename Fields>
std::string formatText(const EventParts& event, const Fields& fields) {
  std::string line = localClock(event.timestamp) + " " + (event.source ? sourceName(*event.source) : "?") + " " +
                     printableText(event.name) + " #" + std::to_string(event.sequence);
  if (event.step) line += " step " + std::to_string(*event.step);
  for (const auto* field : fields) {
    line += ' ';
    line += printableText(keyOf(field));
    line += '=';
    line += valueText(valueOf(field));
  }
  return line;
}

template <typename Fields>
std::string formatJson(const EventParts& event, const Fields& fields) {
  detail::JsonWriter json;
  json.beginObject().key("time").string(isoUtc(event.timestamp)).key("ts").integer(toWireTime(event.timestamp));
  json.key("name").string(event.name).key("seq").integer(event.sequence);
  if (event.step) json.key("step").integer(*event.step);
  if (event.source) writeSource(json.key("source"), *event.source);
  if (event.endpoint) json.key("endpoint").string(*event.endpoint);
  if (event.fromHistory) json.key("history").boolean(true);
  json.key("data").beginObject();
  for (const auto* field : fields) writeValue(json.key(keyOf(field)), valueOf(field));
  json.endObject().endObject();
  return json.take();
}

}  // namespace

std::string formatEventText(const ReceivedEvent& event) { return formatText(partsOf(event), sortedData(event.event)); }

std::string formatEventJson(const ReceivedEvent& event) { return formatJson(partsOf(event), sortedData(event.event)); }

std::string formatEventText(const transport::ReceivedEventView& event) {
  return formatText(partsOf(event), sortedFields(event.event));
}

std::string formatEventJson(const transport::ReceivedEventView& event) {
  return formatJson(partsOf(event), sortedFields(event.event));
}

std::string formatSourceChangeText(const SourceChange& change) {
  std::string line = "-- " + std::string(changeName(change)) + ": " + (change.source ? sourceText(*change.source) : "?");
  if (change.endpoint) line += (change.joined ? " via " : " on ") + printableText(*change.endpoint);
  return line;
}

std::string formatSourceChangeJson(const SourceChange& change) {
  detail::JsonWriter json;
  json.beginObject().key("notice").string(changeName(change));
  if (change.source) writeSource(json.key("source"), *change.source);
  if (change.endpoint) json.key("endpoint").string(*change.endpoint);
  json.endObject();
  return json.take();
}

std::string formatGapText(const GapInfo& gap) {
  return "-- gap: " + std::to_string(gap.missed()) + " event(s) of " + printableText(gap.topic) + " missing from " +
         (gap.source ? sourceName(*gap.source) : "?") + " (#" + std::to_string(gap.expected) + " to #" +
         std::to_string(gap.received - 1) + ")";
}

std::string formatGapJson(const GapInfo& gap) {
  detail::JsonWriter json;
  json.beginObject().key("notice").string("gap").key("topic").string(gap.topic);
  json.key("expected").integer(gap.expected).key("received").integer(gap.received).key("missed").integer(gap.missed());
  if (gap.source) writeSource(json.key("source"), *gap.source);
  json.endObject();
  return json.take();
}

std::string formatHistoryText(const HistoryStatus& history) {
  std::string line = "history of " + (history.endpoint ? printableText(*history.endpoint) : std::string("?")) + ": ";
  if (history.outcome != transport::HistoryOutcome::Received) {
    return line + "none (" + std::string(transport::historyOutcomeName(history.outcome)) + ": " + printableText(history.error) +
           "); live from now";
  }
  line += std::to_string(history.events) + " event(s)";
  if (history.oldest) line += " from " + localClock(*history.oldest);
  if (history.truncated) line += " (older ones not kept)";
  return line + ", then live";
}

std::string formatReceiveSummary(const SubscriberStats& stats) {
  std::ostringstream text;
  text << stats.events << " events from " << stats.sourcesJoined << " source(s); " << stats.gaps << " gap(s), "
       << stats.missedEvents << " event(s) missed, " << stats.sequenceResets << " sequence restart(s); skipped "
       << stats.malformed << " malformed, " << stats.oversized << " oversized, " << stats.unsupported
       << " unsupported message(s); forgot " << stats.topicsEvicted << " topic(s) and " << stats.sourcesEvicted
       << " source(s); " << stats.protocolErrors << " reconnect(s) after protocol errors";
  // Events whose numbers another message with other bytes had claimed: a peer posing as a source.
  if (stats.conflicts > 0) text << "; " << stats.conflicts << " event(s) conflicting with a message claiming their numbers";
  // The reason may quote what a peer sent.
  if (!stats.lastError.empty()) text << " (last: " << printableText(stats.lastError) << ")";
  return text.str();
}

QuietEndpointNotice::QuietEndpointNotice(std::string_view command, const Clock& clock, std::chrono::milliseconds after)
    : command_(command), clock_(clock), due_(clock.now() + after), enabled_(after.count() > 0) {}

void QuietEndpointNotice::check(const transport::Subscriber& subscriber, std::ostream& err) {
  // Why a connection was refused is told at once, each reason once per endpoint.
  for (const transport::EndpointStatus& endpoint : subscriber.endpoints()) {
    if (!endpoint.endpoint || endpoint.handshakeError.empty()) continue;
    if (!toldHandshakes_.insert(*endpoint.endpoint + '\n' + endpoint.handshakeError).second) continue;
    told_.insert(*endpoint.endpoint);  // no "nothing received" guess after this
    commandMessage(err, command_) << printableText(*endpoint.endpoint) << ": " << endpoint.handshakeError << std::endl;
  }
  if (!enabled_ || clock_.now() < due_) return;
  for (const transport::EndpointStatus& endpoint : subscriber.endpoints()) {
    if (endpoint.messages != 0 || !endpoint.endpoint || told_.contains(*endpoint.endpoint)) continue;
    told_.insert(*endpoint.endpoint);
    commandMessage(err, command_) << "nothing received from " << printableText(*endpoint.endpoint)
                                  << " yet; is a publisher running there?" << std::endl;
  }
}

}  // namespace livemon::livemonctl
