// The Streamable HTTP transport, exercised with httplib::Client and a raw
// socket on 127.0.0.1 (ephemeral port).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <thread>

#include "auth/key_store.h"

#include "base/unique_fd.h"
#include "mcp/http_transport.h"
#include "mcp_http_test_util.h"
#include "mcp_test_util.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using testing::FakeExecutor;
using testing::InitializeRequest;
using testing::Request;
using testing::RunCode;

const httplib::Headers kAccept = {{"Accept", "application/json, text/event-stream"}};

class McpHttpTest : public ::testing::Test {
 protected:
  void Start(HttpOptions o = HttpOptions()) {
    server_ = std::make_unique<McpServer>(config::DefaultConfig(), executor_);
    Status st = testing::StartTestHttpFront(*server_, std::move(o), &http_, &client_);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  void TearDown() override {
    if (http_) http_->Stop();
  }

  httplib::Result Post(const json& body, httplib::Headers extra = {}) {
    httplib::Headers h = kAccept;
    h.insert(extra.begin(), extra.end());
    return client_->Post("/mcp", h, body.dump(), "application/json");
  }
  httplib::Headers Session(const std::string& id) {
    return {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "2025-11-25"}};
  }
  std::string Initialize(httplib::Headers extra = {}) {
    auto res = Post(InitializeRequest(1), extra);
    EXPECT_TRUE(res);
    if (!res) return "";
    EXPECT_EQ(res->status, 200);
    std::string id = res->get_header_value("Mcp-Session-Id");
    Post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, Session(id));
    return id;
  }

  FakeExecutor executor_;
  std::unique_ptr<McpServer> server_;
  std::unique_ptr<HttpTransport> http_;
  std::unique_ptr<httplib::Client> client_;
};

// Parses "event: message\ndata: {...}\n\n" frames.
std::vector<json> SseMessages(const std::string& body) {
  std::vector<json> out;
  size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    size_t end = body.find('\n', pos);
    out.push_back(json::parse(body.substr(pos + 6, end - pos - 6)));
    pos = end;
  }
  return out;
}

// An idle keep-alive connection (an SDK client's, after its session) must
// not hold Stop() for the keep-alive timeout (5 s): `serve --http` exits
// at once.
TEST_F(McpHttpTest, StopDoesNotWaitForIdleKeepAliveConnections) {
  Start();
  client_->set_keep_alive(true);
  std::string id = Initialize();
  ASSERT_FALSE(id.empty());
  auto listed = Post({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}}, Session(id));
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->status, 200);
  const auto start = std::chrono::steady_clock::now();
  http_->Stop();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::milliseconds(1500))
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
}

TEST_F(McpHttpTest, InitializeCreatesASession) {
  Start();
  auto res = Post(InitializeRequest(1));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  std::string id = res->get_header_value("Mcp-Session-Id");
  EXPECT_EQ(id.size(), 32u);
  json body = json::parse(res->body);
  EXPECT_EQ(body["result"]["protocolVersion"], "2025-11-25");
  res = Post(Request(2, "tools/list"), Session(id));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["result"]["tools"][0]["name"], "run_code");
  EXPECT_EQ(http_->session_count(), 1u);
  // A second initialize makes a second, independent session.
  EXPECT_NE(Initialize(), id);
  EXPECT_EQ(http_->session_count(), 2u);
}

TEST_F(McpHttpTest, SessionHeaderIsRequiredAndChecked) {
  Start();
  std::string id = Initialize();
  auto res = Post(Request(2, "ping"));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  res = Post(Request(2, "ping"), Session("00000000000000000000000000000000"));
  EXPECT_EQ(res->status, 404);
  res = Post(Request(2, "ping"), {{"Mcp-Session-Id", id}, {"MCP-Protocol-Version", "1999-01-01"}});
  EXPECT_EQ(res->status, 400);
  res = Post(Request(2, "ping"), Session(id));
  EXPECT_EQ(res->status, 200);
}

TEST_F(McpHttpTest, NotificationsGet202) {
  Start();
  std::string id = Initialize();
  auto res = Post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, Session(id));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202);
  EXPECT_TRUE(res->body.empty());
}

