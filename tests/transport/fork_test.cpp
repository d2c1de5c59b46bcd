// A process with a Publisher forks (as PyTorch's DataLoader does): the child must not touch the
// inherited ZeroMQ state, must exit promptly, and may open a transport of its own; the parent
// keeps publishing.
#include <livemon/transport/publisher.h>

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <livemon/event_handler.h>
#include <livemon/transport/subscriber.h>

#include "test_support.h"

namespace livemon::transport {
namespace {

using namespace std::chrono_literals;
using test::makeEvent;
using test::pollUntil;
using test::testPublisherOptions;

enum ChildResult { kChildOk = 0, kInheritedNotQuiet = 3, kNeverReleased = 4, kChildFailed = 5 };

// Runs in the forked child. Returns its exit code.
int childMain(std::unique_ptr<Publisher>& inherited, std::unique_ptr<Subscriber>& inheritedSubscriber,
              const std::string& childEndpoint, int releaseFd, bool ownTransport) {
  try {
    // The inherited publisher's handler ignores events: nothing is queued for a socket that
    // belongs to the parent.
    const PublisherStats before = inherited->stats();
    logEvent(makeEvent("child.inherited", {{"x", 1.0}}));
    const PublisherStats after = inherited->stats();
    if (after.queuedBytes != before.queuedBytes || after.droppedQueueFull != before.droppedQueueFull) {
      return kInheritedNotQuiet;
    }
    // Destroying what was inherited returns at once instead of waiting on the parent's context.
    inherited.reset();
    inheritedSubscriber.reset();
    if (!ownTransport) return kChildOk;

    PublisherOptions options = testPublisherOptions();
    options.bind.clear();
    options.connect = {childEndpoint};
    options.runName = "child";
    Publisher own(options);
    const auto deadline = std::chrono::steady_clock::now() + test::kDeadline;
    while (std::chrono::steady_clock::now() < deadline) {
      logEvent(makeEvent("child.hello", {{"pid", static_cast<int64_t>(getpid())}}));
      pollfd item{releaseFd, POLLIN, 0};
      if (::poll(&item, 1, 10) > 0) return kChildOk;  // the parent got it
    }
    return kNeverReleased;
  } catch (...) {
    return kChildFailed;
  }
}

void runForkScenario(bool ownTransport) {
  test::TempDir dir;
  const std::string parentEndpoint = "ipc://" + (dir.path() / "parent.sock").string();
  const std::string childEndpoint = "ipc://" + (dir.path() / "child.sock").string();
  auto publisher = std::make_unique<Publisher>(testPublisherOptions(parentEndpoint));
  auto subscriber = std::make_unique<Subscriber>(test::connectTo({parentEndpoint}, 0));
  subscriber->addEndpoint(childEndpoint, EndpointMode::Bind);
  ASSERT_TRUE(test::waitForSource(*subscriber, publisher->identity()));

  int release[2];
  ASSERT_EQ(pipe(release), 0);
  signal(SIGPIPE, SIG_IGN);  // a child that died early must fail the test, not kill it
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(release[1]);
    _exit(childMain(publisher, subscriber, childEndpoint, release[0], ownTransport));
  }
  close(release[0]);

  // The parent keeps publishing, with no gap, while the child runs.
  uint64_t parentEvents = 0;
  bool childSpoke = false;
  SubscriberCallbacks callbacks;
  callbacks.onEvent = [&](ReceivedEvent& r) {
    if (r.event.name == "parent.after") ++parentEvents;
    if (r.event.name == "child.hello" && r.source->pid == child) childSpoke = true;
  };
  int sent = 0;
  EXPECT_TRUE(pollUntil(*subscriber, callbacks, [&] {
    if (sent < 200) logEvent(makeEvent("parent.after", {{"i", int64_t{sent++}}}));
    return parentEvents == 200 && (childSpoke || !ownTransport);
  })) << "parent events " << parentEvents << ", child spoke " << childSpoke;
  EXPECT_EQ(subscriber->stats().gaps, 0u);
  EXPECT_EQ(publisher->droppedCount(), 0u);

  if (ownTransport) {  // the other child has exited already
    EXPECT_EQ(write(release[1], "x", 1), 1);
  }
  close(release[1]);
  const auto end = std::chrono::steady_clock::now() + test::kDeadline;
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < end) {
    subscriber->poll(10ms, SubscriberCallbacks{});
  }
  if (done == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    FAIL() << "the forked child did not exit";
  }
  ASSERT_TRUE(WIFEXITED(status)) << "child status " << status;
  EXPECT_EQ(WEXITSTATUS(status), kChildOk);

  // And the parent's publisher still works after the child is gone.
  logEvent(makeEvent("parent.after", {{"i", int64_t{sent}}}));
  EXPECT_TRUE(pollUntil(*subscriber, callbacks, [&] { return parentEvents == 201; }));
}

TEST(PublisherFork, ChildOpensItsOwnTransportAndExitsPromptly) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads in a child of a multi-threaded process";
#endif
  runForkScenario(true);
}

TEST(PublisherFork, ChildThatOnlyInheritedExitsPromptly) { runForkScenario(false); }

}  // namespace
}  // namespace livemon::transport
