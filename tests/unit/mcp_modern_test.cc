// The modern era of MCP (2026-07-28) beside the legacy one: the pure checks
// of mcp/modern.h, Session's modern front (no handshake, _meta per request,
// resultType, caching hints, -32022), era selection on a connection, and the
// Streamable HTTP front (headers checked against the body, statuses, no GET).
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <memory>
#include <thread>

#include "audit/audit_log.h"
#include "base/encoding.h"
#include "mcp/http_transport.h"
#include "mcp/modern.h"
#include "mcp/server.h"
#include "mcp/session.h"
#include "mcp_http_test_util.h"
#include "mcp_test_util.h"
#include "test_audit_log.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using testing::FakeExecutor;
using testing::InitializeRequest;
using testing::RecordingChannel;
using testing::Request;

json Meta(const std::string& version = "2026-07-28") {
  return {{modern::kMetaProtocolVersion, version},
          {modern::kMetaClientCapabilities, json::object()},
          {modern::kMetaClientInfo, {{"name", "modern-test"}, {"version", "2.4.0"}}}};
}

json ModernRequest(int id, const std::string& method, json params = json::object(),
                   const std::string& version = "2026-07-28") {
  params["_meta"] = Meta(version);
  return Request(id, method, std::move(params));
}

// ---- mcp/modern.h ----------------------------------------------------------

TEST(ModernMetaTest, RequiresVersionAndCapabilities) {
  auto missing = modern::ReadRequestMeta(json::object());
  ASSERT_TRUE(std::holds_alternative<modern::Error>(missing));
  EXPECT_EQ(std::get<modern::Error>(missing).code, protocol::jsonrpc::kInvalidParams);

  json no_caps = {{"_meta", {{modern::kMetaProtocolVersion, "2026-07-28"}}}};
  auto r = modern::ReadRequestMeta(no_caps);
  ASSERT_TRUE(std::holds_alternative<modern::Error>(r));
  EXPECT_EQ(std::get<modern::Error>(r).code, protocol::jsonrpc::kInvalidParams);
  EXPECT_NE(std::get<modern::Error>(r).message.find("clientCapabilities"), std::string::npos);

  json bad_version_type = {{"_meta", {{modern::kMetaProtocolVersion, 7}, {modern::kMetaClientCapabilities, {}}}}};
  r = modern::ReadRequestMeta(bad_version_type);
  ASSERT_TRUE(std::holds_alternative<modern::Error>(r));
  EXPECT_EQ(std::get<modern::Error>(r).code, protocol::jsonrpc::kInvalidParams);

  json bad_level = {{"_meta", Meta()}};
  bad_level["_meta"][modern::kMetaLogLevel] = "loud";
  r = modern::ReadRequestMeta(bad_level);
  ASSERT_TRUE(std::holds_alternative<modern::Error>(r));
  EXPECT_EQ(std::get<modern::Error>(r).code, protocol::jsonrpc::kInvalidParams);
}

TEST(ModernMetaTest, ReadsClientLevelAndTrace) {
  json p = {{"_meta", Meta()}};
  p["_meta"][modern::kMetaLogLevel] = "info";
  p["_meta"]["traceparent"] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  p["_meta"]["progressToken"] = "tok";
  auto r = modern::ReadRequestMeta(p);
  ASSERT_TRUE(std::holds_alternative<modern::RequestMeta>(r));
  const auto& m = std::get<modern::RequestMeta>(r);
  EXPECT_EQ(m.protocol_version, "2026-07-28");
  EXPECT_EQ(m.client, "modern-test/2.4.0");
  ASSERT_TRUE(m.log_level.has_value());
  EXPECT_EQ(*m.log_level, LogLevel::kInfo);
  EXPECT_EQ(m.progress_token, "tok");
  EXPECT_EQ(m.traceparent, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
}

TEST(ModernMetaTest, UnsupportedVersionListsSupported) {
  auto r = modern::ReadRequestMeta(json{{"_meta", Meta("1900-01-01")}});
  ASSERT_TRUE(std::holds_alternative<modern::Error>(r));
  const auto& e = std::get<modern::Error>(r);
  EXPECT_EQ(e.code, -32022);
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.data["requested"], "1900-01-01");
  ASSERT_TRUE(e.data["supported"].is_array());
  EXPECT_EQ(e.data["supported"][0], "2026-07-28");
  EXPECT_NE(std::find(e.data["supported"].begin(), e.data["supported"].end(), "2025-11-25"),
            e.data["supported"].end());
}

