#include "mcp/subscriptions.h"

#include <vector>

#include "protocol/json_rpc.h"
#include "mcp/modern.h"

namespace airlock::mcp {

using nlohmann::json;

StatusOr<uint64_t> SubscriptionHub::Add(const std::string& caller_key, std::shared_ptr<ReplyChannel> channel,
                                        const json& subscription_id, Filter filter) {
  std::lock_guard<std::mutex> lock(mu_);
  if (listeners_.size() >= limits_.total) {
    return ResourceExhausted("too many open subscriptions on this endpoint (at most " +
                             std::to_string(limits_.total) + "); try again later");
  }
  size_t mine = 0;
  for (const auto& [handle, l] : listeners_) mine += l.caller_key == caller_key;
  if (mine >= limits_.per_caller) {
    return ResourceExhausted("too many open subscriptions for this caller (at most " +
                             std::to_string(limits_.per_caller) + "); close one first");
  }
  const uint64_t handle = ++next_;
  listeners_[handle] = Listener{caller_key, std::move(channel), subscription_id, filter};
  return handle;
}

void SubscriptionHub::Activate(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = listeners_.find(handle); it != listeners_.end()) it->second.active = true;
}

void SubscriptionHub::Remove(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(handle);
}

void SubscriptionHub::Publish(Kind kind) {
  std::vector<std::pair<std::shared_ptr<ReplyChannel>, json>> targets;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [handle, l] : listeners_) {
      if (l.active && kind == Kind::kToolsListChanged && l.filter.tools_list_changed) {
        targets.emplace_back(l.channel, l.subscription_id);
      }
    }
  }
  for (auto& [channel, id] : targets) {
    channel->Notify(protocol::jsonrpc::MakeNotification("notifications/tools/list_changed",
                                              {{"_meta", {{modern::kMetaSubscriptionId, id}}}}));
  }
}

size_t SubscriptionHub::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return listeners_.size();
}

}  // namespace airlock::mcp
