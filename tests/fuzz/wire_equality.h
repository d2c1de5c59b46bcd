#pragma once

#include <cstring>
#include <variant>

#include <livemon/event.h>
#include <livemon/transport/wire_format.h>

// Equality of decoded wire messages where a NaN equals the same NaN (payloads carry any double
// bit pattern): what the wire fuzz targets and the decoders' agreement tests compare with.
namespace livemon::fuzz {

inline bool sameValue(const DataValue& a, const DataValue& b) {
  if (a.index() != b.index()) return false;
  if (const double* x = std::get_if<double>(&a)) {
    const double y = std::get<double>(b);
    return std::memcmp(x, &y, sizeof y) == 0;
  }
  return a == b;
}

inline bool sameEvent(const Event& a, const Event& b) {
  if (a.name != b.name || a.timestamp != b.timestamp || a.step != b.step || a.data.size() != b.data.size()) {
    return false;
  }
  for (const auto& field : a.data) {
    const auto other = b.data.find(field.first);
    if (other == b.data.end() || !sameValue(field.second, other->second)) return false;
  }
  return true;
}

inline bool sameMessage(const transport::WireMessage& a, const transport::WireMessage& b) {
  if (a.kind != b.kind || a.source != b.source || a.sequence != b.sequence) return false;
  if (a.kind == transport::MessageKind::Events) {
    if (a.name != b.name || a.events.size() != b.events.size()) return false;
    for (std::size_t i = 0; i < a.events.size(); ++i) {
      if (!sameEvent(a.events[i], b.events[i])) return false;
    }
    return true;
  }
  return a.counters.timestamp == b.counters.timestamp && a.counters.interval == b.counters.interval &&
         a.counters.published == b.counters.published && a.counters.dropped == b.counters.dropped &&
         a.history == b.history;
}

}  // namespace livemon::fuzz
