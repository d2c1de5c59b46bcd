// Fuzzes both ends of the history exchange over real sockets (inproc://, one thread, a ManualClock):
//   first byte even: a HistoryServer (a publisher's or a relay's, with recordings behind its store)
//     fed whatever readers send it, from ten DEALERs that read their answers or not;
//   first byte odd: a HistoryFetch (the Subscriber's side) fed whatever a history server answers,
//     with live messages held back meanwhile.
// Then messages, each a control byte and its frames (appendHistoryExchangeMessage in fuzz_support.h).
// Properties beyond "no crash, no undefined behaviour, no leak":
//   server: each message is counted once, as a request when it is [livemon.history][a request that
//     decodes] and as malformed otherwise; one serve() call stays within its budgets (stored
//     messages looked at, pieces of the recordings read); everything a reader receives is a stored
//     message as stored or an end that decodes.
//   reader: the outcome is delivered once and only once, after which the answer's socket is gone;
//     it counts every message of the answer it handed on; every live message held back is handed on
//     after the outcome, in order.
#include <zmq.h>

#include <memory>
#include <string>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/wire_format.h>

#include "curve_security.h"
#include "fuzz_support.h"
#include "history_server.h"
#include "history_store.h"
#include "subscriber_history.h"

namespace {

using namespace std::chrono_literals;
using namespace livemon::transport;
using livemon::ManualClock;
using livemon::transport::detail::Origin;
namespace detail = livemon::transport::detail;
namespace fuzz = livemon::fuzz;
using livemon::fuzz::InputReader;

constexpr std::size_t kMaxMessagesPerInput = 48;
constexpr std::size_t kReaders = 10;  // more than HistoryServer::kMaxAnswers, so some are told "busy"

// Not thread-safe: one input's. A ZeroMQ context of its own, so sockets closed by one input are
// gone before the next (a socket left open would hang its termination: a finding).
class Context {
 public:
  Context() { LIVEMON_FUZZ_CHECK(context_ != nullptr); }
  ~Context() { zmq_ctx_term(context_); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  void* get() const noexcept { return context_; }

 private:
  void* context_ = zmq_ctx_new();
};

std::string uniqueEndpoint() {
  static uint64_t count = 0;
  return "inproc://livemon-fuzz-history-" + std::to_string(count++);
}

void* socketOf(void* context, int type) {
  void* socket = zmq_socket(context, type);
  LIVEMON_FUZZ_CHECK(socket != nullptr);
  const int zero = 0;
  zmq_setsockopt(socket, ZMQ_LINGER, &zero, sizeof zero);
  return socket;
}

std::vector<std::string> readFrames(InputReader& input, int count) {
  std::vector<std::string> frames;
  for (int i = 0; i < count; ++i) {
    const uint16_t length = input.u16();
    frames.emplace_back(input.bytes(length));
  }
  return frames;
}

void sendFrames(void* socket, const std::vector<std::string>& frames, bool more = false) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const bool last = i + 1 == frames.size() && !more;
    zmq_send(socket, frames[i].data(), frames[i].size(), last ? 0 : ZMQ_SNDMORE);
  }
}

// One message waiting at `socket`, its frames; empty when none.
std::vector<std::string> receiveMessage(void* socket) {
  std::vector<std::string> frames;
  int more = 1;
  while (more) {
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, socket, frames.empty() ? ZMQ_DONTWAIT : 0) < 0) {
      zmq_msg_close(&frame);
      break;
    }
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(&frame)), zmq_msg_size(&frame));
    more = zmq_msg_more(&frame);
    zmq_msg_close(&frame);
  }
  return frames;
}

// Not thread-safe: one input's. Recordings behind the store: a few pieces on topics the store has too.
class FewPieces : public HistoryArchive {
 public:
  bool next(Cursor&, int64_t, std::vector<HistoryMessage>& out) override {
    if (calls_++ >= 3) return false;
    for (int i = 0; i < calls_ * 2; ++i) out.push_back(HistoryMessage{i % 2 ? "older.b" : "train.a", payload_, 1, 1});
    return true;
  }
  void resume(Cursor&) override {}

