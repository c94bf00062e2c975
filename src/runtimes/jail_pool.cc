#include "runtimes/jail_pool.h"

#include <algorithm>
#include <vector>

namespace airlock::runtimes {

using Clock = std::chrono::steady_clock;

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

JailPool::Shape& JailPool::ShapeOf(const std::string& key, const jail::JailConfig& config) {
  auto it = shapes_.find(key);
  if (it == shapes_.end()) {
    it = shapes_.emplace(key, Shape{}).first;
    it->second.config = config;
    it->second.target = options_.min_per_shape;
    it->second.last_take = Clock::now();
  }
  return it->second;
}

std::unique_ptr<jail::Jail> JailPool::Take(const std::string& key, const jail::JailConfig& config) {
  std::unique_ptr<jail::Jail> out;
  std::vector<std::unique_ptr<jail::Jail>> dead;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Shape& shape = ShapeOf(key, config);
    shape.last_take = Clock::now();
    while (!shape.ready.empty() && !out) {
      std::unique_ptr<jail::Jail> j = std::move(shape.ready.front());
      shape.ready.pop_front();
      --ready_total_;
      if (j->alive()) {
        out = std::move(j);
      } else {
        dead.push_back(std::move(j));  // its init died while waiting: never hand it out
      }
    }
    if (out) {
      ++stats_.hits;
    } else {
      ++stats_.misses;
      shape.target = std::min(options_.max_per_shape, shape.target + 1);
    }
  }
  cv_.notify_all();  // refill what was taken
  return out;
}

void JailPool::Warm(const std::string& key, const jail::JailConfig& config) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Shape& shape = ShapeOf(key, config);
    shape.target = std::max(shape.target, std::min<size_t>(std::max<size_t>(options_.min_per_shape, 1),
                                                           options_.max_per_shape));
  }
  cv_.notify_all();
}

JailPool::Stats JailPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.ready = ready_total_;
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
  std::unique_lock<std::mutex> lock(mu_);
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
    const jail::JailConfig config = shapes_.at(key).config;
    ++creating_;
    lock.unlock();
    StatusOr<std::unique_ptr<jail::Jail>> j = jail::Jail::Create(host_, config);
    lock.lock();
    --creating_;
    if (!j.ok()) {
      ++stats_.create_failures;
      // Back off: the host may be out of uids or memory; runs still go cold.
      cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
      continue;
    }
    ++stats_.created;
    shapes_.at(key).ready.push_back(std::move(*j));
    ++ready_total_;
  }
}

}  // namespace airlock::runtimes