TEST(ModernMetaTest, ErrorsOmitNullIdAndResultsAreComplete) {
  json e = modern::MakeError(nullptr, protocol::jsonrpc::kParseError, "Parse error");
  EXPECT_FALSE(e.contains("id"));
  EXPECT_EQ(e["error"]["code"], protocol::jsonrpc::kParseError);
  json r = modern::CompleteResult(3, {{"tools", json::array()}});
  EXPECT_EQ(r["id"], 3);
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_EQ(r["result"]["_meta"][modern::kMetaServerInfo]["name"], "airlock");
  modern::AddCacheHints(r, 1000, "private");
  EXPECT_EQ(r["result"]["ttlMs"], 1000);
  EXPECT_EQ(r["result"]["cacheScope"], "private");
}

TEST(ModernMetaTest, HeadersMustMatchBody) {
  protocol::jsonrpc::Message m;
  m.kind = protocol::jsonrpc::Kind::kRequest;
  m.id = 1;
  m.method = "tools/call";
  m.params = {{"name", "run_code"}, {"_meta", Meta()}};
  std::map<std::string, std::string> h = {
      {"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "tools/call"}, {"Mcp-Name", "run_code"}};
  auto lookup = [&h](const std::string& name) -> std::optional<std::string> {
    auto it = h.find(name);
    return it == h.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_FALSE(modern::CheckHttpHeaders(lookup, m).has_value());
  h["Mcp-Name"] = "=?base64?" + Base64Encode("run_code") + "?=";
  EXPECT_FALSE(modern::CheckHttpHeaders(lookup, m).has_value());

  h["Mcp-Name"] = "execute";
  auto e = modern::CheckHttpHeaders(lookup, m);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, -32020);
  EXPECT_EQ(e->http_status, 400);
  h["Mcp-Name"] = "run_code";

  h["Mcp-Method"] = "tools/list";
  ASSERT_TRUE(modern::CheckHttpHeaders(lookup, m).has_value());
  h.erase("Mcp-Method");
  ASSERT_TRUE(modern::CheckHttpHeaders(lookup, m).has_value());
  h["Mcp-Method"] = "tools/call";

  h["MCP-Protocol-Version"] = "2025-11-25";
  ASSERT_TRUE(modern::CheckHttpHeaders(lookup, m).has_value());
  h.erase("MCP-Protocol-Version");
  e = modern::CheckHttpHeaders(lookup, m);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, -32020);
}

// ---- Session: era selection and the modern front -----------------------------

class McpModernSessionTest : public ::testing::Test {
 protected:
  McpModernSessionTest() : server_(config::DefaultConfig(), executor_) {
    session_ = server_.NewSession(std::make_shared<RecordingChannel>());
  }
  ~McpModernSessionTest() override { session_->Close(); }

  json Send(const json& msg) {
    auto ch = std::make_shared<RecordingChannel>();
    session_->HandleText(msg.dump(), ch);
    return ch->Wait();
  }

  FakeExecutor executor_;
  McpServer server_;
  std::shared_ptr<Session> session_;
};

TEST_F(McpModernSessionTest, DiscoverNeedsNoHandshakeAndSelectsModern) {
  json r = Send(ModernRequest(1, "server/discover"));
  ASSERT_TRUE(r.contains("result")) << r;
  EXPECT_EQ(session_->era(), Session::Era::kModern);
  const json& res = r["result"];
  EXPECT_EQ(res["resultType"], "complete");
  EXPECT_EQ(res["supportedVersions"][0], "2026-07-28");
  EXPECT_TRUE(res["capabilities"].contains("tools"));
  EXPECT_EQ(res["_meta"][modern::kMetaServerInfo]["name"], "airlock");
  EXPECT_EQ(res["cacheScope"], "public");
  EXPECT_TRUE(res["ttlMs"].is_number_integer());
  // Later, initialize cannot turn the connection legacy.
  json init = Send(InitializeRequest(2));
  ASSERT_TRUE(init.contains("error")) << init;
  EXPECT_FALSE(session_->initialized());
}

TEST_F(McpModernSessionTest, DiscoverWithoutMetaIsInvalidParams) {
  json r = Send(Request(1, "server/discover"));
  ASSERT_TRUE(r.contains("error")) << r;
  EXPECT_EQ(r["error"]["code"], protocol::jsonrpc::kInvalidParams);
  EXPECT_EQ(r["id"], 1);
}

TEST_F(McpModernSessionTest, UnsupportedVersionIs32022) {
  json r = Send(ModernRequest(1, "tools/list", json::object(), "2099-01-01"));
  ASSERT_TRUE(r.contains("error")) << r;
  EXPECT_EQ(r["error"]["code"], -32022);
  EXPECT_EQ(r["error"]["data"]["requested"], "2099-01-01");
  EXPECT_TRUE(r["error"]["data"]["supported"].is_array());
}

TEST_F(McpModernSessionTest, ToolsListIsSortedCompleteAndPrivate) {
  json r = Send(ModernRequest(1, "tools/list"));
  ASSERT_TRUE(r.contains("result")) << r;
  const json& res = r["result"];
  EXPECT_EQ(res["resultType"], "complete");
  EXPECT_EQ(res["cacheScope"], "private");
  EXPECT_GE(res["ttlMs"].get<int64_t>(), 0);
  ASSERT_GE(res["tools"].size(), 2u);
  for (size_t i = 1; i < res["tools"].size(); ++i) {
    EXPECT_LT(res["tools"][i - 1]["name"].get<std::string>(), res["tools"][i]["name"].get<std::string>());
  }
  // Every request must carry _meta, even after the era is chosen.
  json bare = Send(Request(2, "tools/list"));
  ASSERT_TRUE(bare.contains("error"));
  EXPECT_EQ(bare["error"]["code"], protocol::jsonrpc::kInvalidParams);
}

TEST_F(McpModernSessionTest, ToolsCallAnswersCompleteResult) {
  json params = {{"name", "run_code"}, {"arguments", {{"language", "python"}, {"code", "print(1)"}}}};
  json r = Send(ModernRequest(5, "tools/call", params));
  ASSERT_TRUE(r.contains("result")) << r;
  EXPECT_EQ(r["id"], 5);
  EXPECT_EQ(r["result"]["resultType"], "complete");
  EXPECT_TRUE(r["result"].contains("content"));
  EXPECT_NE(r["result"].value("isError", false), true) << r;
}

TEST_F(McpModernSessionTest, ResourcesAndUnknownMethods) {
  json list = Send(ModernRequest(1, "resources/list"));
  ASSERT_TRUE(list.contains("result")) << list;
  EXPECT_EQ(list["result"]["cacheScope"], "public");
  json missing = Send(ModernRequest(2, "resources/read", {{"uri", "airlock://nope"}}));
  ASSERT_TRUE(missing.contains("error"));
  EXPECT_EQ(missing["error"]["code"], protocol::jsonrpc::kInvalidParams);  // -32002 is retired in this era
  json ping = Send(ModernRequest(3, "ping"));
  ASSERT_TRUE(ping.contains("error"));
  EXPECT_EQ(ping["error"]["code"], protocol::jsonrpc::kMethodNotFound);
}

TEST_F(McpModernSessionTest, ParseErrorOnModernConnectionHasNoNullId) {
  Send(ModernRequest(1, "server/discover"));
  auto ch = std::make_shared<RecordingChannel>();
  session_->HandleText("{oops", ch);
  json e = ch->Wait();
  ASSERT_TRUE(e.contains("error")) << e;
  EXPECT_FALSE(e.contains("id")) << e;
}

TEST_F(McpModernSessionTest, LegacyConnectionIsUnchanged) {
  json init = Send(InitializeRequest(1));
  ASSERT_TRUE(init.contains("result")) << init;
  EXPECT_EQ(session_->era(), Session::Era::kLegacy);
  EXPECT_FALSE(init["result"].contains("resultType"));
  json list = Send(Request(2, "tools/list"));
  ASSERT_TRUE(list.contains("result")) << list;
  EXPECT_FALSE(list["result"].contains("resultType"));
  EXPECT_FALSE(list["result"].contains("ttlMs"));
  // A modern-looking request later on a legacy connection is served as legacy.
  json discover = Send(ModernRequest(3, "server/discover"));
  ASSERT_TRUE(discover.contains("error"));
  EXPECT_EQ(discover["error"]["code"], protocol::jsonrpc::kMethodNotFound);
  json missing = Send(Request(4, "resources/read", {{"uri", "airlock://nope"}}));
  EXPECT_EQ(missing["error"]["code"], -32002);
}

TEST_F(McpModernSessionTest, LegacyPingBeforeInitializeLeavesEraOpen) {
  json ping = Send(Request(1, "ping"));
  ASSERT_TRUE(ping.contains("result"));
  EXPECT_EQ(session_->era(), Session::Era::kUndetermined);
  ASSERT_TRUE(Send(InitializeRequest(2)).contains("result"));
  EXPECT_EQ(session_->era(), Session::Era::kLegacy);
}

// ---- subscriptions/listen -----------------------------------------------------

json ListenRequest(int id) {
  return ModernRequest(id, "subscriptions/listen",
                       {{"notifications", {{"toolsListChanged", true}, {"promptsListChanged", true}}}});
}

TEST_F(McpModernSessionTest, ListenAcknowledgesThenDeliversToolsListChanged) {
  auto ch = std::make_shared<RecordingChannel>();
  session_->HandleText(ListenRequest(9).dump(), ch);
  std::vector<json> n = ch->notifications();
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0]["method"], "notifications/subscriptions/acknowledged");
  EXPECT_EQ(n[0]["params"]["_meta"][modern::kMetaSubscriptionId], 9);
  EXPECT_EQ(n[0]["params"]["notifications"], json({{"toolsListChanged", true}}));  // prompts: not offered
  EXPECT_FALSE(ch->finished());
  server_.NotifyToolsChanged();  // e.g. a code tool approved or revoked
  n = ch->notifications();
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[1]["method"], "notifications/tools/list_changed");
  EXPECT_EQ(n[1]["params"]["_meta"][modern::kMetaSubscriptionId], 9);
  // stdio: the client cancels it; no response, no more notifications.
  auto none = std::make_shared<RecordingChannel>();
  session_->HandleText(json({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 9}}}})
                           .dump(),
                       none);
  EXPECT_TRUE(ch->finished());
  EXPECT_TRUE(ch->Wait().is_null());
  EXPECT_EQ(server_.subscriptions().size(), 0u);
  server_.NotifyToolsChanged();
  EXPECT_EQ(ch->notifications().size(), 2u);
}

