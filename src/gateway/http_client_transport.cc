#include "gateway/http_client_transport.h"

#include <httplib.h>

#include <chrono>
#include <iostream>

#include "base/encoding.h"
#include "gateway/modern_headers.h"
#include "gateway/sse_parser.h"
#include "protocol/json_rpc.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;

constexpr auto kConnectTimeout = std::chrono::seconds(10);
constexpr auto kReadTimeout = std::chrono::hours(1);  // cancellation stops streams earlier

bool StartsWith(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

HttpClientTransport::HttpClientTransport(ConnectorConfig config) : config_(std::move(config)) {}

HttpClientTransport::~HttpClientTransport() { Close(); }

Status HttpClientTransport::Start(TransportCallbacks callbacks) {
  callbacks_ = std::move(callbacks);
  const std::string& url = config_.url;
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return InvalidArgument("connector '" + config_.name + "': bad URL");
  const size_t path_begin = url.find_first_of("/?#", scheme_end + 3);
  std::string authority = url.substr(scheme_end + 3, path_begin == std::string::npos
                                                         ? std::string::npos
                                                         : path_begin - scheme_end - 3);
  if (size_t at = authority.rfind('@'); at != std::string::npos) {
    std::string userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    size_t colon = userinfo.find(':');
    basic_user_ = userinfo.substr(0, colon);
    basic_password_ = colon == std::string::npos ? "" : userinfo.substr(colon + 1);
  }
  if (authority.empty()) return InvalidArgument("connector '" + config_.name + "': URL has no host");
  origin_ = url.substr(0, scheme_end + 3) + authority;
  path_ = path_begin == std::string::npos ? "/" : url.substr(path_begin);
  if (size_t hash = path_.find('#'); hash != std::string::npos) path_.erase(hash);
  if (path_.empty() || path_[0] != '/') path_ = "/" + path_;
  return OkStatus();
}

std::unique_ptr<httplib::Client> HttpClientTransport::NewClient() const {
  auto client = std::make_unique<httplib::Client>(origin_);
  client->set_connection_timeout(kConnectTimeout);
  client->set_read_timeout(kReadTimeout);
  client->set_write_timeout(std::chrono::seconds(30));
  client->set_keep_alive(false);
  client->set_follow_location(false);
  if (!basic_user_.empty()) client->set_basic_auth(basic_user_, basic_password_);
  return client;
}

std::vector<std::pair<std::string, std::string>> HttpClientTransport::Headers(bool for_get,
                                                                               const json* message) const {
  std::vector<std::pair<std::string, std::string>> h;
  for (const auto& [k, v] : config_.headers) h.emplace_back(k, v);
  h.emplace_back("Accept", for_get ? "text/event-stream" : "application/json, text/event-stream");
  if (message != nullptr) {
    auto modern = ModernRequestHeaders(*message);
    if (!modern.empty()) {
      h.insert(h.end(), modern.begin(), modern.end());
      return h;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!session_id_.empty()) h.emplace_back("Mcp-Session-Id", session_id_);
  if (!protocol_version_.empty()) h.emplace_back("MCP-Protocol-Version", protocol_version_);
  return h;
}

void HttpClientTransport::Deliver(const std::string& json_text, const json& request_id, bool* got_response) {
  json message = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  std::vector<json> messages;
  if (message.is_array()) {
    for (auto& m : message) messages.push_back(std::move(m));
  } else {
    messages.push_back(std::move(message));
  }
  for (json& m : messages) {
    if (!m.is_object()) {
      std::cerr << "[connector " << config_.name << "] ignoring a malformed message\n";
      continue;
    }
    if (got_response != nullptr && !request_id.is_null() && m.contains("id") && m["id"] == request_id &&
        !m.contains("method")) {
      *got_response = true;
    }
    if (!closing_.load() && callbacks_.on_message) callbacks_.on_message(std::move(m));
  }
}

HttpClientTransport::PostOutcome HttpClientTransport::Post(const json& message, const std::string& key) {
  PostOutcome out;
  std::unique_ptr<httplib::Client> client = NewClient();
  if (!key.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_.load() || cancelled_.count(key)) {
      out.status = Cancelled("cancelled");
      return out;
    }
    inflight_[key] = client.get();
  }
  const json request_id = message.contains("method") && message.contains("id") ? message["id"] : json();
  const bool is_initialize = message.value("method", "") == "initialize";

  httplib::Request req;
  req.method = "POST";
  req.path = path_;
  for (auto& [k, v] : Headers(false, &message)) req.headers.emplace(k, v);
  req.headers.emplace("Content-Type", "application/json");
  req.body = protocol::jsonrpc::Serialize(message);

  bool is_sse = false;
  std::string body;
  bool too_big = false;
  SseParser parser([&](const SseEvent& ev) {
    if (ev.event == "message" && !ev.data.empty()) Deliver(ev.data, request_id, &out.delivered_response);
  });
  req.response_handler = [&](const httplib::Response& r) {
    out.http_status = r.status;
    is_sse = StartsWith(Lower(r.get_header_value("Content-Type")), "text/event-stream");
    if (is_initialize && r.has_header("Mcp-Session-Id")) {
      std::lock_guard<std::mutex> lock(mu_);
      session_id_ = r.get_header_value("Mcp-Session-Id");
    }
    return true;
  };
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    if (closing_.load()) return false;
    if (out.http_status >= 200 && out.http_status < 300 && is_sse) {
      if (!parser.Feed(std::string_view(data, len))) {
        too_big = true;
        return false;
      }
      return true;
    }
    body.append(data, len);
    if (body.size() > kMaxMessageBytes) {
      too_big = true;
      return false;
    }
    return true;
  };

  httplib::Result result = client->send(req);
  if (!key.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    inflight_.erase(key);
  }
  if (too_big) {
    out.status = Unavailable("connector '" + config_.name + "': response larger than " +
                             std::to_string(kMaxMessageBytes) + " bytes");
    return out;
  }
  if (!result) {
    out.status = Unavailable("connector '" + config_.name + "' (" + RedactedTarget(config_) +
                             "): " + httplib::to_string(result.error()));
    return out;
  }
  out.http_status = result->status;
  if (out.http_status >= 200 && out.http_status < 300) {
    if (!is_sse && !body.empty()) Deliver(body, request_id, &out.delivered_response);
    return out;
  }
  // A 4xx whose body is the JSON-RPC error answering this request (a modern
  // server's -32022, -32020 or -32601 come so) is that answer, not a
  // transport failure: the caller sees the server's error code and message.
  if (!request_id.is_null() && out.http_status >= 400 && out.http_status < 500 && !body.empty()) {
    const json answer = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (answer.is_object() && answer.contains("error") && answer.value("id", json()) == request_id) {
      Deliver(body, request_id, &out.delivered_response);
      if (out.delivered_response) return out;
    }
  }
  out.status = Unavailable("connector '" + config_.name + "' (" + RedactedTarget(config_) +
                           "): HTTP status " + std::to_string(out.http_status));
  return out;
}

