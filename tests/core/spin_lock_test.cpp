// The spin lock core and transport share (a Stat's accumulators, the handler list, the
// publisher's queue, the ZeroMQ context).
#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <livemon/detail/spin_lock.h>

namespace {

using livemon::detail::BasicSpinLock;
using livemon::detail::SpinLock;

// Several threads add to a plain counter under the lock: no increment may be lost. (Under
// ThreadSanitizer a lock that did not order the sections would also be reported as a race.)
template <typename Lock>
int64_t countUnderContention(int threads, int perThread) {
  Lock lock;
  int64_t counter = 0;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int i = 0; i < perThread; ++i) {
        std::lock_guard guard(lock);
        ++counter;
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  return counter;
}

TEST(SpinLock, NoSectionOverlapsAnother) { EXPECT_EQ(countUnderContention<SpinLock>(4, 50000), 200000); }

TEST(SpinLock, WaitersThatYieldAtOnceStillExcludeEachOther) {
  EXPECT_EQ(countUnderContention<BasicSpinLock<1>>(4, 20000), 80000);
}

TEST(SpinLock, WaitersThatSpinLongStillExcludeEachOther) {
  EXPECT_EQ(countUnderContention<BasicSpinLock<4096>>(4, 20000), 80000);
}

// A fork handler frees the lock in the child although another thread of the parent held it;
// unlock() from a thread that did not lock must therefore free it.
TEST(SpinLock, AnotherThreadCanFreeIt) {
  SpinLock lock;
  std::thread holder([&] { lock.lock(); });
  holder.join();
  lock.unlock();
  lock.lock();  // would never return if the lock were still held
  lock.unlock();
}

}  // namespace
