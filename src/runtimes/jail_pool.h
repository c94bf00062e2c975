// JailPool: jails created ahead of time, so a run does not wait for
// namespaces, the cgroup and the filesystem to be built.
//
// A pooled jail is exactly a cold one: the same JailConfig (binds, memory,
// pids, work dir size) made by the same Jail::Create, never used before, and
// used once — the executor destroys it after its run like any other. Only
// the moment of creation differs. Jails are grouped by "shape", a key the
// caller derives from everything in the JailConfig (the executor uses the
// language, tier and limits), so a jail is never handed to a run whose
// limits differ from those it was built with.
//
//   JailPool pool(host, {.max_per_shape = 4, .min_per_shape = 1});
//   std::unique_ptr<jail::Jail> j = pool.Take(key, config);   // nullptr: miss
//   if (!j) j = jail::Jail::Create(host, config).value();
//
// Sizing: each shape has a target between min_per_shape and max_per_shape.
// A miss (demand the pool did not meet) raises it by one; every idle_after
// without a Take lowers it by one, down to min_per_shape (0: the shape drains
// completely when idle). One background thread refills shapes below their
// target, creating one jail at a time, never more than max_total in all.
// The destructor stops the thread and destroys every ready jail.
//
// Quiet refills: creating a jail (clone with namespaces, mounts, cgroup
// directories) takes kernel locks that a run's own start and exit need too,
// which a lower CPU priority does not help with. So while a run is in flight
// (an ActiveRun exists) the refill waits for it to end, at most
// refill_defer per jail, then refills anyway (a pool under sustained load
// still refills). A shape that missed within the last refill_urgent_window
// (demand is outrunning the pool, and the runs it could not serve went
// cold, which costs them far more than a refill beside them) refills at
// once.
#ifndef AIRLOCK_RUNTIMES_JAIL_POOL_H_
#define AIRLOCK_RUNTIMES_JAIL_POOL_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <thread>

#include "jail/host.h"
#include "jail/jail.h"

namespace airlock::runtimes {

struct JailPoolOptions {
  size_t max_per_shape = 4;
  size_t min_per_shape = 1;
  size_t max_total = 16;
  std::chrono::milliseconds idle_after{60'000};
  // How long a refill waits for the runs in flight to end (0: never waits).
  std::chrono::milliseconds refill_defer{50};
  // A shape with a miss this recent is not deferred (see "Quiet refills").
  std::chrono::milliseconds refill_urgent_window{1000};
  // Memory limits (MiB), besides each language's default, whose jails the
  // executor pools (config pool.memory_mb); any other memory_mb runs cold.
  std::vector<uint64_t> extra_memory_mb;
};

class JailPool {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t created = 0;
    uint64_t create_failures = 0;
    // Ready jails found dead when taken (Jail::Usable), never handed out.
    uint64_t discarded = 0;
    size_t ready = 0;
    // Jails being made or still wanted (below a shape's target, within
    // max_total): 0 once the pool has settled.
    size_t pending = 0;
    // The same counters per shape (by key), for operators.
    struct PerShape {
      uint64_t hits = 0, misses = 0, created = 0, create_failures = 0, discarded = 0;
      size_t ready = 0, target = 0;
    };
    std::map<std::string, PerShape> shapes;
  };

  // `host` must outlive the pool. Starts the refill thread.
  JailPool(jail::JailHost& host, JailPoolOptions options);
  ~JailPool();
  JailPool(const JailPool&) = delete;
  JailPool& operator=(const JailPool&) = delete;

  // Makes one jail of a shape, ready to hand out (e.g. Jail::Create, then
  // Jail::Start of a waiting interpreter). Called on the refill thread.
  using Maker = std::function<StatusOr<std::unique_ptr<jail::Jail>>()>;

  // A ready jail of shape `key`, or nullptr (the caller creates one). The
  // first Take of a key registers the shape with `make`; a key must always
  // come with an equivalent maker.
  std::unique_ptr<jail::Jail> Take(const std::string& key, Maker make);
  // The same with Jail::Create(host, config) as the maker.
  std::unique_ptr<jail::Jail> Take(const std::string& key, const jail::JailConfig& config);

  // Registers a shape and keeps at least min_per_shape of it ready from now
  // on (warming at start-up, before the first run asks).
  void Warm(const std::string& key, Maker make);
  void Warm(const std::string& key, const jail::JailConfig& config);

  Stats stats() const;

  // Marks one run in flight for its lifetime (see "Quiet refills"). `pool`
  // may be null (no pool: nothing to mark).
  class ActiveRun {
   public:
    explicit ActiveRun(JailPool* pool);
    ~ActiveRun();
    ActiveRun(const ActiveRun&) = delete;
    ActiveRun& operator=(const ActiveRun&) = delete;

   private:
    JailPool* pool_;
  };

 private:
  struct Shape {
    Maker make;
    std::deque<std::unique_ptr<jail::Jail>> ready;
    size_t target = 0;
    std::chrono::steady_clock::time_point last_take;
    // The last Take that found nothing ready (demand outrunning the pool).
    std::chrono::steady_clock::time_point last_miss;
    Stats::PerShape counts;  // ready and target filled in by stats()
  };

  Shape& ShapeOf(const std::string& key, Maker make);  // mu_ held
  Maker CreateFrom(const jail::JailConfig& config);
  void RefillLoop();
  // The key of a shape below target with room left, or "" (mu_ held).
  std::string NextToFill();
  void Decay(std::chrono::steady_clock::time_point now);  // mu_ held

  jail::JailHost& host_;
  const JailPoolOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Shape> shapes_;
  size_t ready_total_ = 0;
  size_t creating_ = 0;
  size_t runs_in_flight_ = 0;
  bool stop_ = false;
  Stats stats_;
  std::thread refill_;  // last: started after everything it uses
};

}  // namespace airlock::runtimes

#endif  // AIRLOCK_RUNTIMES_JAIL_POOL_H_
