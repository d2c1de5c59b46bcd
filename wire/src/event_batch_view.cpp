#include <livemon/transport/event_batch_view.h>
#include <livemon/transport/received_event.h>

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
// Held views kept for the next round (each a message's header: a few hundred bytes).
constexpr std::size_t kKeptViews = 4096;
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

std::optional<int64_t> EventView::statedStep() const noexcept {
  if (step_) return step_;
  if (const FieldView* field = find(kStepKey)) {
    if (const int64_t* step = std::get_if<int64_t>(&field->value)) return *step;
  }
  return std::nullopt;
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

ReceivedEvent ReceivedEventView::toReceivedEvent() const {
  ReceivedEvent received;
  received.event = event.toEvent();
  received.source = source;
  received.sequence = sequence;
  received.endpoint = endpoint;
  received.receivedAt = receivedAt;
  received.fromHistory = fromHistory;
  return received;
}

void EventBatchView::toMessage(WireMessage& out) const {
  out.kind = header_.kind;
  out.source = header_.source;
  out.sequence = header_.sequence;
  out.name = name_;
  out.counters = header_.counters;
  out.history = header_.history;
  out.events.clear();
  out.events.reserve(count_);
  for (const EventView& event : *this) out.events.push_back(event.toEvent());
}

// Appends one message's events and fields to the decoder's, after those held before it.
struct EventBatchDecoder::Sink {
  EventBatchDecoder& decoder;
  EventBatchView& view;

  std::vector<std::optional<int64_t>>& steps() { return decoder.steps_; }
  void reserveEvents(std::size_t count) { decoder.events_.reserve(view.first_ + count); }
  std::size_t eventCount() const { return decoder.events_.size() - view.first_; }

  void beginEvent(int64_t timestamp, uint32_t /*fields*/) {
    EventView& event = decoder.events_.emplace_back();
    event.timestampNs_ = timestamp;
    event.first_ = decoder.fields_.size();
  }
  template <typename T>
  void field(std::string_view key, T value) {
    FieldView& field = decoder.fields_.emplace_back();
    field.key = key;
    field.value.emplace<T>(value);
  }

  // False when a key came twice in the event just read.
  bool endEvent() {
    EventView& event = decoder.events_.back();
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

  // The message is read: each of its events gets its name and its step (the steps are this
  // message's, in order). Where the events and fields lie is settled once no more may move them.
  void finish(std::string_view name, bool hasSteps) {
    std::vector<EventView>& events = decoder.events_;
    for (std::size_t e = view.first_; e < events.size(); ++e) {
      events[e].name_ = name;
      if (hasSteps) events[e].step_ = decoder.steps_[e - view.first_];
    }
    view.count_ = events.size() - view.first_;
    view.name_ = name;
  }
};

EventBatchDecoder::EventBatchDecoder(WireLimits limits) : limits_(limits) {}

DecodeStatus EventBatchDecoder::read(EventBatchView& view, std::string_view topic, std::string_view payload,
                                     std::string* error) {
  const std::size_t events = events_.size();
  const std::size_t fields = fields_.size();
  settled_ = false;  // a read may move the buffers, the one refused too
  view.first_ = events;
  view.count_ = 0;
  const DecodeStatus status = detail::decodeGuarded(error, [&] {
    Sink sink{*this, view};
    detail::PayloadHeader header{view.header_, {}};
    detail::readPayload(topic, payload, limits_, header, sink);
  });
  if (status != DecodeStatus::Ok) {
    // What the refused message added goes; what was held before it stays.
    events_.resize(events);
    fields_.resize(fields);
    settledEvents_ = std::min(settledEvents_, events);
    view.name_ = {};
    view.count_ = 0;
    return status;
  }
  view.topic_ = topic;
  view.payload_ = payload;
  return status;
}

DecodeStatus EventBatchDecoder::hold(std::string_view topic, std::string_view payload, std::string* error) {
  if (heldCount_ == heldViews_.size()) heldViews_.push_back(std::unique_ptr<EventBatchView>(new EventBatchView));
  const DecodeStatus status = read(*heldViews_[heldCount_], topic, payload, error);
  if (status == DecodeStatus::Ok) ++heldCount_;
  return status;
}

const EventBatchView& EventBatchDecoder::held(std::size_t i) {
  settle();
  return *heldViews_[i];
}

// Only what was read since the last settle, unless the buffers moved: a holder that looks at each
// message as it holds it pays once per event, not once per event per message.
void EventBatchDecoder::settle() noexcept {
  if (settled_) return;
  if (events_.data() != settledEventsAt_ || fields_.data() != settledFieldsAt_) {
    settledEvents_ = 0;
    settledViews_ = 0;
    settledEventsAt_ = events_.data();
    settledFieldsAt_ = fields_.data();
  }
  for (std::size_t e = settledEvents_; e < events_.size(); ++e) events_[e].fields_ = fields_.data() + events_[e].first_;
  settledEvents_ = events_.size();
  view_.events_ = events_.data() + view_.first_;
  for (std::size_t i = settledViews_; i < heldCount_; ++i) heldViews_[i]->events_ = events_.data() + heldViews_[i]->first_;
  settledViews_ = heldCount_;
  settled_ = true;
}

void EventBatchDecoder::release() noexcept {
  auto forget = [](EventBatchView& view) {
    view.name_ = {};
    view.topic_ = {};
    view.payload_ = {};
    view.events_ = nullptr;
    view.count_ = 0;
    view.first_ = 0;
  };
  forget(view_);
  for (std::size_t i = 0; i < heldCount_; ++i) forget(*heldViews_[i]);
  heldCount_ = 0;
  if (heldViews_.size() > kKeptViews) heldViews_.resize(kKeptViews);
  settled_ = true;
  settledEvents_ = 0;
  settledViews_ = 0;
  trim(events_, kKeptEvents);
  trim(fields_, kKeptFields);
  trim(steps_, kKeptEvents);
  trim(keys_, limits_.maxFieldsPerEvent);
}

}  // namespace livemon::transport
