#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <livemon/event.h>
#include <livemon/transport/wire_format.h>

// A borrowed, allocation-free reading of a wire message (docs/wire-format.md) for consumers that
// look at events and do not keep them: names, keys and strings are views into the payload, the
// fields of an event a span to iterate, not a map. decodeMessage (wire_format.h) stays for those
// that keep events. Both read with the same code and accept and refuse the same bytes alike.
namespace livemon::transport {

// A data value as it lies in the payload; the alternatives in DataValue's order.
using FieldValueView = std::variant<std::string_view, double, int64_t, bool>;

// Thread-safety: a plain value type. One data field of an event, borrowed from the payload.
struct FieldView {
  std::string_view key;
  FieldValueView value;
};

// The owning value of a borrowed one.
DataValue toDataValue(const FieldValueView& value);

// Thread-safety: a plain value type; borrowed: valid only during the EventBatchDecoder callback
// that lent it, like everything it returns.
//
// One event of a batch.
class EventView {
 public:
  std::string_view name() const noexcept { return name_; }
  int64_t timestampNs() const noexcept { return timestampNs_; }
  std::chrono::system_clock::time_point timestamp() const noexcept { return fromWireTime(timestampNs_); }
  std::optional<int64_t> step() const noexcept { return step_; }
  // The step it states: its step, else an int64 field named kStepKey (statedStep() of an Event).
  std::optional<int64_t> statedStep() const noexcept;
  // In the order they came; keys are unique (the decoder refuses an event with a key twice).
  std::span<const FieldView> fields() const noexcept { return {fields_, count_}; }
  // The field named `key`, or nullptr (a linear search: events have a handful of fields).
  const FieldView* find(std::string_view key) const noexcept;
  // An owning copy, as decodeMessage would have decoded it.
  Event toEvent() const;

 private:
  friend class EventBatchDecoder;
  std::string_view name_;
  int64_t timestampNs_ = 0;
  std::optional<int64_t> step_;
  const FieldView* fields_ = nullptr;
  std::size_t count_ = 0;
  std::size_t first_ = 0;  // fields_ as an index into the decoder's fields, which may still move
};

// Not thread-safe: one owner at a time; borrowed: it exists only inside the EventBatchDecoder
// callback it is handed to, cannot be copied or moved, and dies with the call.
//
// One decoded message: its header, and for an events message its events.
class EventBatchView {
 public:
  EventBatchView(const EventBatchView&) = delete;
  EventBatchView& operator=(const EventBatchView&) = delete;

  MessageKind kind() const noexcept { return header_.kind; }
  const SourceInfo& source() const noexcept { return header_.source; }
  // Events: the sequence number of the first event (the i-th has sequence() + i).
  uint64_t sequence() const noexcept { return header_.sequence; }
  std::string_view name() const noexcept { return name_; }  // events only
  std::string_view topic() const noexcept { return topic_; }
  std::string_view payload() const noexcept { return payload_; }
  const PublisherCounters& counters() const noexcept { return header_.counters; }  // heartbeat, goodbye
  std::string_view history() const noexcept { return header_.history; }           // heartbeat, goodbye

  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  const EventView& operator[](std::size_t i) const noexcept { return events_[i]; }
  const EventView* begin() const noexcept { return events_; }
  const EventView* end() const noexcept { return events_ + count_; }

  // The owning message decodeMessage would have produced from the same bytes.
  void toMessage(WireMessage& out) const;

 private:
  friend class EventBatchDecoder;
  EventBatchView() = default;

  WireMessage header_;  // its name and events stay empty
  std::string_view name_;
  std::string_view topic_;
  std::string_view payload_;
  const EventView* events_ = nullptr;  // in the decoder's events
  std::size_t count_ = 0;
  std::size_t first_ = 0;  // events_ as an index into the decoder's events, which may still move
};

// Not thread-safe: one owner at a time (a subscriber's or relay's receiving thread).
//
// Decodes messages into EventBatchViews. Its buffers are kept from one message to the next, so
// once they have grown to the messages' size decoding allocates nothing; after a message far
// larger than usual they are let go of. The same limits and the same decoded-size bound
// (WireLimits) as decodeMessage hold; a message is read whole and checked before any of it is
// lent.
class EventBatchDecoder {
 public:
  explicit EventBatchDecoder(WireLimits limits = {});
  EventBatchDecoder(const EventBatchDecoder&) = delete;
  EventBatchDecoder& operator=(const EventBatchDecoder&) = delete;

  // Decodes `payload` (with its `topic` frame) and, when it is valid, calls onBatch(const
  // EventBatchView&) once: the view and every view it returns borrow `topic`, `payload` and this
  // decoder, and are valid only during that call. Never throws for bad input: returns the status
  // and, when `error` is given, what broke and where, as decodeMessage does for the same bytes.
  // What onBatch throws propagates.
  template <typename OnBatch>
  DecodeStatus decode(std::string_view topic, std::string_view payload, OnBatch&& onBatch,
                      std::string* error = nullptr) {
    release();
    const DecodeStatus status = read(view_, topic, payload, error);
    if (status != DecodeStatus::Ok) return status;
    settle();
    Release release{*this};
    std::forward<OnBatch>(onBatch)(static_cast<const EventBatchView&>(view_));
    return status;
  }

  // For an owner that hands batches on after decoding several (the Subscriber decodes a poll's
  // messages under its locks and lends them to SubscriberCallbacks::onEventView after letting
  // go): hold() decodes like decode() and, when the message is valid, keeps its view, which
  // borrows `topic` and `payload` (they must stay put until releaseHeld()). held(i) lends the
  // i-th view kept, in the order held, valid until the next hold(), decode() or releaseHeld().
  // decode() forgets what was held. Memory: what the messages held since releaseHeld() decode
  // to, bounded as for decode() per message; releaseHeld() lets go of buffers grown far past
  // the usual.
  DecodeStatus hold(std::string_view topic, std::string_view payload, std::string* error = nullptr);
  std::size_t heldCount() const noexcept { return heldCount_; }
  const EventBatchView& held(std::size_t i);
  void releaseHeld() noexcept { release(); }

  const WireLimits& limits() const noexcept { return limits_; }

 private:
  // Thread-safety: owned by the decode() call that makes it; forgets the lent batch at its end.
  struct Release {
    EventBatchDecoder& decoder;
    ~Release() { decoder.release(); }
  };
  // Thread-safety: the decoder's own. The Sink of detail::readPayload (payload_reader.h).
  struct Sink;

  // Decodes into `view`, appending its events and fields to those already held.
  DecodeStatus read(EventBatchView& view, std::string_view topic, std::string_view payload, std::string* error);
  // Points every held view and event at where their events and fields lie now.
  void settle() noexcept;
  void release() noexcept;

  WireLimits limits_;
  EventBatchView view_;
  std::vector<std::unique_ptr<EventBatchView>> heldViews_;  // reused; the first heldCount_ are held
  std::size_t heldCount_ = 0;
  bool settled_ = true;
  // What settle() last pointed: events and held views up to these counts, in these buffers.
  std::size_t settledEvents_ = 0;
  std::size_t settledViews_ = 0;
  const EventView* settledEventsAt_ = nullptr;
  const FieldView* settledFieldsAt_ = nullptr;
  std::vector<EventView> events_;
  std::vector<FieldView> fields_;
  std::vector<std::optional<int64_t>> steps_;
  std::vector<std::string_view> keys_;  // an event's keys, sorted to find one that came twice
};

}  // namespace livemon::transport