TEST_F(McpHttpTest, BadInputGetsClearStatuses) {
  Start();
  std::string id = Initialize();
  httplib::Headers json_only = Session(id);
  json_only.emplace("Accept", "application/json");  // lacks text/event-stream
  auto res = client_->Post("/mcp", json_only, "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 406);
  httplib::Headers h = kAccept;
  h.emplace("Mcp-Session-Id", id);
  res = client_->Post("/mcp", h, "ping", "text/plain");
  EXPECT_EQ(res->status, 415);
  res = client_->Post("/mcp", h, "{oops", "application/json");
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], -32700);
  res = client_->Post("/other", h, "{}", "application/json");
  EXPECT_EQ(res->status, 404);
  res = Post(Request(3, "ping"), Session(id));
  EXPECT_EQ(res->status, 200) << "the session still works";
}

TEST_F(McpHttpTest, ForeignOriginOrHostIsForbidden) {
  Start();
  auto res = Post(InitializeRequest(1), {{"Origin", "http://evil.example"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403);
  EXPECT_TRUE(res->get_header_value("Mcp-Session-Id").empty());
  res = Post(InitializeRequest(1), {{"Origin", "http://localhost:5173"}});
  EXPECT_EQ(res->status, 200);
  httplib::Headers h = kAccept;
  h.emplace("Host", "evil.example:8787");
  res = client_->Post("/mcp", h, InitializeRequest(1).dump(), "application/json");
  EXPECT_EQ(res->status, 403);
  EXPECT_EQ(http_->session_count(), 1u);
}

TEST_F(McpHttpTest, BearerTokenIsEnforced) {
  HttpOptions o;
  o.bearer_token = "s3cret-token";
  Start(o);
  auto res = Post(InitializeRequest(1));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_NE(res->get_header_value("WWW-Authenticate").find("Bearer"), std::string::npos);
  res = Post(InitializeRequest(1), {{"Authorization", "Bearer wrong"}});
  EXPECT_EQ(res->status, 401);
  res = Post(InitializeRequest(1), {{"Authorization", "Bearer s3cret-token"}});
  EXPECT_EQ(res->status, 200);
}

// Per-person API keys (auth::KeyStore, as `airlock serve` wires them): only an
// active key admits, and a revocation by another store on the same file
// (`airlock keys revoke`) takes effect on the very next request.
TEST_F(McpHttpTest, ApiKeysAdmitAndRevocationIsImmediate) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("airlock-http-keys-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "keys.json").string();
  auto server_keys = auth::KeyStore::Open(file);
  auto cli_keys = auth::KeyStore::Open(file);
  ASSERT_TRUE(server_keys.ok() && cli_keys.ok());
  StatusOr<auth::NewKey> alice = (*cli_keys)->Create("alice", "operator", "");
  StatusOr<auth::NewKey> bob = (*cli_keys)->Create("bob", "viewer", "");
  ASSERT_TRUE(alice.ok() && bob.ok());
  HttpOptions o;
  o.authenticate = [k = server_keys->get()](std::string_view token) -> std::optional<governance::Caller> {
    std::optional<auth::Identity> id = k->Authenticate(std::string(token));
    if (!id) return std::nullopt;
    return governance::Caller{.user = id->user, .role = id->role, .auth = "api_key", .key_id = id->key_id};
  };
  Start(o);
  auto status = [&](const std::string& auth) {
    httplib::Headers h;
    if (!auth.empty()) h.insert({"Authorization", auth});
    auto res = Post(InitializeRequest(1), h);
    return res ? res->status : -1;
  };
  EXPECT_EQ(status(""), 401);
  EXPECT_EQ(status("Bearer alk_not-a-key"), 401);
  EXPECT_EQ(status("Basic " + alice->secret), 401);
  EXPECT_EQ(status("Bearer " + alice->secret), 200);
  EXPECT_EQ(status("bearer " + bob->secret), 200);
  ASSERT_TRUE((*cli_keys)->Revoke(alice->info.id).ok());
  EXPECT_EQ(status("Bearer " + alice->secret), 401) << "revoked keys stop working at once";
  EXPECT_EQ(status("Bearer " + bob->secret), 200);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_F(McpHttpTest, DeleteEndsTheSession) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  Start();
  std::string id = Initialize();
  // A run in flight on another connection is cancelled by DELETE.
  std::thread call([&] {
    httplib::Client c("127.0.0.1", http_->port());
    c.set_read_timeout(10);
    httplib::Headers h = kAccept;
    for (auto& kv : Session(id)) h.insert(kv);
    c.Post("/mcp", h, RunCode(5, {{"language", "python"}, {"code", "x"}}).dump(), "application/json");
  });
  ASSERT_TRUE(executor_.WaitRunning(1));
  auto res = client_->Delete("/mcp", Session(id));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(executor_.cancelled_runs, 1);
  call.join();
  res = Post(Request(2, "ping"), Session(id));
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(http_->session_count(), 0u);
}

TEST_F(McpHttpTest, ProgressTokenGetsAnSseStream) {
  executor_.handler = [](const runtimes::RunRequest& req, const runtimes::ProgressFn& progress, CancelToken&) {
    progress(runtimes::RunPhase::kQueued);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));  // across a heartbeat
    progress(runtimes::RunPhase::kRunning);
    return FakeExecutor::Ok(req, "42\n");
  };
  Start();
  std::string id = Initialize();
  auto res = Post(RunCode(9, {{"language", "python"}, {"code", "print(42)"}}, {{"progressToken", "p1"}}), Session(id));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  std::vector<json> msgs = SseMessages(res->body);
  ASSERT_EQ(msgs.size(), 4u) << res->body;
  EXPECT_EQ(msgs[0]["params"]["message"], "queued");
  EXPECT_EQ(msgs[1]["params"]["message"], "running");
  EXPECT_EQ(msgs[2]["params"]["message"], "done");
  EXPECT_EQ(msgs[3]["id"], 9);
  EXPECT_EQ(msgs[3]["result"]["structuredContent"]["stdout"], "42\n");
}

