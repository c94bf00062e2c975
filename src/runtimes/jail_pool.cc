#include "runtimes/jail_pool.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <vector>

namespace airlock::runtimes {

using Clock = std::chrono::steady_clock;

constexpr int kRefillNiceIncrement = 10;

// Whether this process may raise a thread's priority back (CAP_SYS_NICE),
// tried on a thread of its own.
bool CanRaisePriority() {
  bool can = false;
  std::thread probe([&can] {
    const id_t self = static_cast<id_t>(gettid());
    errno = 0;
    const int base = getpriority(PRIO_PROCESS, self);
    if (errno != 0 || base >= 19 || setpriority(PRIO_PROCESS, self, base + 1) != 0) return;
    can = setpriority(PRIO_PROCESS, self, base) == 0;
  });
  probe.join();
  return can;
}

JailPool::JailPool(jail::JailHost& host, JailPoolOptions options)
    : host_(host), options_(options), refill_([this] { RefillLoop(); }) {}

JailPool::~JailPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  refill_.join();
  // Ready jails die with their Shape (Jail's destructor kills and reaps).
}

JailPool::ActiveRun::ActiveRun(JailPool* pool) : pool_(pool) {
  if (pool_ == nullptr) return;
  std::lock_guard<std::mutex> lock(pool_->mu_);
  ++pool_->runs_in_flight_;
}

JailPool::ActiveRun::~ActiveRun() {
  if (pool_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(pool_->mu_);
    --pool_->runs_in_flight_;
  }
  pool_->cv_.notify_all();  // a deferred refill may go now
}

JailPool::Maker JailPool::CreateFrom(const jail::JailConfig& config) {
  return [this, config] { return jail::Jail::Create(host_, config); };
}

std::unique_ptr<jail::Jail> JailPool::Take(const std::string& key, const jail::JailConfig& config) {
  return Take(key, CreateFrom(config));
}

void JailPool::Warm(const std::string& key, const jail::JailConfig& config) { Warm(key, CreateFrom(config)); }

JailPool::Shape& JailPool::ShapeOf(const std::string& key, Maker make) {
  auto it = shapes_.find(key);
  if (it == shapes_.end()) {
    it = shapes_.emplace(key, Shape{}).first;
    it->second.make = std::move(make);
    it->second.target = options_.min_per_shape;
    it->second.last_take = Clock::now();
  }
  return it->second;
}

std::unique_ptr<jail::Jail> JailPool::Take(const std::string& key, Maker make) {
  std::unique_ptr<jail::Jail> out;
  std::vector<std::unique_ptr<jail::Jail>> dead;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Shape& shape = ShapeOf(key, std::move(make));
    shape.last_take = Clock::now();
    while (!shape.ready.empty() && !out) {
      std::unique_ptr<jail::Jail> j = std::move(shape.ready.front());
      shape.ready.pop_front();
      --ready_total_;
      if (j->Usable()) {
        out = std::move(j);
      } else {
        // Its init or its pre-started program died while waiting: never
        // hand it out; the next one, or a cold start, serves the run.
        dead.push_back(std::move(j));
        ++stats_.discarded;
        ++shape.counts.discarded;
      }
    }
    if (out) {
      ++stats_.hits;
      ++shape.counts.hits;
    } else {
      ++stats_.misses;
      ++shape.counts.misses;
      shape.last_miss = shape.last_take;
      shape.target = std::min(options_.max_per_shape, shape.target + 1);
    }
  }
  cv_.notify_all();  // refill what was taken
  return out;
}

void JailPool::Warm(const std::string& key, Maker make) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Shape& shape = ShapeOf(key, std::move(make));
    shape.target = std::max(shape.target, std::min<size_t>(std::max<size_t>(options_.min_per_shape, 1),
                                                           options_.max_per_shape));
  }
  cv_.notify_all();
}

