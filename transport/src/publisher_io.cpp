// A Publisher's I/O thread: it drains the queue, batches events by name, sends the batches and
// the heartbeats, feeds the metrics sink and serves the history (publisher_state.h).
#include <poll.h>

#include <cerrno>
#include <cstring>

#include <zmq.h>

#include <livemon/detail/msgpack_writer.h>
#include <livemon/detail/wire_codec.h>

#include "publisher_state.h"
#include "zmq_support.h"

namespace livemon::transport {

namespace {

// The I/O thread reads about this much of the queue before it sends and looks at the clock.
constexpr std::size_t kDrainBudgetFactor = 4;
// After work, the I/O thread checks the queue again after waits that double from the first to
// the last (1.55 ms in all), so a steady stream of events never makes the logging threads wake it;
// then it sleeps until an event is queued, a history request comes or a heartbeat is due.
constexpr std::chrono::microseconds kFirstIdleWait{50};
constexpr std::chrono::microseconds kLastIdleWait{800};
// While every subscriber is full (WaitForSlowest), the I/O thread rechecks this often.
constexpr int kBlockedPollMs = 10;

using detail::kRecordNameHeader;

}  // namespace

void Publisher::State::run() noexcept {
  try {
    auto nextHeartbeat = std::chrono::steady_clock::now();
    auto idleWait = kFirstIdleWait;
    while (true) {
      const bool stopping = stopRequested();
      bool busy = drainAndSend();
      if (metrics && metrics->deliver(identity) > 0) busy = true;
      const auto now = std::chrono::steady_clock::now();
      if (now >= nextHeartbeat) {
        sendHeartbeat(MessageKind::Heartbeat);
        nextHeartbeat = now + options.heartbeatInterval;
        if (const auto copy = scheduled.configCopies.due(now)) {
          if (zmq_send(socket, kRunConfigEventName.data(), kRunConfigEventName.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0) {
            zmq_send(socket, copy->data(), copy->size(), ZMQ_DONTWAIT);
          }
        }
      }
      if (history && !stopping) busy = history->serve() || busy;
      if (stopping && ring.size() == 0) break;
      if (stopping && now >= stopDeadline) break;  // WaitForSlowest with a stalled subscriber
      if (busy) {
        idleWait = kFirstIdleWait;
        continue;
      }
      if (stopping) {
        waitBriefly(kFirstIdleWait);  // the linger: a slow subscriber's socket
      } else if (idleWait <= kLastIdleWait) {
        waitBriefly(std::min(idleWait, std::chrono::duration_cast<std::chrono::microseconds>(nextHeartbeat - now)));
        idleWait *= 2;
      } else {
        sleepUntilWork(nextHeartbeat);
      }
      counters.ioWakeups.fetch_add(1, std::memory_order_relaxed);
    }
    // Whatever is still queued could not be sent within the linger time.
    std::size_t left = 0;
    while (ring.drain(SIZE_MAX, scratch, [&](std::string_view) { ++left; }) > 0) {
    }
    for (Batch& batch : batches.all) left += batch.count;
    counters.droppedAtShutdown.fetch_add(left, std::memory_order_relaxed);
    sendHeartbeat(MessageKind::Goodbye);
  } catch (...) {
    // Encoding failed for lack of memory: stop publishing rather than terminate the process.
  }
}

bool Publisher::State::drainAndSend() {
  const std::size_t budget = kDrainBudgetFactor * options.maxBatchBytes;
  Batch* last = nullptr;
  const std::size_t records = ring.drain(budget, scratch, [&](std::string_view record) {
    const std::size_t nameSize =
        static_cast<uint8_t>(record[0]) | (static_cast<std::size_t>(static_cast<uint8_t>(record[1])) << 8);
    const std::size_t stepSize = static_cast<uint8_t>(record[2]);
    const std::string_view name = record.substr(kRecordNameHeader, nameSize);
    const std::string_view step = record.substr(kRecordNameHeader + nameSize, stepSize);
    const std::string_view entry = record.substr(kRecordNameHeader + nameSize + stepSize);
    if (last == nullptr || last->name != name) last = &batches[name];
    if (last->count > 0 &&
        (last->count >= options.maxBatchEvents ||
         last->body.size() + last->steps.size() + entry.size() + step.size() > options.maxBatchBytes)) {
      sendBatch(*last);
    }
    last->body.append(entry);
    last->steps.append(step);
    last->anyStep = last->anyStep || step != "\xc0";
    ++last->count;
  });
  if (records > 0) flushBatches();
  discardSubscriptions();
  return records > 0;
}

void Publisher::State::flushBatches() {
  for (Batch& batch : batches.all) {
    if (batch.count > 0) sendBatch(batch);
  }
}

void Publisher::State::sendBatch(Batch& batch) {
  header.clear();
  detail::MsgpackWriter writer(header);
  detail::writePayloadStart(writer,
                            batch.anyStep ? detail::kEventsPayloadEntriesWithSteps : detail::kEventsPayloadEntries,
                            MessageKind::Events, identity, batch.nextSequence);
  writer.str("name");
  writer.str(batch.name);
  writer.str("events");
  writer.arrayHeader(batch.count);
  // Batches without a step are sent without "steps", byte for byte as before steps existed.
  if (batch.anyStep) {
    stepsTrailer.clear();
    detail::appendStepsHeader(stepsTrailer, batch.count);
    stepsTrailer.append(batch.steps);
  }
  const std::string_view trailer = batch.anyStep ? std::string_view(stepsTrailer) : std::string_view();
  if (history ? sendKept(batch.name, header, batch.body, trailer) : sendFrames(batch.name, header, batch.body, trailer)) {
    counters.published.fetch_add(batch.count, std::memory_order_relaxed);
    counters.messages.fetch_add(1, std::memory_order_relaxed);
    batch.nextSequence += batch.count;
    if (!options.connect.empty() && batch.name == kRunConfigEventName) {
      scheduled.configCopies.sent(std::string(header).append(batch.body).append(trailer), std::chrono::steady_clock::now());
    }
  } else {
    counters.droppedAtShutdown.fetch_add(batch.count, std::memory_order_relaxed);
  }
  batch.count = 0;
  batch.anyStep = false;
  batch.body.clear();
  batch.steps.clear();
  if (batch.body.capacity() > 2 * options.maxBatchBytes) std::string().swap(batch.body);
  if (batch.steps.capacity() > 2 * options.maxBatchBytes) std::string().swap(batch.steps);
}

void Publisher::State::sendHeartbeat(MessageKind kind) {
  PublisherCounters sent;
  sent.timestamp = std::chrono::system_clock::now();
  sent.interval = options.heartbeatInterval;
  sent.published = counters.published.load(std::memory_order_relaxed);
  sent.dropped = counters.dropped();
  const std::string payload = encodeHeartbeatPayload(kind, identity, scheduled.heartbeatSequence, sent,
                                                     history ? std::string_view(history->endpoint()) : std::string_view());
  // A heartbeat never waits for a slow subscriber: if it cannot go now, the next one will.
  if (zmq_send(socket, kHeartbeatTopic.data(), kHeartbeatTopic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) return;
  zmq_send(socket, payload.data(), payload.size(), ZMQ_DONTWAIT);
  ++scheduled.heartbeatSequence;
  counters.heartbeats.fetch_add(1, std::memory_order_relaxed);
  if (metrics) metrics->sourceAlive(identity);
  if (ownStats.published) ownStats.published->add(static_cast<double>(sent.published));
  if (ownStats.dropped) ownStats.dropped->add(static_cast<double>(sent.dropped));
  if (ownStats.curveRefused) ownStats.curveRefused->add(static_cast<double>(security->refusedCount(guard.get())));
}

bool Publisher::State::sendFrames(std::string_view topic, std::string_view head, std::string_view body,
                                  std::string_view trailer) {
  while (zmq_send(socket, topic.data(), topic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    if (errno != EAGAIN && errno != EINTR) return false;
    if (!waitWritable()) return false;
  }
  zmq_msg_t payload;
  if (zmq_msg_init_size(&payload, head.size() + body.size() + trailer.size()) != 0) {
    // The topic frame is out: end the message so the socket stays usable.
    zmq_send(socket, "", 0, ZMQ_DONTWAIT);
    return false;
  }
  auto* data = static_cast<char*>(zmq_msg_data(&payload));
  std::memcpy(data, head.data(), head.size());
  std::memcpy(data + head.size(), body.data(), body.size());
  if (!trailer.empty()) std::memcpy(data + head.size() + body.size(), trailer.data(), trailer.size());
  // Parts after the first are never refused for lack of room.
  detail::annotateBeforeSend();
  const bool sent = zmq_msg_send(&payload, socket, ZMQ_DONTWAIT) >= 0;
  if (!sent) zmq_msg_close(&payload);
  return sent;
}

// sendFrames() for a publisher that keeps history: the payload is built once, kept, and sent
// without a copy (ZeroMQ holds a share of it until it is out).
bool Publisher::State::sendKept(std::string_view topic, std::string_view head, std::string_view body,
                                std::string_view trailer) {
  auto payload = std::make_shared<std::string>();
  payload->reserve(head.size() + body.size() + trailer.size());
  payload->append(head).append(body).append(trailer);
  std::shared_ptr<const std::string> kept = std::move(payload);
  while (zmq_send(socket, topic.data(), topic.size(), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
    if (errno != EAGAIN && errno != EINTR) return false;
    if (!waitWritable()) return false;
  }
  zmq_msg_t message;
  if (!detail::initSharedMessage(message, kept)) {
    zmq_send(socket, "", 0, ZMQ_DONTWAIT);
    return false;
  }
  detail::annotateBeforeSend();
  if (zmq_msg_send(&message, socket, ZMQ_DONTWAIT) < 0) {
    zmq_msg_close(&message);
    return false;
  }
  history->keep(topic, std::move(kept), body);
  return true;
}

// Waits on the wake signal alone (the history socket is served again right after), for the
// short waits after work.
void Publisher::State::waitBriefly(std::chrono::microseconds wait) {
  if (wait.count() < 0) wait = std::chrono::microseconds(0);
  pollfd item{wake.fd(), POLLIN, 0};
  const timespec timeout{static_cast<time_t>(wait.count() / 1'000'000), static_cast<long>(wait.count() % 1'000'000) * 1000};
  if (ppoll(&item, 1, &timeout, nullptr) > 0) wake.woke();
}

// Sleeps until an event is queued (the logging thread's notify), a history request comes or an
// answer in progress may go on, a subscription comes (WaitForSlowest reads them), the heartbeat is
// due, or stop.
void Publisher::State::sleepUntilWork(std::chrono::steady_clock::time_point nextHeartbeat) {
  wake.prepareToSleep();
  if (!ring.emptyForSleeper() || (metrics && metrics->waiting() > 0) || stopRequested()) {
    wake.cancelSleep();
    return;
  }
  zmq_pollitem_t items[3];
  int count = 0;
  items[count++] = zmq_pollitem_t{nullptr, wake.fd(), ZMQ_POLLIN, 0};
  if (history) items[count++] = zmq_pollitem_t{history->socket(), 0, ZMQ_POLLIN, 0};
  if (options.slowSubscriber == SlowSubscriberPolicy::WaitForSlowest) {
    items[count++] = zmq_pollitem_t{socket, 0, ZMQ_POLLIN, 0};
  }
  // Rounded up, so the thread does not wake just before the heartbeat and sleep again.
  const auto untilHeartbeat = nextHeartbeat - std::chrono::steady_clock::now();
  auto timeoutMs = std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(untilHeartbeat).count());
  // An answer whose reader's queue was full goes on when it takes more; it is not told.
  if (history && history->answering()) timeoutMs = std::min<int64_t>(timeoutMs, kBlockedPollMs);
  zmq_poll(items, count, static_cast<long>(timeoutMs));
  wake.woke();
}

// WaitForSlowest: waits until the socket takes messages again. False once stopping has run
// past its deadline.
bool Publisher::State::waitWritable() {
  while (true) {
    if (stopRequested() && std::chrono::steady_clock::now() >= stopDeadline) return false;
    zmq_pollitem_t item{socket, 0, ZMQ_POLLOUT, 0};
    if (zmq_poll(&item, 1, kBlockedPollMs) > 0 && (item.revents & ZMQ_POLLOUT)) return true;
    discardSubscriptions();
  }
}

// XPUB hands subscription messages to the application; nothing here needs them.
void Publisher::State::discardSubscriptions() {
  if (options.slowSubscriber != SlowSubscriberPolicy::WaitForSlowest) return;
  char buffer[256];
  while (zmq_recv(socket, buffer, sizeof(buffer), ZMQ_DONTWAIT) >= 0) {
  }
}

}  // namespace livemon::transport