TEST_F(McpHttpTest, SlowCallWithoutTokenIsPlainJson) {
  executor_.handler = [](const runtimes::RunRequest& req, const runtimes::ProgressFn&, CancelToken&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(350));
    return FakeExecutor::Ok(req, "slow\n");
  };
  Start();
  std::string id = Initialize();
  auto res = Post(RunCode(9, {{"language", "python"}, {"code", "x"}}), Session(id));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  json body = json::parse(res->body);  // leading whitespace heartbeats are valid JSON
  EXPECT_EQ(body["result"]["structuredContent"]["stdout"], "slow\n");
}

// JSON-RPC replies are small and latency-bound: the MCP endpoint never
// compresses them, whatever the client accepts (gzip on a chunked reply cost
// Node's fetch ~5 ms per call).
TEST_F(McpHttpTest, RepliesAreNotCompressed) {
  executor_.handler = [](const runtimes::RunRequest& req, const runtimes::ProgressFn&, CancelToken&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return FakeExecutor::Ok(req, std::string(4096, 'x'));
  };
  Start();
  std::string id = Initialize();
  httplib::Headers h = Session(id);
  h.emplace("Accept-Encoding", "gzip, deflate, br");
  auto res = Post(RunCode(9, {{"language", "python"}, {"code", "x"}}), h);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_FALSE(res->has_header("Content-Encoding")) << res->get_header_value("Content-Encoding");
  EXPECT_EQ(json::parse(res->body)["result"]["structuredContent"]["stdout"], std::string(4096, 'x'));
}

TEST_F(McpHttpTest, HugeBodyIs413) {
  HttpOptions o;
  o.max_body_bytes = 64 * 1024;
  Start(o);
  std::string id = Initialize();
  json big = RunCode(3, {{"language", "python"}, {"code", std::string(1 << 20, 'x')}});
  auto res = Post(big, Session(id));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_TRUE(executor_.requests.empty());
  client_ = std::make_unique<httplib::Client>("127.0.0.1", http_->port());
  res = Post(Request(4, "ping"), Session(id));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(McpHttpTest, ClientDisconnectCancelsTheRun) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  Start();
  std::string id = Initialize();
  for (bool with_progress : {false, true}) {
    UniqueFd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(http_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    std::string body = RunCode(with_progress ? 21 : 20, {{"language", "python"}, {"code", "x"}},
                               with_progress ? json{{"progressToken", 1}} : json())
                           .dump();
    std::string req = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n"
                      "Content-Type: application/json\r\nMcp-Session-Id: " + id +
                      "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(::write(sock.get(), req.data(), req.size()), static_cast<ssize_t>(req.size()));
    const int n = with_progress ? 2 : 1;
    ASSERT_TRUE(executor_.WaitRunning(1));
    sock.Reset();  // the client goes away mid-run
    EXPECT_TRUE(executor_.WaitCancelled(n)) << (with_progress ? "SSE" : "JSON");
  }
}

TEST_F(McpHttpTest, GetStreamCarriesServerMessages) {
  Start();
  std::string id = Initialize();
  httplib::Headers h = Session(id);
  h.emplace("Accept", "text/event-stream");
  httplib::Headers wrong = Session(id);
  wrong.emplace("Accept", "application/json");
  auto res = client_->Get("/mcp", wrong);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 406);
  std::string received;
  std::mutex mu;
  std::thread reader([&] {
    httplib::Client c("127.0.0.1", http_->port());
    c.set_read_timeout(10);
    c.Get("/mcp", h, [&](const char* data, size_t len) {
      std::lock_guard<std::mutex> lock(mu);
      received.append(data, len);
      return true;
    });
  });
  // Wait for the stream to attach, then broadcast.
  for (int i = 0; i < 100; ++i) {
    server_->NotifyToolsChanged();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::lock_guard<std::mutex> lock(mu);
    if (received.find("list_changed") != std::string::npos) break;
  }
  auto second = client_->Get("/mcp", h);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 409);
  client_->Delete("/mcp", Session(id));  // ends the stream
  reader.join();
  EXPECT_NE(received.find("notifications/tools/list_changed"), std::string::npos) << received;
}