TEST_F(McpModernSessionTest, ListenIsBoundedAndEndsGracefullyOnClose) {
  const size_t per_caller = server_.subscriptions().limits().per_caller;
  std::vector<std::shared_ptr<RecordingChannel>> open;
  for (size_t i = 0; i < per_caller; ++i) {
    open.push_back(std::make_shared<RecordingChannel>());
    session_->HandleText(ListenRequest(static_cast<int>(100 + i)).dump(), open.back());
    ASSERT_FALSE(open.back()->finished()) << open.back()->Wait();
  }
  auto refused = std::make_shared<RecordingChannel>();
  session_->HandleText(ListenRequest(99).dump(), refused);
  json e = refused->Wait();
  ASSERT_TRUE(e.contains("error")) << e;
  EXPECT_EQ(e["error"]["code"], protocol::jsonrpc::kInvalidRequest);
  EXPECT_EQ(e["error"]["data"]["perCaller"], per_caller);
  EXPECT_NE(e["error"]["message"].get<std::string>().find("Too many subscriptions"), std::string::npos);
  session_->Close();
  for (size_t i = 0; i < open.size(); ++i) {
    json r = open[i]->Wait();
    ASSERT_TRUE(r.contains("result")) << r;
    EXPECT_EQ(r["id"], 100 + static_cast<int>(i));
    EXPECT_EQ(r["result"]["resultType"], "complete");
    EXPECT_EQ(r["result"]["_meta"][modern::kMetaSubscriptionId], 100 + static_cast<int>(i));
  }
  EXPECT_EQ(server_.subscriptions().size(), 0u);
}

