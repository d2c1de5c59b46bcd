#include <livemon/transport/event_batch_view.h>

#include <algorithm>
#include <string>

#include <livemon/detail/msgpack_reader.h>
#include <livemon/detail/payload_reader.h>

namespace livemon::transport {

namespace {

// Buffers grown past these by one message are let go of after it (a few MiB at most), so one
// large message does not hold the memory for good.
constexpr std::size_t kKeptFields = 1 << 16;
constexpr std::size_t kKeptEvents = 1 << 14;
// Up to this many fields an event's keys are compared pairwise; more are sorted.
constexpr std::size_t kPairwiseKeys = 12;

template <typename T>
void trim(std::vector<T>& buffer, std::size_t kept) {
  if (buffer.capacity() > kept) std::vector<T>().swap(buffer);
  buffer.clear();
}

}  // namespace

DataValue toDataValue(const FieldValueView& value) {
  switch (value.index()) {
    case 0: return std::string(std::get<0>(value));
    case 1: return std::get<1>(value);
    case 2: return std::get<2>(value);
    default: return std::get<3>(value);
  }
}

const FieldView* EventView::find(std::string_view key) const noexcept {
  for (const FieldView& field : fields()) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

Event EventView::toEvent() const {
  Event event;
  event.name = name_;
  event.timestamp = timestamp();
  event.step = step_;
  event.data.reserve(count_);
  for (const FieldView& field : fields()) event.data.emplace(field.key, toDataValue(field.value));
  return event;
}

void EventBatchView::toMessage(WireMessage& out) const {
  out.kind = header_.kind;
  out.source = header_.source;
  out.sequence = header_.sequence;
  out.name = name_;
  out.counters = header_.counters;
  out.history = header_.history;
  out.events.clear();
  out.events.reserve(events_.size());
  for (const EventView& event : events_) out.events.push_back(event.toEvent());
}

struct EventBatchDecoder::Sink {
  EventBatchDecoder& decoder;

  std::vector<std::optional<int64_t>>& steps() { return decoder.steps_; }
  void reserveEvents(std::size_t count) { decoder.view_.events_.reserve(count); }
  std::size_t eventCount() const { return decoder.view_.events_.size(); }

  void beginEvent(int64_t timestamp, uint32_t /*fields*/) {
    EventView& event = decoder.view_.events_.emplace_back();
    event.timestampNs_ = timestamp;
    event.first_ = decoder.fields_.size();
  }
  void field(std::string_view key, const detail::RawValue& value) { decoder.fields_.push_back(FieldView{key, value}); }

  // False when a key came twice in the event just read.
  bool endEvent() {
    EventView& event = decoder.view_.events_.back();
    event.count_ = decoder.fields_.size() - event.first_;
    const FieldView* fields = decoder.fields_.data() + event.first_;
    if (event.count_ <= kPairwiseKeys) {
      for (std::size_t i = 1; i < event.count_; ++i) {
        for (std::size_t j = 0; j < i; ++j) {
          if (fields[i].key == fields[j].key) return false;
        }
      }
      return true;
    }
    std::vector<std::string_view>& keys = decoder.keys_;
    keys.clear();
    for (std::size_t i = 0; i < event.count_; ++i) keys.push_back(fields[i].key);
    std::sort(keys.begin(), keys.end());
    return std::adjacent_find(keys.begin(), keys.end()) == keys.end();
  }

  // The fields have stopped moving: each event gets its span, its name and its step.
  void finish(std::string_view name, bool hasSteps) {
    std::vector<EventView>& events = decoder.view_.events_;
    for (std::size_t e = 0; e < events.size(); ++e) {
      events[e].name_ = name;
      events[e].fields_ = decoder.fields_.data() + events[e].first_;
      if (hasSteps) events[e].step_ = decoder.steps_[e];
    }
    decoder.view_.name_ = name;
  }
};

EventBatchDecoder::EventBatchDecoder(WireLimits limits) : limits_(limits) {}

DecodeStatus EventBatchDecoder::read(std::string_view topic, std::string_view payload, std::string* error) {
  release();
  const DecodeStatus status = detail::decodeGuarded(error, [&] {
    Sink sink{*this};
    detail::PayloadHeader header{view_.header_, {}};
    detail::readPayload(topic, payload, limits_, header, sink);
  });
  if (status != DecodeStatus::Ok) {
    release();
    return status;
  }
  view_.topic_ = topic;
  view_.payload_ = payload;
  return status;
}

void EventBatchDecoder::release() noexcept {
  view_.name_ = {};
  view_.topic_ = {};
  view_.payload_ = {};
  trim(view_.events_, kKeptEvents);
  trim(fields_, kKeptFields);
  trim(steps_, kKeptEvents);
  trim(keys_, limits_.maxFieldsPerEvent);
}

}  // namespace livemon::transport
