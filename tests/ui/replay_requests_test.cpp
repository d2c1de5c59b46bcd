// The request queue of a ReplaySession's reader thread on its own: reads of an older generation
// are dropped when a newer one is posted, busy() counts until each request is handled, and stop()
// wakes a reader waiting for work.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>

#include <livemon/ui/replay/replay_requests.h>

namespace livemon::ui {
namespace {

ReplayRequest read(uint64_t generation, int64_t fromNs) {
  ReplayRequest request;
  request.generation = generation;
  request.fromNs = fromNs;
  return request;
}

TEST(ReplayRequests, AReadForANewGenerationDropsTheQueuedReadsOfOlderOnesButNotAnOpen) {
  ReplayRequests requests;
  ReplayRequest open;
  open.kind = ReplayRequest::Kind::Open;
  open.path = "run.mcap";
  requests.post(open);
  requests.post(read(1, 10));
  requests.post(read(1, 20));
  requests.post(read(2, 30));  // a seek: the two reads before it are of no use any more
  requests.post(read(2, 40));  // the same generation: both stay
  std::optional<ReplayRequest> first = requests.take();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->kind, ReplayRequest::Kind::Open);
  EXPECT_EQ(first->path, "run.mcap");
  requests.finished();
  EXPECT_EQ(requests.take()->fromNs, 30);
  requests.finished();
  EXPECT_EQ(requests.take()->fromNs, 40);
  EXPECT_TRUE(requests.busy());  // taken, not finished
  requests.finished();
  EXPECT_FALSE(requests.busy());
}

TEST(ReplayRequests, BusyUntilEveryRequestPostedIsHandledOrDropped) {
  ReplayRequests requests;
  EXPECT_FALSE(requests.busy());
  requests.post(read(1, 0));
  EXPECT_TRUE(requests.busy());
  requests.post(read(2, 0));  // drops the first: one left
  ASSERT_TRUE(requests.take().has_value());
  EXPECT_TRUE(requests.busy());
  requests.finished();
  EXPECT_FALSE(requests.busy());
}

TEST(ReplayRequests, StopWakesAReaderWaitingForWorkAndDropsWhatIsQueued) {
  ReplayRequests requests;
  auto waiting = std::async(std::launch::async, [&] { return requests.take(); });
  EXPECT_EQ(waiting.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  requests.stop();
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_FALSE(waiting.get().has_value());
  requests.post(read(1, 0));
  EXPECT_FALSE(requests.take().has_value());
}

}  // namespace
}  // namespace livemon::ui