TEST(ModernSubscriptionHubTest, BoundsPerCallerAndTotal) {
  SubscriptionHub hub({.per_caller = 2, .total = 3});
  auto ch = std::make_shared<RecordingChannel>();
  ASSERT_TRUE(hub.Add("a", ch, 1, {}).ok());
  ASSERT_TRUE(hub.Add("a", ch, 2, {}).ok());
  EXPECT_EQ(hub.Add("a", ch, 3, {}).status().code(), StatusCode::kResourceExhausted);
  auto b = hub.Add("b", ch, 4, {.tools_list_changed = true});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(hub.Add("c", ch, 5, {}).status().code(), StatusCode::kResourceExhausted);
  hub.Publish(SubscriptionHub::Kind::kToolsListChanged);
  EXPECT_TRUE(ch->notifications().empty());  // not activated yet
  hub.Activate(*b);
  hub.Publish(SubscriptionHub::Kind::kToolsListChanged);
  ASSERT_EQ(ch->notifications().size(), 1u);
  hub.Remove(*b);
  EXPECT_TRUE(hub.Add("c", ch, 6, {}).ok());
}

// The trace context of a modern tools/call is in its audit row (allowed or
// denied), read back from the store.
TEST(McpModernAuditTest, TraceContextIsInTheToolCallRow) {
  airlock::tests::TempAuditLog log("modern-audit");
  ASSERT_NE(log.get(), nullptr);
  audit::AuditStore* raw = log.get()->store();
  FakeExecutor executor;
  McpServer server(config::DefaultConfig(), executor, nullptr, ServerOptions{.audit = log.get()});
  const std::string tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  {
    std::shared_ptr<Session> session = server.NewSession(std::make_shared<RecordingChannel>());
    auto send = [&](json msg) {
      msg["params"]["_meta"]["traceparent"] = tp;
      msg["params"]["_meta"]["tracestate"] = "vendor=abc";
      auto ch = std::make_shared<RecordingChannel>();
      session->HandleText(msg.dump(), ch);
      return ch->Wait();
    };
    json ok = send(ModernRequest(
        1, "tools/call", {{"name", "run_code"}, {"arguments", {{"language", "python"}, {"code", "print(1)"}}}}));
    ASSERT_TRUE(ok.contains("result")) << ok;
    json denied = send(ModernRequest(2, "tools/call", {{"name", "no_such_tool"}, {"arguments", json::object()}}));
    ASSERT_TRUE(denied.contains("error")) << denied;
    session->Close();
  }
  auto rows = raw->Query({});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  int traced = 0;
  for (const audit::AuditRow& row : *rows) {
    if (const audit::EventRow* e = row.event(); e && e->kind == "tool_call") {
      EXPECT_EQ(e->detail.value("traceparent", ""), tp) << e->detail;
      EXPECT_EQ(e->detail.value("tracestate", ""), "vendor=abc") << e->detail;
      ++traced;
    }
  }
  EXPECT_EQ(traced, 2);
}

