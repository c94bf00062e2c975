// The open subscriptions/listen streams of one endpoint (protocol
// 2026-07-28, basic/patterns/subscriptions.mdx). A listener is a reply
// channel (an HTTP SSE response, or the stdio connection) that asked for
// some notification types; Publish sends a notification to each listener
// that asked for it, tagged with its subscription id (the JSON-RPC id of its
// listen request) in _meta. Bounded: at most per_caller listeners per caller
// and total overall; Add refuses beyond.
//
//   auto handle = hub.Add(caller_key, channel, id, {.tools_list_changed = true});
//   ... send the acknowledgment ...; hub.Activate(*handle);
//   hub.Publish(SubscriptionHub::Kind::kToolsListChanged);
//   hub.Remove(*handle);
#ifndef AIRLOCK_MCP_SUBSCRIPTIONS_H_
#define AIRLOCK_MCP_SUBSCRIPTIONS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "mcp/reply_channel.h"

namespace airlock::mcp {

class SubscriptionHub {
 public:
  struct Limits {
    size_t per_caller = 4;
    size_t total = 256;
  };
  // The notification types airlock honours (others are not acknowledged).
  struct Filter {
    bool tools_list_changed = false;
  };
  enum class Kind { kToolsListChanged };

  explicit SubscriptionHub(Limits limits) : limits_(limits) {}
  SubscriptionHub() : SubscriptionHub(Limits{}) {}

  // Registers a listener of `caller_key` (user, key and auth method);
  // ResourceExhausted when the caller or the endpoint has its maximum.
  StatusOr<uint64_t> Add(const std::string& caller_key, std::shared_ptr<ReplyChannel> channel,
                         const nlohmann::json& subscription_id, Filter filter);
  // A listener gets notifications only once activated (after its
  // acknowledgment was sent). Both idempotent.
  void Activate(uint64_t handle);
  void Remove(uint64_t handle);
  // Sends the notification of `kind` to every listener whose filter has it.
  void Publish(Kind kind);
  size_t size() const;
  const Limits& limits() const { return limits_; }

 private:
  struct Listener {
    std::string caller_key;
    std::shared_ptr<ReplyChannel> channel;
    nlohmann::json subscription_id;
    Filter filter;
    bool active = false;
  };
  const Limits limits_;
  mutable std::mutex mu_;
  uint64_t next_ = 0;
  std::map<uint64_t, Listener> listeners_;
};

}  // namespace airlock::mcp

#endif  // AIRLOCK_MCP_SUBSCRIPTIONS_H_
