#include "gateway/jsonrpc_client.h"

#include <algorithm>

#include "base/encoding.h"
#include "base/json_depth.h"
#include "protocol/json_rpc.h"
#include "protocol/mcp_eras.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;

// How often a waiting Call looks at its CancelToken.
constexpr auto kCancelPollInterval = std::chrono::milliseconds(10);
constexpr size_t kMaxErrorMessageBytes = 2000;

}  // namespace

McpClient::McpClient(std::unique_ptr<ClientTransport> transport, std::string name)
    : name_(std::move(name)), transport_(std::move(transport)) {}

McpClient::~McpClient() { Close(); }

Status McpClient::Start() {
  TransportCallbacks cb;
  cb.on_message = [this](json m) { OnMessage(std::move(m)); };
  cb.on_request_failed = [this](const json& id, Status st) { OnRequestFailed(id, std::move(st)); };
  cb.on_closed = [this](Status why) { OnClosed(std::move(why)); };
  Status st = transport_->Start(std::move(cb));
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    close_reason_ = st;
  }
  return st;
}

void McpClient::UseModernEra(json meta) {
  std::lock_guard<std::mutex> lock(mu_);
  modern_meta_ = std::move(meta);
}

bool McpClient::modern() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !modern_meta_.is_null();
}

void McpClient::AddEraMeta(json* params) const {
  json meta;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (modern_meta_.is_null()) return;
    meta = modern_meta_;
  }
  if (params->is_null()) *params = json::object();
  if (!params->is_object()) return;
  json& m = (*params)["_meta"];
  if (!m.is_object()) m = json::object();
  for (auto& [k, v] : meta.items()) {
    if (!m.contains(k)) m[k] = v;
  }
}

StatusOr<json> McpClient::Call(const std::string& method, json params, CancelToken* cancel,
                               std::chrono::milliseconds timeout, json* error) {
  AddEraMeta(&params);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pending = std::make_shared<Pending>();
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Unavailable(close_reason_.message());
    id = next_id_++;
    pending_[id] = pending;
  }
  json request = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) request["params"] = std::move(params);
  if (Status st = transport_->Send(request); !st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.erase(id);
    return Unavailable(st.message());
  }

  Status gave_up;
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (!pending->done) {
      const auto now = std::chrono::steady_clock::now();
      if (cancel != nullptr && cancel->cancelled()) {
        gave_up = Cancelled(name_ + ": " + method + " cancelled by the caller");
        break;
      }
      if (now >= deadline) {
        gave_up = DeadlineExceeded(name_ + ": " + method + " timed out after " +
                                   std::to_string(timeout.count()) + " ms");
        break;
      }
      auto until = deadline;
      if (cancel != nullptr) until = std::min(until, now + kCancelPollInterval);
      cv_.wait_until(lock, until);
    }
    if (pending->done) {
      pending_.erase(id);
      if (error != nullptr) *error = pending->error;
      if (!pending->status.ok()) return pending->status;
      json& result = pending->result;
      if (!modern_meta_.is_null() && result.is_object() && result.contains("resultType")) {
        const json& type = result["resultType"];
        if (!type.is_string() || type.get<std::string>() != protocol::kResultTypeComplete) {
          return FailedPrecondition(name_ + ": " + method + " answered resultType " +
                                    SanitizeUtf8(TruncateUtf8(type.dump(), 80)) +
                                    " (an input request; airlock answers none)");
        }
        result.erase("resultType");
      }
      return std::move(result);
    }
    pending_.erase(id);
  }
  // Tell the server to stop (initialize must never be cancelled).
  if (method != "initialize") {
    json params_cancel = {{"requestId", id},
                          {"reason", gave_up.code() == StatusCode::kCancelled ? "cancelled by the caller"
                                                                             : "timed out"}};
    [[maybe_unused]] Status ignored = Notify("notifications/cancelled", std::move(params_cancel));
  }
  return gave_up;
}