Status HttpClientTransport::Send(const json& message) {
  if (closing_.load()) return Unavailable("connector '" + config_.name + "' is closed");
  ReapWorkers(false);
  StopCancelled();
  const bool is_request = message.contains("method") && message.contains("id");
  if (is_request) {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.insert(message["id"].dump());
    auto worker = std::make_unique<Worker>();
    Worker* w = worker.get();
    w->thread = std::thread([this, w, message] {
      RequestThread(message);
      {
        std::lock_guard<std::mutex> lock(mu_);
        pending_.erase(message["id"].dump());
        cancelled_.erase(message["id"].dump());
      }
      w->done.store(true);
    });
    workers_.push_back(std::move(worker));
    return OkStatus();
  }
  // Notifications and responses: a short synchronous POST (202 expected).
  PostOutcome out = Post(message, "");
  if (out.http_status == 404) {
    SignalClosed(Unavailable("connector '" + config_.name + "': the server ended the session"));
  }
  if (message.value("method", "") == "notifications/cancelled" && message.contains("params")) {
    // The server was told; now drop the stream of the cancelled request.
    const std::string key = message["params"].value("requestId", json()).dump();
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_.count(key)) cancelled_.insert(key);
  }
  StopCancelled();
  return out.status;
}

void HttpClientTransport::StopCancelled() {
  // stop() only interrupts a request that is already on the wire, so it is
  // repeated on every Send until the cancelled request's thread is done.
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& key : cancelled_) {
    if (auto it = inflight_.find(key); it != inflight_.end()) it->second->stop();
  }
}

