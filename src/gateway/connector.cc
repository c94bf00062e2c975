#include "gateway/connector.h"

#include <algorithm>
#include <iostream>
#include <set>
#include <thread>

#include "gateway/era_probe.h"
#include "gateway/http_client_transport.h"
#include "gateway/stdio_client_transport.h"

namespace airlock::gateway {
namespace {

using nlohmann::json;

const std::set<std::string> kSupportedVersions = {"2025-06-18", "2025-03-26", "2024-11-05", "2025-11-25"};
constexpr int kMaxListPages = 1000;

std::unique_ptr<ClientTransport> DefaultTransport(const ConnectorConfig& config) {
  if (config.transport == TransportKind::kHttp) return std::make_unique<HttpClientTransport>(config);
  return std::make_unique<StdioClientTransport>(config);
}

// Sleeps until `until`, waking early if `cancel` fires. False if cancelled.
bool SleepUntil(std::chrono::steady_clock::time_point until, CancelToken* cancel) {
  while (std::chrono::steady_clock::now() < until) {
    if (cancel != nullptr && cancel->cancelled()) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        until - std::chrono::steady_clock::now(), std::chrono::milliseconds(10)));
  }
  return cancel == nullptr || !cancel->cancelled();
}

}  // namespace

Connector::Connector(ConnectorConfig config, ConnectorOptions options)
    : config_(std::move(config)), options_(std::move(options)), backoff_(options_.initial_backoff) {}

Connector::~Connector() {
  std::shared_ptr<McpClient> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    client = std::move(client_);
  }
  if (client) client->Close();
}

void Connector::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << "airlock gateway: " << line << "\n";
  }
}

std::chrono::milliseconds Connector::Remaining(Clock::time_point deadline) const {
  return std::max(std::chrono::milliseconds(0),
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

bool Connector::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return client_ != nullptr && !client_->closed();
}

nlohmann::json Connector::Health() const {
  std::lock_guard<std::mutex> lock(mu_);
  const bool up = client_ != nullptr && !client_->closed();
  return {{"name", config_.name},
          {"transport", config_.transport == TransportKind::kHttp ? "http" : "stdio"},
          {"trusted", config_.trusted},
          {"connected", up},
          {"connects", connect_count_.load()},
          {"tools", tools_ ? nlohmann::json(tools_->size()) : nlohmann::json(nullptr)},
          {"error", up || last_error_.ok() ? std::string() : last_error_.message()}};
}

StatusOr<std::vector<ToolInfo>> Connector::ListAll(McpClient& client, CancelToken* cancel,
                                                   Clock::time_point deadline) {
  std::vector<ToolInfo> tools;
  std::set<std::string> seen_names;
  std::set<std::string> seen_cursors;
  json cursor;
  for (int page = 0; page < kMaxListPages; ++page) {
    json params = json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    AIRLOCK_ASSIGN_OR_RETURN(json result, client.Call("tools/list", params, cancel, Remaining(deadline)));
    if (!result.is_object() || !result.contains("tools") || !result["tools"].is_array()) {
      return Internal(name() + ": malformed tools/list result");
    }
    for (const json& t : result["tools"]) {
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty()) {
        Log(name() + ": skipping a tool without a valid name");
        continue;
      }
      ToolInfo info;
      info.name = t["name"].get<std::string>();
      if (!seen_names.insert(info.name).second) {
        Log(name() + ": skipping a duplicate of tool \"" + info.name + "\"");
        continue;
      }
      if (t.contains("title") && t["title"].is_string()) info.title = t["title"].get<std::string>();
      if (t.contains("description") && t["description"].is_string()) {
        info.description = t["description"].get<std::string>();
      }
      info.input_schema = t.contains("inputSchema") && t["inputSchema"].is_object()
                              ? t["inputSchema"]
                              : json{{"type", "object"}};
      if (t.contains("outputSchema") && t["outputSchema"].is_object()) info.output_schema = t["outputSchema"];
      if (t.contains("annotations") && t["annotations"].is_object()) info.annotations = t["annotations"];
      tools.push_back(std::move(info));
    }
    if (!result.contains("nextCursor") || result["nextCursor"].is_null()) return tools;
    if (!result["nextCursor"].is_string()) return Internal(name() + ": malformed nextCursor");
    cursor = result["nextCursor"];
    if (!seen_cursors.insert(cursor.get<std::string>()).second) {
      return Internal(name() + ": tools/list repeated a cursor");
    }
  }
  return Internal(name() + ": tools/list has more than " + std::to_string(kMaxListPages) + " pages");
}

