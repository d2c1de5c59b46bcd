// HistoryServer on its own, against bare ZeroMQ DEALERs, on a ManualClock: what a reader can make
// one serve() call do (filters that match nothing, recordings that hold nothing), a reader too
// slow or stuck, the reader past kMaxAnswers.
#include "history_server.h"

#include <gtest/gtest.h>
#include <zmq.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <livemon/clock.h>
#include <livemon/transport/wire_format.h>

#include "curve_security.h"
#include "history_store.h"
#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using detail::HistoryServer;

constexpr int64_t kKeptNs = 1'000'000'000;

// Not thread-safe: the test thread. Recordings that hold `pieces` pieces of `perPiece` messages on
// `topic` (none when perPiece is 0), counting how often they are asked.
class PiecesArchive : public HistoryArchive {
 public:
  PiecesArchive(int pieces, int perPiece, std::string topic) : pieces_(pieces), perPiece_(perPiece), topic_(std::move(topic)) {}

  bool next(Cursor&, int64_t, std::vector<HistoryMessage>& out) override {
    if (calls++ >= pieces_) return false;
    for (int i = 0; i < perPiece_; ++i) out.push_back(HistoryMessage{topic_, payload_, 1, 1});
    return true;
  }
  void resume(Cursor&) override {}

  int calls = 0;

 private:
  const int pieces_;
  const int perPiece_;
  const std::string topic_;
  const std::shared_ptr<const std::string> payload_ = std::make_shared<const std::string>("older");
};

// Not thread-safe: one test. A server on inproc://, its store, a ManualClock, and DEALERs to ask with.
class HistoryServerTest : public ::testing::Test {
 protected:
  HistoryServerTest() : security_(CurveOptions{}, "PublisherOptions") {}
  ~HistoryServerTest() override {
    for (void* dealer : dealers_) zmq_close(dealer);
    server_.reset();
    zmq_ctx_term(context_);
  }

  HistoryServer& start(std::shared_ptr<HistoryArchive> older = nullptr) {
    server_ = std::make_unique<HistoryServer>(context_, test::uniqueInproc(), limits_, security_, std::move(older), clock_);
    return *server_;
  }

  void fill(int count, const std::string& topic = "train.loss") {
    for (int i = 0; i < count; ++i) store_->append(topic, payload_, kKeptNs + i, kKeptNs + i);
  }