// ---- Streamable HTTP ---------------------------------------------------------

class McpModernHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<McpServer>(config::DefaultConfig(), executor_);
    Status st = testing::StartTestHttpFront(*server_, HttpOptions(), &http_, &client_);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  void TearDown() override {
    if (http_) http_->Stop();
  }
  // A modern POST with the headers a conforming client sends (`name`: Mcp-Name).
  httplib::Result Post(const json& body, const std::string& name = "", httplib::Headers extra = {}) {
    httplib::Headers h = {{"Accept", "application/json, text/event-stream"},
                          {"MCP-Protocol-Version", "2026-07-28"},
                          {"Mcp-Method", body.value("method", "")}};
    if (!name.empty()) h.insert({"Mcp-Name", name});
    for (auto& [k, v] : extra) {
      h.erase(k);
      h.insert({k, v});
    }
    return client_->Post("/mcp", h, body.dump(), "application/json");
  }

  FakeExecutor executor_;
  std::unique_ptr<McpServer> server_;
  std::unique_ptr<HttpTransport> http_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(McpModernHttpTest, DiscoverAndToolsListWithoutSession) {
  auto res = Post(ModernRequest(1, "server/discover"));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_FALSE(res->has_header("Mcp-Session-Id"));
  json body = json::parse(res->body);
  EXPECT_EQ(body["result"]["resultType"], "complete");
  res = Post(ModernRequest(2, "tools/list"));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["result"]["cacheScope"], "private");
  EXPECT_EQ(http_->session_count(), 0u);
}

