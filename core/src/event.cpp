#include <livemon/event.h>

#include <livemon/detail/dispatch_step.h>

#include <algorithm>
#include <ostream>
#include <sstream>
#include <vector>

namespace livemon {

bool operator==(const Event& a, const Event& b) {
  return a.name == b.name && a.timestamp == b.timestamp && a.step == b.step && a.data == b.data;
}

namespace {

// The int64 data field named kStepKey. A walk over the few keys an event has costs a third of
// hashing the key; many keys are looked up.
std::optional<int64_t> stepField(const Event& event) noexcept {
  constexpr std::size_t kWalkAtMost = 8;
  const DataValue* value = nullptr;
  if (event.data.size() > kWalkAtMost) {
    // std::string's small-buffer form: the key never allocates.
    const auto found = event.data.find(std::string(kStepKey));
    if (found != event.data.end()) value = &found->second;
  } else {
    for (const auto& [key, candidate] : event.data) {
      if (key == kStepKey) {
        value = &candidate;
        break;
      }
    }
  }
  if (value == nullptr) return std::nullopt;
  if (const auto* step = std::get_if<int64_t>(value)) return *step;
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> statedStep(const Event& event) noexcept {
  if (event.step) return event.step;
  if (const std::optional<int64_t> field = stepField(event)) return field;
  return detail::dispatchStep(event);
}

namespace detail {

bool hasStepField(const Event& event) noexcept { return stepField(event).has_value(); }

}  // namespace detail

std::string toString(const DataValue& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::string toString(const Event& event) {
  std::ostringstream out;
  out << event;
  return out.str();
}

std::ostream& operator<<(std::ostream& out, const DataValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          out << '"' << v << '"';
        } else if constexpr (std::is_same_v<T, bool>) {
          out << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, double>) {
          // Keep doubles recognisable as doubles: 1.0, not 1.
          std::ostringstream number;
          number.precision(17);
          number << v;
          std::string text = number.str();
          if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
          out << text;
        } else {
          out << v;
        }
      },
      value);
  return out;
}

std::ostream& operator<<(std::ostream& out, const Event& event) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(event.timestamp.time_since_epoch()).count();
  out << "Event{name=\"" << event.name << "\", timestamp_ns=" << ns;
  if (event.step) out << ", step=" << *event.step;
  out << ", data={";
  // Sorted keys, so the text is stable for the same event.
  std::vector<const std::pair<const std::string, DataValue>*> entries;
  entries.reserve(event.data.size());
  for (const auto& entry : event.data) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(), [](auto* l, auto* r) { return l->first < r->first; });
  bool first = true;
  for (const auto* entry : entries) {
    out << (first ? "" : ", ") << entry->first << ": " << entry->second;
    first = false;
  }
  return out << "}}";
}

}  // namespace livemon