void HttpClientTransport::RequestThread(json message) {
  const json id = message["id"];
  PostOutcome out = Post(message, id.dump());
  if (closing_.load()) return;
  if (out.http_status == 404 && message.value("method", "") != "initialize") {
    bool has_session;
    {
      std::lock_guard<std::mutex> lock(mu_);
      has_session = !session_id_.empty();
    }
    if (has_session) {
      SignalClosed(Unavailable("connector '" + config_.name + "': the server ended the session"));
      return;
    }
  }
  if (!out.status.ok()) {
    if (callbacks_.on_request_failed) callbacks_.on_request_failed(id, out.status);
    return;
  }
  // A stream that ended without our response is not an error by itself: the
  // request may have been cancelled. McpClient's timeout covers the rest.
}

void HttpClientTransport::OnInitialized(const std::string& protocol_version) {
  std::lock_guard<std::mutex> lock(mu_);
  protocol_version_ = protocol_version;
  if (!get_thread_.joinable() && !closing_.load()) {
    get_thread_ = std::thread(&HttpClientTransport::GetStreamLoop, this);
  }
}

void HttpClientTransport::GetStreamLoop() {
  int failures = 0;
  while (!closing_.load() && failures < 5) {
    std::unique_ptr<httplib::Client> client = NewClient();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closing_.load()) return;
      get_client_ = client.get();
    }
    int status = 0;
    SseParser parser([&](const SseEvent& ev) {
      if (ev.event == "message" && !ev.data.empty()) Deliver(ev.data, json(), nullptr);
    });
    httplib::Headers headers;
    for (auto& [k, v] : Headers(true)) headers.emplace(k, v);
    if (!parser.last_event_id().empty()) headers.emplace("Last-Event-ID", parser.last_event_id());
    httplib::Result result = client->Get(
        path_, headers,
        [&](const httplib::Response& r) {
          status = r.status;
          return r.status == 200;
        },
        [&](const char* data, size_t len) { return !closing_.load() && parser.Feed(std::string_view(data, len)); });
    {
      std::lock_guard<std::mutex> lock(mu_);
      get_client_ = nullptr;
    }
    if (closing_.load()) return;
    if (status == 405 || status == 400 || status == 409) return;  // no standalone stream offered
    if (status == 404) {
      SignalClosed(Unavailable("connector '" + config_.name + "': the server ended the session"));
      return;
    }
    if (status == 200) failures = 0;
    ++failures;
    // Reconnect after a pause (the server closed the stream or it broke).
    for (int i = 0; i < 20 && !closing_.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void HttpClientTransport::SignalClosed(Status why) {
  if (closing_.load() || !callbacks_.on_closed) return;
  std::call_once(closed_once_, [&] { callbacks_.on_closed(why); });
}

void HttpClientTransport::ReapWorkers(bool all) {
  std::list<std::unique_ptr<Worker>> finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (all || (*it)->done.load()) {
        finished.push_back(std::move(*it));
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : finished) {
    if (w->thread.joinable()) w->thread.join();
  }
}

void HttpClientTransport::Close() {
  if (closing_.exchange(true)) return;
  std::string session;
  // stop() only interrupts requests already on the wire: repeat until every
  // thread has finished (bounded).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (true) {
    bool busy;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [key, client] : inflight_) client->stop();
      if (get_client_ != nullptr) get_client_->stop();
      session = session_id_;
      busy = !inflight_.empty() || get_client_ != nullptr;
    }
    if (!busy || std::chrono::steady_clock::now() > give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ReapWorkers(true);
  if (get_thread_.joinable()) get_thread_.join();
  if (!session.empty()) {
    std::unique_ptr<httplib::Client> client = NewClient();
    client->set_connection_timeout(std::chrono::seconds(1));
    client->set_read_timeout(std::chrono::seconds(2));
    httplib::Headers h;
    for (const auto& [k, v] : config_.headers) h.emplace(k, v);
    h.emplace("Mcp-Session-Id", session);
    if (!protocol_version_.empty()) h.emplace("MCP-Protocol-Version", protocol_version_);
    client->Delete(path_, h);  // 405 (not supported) is fine too
  }
}

std::string HttpClientTransport::session_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return session_id_;
}

}  // namespace airlock::gateway