TEST_F(McpModernHttpTest, ToolsCallIsOneJsonResponse) {
  json params = {{"name", "run_code"}, {"arguments", {{"language", "python"}, {"code", "print(1)"}}}};
  auto res = Post(ModernRequest(3, "tools/call", params), "run_code");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  json body = json::parse(res->body);
  EXPECT_EQ(body["id"], 3);
  EXPECT_EQ(body["result"]["resultType"], "complete");
}

TEST_F(McpModernHttpTest, HeaderMismatchIs400And32020) {
  json params = {{"name", "run_code"}, {"arguments", {{"language", "python"}, {"code", "print(1)"}}}};
  auto res = Post(ModernRequest(3, "tools/call", params), "execute");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], -32020);
  res = Post(ModernRequest(4, "tools/call", params));  // no Mcp-Name
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], -32020);
  res = Post(ModernRequest(5, "tools/list"), "", {{"Mcp-Method", "tools/call"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], -32020);
  EXPECT_EQ(executor_.requests.size(), 0u);
}

TEST_F(McpModernHttpTest, UnsupportedVersionAndMissingMetaAre400) {
  auto res = Post(ModernRequest(1, "tools/list", json::object(), "2099-01-01"), "",
                  {{"MCP-Protocol-Version", "2099-01-01"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  json body = json::parse(res->body);
  EXPECT_EQ(body["error"]["code"], -32022);
  EXPECT_TRUE(body["error"]["data"]["supported"].is_array());
  res = Post(Request(2, "tools/list"));  // modern header, no _meta
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], protocol::jsonrpc::kInvalidParams);
  res = Post(ModernRequest(3, "nope/nothing"));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], protocol::jsonrpc::kMethodNotFound);
}