StatusOr<std::shared_ptr<McpClient>> Connector::DoConnect(CancelToken* cancel, Clock::time_point deadline) {
  auto transport = options_.transport_factory ? options_.transport_factory(config_) : DefaultTransport(config_);
  auto client = std::make_shared<McpClient>(std::move(transport), "connector '" + name() + "'");
  client->SetNotificationHandler([this](const std::string& method, const json&) {
    if (method == "notifications/tools/list_changed") list_changed_.store(true);
  });
  AIRLOCK_RETURN_IF_ERROR(client->Start());
  Era era = config_.protocol == ProtocolEra::kLegacy ? Era::kLegacy : Era::kModern;
  if (config_.protocol != ProtocolEra::kLegacy) {
    StatusOr<Era> probed = ProbeEra(*client, name(), kSupportedVersions, cancel, deadline);
    if (!probed.ok()) {
      client->Close();
      return probed.status();
    }
    era = *probed;
    if (era == Era::kLegacy && config_.protocol == ProtocolEra::kModern) {
      client->Close();
      return FailedPrecondition(name() + ": \"protocol\": \"modern\" is set, but the server did not answer "
                                "server/discover as a 2026-07-28 server");
    }
  }
  if (era == Era::kModern) {
    client->UseModernEra(ModernMeta());  // no handshake: every request carries its _meta
  } else {
    json init_params = {{"protocolVersion", kClientProtocolVersion},
                        {"capabilities", json::object()},
                        {"clientInfo", {{"name", "airlock"}, {"version", AIRLOCK_VERSION}}}};
    AIRLOCK_ASSIGN_OR_RETURN(json init, client->Call("initialize", init_params, cancel, Remaining(deadline)));
    const std::string version = init.is_object() ? init.value("protocolVersion", "") : "";
    if (!kSupportedVersions.count(version)) {
      client->Close();
      return FailedPrecondition(name() + ": the server answered initialize with unsupported protocol version \"" +
                                version.substr(0, 40) + "\"");
    }
    client->OnInitialized(version);
    AIRLOCK_RETURN_IF_ERROR(client->Notify("notifications/initialized", nullptr));
  }
  list_changed_.store(false);
  AIRLOCK_ASSIGN_OR_RETURN(std::vector<ToolInfo> tools, ListAll(*client, cancel, deadline));
  {
    std::lock_guard<std::mutex> lock(mu_);
    tools_ = std::make_shared<const std::vector<ToolInfo>>(std::move(tools));
    client_ = client;
  }
  tools_generation_.fetch_add(1);
  connect_count_.fetch_add(1);
  return client;
}