 private:
  int calls_ = 0;
  std::shared_ptr<const std::string> payload_ = std::make_shared<const std::string>("older payload");
};

void server(void* context, InputReader& input) {
  static const WireLimits limits;
  static detail::SocketSecurity security(CurveOptions{}, "PublisherOptions");
  ManualClock clock;
  const auto payload = std::make_shared<const std::string>("stored payload");
  detail::HistoryStore store(12 * detail::HistoryStore::costOf("train.a", payload->size()));
  for (int i = 0; i < 16; ++i) store.append(i % 3 ? "train.a" : "eval.b", payload, i + 1, i + 1);
  detail::HistoryServer historyServer(context, uniqueEndpoint(), limits, security, std::make_shared<FewPieces>(), clock);
  void* readers[kReaders];
  for (void*& reader : readers) {
    reader = socketOf(context, ZMQ_DEALER);
    const int hwm = 4;  // small, so answers wait on full queues
    zmq_setsockopt(reader, ZMQ_RCVHWM, &hwm, sizeof hwm);
    LIVEMON_FUZZ_CHECK(zmq_connect(reader, historyServer.endpoint().c_str()) == 0);
  }
  uint64_t requests = 0;
  uint64_t malformed = 0;
  auto check = [&](void* reader) {
    for (auto frames = receiveMessage(reader); !frames.empty(); frames = receiveMessage(reader)) {
      LIVEMON_FUZZ_CHECK(frames.size() == 2);
      if (frames[0] == kHistoryTopic) {
        HistoryEnd end;
        LIVEMON_FUZZ_CHECK(decodeHistoryEnd(frames[1], end) == DecodeStatus::Ok);
      } else {
        LIVEMON_FUZZ_CHECK(frames[1] == *payload || frames[1] == "older payload");
      }
    }
  };
  for (std::size_t n = 0; n < kMaxMessagesPerInput && !input.empty(); ++n) {
    const uint8_t control = input.u8();
    const int count = (control & 3) + 1;
    void* reader = readers[((control >> 2) & 0xf) % kReaders];
    if (control & fuzz::kHistoryExchangeAdvance) clock.advance(40s);
    const std::vector<std::string> frames = readFrames(input, count);
    sendFrames(reader, frames);
    HistoryRequest request;
    const bool valid =
        count == 2 && frames[0] == kHistoryTopic && decodeHistoryRequest(frames[1], limits, request) == DecodeStatus::Ok;
    ++(valid ? requests : malformed);
    for (int call = 0; call < 8; ++call) {
      const detail::HistoryServerStats before = historyServer.stats();
      historyServer.serve(store);
      const detail::HistoryServerStats after = historyServer.stats();
      LIVEMON_FUZZ_CHECK(after.scanned - before.scanned <= detail::HistoryServer::kWorkBudget);
      LIVEMON_FUZZ_CHECK(after.pieces - before.pieces <=
                         detail::HistoryServer::kWorkBudget / detail::HistoryServer::kArchivePieceCost + 1);
    }
    if (control & fuzz::kHistoryExchangeTake) check(reader);
  }
  const detail::HistoryServerStats stats = historyServer.stats();
  LIVEMON_FUZZ_CHECK(stats.requests == requests && stats.malformed == malformed);
  LIVEMON_FUZZ_CHECK(stats.refused <= stats.requests);
  LIVEMON_FUZZ_CHECK(stats.evicted <= stats.abandoned);  // a reader stalled 2 s, ended to make room
  for (void* reader : readers) {
    check(reader);
    zmq_close(reader);
  }
}

