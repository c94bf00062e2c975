#include "runner/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>

namespace airlock::runner {
namespace {

using namespace std::chrono_literals;

TEST(WorkerPoolTest, SequentialTasksReuseOneThread) {
  WorkerPool pool;
  std::set<std::thread::id> threads;
  std::mutex mu;
  for (int i = 0; i < 50; ++i) {
    std::promise<void> done;
    ASSERT_TRUE(pool.Submit([&] {
      {
        std::lock_guard<std::mutex> lock(mu);
        threads.insert(std::this_thread::get_id());
      }
      done.set_value();
    }));
    done.get_future().wait();
    pool.WaitIdle();  // the worker is back to idle before the next Submit
  }
  EXPECT_EQ(threads.size(), 1u);
  EXPECT_EQ(pool.stats().started, 1u);
}

TEST(WorkerPoolTest, ConcurrentTasksGetTheirOwnWorkers) {
  WorkerPool pool({.max_workers = 8});
  std::atomic<int> inside{0};
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(pool.Submit([&, gate] {
      ++inside;
      gate.wait();
    }));
  }
  // All eight run at once: none waits behind another.
  for (int i = 0; i < 200 && inside.load() < 8; ++i) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(inside.load(), 8);
  // A ninth is refused while eight are busy.
  EXPECT_FALSE(pool.Submit([] {}));
  EXPECT_EQ(pool.stats().busy, 8u);
  release.set_value();
  pool.WaitIdle();
  EXPECT_EQ(pool.stats().busy, 0u);
  EXPECT_EQ(pool.stats().workers, 8u);
  EXPECT_TRUE(pool.Submit([] {}));
}

TEST(WorkerPoolTest, SurplusIdleWorkersExitAfterTheTimeout) {
  WorkerPool pool({.max_workers = 6, .keep_idle = 2, .idle_timeout = 50ms});
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(pool.Submit([gate] { gate.wait(); }));
  release.set_value();
  pool.WaitIdle();
  for (int i = 0; i < 200 && pool.stats().workers > 2; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(pool.stats().workers, 2u);
  // The pool still works, and joins the exited threads on the way.
  std::atomic<bool> ran{false};
  ASSERT_TRUE(pool.Submit([&] { ran = true; }));
  pool.WaitIdle();
  EXPECT_TRUE(ran.load());
}

TEST(WorkerPoolTest, DestructorWaitsForTasksInFlight) {
  std::atomic<bool> finished{false};
  {
    WorkerPool pool;
    ASSERT_TRUE(pool.Submit([&] {
      std::this_thread::sleep_for(100ms);
      finished = true;
    }));
  }
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace airlock::runner