Status McpClient::Notify(const std::string& method, json params) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return Unavailable(close_reason_.message());
  }
  AddEraMeta(&params);
  json n = {{"jsonrpc", "2.0"}, {"method", method}};
  if (!params.is_null()) n["params"] = std::move(params);
  return transport_->Send(n);
}

Status McpClient::ErrorToStatus(const json& error) const {
  std::string message = "error";
  int code = 0;
  if (error.is_object()) {
    if (error.contains("message") && error["message"].is_string()) message = error["message"].get<std::string>();
    if (error.contains("code") && error["code"].is_number_integer()) code = error["code"].get<int>();
  }
  message = SanitizeUtf8(TruncateUtf8(message, kMaxErrorMessageBytes));
  std::string text = name_ + ": " + message + " (JSON-RPC error " + std::to_string(code) + ")";
  switch (code) {
    case protocol::jsonrpc::kInvalidParams:
      return InvalidArgument(text);
    case protocol::jsonrpc::kMethodNotFound:
      return NotFound(text);
    default:
      return Internal(text);
  }
}

void McpClient::OnMessage(json m) {
  // Nothing downstream may nest deeper than code that serializes or walks
  // it can take (base/json_depth.h): such a response fails its request,
  // anything else such is dropped.
  if (JsonDeeperThan(m, kMaxMessageDepth)) {
    if (m.contains("id") && m["id"].is_number_integer() && !m.contains("method")) {
      OnRequestFailed(m["id"], ResourceExhausted(name_ + ": the server's response nests deeper than " +
                                                 std::to_string(kMaxMessageDepth) + " levels"));
    }
    return;
  }
  const bool has_method = m.contains("method") && m["method"].is_string();
  const bool has_id = m.contains("id") && (m["id"].is_string() || m["id"].is_number_integer());
  if (has_method && has_id) {  // a request from the server
    const std::string method = m["method"].get<std::string>();
    json reply = method == "ping"
                     ? protocol::jsonrpc::MakeResult(m["id"], json::object())
                     : protocol::jsonrpc::MakeError(m["id"], protocol::jsonrpc::kMethodNotFound,
                                               "airlock does not support " + method);
    [[maybe_unused]] Status ignored = transport_->Send(reply);
    return;
  }
  if (has_method) {  // a notification
    if (notification_handler_) {
      notification_handler_(m["method"].get<std::string>(), m.value("params", json::object()));
    }
    return;
  }
  if (!m.contains("id") || !m["id"].is_number_integer()) return;  // not one of ours
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(m["id"].get<int64_t>());
  if (it == pending_.end() || it->second->done) return;  // cancelled, timed out or duplicate
  Pending& p = *it->second;
  if (m.contains("error")) {
    p.status = ErrorToStatus(m["error"]);
    p.error = m["error"];
  } else if (m.contains("result")) {
    p.result = std::move(m["result"]);
  } else {
    p.status = Internal(name_ + ": malformed response");
  }
  p.done = true;
  cv_.notify_all();
}

void McpClient::OnRequestFailed(const json& id, Status status) {
  if (!id.is_number_integer()) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(id.get<int64_t>());
  if (it == pending_.end() || it->second->done) return;
  it->second->status = std::move(status);
  it->second->done = true;
  cv_.notify_all();
}

void McpClient::OnClosed(Status why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;
  closed_ = true;
  close_reason_ = why.ok() ? Unavailable(name_ + ": connection closed") : why;
  for (auto& [id, p] : pending_) {
    if (p->done) continue;
    p->status = Unavailable(close_reason_.message());
    p->done = true;
  }
  cv_.notify_all();
}

bool McpClient::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

Status McpClient::close_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return close_reason_;
}

size_t McpClient::pending_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

void McpClient::Close() {
  OnClosed(Unavailable(name_ + ": connection closed"));
  transport_->Close();
}

}  // namespace airlock::gateway