  // A DEALER that has asked for the history with `filters`; it queues at most `receiveHwm` messages.
  void* ask(const std::vector<std::string>& filters = {}, int receiveHwm = 1000) {
    void* dealer = zmq_socket(context_, ZMQ_DEALER);
    dealers_.push_back(dealer);
    const int zero = 0;
    zmq_setsockopt(dealer, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(dealer, ZMQ_RCVHWM, &receiveHwm, sizeof receiveHwm);
    EXPECT_EQ(zmq_connect(dealer, server_->endpoint().c_str()), 0);
    askAgain(dealer, filters);
    return dealer;
  }

  // Sends a request for the history with `filters` from `dealer`.
  static void askAgain(void* dealer, const std::vector<std::string>& filters = {}) {
    HistoryRequest request;
    request.filters = filters;
    const std::string payload = encodeHistoryRequest(request);
    zmq_send(dealer, kHistoryTopic.data(), kHistoryTopic.size(), ZMQ_SNDMORE);
    zmq_send(dealer, payload.data(), payload.size(), 0);
  }

  // Serves until the server has taken `count` requests (the call that takes one also answers).
  bool serveUntilTaken(uint64_t count) {
    return test::waitUntil([&] {
      server_->serve(*store_);
      return server_->stats().requests + server_->stats().malformed >= count;
    });
  }

  // Serves until a call does nothing (every reader's queue is full, or every answer is done).
  int serveWhileWorking() {
    int calls = 0;
    while (server_->serve(*store_) && calls < 100'000) ++calls;
    return calls;
  }

  // Takes up to `max` messages waiting at `dealer`: the count of event messages, and the end if it came.
  std::optional<HistoryEnd> take(void* dealer, uint64_t& messages, uint64_t max = UINT64_MAX) {
    for (uint64_t taken = 0; taken < max; ++taken) {
      char topic[64];
      const int topicSize = zmq_recv(dealer, topic, sizeof topic, ZMQ_DONTWAIT);
      if (topicSize < 0) return std::nullopt;
      char payload[4096];
      const int payloadSize = zmq_recv(dealer, payload, sizeof payload, 0);
      if (std::string_view(topic, static_cast<std::size_t>(topicSize)) == kHistoryTopic) {
        HistoryEnd end;
        EXPECT_EQ(decodeHistoryEnd(std::string_view(payload, static_cast<std::size_t>(payloadSize)), end), DecodeStatus::Ok);
        return end;
      }
      ++messages;
    }
    return std::nullopt;
  }

  // Thread-safety: a plain value type. How a reader at a rate fared.
  struct RateRun {
    void* reader = nullptr;
    uint64_t messages = 0;
    int rounds = 0;
    std::optional<HistoryEnd> end;
  };

  // A store of `stored` messages, and a reader with a queue of one that asks for them all, then
  // takes `quota` messages before `step` passes, for at most `rounds` rounds or until its end comes.
  RateRun readAtRate(int stored, uint64_t quota, std::chrono::steady_clock::duration step, int rounds) {
    fill(stored);
    start();
    RateRun run;
    run.reader = ask({}, 1);
    EXPECT_TRUE(serveUntilTaken(1));
    for (; run.rounds < rounds && !run.end; ++run.rounds) {
      run.end = takeRound(run.reader, run.messages, quota);
      clock_.advance(step);
    }
    return run;
  }

  // Serves and takes until `dealer` took `quota` more messages, or the end, which it returns.
  std::optional<HistoryEnd> takeRound(void* dealer, uint64_t& messages, uint64_t quota) {
    const uint64_t target = messages + quota;
    std::optional<HistoryEnd> end;
    for (int i = 0; i < 10'000 && messages < target && !end; ++i) {
      serveWhileWorking();
      end = take(dealer, messages, target - messages);
    }
    return end;
  }

  // A reader that asks after kMaxAnswers others did: the end it is sent, counting the messages before it.
  HistoryEnd askAfterTheMaximum(uint64_t& messages) {
    void* late = ask();
    EXPECT_TRUE(serveUntilTaken(HistoryServer::kMaxAnswers + 1));
    std::optional<HistoryEnd> end;
    EXPECT_TRUE(test::waitUntil([&] { return (end = take(late, messages)).has_value(); }));
    return end.value_or(HistoryEnd{});
  }

  // Serves and takes until the end comes at `dealer`.
  std::optional<HistoryEnd> serveToEnd(void* dealer, uint64_t& messages) {
    std::optional<HistoryEnd> end;
    test::waitUntil([&] {
      server_->serve(*store_);
      end = take(dealer, messages);
      return end.has_value();
    });
    return end;
  }

  void* context_ = zmq_ctx_new();
  const WireLimits limits_;
  detail::SocketSecurity security_;
  ManualClock clock_;
  std::unique_ptr<detail::HistoryStore> store_ = std::make_unique<detail::HistoryStore>(256 * 1024 * 1024);
  std::shared_ptr<const std::string> payload_ = std::make_shared<const std::string>("payload");
  std::unique_ptr<HistoryServer> server_;
  std::vector<void*> dealers_;
};

// Issue 29, item 4a: entries that did not match were skipped without cost, so one call scanned
// the whole store.
TEST_F(HistoryServerTest, FiltersThatMatchNothingScanAtMostTheWorkBudgetPerCall) {
  constexpr int kStored = 100'000;
  fill(kStored);
  HistoryServer& server = start();
  // Near misses: each filter shares the topic's start, so each comparison reads it.
  std::vector<std::string> filters;
  for (std::size_t i = 0; i < kMaxHistoryFilters; ++i) filters.push_back("train.loss." + std::to_string(i));
  void* reader = ask(filters);
  ASSERT_TRUE(serveUntilTaken(1));
  EXPECT_TRUE(server.answering()) << "one serve() call scanned all " << kStored << " stored messages";
  EXPECT_LE(server.stats().scanned, HistoryServer::kWorkBudget / kMaxHistoryFilters)
      << "each message looked at costs one unit per filter";

  int calls = 1;
  while (server.answering() && calls < kStored) {
    server.serve(*store_);
    ++calls;
  }
  EXPECT_GE(calls, static_cast<int>(uint64_t{kStored} * kMaxHistoryFilters / HistoryServer::kWorkBudget));
  uint64_t messages = 0;
  const auto end = serveToEnd(reader, messages);
  ASSERT_TRUE(end.has_value()) << "the scan resumes where the last call stopped, to the end";
  EXPECT_EQ(end->messages, 0u);
  EXPECT_EQ(messages, 0u);
  EXPECT_EQ(server.stats().scanned, static_cast<uint64_t>(kStored));
}

TEST_F(HistoryServerTest, AMatchingAnswerStillEndsWithEveryMessage) {
  fill(3000, "eval.loss");
  fill(3000, "train.loss");
  start();
  void* reader = ask({"train."});
  uint64_t messages = 0;
  const auto end = serveToEnd(reader, messages);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->messages, 3000u);
  EXPECT_EQ(messages, 3000u);
  EXPECT_TRUE(end->error.empty());
}

// A store that dropped messages, so an answer begins with the recordings.
void truncate(detail::HistoryStore& store, std::shared_ptr<const std::string> payload) {
  for (int i = 0; i < 10; ++i) store.append("train.loss", payload, kKeptNs + i, kKeptNs + i);
}

// Issue 29, item 4b: pieces of the recordings that held nothing for the request were read without
// cost, so one call read them all.
TEST_F(HistoryServerTest, ReadingTheRecordingsIsBoundedPerCall) {
  store_ = std::make_unique<detail::HistoryStore>(5 * detail::HistoryStore::costOf("train.loss", payload_->size()));
  truncate(*store_, payload_);
  ASSERT_TRUE(store_->truncated());
  // 400 pieces that hold nothing, then 400 of messages the request does not follow.
  auto empty = std::make_shared<PiecesArchive>(400, 0, "other");
  start(empty);
  void* reader = ask({"train."});
  ASSERT_TRUE(serveUntilTaken(1));
  EXPECT_LE(empty->calls, static_cast<int>(HistoryServer::kWorkBudget / HistoryServer::kArchivePieceCost) + 1)
      << "one serve() call read " << empty->calls << " pieces of the recordings";
  uint64_t messages = 0;
  auto end = serveToEnd(reader, messages);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(messages, 5u) << "then the store's part";

  auto others = std::make_shared<PiecesArchive>(400, 512, "other");
  server_.reset();
  HistoryServer& again = start(others);
  reader = ask({"train."});
  ASSERT_TRUE(serveUntilTaken(1));
  EXPECT_LE(others->calls, static_cast<int>(HistoryServer::kWorkBudget / HistoryServer::kArchivePieceCost) + 1);
  EXPECT_LE(again.stats().scanned, HistoryServer::kWorkBudget);
  messages = 0;
  end = serveToEnd(reader, messages);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(messages, 5u);
  EXPECT_EQ(again.stats().pieces, 401u);
}

// Issue 29, item 4c: a reader that takes a few messages now and then kept its answer (and one of
// kMaxAnswers slots) for as long as it liked: the stall timeout counted from the last message.
TEST_F(HistoryServerTest, AReaderTooSlowIsEndedAndItsSlotFreed) {
  RateRun run = readAtRate(20'000, 40, 29s, 10);  // under 64 in 30 s
  HistoryServer& server = *server_;
  serveWhileWorking();
  EXPECT_FALSE(server.answering()) << "after " << run.messages << " messages in 290 s";
  EXPECT_EQ(server.stats().abandoned, 1u);
  EXPECT_EQ(server.stats().answered, 0u);
  if (!run.end) run.end = take(run.reader, run.messages);
  ASSERT_TRUE(run.end.has_value()) << "told, once its queue had room";
  EXPECT_EQ(run.end->error, "too slow");
  EXPECT_LT(run.messages, 200u);

  // The slot is free: another reader is answered in full.
  void* next = ask();
  uint64_t nextMessages = 0;
  const auto end = serveToEnd(next, nextMessages);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(nextMessages, 20'000u);
}

TEST_F(HistoryServerTest, AReaderAtTheMinimumRateGetsItsWholeAnswer) {
  // 1 000 messages: some 7 minutes at that rate, within kAnswerDeadline.
  const RateRun run = readAtRate(1'000, HistoryServer::kMinMessagesPerWindow + 8, HistoryServer::kRateWindow - 1s, 100);
  ASSERT_TRUE(run.end.has_value());
  EXPECT_EQ(run.messages, 1'000u);
  EXPECT_TRUE(run.end->error.empty()) << run.end->error;
  EXPECT_EQ(server_->stats().answered, 1u);
}

TEST_F(HistoryServerTest, AnAnswerEndsAtItsDeadlineHoweverFastItsReader) {
  const RateRun run = readAtRate(100'000, 1000, 1min, 12);  // far above the minimum rate
  ASSERT_TRUE(run.end.has_value()) << run.messages << " messages in 12 minutes";
  EXPECT_EQ(run.end->error, "too slow");
  EXPECT_EQ(run.rounds, 11) << "ended in the round after 10 minutes passed";
  EXPECT_FALSE(server_->answering());
  EXPECT_EQ(server_->stats().abandoned, 1u);
}

// Issue 29, item 11: a reader whose queue stays full does not hold up the others, and is ended.
TEST_F(HistoryServerTest, AReaderWhoseQueueStaysFullDoesNotHoldUpTheOthersAndIsEnded) {
  fill(5'000);
  HistoryServer& server = start();
  ask({}, 1);  // never reads
  ASSERT_TRUE(serveUntilTaken(1));
  void* reader = ask();
  uint64_t messages = 0;
  const auto end = serveToEnd(reader, messages);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(messages, 5'000u);
  EXPECT_TRUE(server.answering()) << "the stuck reader's answer waits";
  EXPECT_EQ(server.pollTimeoutMs(1000), 10) << "a recheck, not a busy loop, while every answer waits on its reader";
  clock_.advance(2 * HistoryServer::kRateWindow);
  server.serve(*store_);
  EXPECT_FALSE(server.answering());
  EXPECT_EQ(server.stats().abandoned, 1u);
  EXPECT_EQ(server.pollTimeoutMs(1000), 1000);
}

// Issue 29, item 11: the reader after kMaxAnswers is told "busy", at once, while no reader has
// been stalled for kStallBeforeEviction (here the clock does not move).
TEST_F(HistoryServerTest, TheReaderAfterTheMaximumIsToldBusy) {
  fill(5'000);
  HistoryServer& server = start();
  for (std::size_t i = 0; i < HistoryServer::kMaxAnswers; ++i) {
    ask({}, 1);
    ASSERT_TRUE(serveUntilTaken(i + 1));
  }
  uint64_t messages = 0;
  EXPECT_EQ(askAfterTheMaximum(messages).error, "busy");
  EXPECT_EQ(messages, 0u);
  EXPECT_EQ(server.stats().refused, 1u);
}

// Issue 29, item 4: eight readers that trickle through their answers (and ask again as soon as one
// is ended) kept every place taken, so every other reader was told "busy" for as long as they went on.
TEST_F(HistoryServerTest, AReaderStalledLongestMakesRoomForTheNinth) {
  fill(5'000);
  HistoryServer& server = start();
  std::vector<void*> tricklers;
  for (std::size_t i = 0; i < HistoryServer::kMaxAnswers; ++i) {
    tricklers.push_back(ask({}, 1));
    ASSERT_TRUE(serveUntilTaken(i + 1));
    serveWhileWorking();  // until its queue is full
    clock_.advance(100ms);
  }
  // Each takes a message now and then, far too few for its queue to take more; the first asks
  // again, on the same connection (its queue still full), which does not make its stall begin anew.
  for (void* trickler : tricklers) {
    uint64_t taken = 0;
    take(trickler, taken, 1);
  }
  askAgain(tricklers.front());
  ASSERT_TRUE(serveUntilTaken(HistoryServer::kMaxAnswers + 1));
  serveWhileWorking();
  clock_.advance(HistoryServer::kStallBeforeEviction);

  void* late = ask();
  ASSERT_TRUE(serveUntilTaken(HistoryServer::kMaxAnswers + 2));
  uint64_t messages = 0;
  const auto end = serveToEnd(late, messages);
  ASSERT_TRUE(end.has_value());
  EXPECT_TRUE(end->error.empty()) << "the 9th reader was told \"" << end->error << "\" while eight trickled";
  EXPECT_EQ(messages, 5'000u);
  EXPECT_EQ(server.stats().refused, 0u);
  EXPECT_EQ(server.stats().evicted, 1u);
  EXPECT_EQ(server.stats().abandoned, 1u);

  // The one ended is the one stalled longest, the first; the others' answers go on once they take more.
  for (std::size_t i = 0; i < tricklers.size(); ++i) {
    uint64_t queued = 0;
    take(tricklers[i], queued);
    serveWhileWorking();
    uint64_t more = 0;
    const auto trickleEnd = take(tricklers[i], more);
    if (i == 0) {
      EXPECT_EQ(more, 0u) << "reader 0 stalled longest, yet its answer went on";
    } else {
      EXPECT_GT(more + (trickleEnd ? 1 : 0), 0u) << "reader " << i << "'s answer was ended too";
    }
  }
}

// Eight answers whose filters match nothing in a long history gave their readers nothing, so no
// send ever found their readers gone or stalled: readers asking on fresh connections and leaving
// held every place (the relay abuse test's end-of-run request was told "busy" after 30 minutes).
// The one that has given nothing for longest makes room, as a stalled one does.
TEST_F(HistoryServerTest, AnAnswerThatHasGivenNothingForLongMakesRoomForTheNinth) {
  fill(20'000);  // 64 filters each: some 80 calls to look through, for each answer
  HistoryServer& server = start();
  std::vector<std::string> nearMiss;
  for (int i = 0; i < 64; ++i) nearMiss.push_back("train.loss#" + std::to_string(i));
  for (std::size_t i = 0; i < HistoryServer::kMaxAnswers; ++i) {
    ask(nearMiss);
    ASSERT_TRUE(serveUntilTaken(i + 1));
  }
  clock_.advance(HistoryServer::kStallBeforeEviction);

  void* late = ask({"train."});
  ASSERT_TRUE(serveUntilTaken(HistoryServer::kMaxAnswers + 1));
  uint64_t messages = 0;
  const auto end = serveToEnd(late, messages);
  ASSERT_TRUE(end.has_value());
  EXPECT_TRUE(end->error.empty()) << "the 9th reader was told \"" << end->error << "\" while eight searched";
  EXPECT_EQ(messages, 20'000u);
  EXPECT_EQ(server.stats().refused, 0u);
  EXPECT_EQ(server.stats().evicted, 1u);
}

// A reader that takes its answer at a healthy rate keeps its place however many others ask.
TEST_F(HistoryServerTest, ReadersTakingTheirAnswersAreNotEndedForAnother) {
  fill(20'000);
  HistoryServer& server = start();
  std::vector<void*> readers;
  std::vector<uint64_t> messages(HistoryServer::kMaxAnswers, 0);
  for (std::size_t i = 0; i < HistoryServer::kMaxAnswers; ++i) {
    readers.push_back(ask({}, 1));
    ASSERT_TRUE(serveUntilTaken(i + 1));
  }
  // Ten seconds of readers that take what their queue holds every half second.
  for (int round = 0; round < 20; ++round) {
    serveWhileWorking();
    clock_.advance(HistoryServer::kStallBeforeEviction / 4);
    for (std::size_t i = 0; i < readers.size(); ++i) take(readers[i], messages[i]);
  }
  serveWhileWorking();
  clock_.advance(HistoryServer::kStallBeforeEviction / 2);
  uint64_t lateMessages = 0;
  EXPECT_EQ(askAfterTheMaximum(lateMessages).error, "busy");
  EXPECT_EQ(server.stats().evicted, 0u);
  EXPECT_EQ(server.stats().abandoned, 0u);
  for (std::size_t i = 0; i < readers.size(); ++i) {
    EXPECT_GE(messages[i], 20u * 32) << "reader " << i << " took less than half a queue (64) a round";
    EXPECT_LT(messages[i], 20'000u) << "reader " << i << "'s answer ended: the test proves nothing";
  }
  EXPECT_TRUE(server.answering());
}

}  // namespace
}  // namespace livemon::transport