void reader(void* context, InputReader& input) {
  static const WireLimits limits;
  SubscriberOptions options;
  options.history = true;
  options.historyHoldBytes = 2048;  // small, so inputs reach "outgrew historyHoldBytes"
  options.filters = {"train"};
  ManualClock clock;
  void* router = socketOf(context, ZMQ_ROUTER);
  const std::string endpoint = uniqueEndpoint();
  LIVEMON_FUZZ_CHECK(zmq_bind(router, endpoint.c_str()) == 0);
  auto security = std::make_shared<detail::SocketSecurity>(CurveOptions{}, "SubscriberOptions");
  detail::HistoryFetch fetch(options, clock, context, std::make_shared<const std::string>("inproc://source"), security);
  WireMessage heartbeat;
  heartbeat.kind = MessageKind::Heartbeat;
  heartbeat.history = endpoint;
  fetch.noticeAdvertisement(heartbeat);
  // The request, as the reader sends it.
  const std::vector<std::string> request = receiveMessage(router);
  LIVEMON_FUZZ_CHECK(request.size() == 3 && request[1] == kHistoryTopic);
  HistoryRequest decoded;
  LIVEMON_FUZZ_CHECK(decodeHistoryRequest(request[2], limits, decoded) == DecodeStatus::Ok);
  LIVEMON_FUZZ_CHECK(decoded.filters == options.filters);

  std::vector<detail::Delivery> deliveries;
  uint64_t answered = 0;  // answer messages handed on
  std::vector<std::string> held;
  std::vector<std::string> released;
  std::size_t outcomes = 0;
  const detail::HistoryFetch::Handler handle = [&](std::string_view topic, std::string_view payload, bool,
                                                   Origin origin) -> std::optional<std::size_t> {
    LIVEMON_FUZZ_CHECK(outcomes == 0 || origin == Origin::Released);
    if (origin == Origin::Released) {
      released.emplace_back(payload);
    } else {
      ++answered;
    }
    WireMessage message;
    if (decodeMessage(topic, payload, limits, message) != DecodeStatus::Ok) return std::nullopt;
    return message.events.size();
  };
  auto service = [&] {
    std::size_t bytes = 0;
    deliveries.clear();
    fetch.service(deliveries, bytes, handle);
    for (const detail::Delivery& delivery : deliveries) {
      if (const auto* status = std::get_if<HistoryStatus>(&delivery)) {
        ++outcomes;
        LIVEMON_FUZZ_CHECK(status->messages == answered);
      }
    }
    LIVEMON_FUZZ_CHECK(outcomes <= 1);
    if (outcomes == 1) LIVEMON_FUZZ_CHECK(fetch.answerSocket() == nullptr);
  };
  for (std::size_t n = 0; n < kMaxMessagesPerInput && !input.empty(); ++n) {
    const uint8_t control = input.u8();
    const int count = (control & 3) + 1;
    std::vector<std::string> frames = readFrames(input, count);
    if (control & fuzz::kHistoryExchangeLive) {
      // A live message on the endpoint meanwhile.
      frames.resize(2);
      deliveries.clear();
      if (fetch.holdBack(frames[0], frames[1], true, deliveries)) held.push_back(frames[1]);
      for (const detail::Delivery& delivery : deliveries) outcomes += std::holds_alternative<HistoryStatus>(delivery);
    } else {
      zmq_send(router, request[0].data(), request[0].size(), ZMQ_SNDMORE);
      sendFrames(router, frames);
    }
    if (control & fuzz::kHistoryExchangeWait) clock.advance(std::chrono::milliseconds(500 * (control >> 4)));
    service();
  }
  // However the answer went, its timeout ends it, and what was held back comes out.
  clock.advance(options.historyTimeout + 1s);
  for (int i = 0; i < 64 && !fetch.finished(); ++i) service();
  LIVEMON_FUZZ_CHECK(fetch.finished());
  LIVEMON_FUZZ_CHECK(outcomes == 1);
  LIVEMON_FUZZ_CHECK(released == held);
  zmq_close(router);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  InputReader input(data, size);
  const Context context;
  if (input.u8() % 2 == 0) {
    server(context.get(), input);
  } else {
    reader(context.get(), input);
  }
  return 0;
}