// A GET stream broken off is resumed with Last-Event-ID: the client gets
// the messages after that id (sent while it had no stream too), not the
// ones before, and then the stream goes on.
TEST_F(McpHttpTest, GetStreamResumesAfterLastEventId) {
  Start();
  std::string id = Initialize();
  server_->NotifyToolsChanged();  // event 1, no stream open
  server_->NotifyToolsChanged();  // event 2
  // Reads the stream until `want` appears (or 10 s), then drops it.
  auto read_until = [&](const std::string& last_event_id, const std::string& want) {
    httplib::Headers h = Session(id);
    h.emplace("Accept", "text/event-stream");
    if (!last_event_id.empty()) h.emplace("Last-Event-ID", last_event_id);
    std::string received;
    httplib::Client c("127.0.0.1", http_->port());
    c.set_read_timeout(10);
    for (int attempt = 0; attempt < 50; ++attempt) {  // the previous stream may still be detaching
      received.clear();
      auto res = c.Get("/mcp", h, [&](const char* data, size_t len) {
        received.append(data, len);
        return received.find(want) == std::string::npos;
      });
      if (received.find(want) != std::string::npos || (res && res->status != 409)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return received;
  };
  std::string first = read_until("1", "id: 2\n");
  EXPECT_EQ(first.find("id: 1\n"), std::string::npos) << first;
  EXPECT_NE(first.find("id: 2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\""),
            std::string::npos)
      << first;
  server_->NotifyToolsChanged();  // event 3, while the client is away
  std::string second = read_until("2", "id: 3\n");
  EXPECT_EQ(second.find("id: 2\n"), std::string::npos) << second;
  EXPECT_NE(second.find("id: 3\n"), std::string::npos) << second;
  httplib::Headers bad = Session(id);
  bad.emplace("Accept", "text/event-stream");
  bad.emplace("Last-Event-ID", "not-a-number");
  auto res = client_->Get("/mcp", bad);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

// `shutdown` (older clients) cancels the session's work and closes it.
TEST_F(McpHttpTest, ShutdownClosesTheSession) {
  Start();
  std::string id = Initialize();
  auto bye = Post({{"jsonrpc", "2.0"}, {"id", 7}, {"method", "shutdown"}}, Session(id));
  ASSERT_TRUE(bye);
  EXPECT_EQ(json::parse(bye->body)["result"], json::object());
  auto after = Post({{"jsonrpc", "2.0"}, {"id", 8}, {"method", "tools/list"}}, Session(id));
  ASSERT_TRUE(after);
  EXPECT_NE(after->body.find("Session closed"), std::string::npos) << after->body;
}

TEST_F(McpHttpTest, IdleSessionsExpire) {
  HttpOptions o;
  o.session_idle_timeout_s = 1;
  Start(o);
  std::string id = Initialize();
  EXPECT_EQ(http_->session_count(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(http_->session_count(), 0u);
  auto res = Post(Request(2, "ping"), Session(id));
  EXPECT_EQ(res->status, 404);
}

TEST_F(McpHttpTest, ManyConcurrentSessions) {
  Start();
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", http_->port());
      auto res = c.Post("/mcp", kAccept, InitializeRequest(1).dump(), "application/json");
      if (!res || res->status != 200) return;
      httplib::Headers h = kAccept;
      h.emplace("Mcp-Session-Id", res->get_header_value("Mcp-Session-Id"));
      res = c.Post("/mcp", h, RunCode(2, {{"language", "python"}, {"code", "x"}}).dump(), "application/json");
      if (!res || res->status != 200) return;
      json body = json::parse(res->body, nullptr, false);
      if (!body.is_discarded() && body["result"]["structuredContent"]["status"] == "ok") ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 12);
  EXPECT_EQ(http_->session_count(), 12u);
}

}  // namespace
}  // namespace airlock::mcp