StatusOr<std::shared_ptr<McpClient>> Connector::LiveClient(CancelToken* cancel, Clock::time_point deadline,
                                                            bool wait_for_backoff) {
  // Fast path: a live client.
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (client_ != nullptr && !client_->closed()) return client_;
  }
  // One thread connects; the others wait for it (bounded by their deadline).
  std::unique_lock<std::mutex> connect_lock(connect_mu_, std::defer_lock);
  while (!connect_lock.try_lock()) {
    if (cancel != nullptr && cancel->cancelled()) return Cancelled(name() + ": cancelled while connecting");
    if (Clock::now() >= deadline) return DeadlineExceeded(name() + ": timed out waiting for the connection");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::shared_ptr<McpClient> dead;
  Clock::time_point next_attempt;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (client_ != nullptr && !client_->closed()) return client_;
    if (client_ != nullptr) {  // it died: schedule the restart
      last_error_ = client_->close_reason();
      Log(name() + ": connection lost (" + last_error_.message() + "); restarting in " +
          std::to_string(backoff_.count()) + " ms");
      dead = std::move(client_);
      next_attempt_ = std::max(next_attempt_, Clock::now() + backoff_);
      backoff_ = std::min(backoff_ * 2, options_.max_backoff);
    }
    next_attempt = next_attempt_;
  }
  if (dead) dead->Close();  // joins its threads, reaps the process
  dead.reset();

  if (Clock::now() < next_attempt) {
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next_attempt - Clock::now());
    std::string why;
    {
      std::lock_guard<std::mutex> lock(mu_);
      why = last_error_.ok() ? "" : " after: " + last_error_.message();
    }
    if (!wait_for_backoff || next_attempt > deadline) {
      return Unavailable(name() + ": server unavailable; next restart in " + std::to_string(wait_ms.count()) +
                         " ms" + why);
    }
    if (!SleepUntil(next_attempt, cancel)) return Cancelled(name() + ": cancelled while waiting to restart");
  }

  StatusOr<std::shared_ptr<McpClient>> client = DoConnect(cancel, deadline);
  if (!client.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_ = client.status();
    next_attempt_ = Clock::now() + backoff_;
    Log(name() + ": cannot connect (" + client.status().message() + "); next attempt in " +
        std::to_string(backoff_.count()) + " ms");
    backoff_ = std::min(backoff_ * 2, options_.max_backoff);
    const Status& st = client.status();
    if (st.code() == StatusCode::kCancelled) return st;
    return Unavailable(st.message());
  }
  return client;
}

Status Connector::Connect(CancelToken* cancel, std::chrono::milliseconds timeout) {
  auto client = LiveClient(cancel, Clock::now() + timeout, /*wait_for_backoff=*/true);
  return client.ok() ? OkStatus() : client.status();
}

void Connector::Relist(Clock::time_point deadline) {
  std::unique_lock<std::mutex> connect_lock(connect_mu_, std::defer_lock);
  while (!connect_lock.try_lock()) {
    if (Clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!list_changed_.exchange(false)) return;  // someone else re-listed
  std::shared_ptr<McpClient> client;
  {
    std::lock_guard<std::mutex> lock(mu_);
    client = client_;
  }
  if (client == nullptr || client->closed()) return;
  auto tools = ListAll(*client, nullptr, deadline);
  if (!tools.ok()) {
    list_changed_.store(true);  // try again next time
    Log(name() + ": re-listing tools failed: " + tools.status().message());
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    tools_ = std::make_shared<const std::vector<ToolInfo>>(std::move(tools).value());
  }
  tools_generation_.fetch_add(1);
}

StatusOr<std::shared_ptr<const std::vector<ToolInfo>>> Connector::Tools(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  if (list_changed_.load()) Relist(deadline);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (tools_ != nullptr) return tools_;
  }
  auto client = LiveClient(nullptr, deadline, /*wait_for_backoff=*/false);
  if (!client.ok()) return client.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (tools_ == nullptr) return Internal(name() + ": no tool list");
  return tools_;
}

StatusOr<ToolCallResult> Connector::CallTool(const std::string& tool, const json& args, CancelToken* cancel,
                                             std::chrono::milliseconds timeout) {
  const std::chrono::milliseconds cap(config_.timeout_ms);
  if (timeout.count() <= 0 || timeout > cap) timeout = cap;
  const auto deadline = Clock::now() + timeout;
  AIRLOCK_ASSIGN_OR_RETURN(std::shared_ptr<McpClient> client, LiveClient(cancel, deadline, true));
  json params = {{"name", tool}, {"arguments", args.is_null() ? json::object() : args}};
  StatusOr<json> result = client->Call("tools/call", std::move(params), cancel, Remaining(deadline));
  if (!result.ok()) {
    if (result.status().code() == StatusCode::kUnavailable) {
      return Unavailable(name() + "." + tool + ": the server went away during the call (" +
                         result.status().message() + ")");
    }
    return result.status();
  }
  if (!result->is_object()) return Internal(name() + "." + tool + ": malformed tools/call result");
  {
    std::lock_guard<std::mutex> lock(mu_);
    backoff_ = options_.initial_backoff;
  }
  return ToolCallResult{std::move(result).value()};
}

}  // namespace airlock::gateway