JailPool::Stats JailPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.ready = ready_total_;
  for (const auto& [key, shape] : shapes_) {
    Stats::PerShape& per = s.shapes[key];
    per = shape.counts;
    per.ready = shape.ready.size();
    per.target = shape.target;
  }
  size_t shortfall = 0;
  for (const auto& [key, shape] : shapes_) {
    if (shape.ready.size() < shape.target) shortfall += shape.target - shape.ready.size();
  }
  const size_t room = options_.max_total > ready_total_ ? options_.max_total - ready_total_ : 0;
  s.pending = std::max(creating_, std::min(shortfall, room));
  return s;
}

void JailPool::Decay(Clock::time_point now) {
  for (auto& [key, shape] : shapes_) {
    if (shape.target > options_.min_per_shape && now - shape.last_take >= options_.idle_after) {
      --shape.target;
      shape.last_take = now;  // the next step down after another idle_after
    }
  }
}

std::string JailPool::NextToFill() {
  if (ready_total_ + creating_ >= options_.max_total) return "";
  for (auto& [key, shape] : shapes_) {
    if (shape.ready.size() < shape.target) return key;
  }
  return "";
}

void JailPool::RefillLoop() {
  // Jails are made at a lower CPU priority than runs, so that refilling
  // never slows the run that emptied the pool. The jail's processes inherit
  // it; Jail::Exec/Resume give them the run's priority back, which needs
  // CAP_SYS_NICE and the jail's cgroup to list its threads. Without either,
  // refills run at the normal priority.
  if (host_.cgroups() != nullptr && CanRaisePriority()) {
    const id_t self = static_cast<id_t>(gettid());
    setpriority(PRIO_PROCESS, self, std::min(19, getpriority(PRIO_PROCESS, self) + kRefillNiceIncrement));
  }
  std::unique_lock<std::mutex> lock(mu_);
  // Set while a refill waits for the runs in flight to end: until when.
  std::optional<Clock::time_point> defer_until;
  while (!stop_) {
    Decay(Clock::now());
    // Shapes above their target give back their extra jails.
    std::vector<std::unique_ptr<jail::Jail>> surplus;
    for (auto& [key, shape] : shapes_) {
      while (shape.ready.size() > shape.target) {
        surplus.push_back(std::move(shape.ready.back()));
        shape.ready.pop_back();
        --ready_total_;
      }
    }
    if (!surplus.empty()) {
      lock.unlock();
      surplus.clear();  // kill and reap outside the lock
      lock.lock();
      continue;
    }
    const std::string key = NextToFill();
    if (key.empty()) {
      cv_.wait_for(lock, std::min<std::chrono::milliseconds>(options_.idle_after, std::chrono::seconds(5)));
      continue;
    }
    const bool urgent = shapes_.at(key).counts.misses > 0 &&
                        Clock::now() - shapes_.at(key).last_miss < options_.refill_urgent_window;
    if (runs_in_flight_ > 0 && options_.refill_defer.count() > 0 && !urgent) {
      if (!defer_until) defer_until = Clock::now() + options_.refill_defer;
      if (Clock::now() < *defer_until) {
        cv_.wait_until(lock, *defer_until, [this] { return stop_ || runs_in_flight_ == 0; });
        continue;  // the pool may have changed meanwhile
      }
    }
    defer_until.reset();
    const Maker make = shapes_.at(key).make;
    ++creating_;
    lock.unlock();
    StatusOr<std::unique_ptr<jail::Jail>> j = make();
    lock.lock();
    --creating_;
    if (!j.ok()) {
      ++stats_.create_failures;
      ++shapes_.at(key).counts.create_failures;
      // Back off: the host may be out of uids or memory; runs still go cold.
      cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
      continue;
    }
    ++stats_.created;
    ++shapes_.at(key).counts.created;
    shapes_.at(key).ready.push_back(std::move(*j));
    ++ready_total_;
  }
}

}  // namespace airlock::runtimes