TEST_F(McpModernHttpTest, NoGetStreamAndNoSessionHeader) {
  auto get = client_->Get("/mcp", {{"Accept", "text/event-stream"}, {"MCP-Protocol-Version", "2026-07-28"}});
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  auto res = Post(ModernRequest(1, "tools/list"), "", {{"Mcp-Session-Id", "0123456789abcdef0123456789abcdef"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  json body = json::parse(res->body);
  EXPECT_EQ(body["error"]["code"], protocol::jsonrpc::kInvalidRequest);
  EXPECT_NE(body["error"]["message"].get<std::string>().find("Mcp-Session-Id"), std::string::npos);
}

TEST_F(McpModernHttpTest, AnonymousCallerCannotOpenCodeSessions) {
  json params = {{"name", "open_session"}, {"arguments", {{"language", "python"}}}};
  auto res = Post(ModernRequest(1, "tools/call", params), "open_session");
  ASSERT_TRUE(res);
  json body = json::parse(res->body);
  // Whether or not the tool is offered here, no session is opened.
  if (body.contains("result")) {
    EXPECT_EQ(body["result"]["isError"], true) << body;
    EXPECT_NE(body["result"]["content"][0]["text"].get<std::string>().find("E_SESSION_NEEDS_IDENTITY"),
              std::string::npos);
  } else {
    EXPECT_EQ(body["error"]["code"], protocol::jsonrpc::kInvalidParams) << body;
  }
}

// Issue 30 follow-up: the HTTP front's own checks answer a modern request in
// the 2026 shape (the request's id or none, never id null; no -32000).
TEST_F(McpModernHttpTest, TransportErrorsOfModernRequestsUseTheModernShape) {
  auto res = Post(ModernRequest(7, "tools/list"), "", {{"Accept", "application/json"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 406);
  json body = json::parse(res->body);
  EXPECT_EQ(body["id"], 7) << body;
  EXPECT_EQ(body["error"]["code"], protocol::jsonrpc::kInvalidRequest) << body;
  EXPECT_EQ(body["error"]["data"]["httpStatus"], 406);

  httplib::Headers h = {{"Accept", "application/json, text/event-stream"},
                        {"MCP-Protocol-Version", "2026-07-28"},
                        {"Mcp-Method", "tools/list"}};
  res = client_->Post("/mcp", h, ModernRequest(8, "tools/list").dump(), "text/plain");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 415);
  body = json::parse(res->body);
  EXPECT_EQ(body["id"], 8) << body;
  EXPECT_NE(body["error"]["code"], -32000);

  res = client_->Post("/mcp", h, "{oops", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  body = json::parse(res->body);
  EXPECT_FALSE(body.contains("id")) << body;
  EXPECT_EQ(body["error"]["code"], protocol::jsonrpc::kParseError);

  res = client_->Post("/elsewhere", h, ModernRequest(9, "tools/list").dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  body = json::parse(res->body);
  EXPECT_FALSE(body.contains("id")) << body;  // refused before the body is read
  EXPECT_EQ(body["error"]["code"], protocol::jsonrpc::kInvalidRequest);

  auto get = client_->Get("/mcp", {{"Accept", "text/event-stream"}, {"MCP-Protocol-Version", "2026-07-28"}});
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  body = json::parse(get->body);
  EXPECT_FALSE(body.contains("id")) << body;
  EXPECT_EQ(body["error"]["code"], protocol::jsonrpc::kInvalidRequest);

  // Modern by its _meta alone (no version header): the same shape.
  res = client_->Post("/mcp", {{"Accept", "application/json"}}, ModernRequest(10, "tools/list").dump(),
                      "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 406);
  body = json::parse(res->body);
  EXPECT_EQ(body["id"], 10) << body;
  EXPECT_EQ(body["error"]["code"], protocol::jsonrpc::kInvalidRequest);
}

TEST_F(McpModernHttpTest, TransportErrorsOfLegacyRequestsAreUnchanged) {
  auto res = client_->Post("/mcp", {{"Accept", "application/json"}}, Request(1, "tools/list").dump(),
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 406);
  json body = json::parse(res->body);
  ASSERT_TRUE(body.contains("id"));
  EXPECT_TRUE(body["id"].is_null());
  EXPECT_EQ(body["error"]["code"], -32000);
  res = client_->Post("/mcp", {{"Accept", "application/json, text/event-stream"}}, "{oops", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  body = json::parse(res->body);
  ASSERT_TRUE(body.contains("id"));
  EXPECT_TRUE(body["id"].is_null());
}

TEST(McpModernHttpAuthTest, UnauthorizedModernRequestHasItsIdLegacyKeepsNull) {
  FakeExecutor executor;
  McpServer server(config::DefaultConfig(), executor);
  HttpOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.bearer_token = "secret-token";
  HttpTransport http(server, o);
  ASSERT_TRUE(http.Start().ok());
  httplib::Client client("127.0.0.1", http.port());
  httplib::Headers h = {{"Accept", "application/json, text/event-stream"},
                        {"MCP-Protocol-Version", "2026-07-28"},
                        {"Mcp-Method", "tools/list"}};
  auto res = client.Post("/mcp", h, ModernRequest(4, "tools/list").dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_TRUE(res->has_header("WWW-Authenticate"));
  json body = json::parse(res->body);
  EXPECT_FALSE(body.contains("id")) << body;  // refused before the body is read
  EXPECT_EQ(body["error"]["code"], protocol::jsonrpc::kInvalidRequest);
  res = client.Post("/mcp", {{"Accept", "application/json, text/event-stream"}}, InitializeRequest(1).dump(),
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  body = json::parse(res->body);
  EXPECT_TRUE(body["id"].is_null()) << body;
  EXPECT_EQ(body["error"]["code"], -32000);
  http.Stop();
}

// A client newer than airlock, known only by its version header.
TEST_F(McpModernHttpTest, UnknownVersionHeaderIs32022) {
  auto res = Post(Request(1, "tools/list"), "", {{"MCP-Protocol-Version", "2099-01-01"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  json body = json::parse(res->body);
  EXPECT_EQ(body["id"], 1) << body;
  EXPECT_EQ(body["error"]["code"], -32022);
  EXPECT_EQ(body["error"]["data"]["requested"], "2099-01-01");
  ASSERT_TRUE(body["error"]["data"]["supported"].is_array());
  EXPECT_EQ(body["error"]["data"]["supported"][0], "2026-07-28");
  // A known legacy version without a session: today's legacy answer.
  res = Post(Request(2, "ping"), "", {{"MCP-Protocol-Version", "2025-06-18"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  body = json::parse(res->body);
  EXPECT_TRUE(body["id"].is_null()) << body;
  EXPECT_EQ(body["error"]["code"], -32000);
  // initialize negotiates in its body, whatever the header says.
  res = Post(InitializeRequest(3), "", {{"MCP-Protocol-Version", "2099-01-01"}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_FALSE(res->get_header_value("Mcp-Session-Id").empty());
}

TEST_F(McpModernHttpTest, ListenIsAnSseStreamUntilTheClientLeaves) {
  std::mutex mu;
  std::string got;
  std::atomic<bool> leave{false};
  std::thread client([&] {
    httplib::Client c("127.0.0.1", http_->port());
    c.set_read_timeout(10);
    httplib::Request req;
    req.method = "POST";
    req.path = "/mcp";
    req.headers = {{"Accept", "application/json, text/event-stream"},
                   {"MCP-Protocol-Version", "2026-07-28"},
                   {"Mcp-Method", "subscriptions/listen"},
                   {"Content-Type", "application/json"}};
    req.body = ListenRequest(11).dump();
    req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
      std::lock_guard<std::mutex> lock(mu);
      got.append(data, n);
      return !leave.load();
    };
    c.send(req);
  });
  auto wait_for = [&](const std::string& what) {
    for (int i = 0; i < 100; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (got.find(what) != std::string::npos) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  };
  EXPECT_TRUE(wait_for("notifications/subscriptions/acknowledged"));
  server_->NotifyToolsChanged();
  EXPECT_TRUE(wait_for("notifications/tools/list_changed"));
  EXPECT_TRUE(wait_for(": ping"));  // keep-alives
  leave = true;
  client.join();
  for (int i = 0; i < 100 && server_->subscriptions().size() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(server_->subscriptions().size(), 0u);
}

TEST_F(McpModernHttpTest, LegacyInitializeStillMintsASession) {
  auto res = client_->Post("/mcp", {{"Accept", "application/json, text/event-stream"}}, InitializeRequest(1).dump(),
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_FALSE(res->get_header_value("Mcp-Session-Id").empty());
  EXPECT_FALSE(json::parse(res->body)["result"].contains("resultType"));
}

}  // namespace
}  // namespace airlock::mcp
