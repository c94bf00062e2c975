// Protocol engine tests: lifecycle, JSON-RPC errors, tools, progress,
// cancellation, logging and resources, driven through Session directly.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "base/encoding.h"
#include "mcp/server.h"
#include "mcp/session.h"
#include "mcp_test_util.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using testing::FakeExecutor;
using testing::InitializeRequest;
using testing::RecordingChannel;
using testing::Request;
using testing::RunCode;

class McpSessionTest : public ::testing::Test {
 protected:
  McpSessionTest() : server_(config::DefaultConfig(), executor_) {
    standalone_ = std::make_shared<RecordingChannel>();
    session_ = server_.NewSession(standalone_);
  }
  ~McpSessionTest() override { session_->Close(); }

  // Sends text, waits for the reply.
  json Send(const std::string& text) {
    auto ch = std::make_shared<RecordingChannel>();
    session_->HandleText(text, ch);
    return ch->Wait();
  }
  json Send(const json& msg) { return Send(msg.dump()); }
  std::shared_ptr<RecordingChannel> SendAsync(const json& msg) {
    auto ch = std::make_shared<RecordingChannel>();
    session_->HandleText(msg.dump(), ch);
    return ch;
  }
  void Init(const std::string& version = "2025-11-25") {
    json r = Send(InitializeRequest(1, version));
    ASSERT_TRUE(r.contains("result")) << r;
    Send(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  }
  json RunTool(json args, const std::string& version = "2025-11-25") {
    Init(version);
    return Send(RunCode(7, std::move(args)));
  }

  FakeExecutor executor_;
  McpServer server_;
  std::shared_ptr<RecordingChannel> standalone_;
  std::shared_ptr<Session> session_;
};

TEST_F(McpSessionTest, InitializeEchoesSupportedVersion) {
  json r = Send(InitializeRequest(1, "2025-06-18"));
  ASSERT_TRUE(r.contains("result")) << r;
  EXPECT_EQ(r["id"], 1);
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "airlock");
  EXPECT_TRUE(r["result"]["capabilities"]["tools"]["listChanged"].get<bool>());
  EXPECT_TRUE(r["result"]["capabilities"].contains("logging"));
  EXPECT_TRUE(r["result"]["capabilities"].contains("resources"));
  EXPECT_NE(r["result"]["instructions"].get<std::string>().find("run_code"), std::string::npos);
  EXPECT_EQ(session_->protocol_version(), "2025-06-18");
}

TEST_F(McpSessionTest, InitializeWithOldVersionKeepsIt) {
  json r = Send(InitializeRequest(1, "2024-11-05"));
  EXPECT_EQ(r["result"]["protocolVersion"], "2024-11-05");
}

TEST_F(McpSessionTest, InitializeWithUnknownVersionOffersLatest) {
  json r = Send(InitializeRequest(1, "2099-01-01"));
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
}

TEST_F(McpSessionTest, InitializeTwiceFails) {
  Init();
  json r = Send(InitializeRequest(2));
  EXPECT_EQ(r["error"]["code"], -32600);
}

TEST_F(McpSessionTest, InitializeWithoutVersionNamesTheField) {
  json r = Send(Request(1, "initialize", {{"capabilities", json::object()}}));
  EXPECT_EQ(r["error"]["code"], -32602);
  EXPECT_EQ(r["error"]["message"], "params.protocolVersion: expected string");
}

TEST_F(McpSessionTest, RequestsBeforeInitializeAreRefusedButPingWorks) {
  json r = Send(Request(3, "tools/list"));
  EXPECT_EQ(r["error"]["code"], -32600);
  EXPECT_EQ(r["id"], 3);
  r = Send(Request(4, "tools/call", {{"name", "run_code"}}));
  EXPECT_EQ(r["error"]["code"], -32600);
  r = Send(Request(5, "ping"));
  EXPECT_EQ(r["result"], json::object());
  EXPECT_TRUE(executor_.requests.empty());
}

TEST_F(McpSessionTest, ParseErrorHasNullIdAndSessionKeepsWorking) {
  json r = Send(std::string("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "));
  EXPECT_EQ(r["error"]["code"], -32700);
  EXPECT_TRUE(r["id"].is_null());
  r = Send(std::string("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"x\":\"\xff\xfe\"}"));
  EXPECT_EQ(r["error"]["code"], -32700) << "invalid UTF-8 is a parse error";
  r = Send(Request(3, "ping"));
  EXPECT_EQ(r["result"], json::object());
}

TEST_F(McpSessionTest, InvalidRequestsAndBatches) {
  json r = Send(json::array({Request(1, "ping"), Request(2, "ping")}));
  EXPECT_EQ(r["error"]["code"], -32600);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("batch"), std::string::npos);
  r = Send(json{{"id", 1}, {"method", "ping"}});
  EXPECT_EQ(r["error"]["code"], -32600);
  EXPECT_EQ(r["id"], 1);
  r = Send(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", 5}});
  EXPECT_EQ(r["error"]["code"], -32600);
  r = Send(json{{"jsonrpc", "2.0"}, {"id", json::object()}, {"method", "ping"}});
  EXPECT_EQ(r["error"]["code"], -32600);
  r = Send(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}, {"params", json::array()}});
  EXPECT_EQ(r["error"]["code"], -32600);
}

TEST_F(McpSessionTest, NotificationsGetNoResponse) {
  auto ch = std::make_shared<RecordingChannel>();
  session_->HandleText(R"({"jsonrpc":"2.0","method":"notifications/whatever"})", ch);
  EXPECT_EQ(ch->finish_calls(), 1);
  EXPECT_TRUE(ch->all().empty());
}

TEST_F(McpSessionTest, UnknownMethodIs32601) {
  Init();
  json r = Send(Request(9, "prompts/list"));
  EXPECT_EQ(r["error"]["code"], -32601);
  EXPECT_EQ(r["id"], 9);
}

TEST_F(McpSessionTest, ToolsListDescribesRunCode) {
  Init();
  json r = Send(Request(2, "tools/list"));
  ASSERT_TRUE(r.contains("result")) << r;
  const json& tools = r["result"]["tools"];
  ASSERT_EQ(tools.size(), 8u);  // run_code, list_languages and the six session tools
  EXPECT_EQ(tools[2]["name"], "open_session");
  EXPECT_EQ(tools[3]["name"], "close_session");
  EXPECT_EQ(tools[4]["name"], "list_sessions");
  EXPECT_EQ(tools[5]["name"], "pause_session");
  EXPECT_EQ(tools[6]["name"], "resume_session");
  EXPECT_EQ(tools[7]["name"], "fork_session");
  for (size_t i = 5; i < 8; ++i) EXPECT_EQ(tools[i]["inputSchema"]["required"], json({"session_id"})) << tools[i];
  EXPECT_EQ(tools[2]["inputSchema"]["required"], json({"language"}));
  EXPECT_TRUE(tools[0]["inputSchema"]["properties"].contains("session_id"));
  const json& run = tools[0];
  EXPECT_EQ(run["name"], "run_code");
  EXPECT_EQ(run["inputSchema"]["properties"]["language"]["enum"], json({"c", "python"}));
  // A session's cell leaves language out: the schema requires only code
  // (the server refuses a call with neither language nor session_id).
  EXPECT_EQ(run["inputSchema"]["required"], json({"code"}));
  EXPECT_EQ(run["inputSchema"]["properties"]["timeout_ms"]["maximum"], 60000);
  EXPECT_EQ(run["outputSchema"]["type"], "object");
  EXPECT_TRUE(run["outputSchema"]["properties"].contains("stdout"));
  EXPECT_TRUE(run["annotations"]["readOnlyHint"].get<bool>());
  EXPECT_FALSE(run["annotations"]["openWorldHint"].get<bool>());
  std::string desc = run["description"];
  EXPECT_NE(desc.find("No network"), std::string::npos);
  EXPECT_NE(desc.find("numpy"), std::string::npos);
  EXPECT_FALSE(r["result"].contains("nextCursor"));
  EXPECT_EQ(tools[1]["name"], "list_languages");

  r = Send(Request(3, "tools/list", {{"cursor", "bogus"}}));
  EXPECT_EQ(r["error"]["code"], -32602);
}

TEST_F(McpSessionTest, DisabledLanguagesAreHidden) {
  config::Config c = config::DefaultConfig();
  c.languages.enabled = {"python"};
  McpServer server(c, executor_);
  auto s = server.NewSession(nullptr);
  auto ch = std::make_shared<RecordingChannel>();
  s->HandleText(InitializeRequest(1).dump(), ch);
  ch = std::make_shared<RecordingChannel>();
  s->HandleText(Request(2, "tools/list").dump(), ch);
  EXPECT_EQ(ch->Wait()["result"]["tools"][0]["inputSchema"]["properties"]["language"]["enum"], json({"python"}));
  s->Close();
}

TEST_F(McpSessionTest, RunCodeSuccess) {
  json r = RunTool({{"language", "python"}, {"code", "print('hello')"}});
  ASSERT_TRUE(r.contains("result")) << r;
  const json& res = r["result"];
  EXPECT_FALSE(res["isError"].get<bool>());
  EXPECT_EQ(res["structuredContent"]["status"], "ok");
  EXPECT_EQ(res["structuredContent"]["stdout"], "hello\n");
  EXPECT_EQ(res["content"][0]["type"], "text");
  EXPECT_NE(res["content"][0]["text"].get<std::string>().find("status: ok"), std::string::npos);
  EXPECT_NE(res["content"][0]["text"].get<std::string>().find("hello"), std::string::npos);
  ASSERT_EQ(executor_.requests.size(), 1u);
  EXPECT_EQ(executor_.requests[0].code, "print('hello')");
  EXPECT_EQ(executor_.requests[0].timeout_ms, 10000u);  // the language default
  EXPECT_EQ(executor_.requests[0].memory_mb, 256u);
}

TEST_F(McpSessionTest, RunCodeFailureIsError) {
  executor_.handler = [](const runtimes::RunRequest& req, const runtimes::ProgressFn&, CancelToken&) {
    runtimes::RunResult r = FakeExecutor::Ok(req, "");
    r.status = runtimes::RunStatus::kExitNonzero;
    r.exit_code = 3;
    r.stderr_text = "boom\n";
    return r;
  };
  json r = RunTool({{"language", "c"}, {"code", "int main(){return 3;}"}});
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_EQ(r["result"]["structuredContent"]["status"], "exit_nonzero");
  EXPECT_EQ(r["result"]["structuredContent"]["exit_code"], 3);
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("boom"), std::string::npos);
}

TEST_F(McpSessionTest, ImageFilesBecomeImageContentAndOthersResources) {
  executor_.handler = [](const runtimes::RunRequest& req, const runtimes::ProgressFn&, CancelToken&) {
    runtimes::RunResult r = FakeExecutor::Ok(req, "");
    runtimes::OutputFile png;
    png.name = "plot.png";
    png.content = std::string("\x89PNG\r\n\x1a\n\0\0", 10);
    png.size = png.content.size();
    png.mime_type = "image/png";
    runtimes::OutputFile txt;
    txt.name = "out dir/result.txt";
    txt.content = "42\n";
    txt.size = 3;
    txt.mime_type = "text/plain";
    runtimes::OutputFile bin;
    bin.name = "data.bin";
    bin.content = std::string("\0\1\2", 3);
    bin.size = 3;
    bin.mime_type = "application/octet-stream";
    r.files = {png, txt, bin};
    return r;
  };
  json r = RunTool({{"language", "python"}, {"code", "x"}, {"output_files", {"*.png", "out dir/*.txt", "*.bin"}}});
  const json& content = r["result"]["content"];
  ASSERT_EQ(content.size(), 4u) << r;
  EXPECT_EQ(content[1]["type"], "image");
  EXPECT_EQ(content[1]["mimeType"], "image/png");
  std::string decoded;
  ASSERT_TRUE(Base64Decode(content[1]["data"].get<std::string>(), &decoded));
  EXPECT_EQ(decoded, std::string("\x89PNG\r\n\x1a\n\0\0", 10));
  EXPECT_EQ(content[2]["type"], "resource");
  EXPECT_EQ(content[2]["resource"]["uri"], "file:///work/out%20dir/result.txt");
  EXPECT_EQ(content[2]["resource"]["text"], "42\n");
  EXPECT_EQ(content[3]["resource"]["blob"], Base64Encode(std::string("\0\1\2", 3)));
  EXPECT_EQ(executor_.requests[0].output_globs.size(), 3u);
}

TEST_F(McpSessionTest, InvalidArgumentsAreInvalidParamsForOldProtocols) {
  json r = RunTool({{"language", 5}, {"code", "x"}}, "2025-06-18");
  ASSERT_TRUE(r.contains("error")) << r;
  EXPECT_EQ(r["error"]["code"], -32602);
  EXPECT_EQ(r["error"]["message"], "arguments.language: expected string, got integer");
}

TEST_F(McpSessionTest, InvalidArgumentsAreToolErrorsFrom20251125) {
  json r = RunTool({{"language", "python"}, {"code", "x"}, {"files", {{{"name", "a"}, {"content", 1}}}}});
  ASSERT_TRUE(r.contains("result")) << r;
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("arguments.files[0].content: expected string"),
            std::string::npos)
      << r;
  EXPECT_TRUE(executor_.requests.empty());
}

TEST_F(McpSessionTest, MissingFieldsAndUnknownPropertiesAreNamed) {
  Init("2025-06-18");
  json r = Send(RunCode(2, {{"language", "python"}}));
  EXPECT_EQ(r["error"]["message"], "arguments.code: required");
  r = Send(RunCode(3, {{"language", "python"}, {"code", ""}, {"bogus", 1}}));
  EXPECT_EQ(r["error"]["message"], "arguments.bogus: unknown property");
  r = Send(Request(4, "tools/call", {{"name", "run_code"}, {"arguments", "x"}}));
  EXPECT_EQ(r["error"]["message"], "params.arguments: expected object");
  r = Send(Request(5, "tools/call", {{"arguments", json::object()}}));
  EXPECT_EQ(r["error"]["message"], "params.name: expected string");
  r = Send(Request(6, "tools/call", {{"name", "rm_rf"}}));
  EXPECT_EQ(r["error"]["code"], -32602);
  EXPECT_EQ(r["error"]["message"], "Unknown tool: rm_rf");
}

TEST_F(McpSessionTest, UnknownLanguageListsKnownOnes) {
  json r = RunTool({{"language", "cobol"}, {"code", "x"}}, "2025-06-18");
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_EQ(r["result"]["content"][0]["text"], "unknown language \"cobol\"; available: c, python");
  EXPECT_EQ(r["result"]["structuredContent"]["error_code"], "unknown_language");
}

TEST_F(McpSessionTest, AnIsolationTierTheLanguageLacksIsRefusedWithTheTiersItHas) {
  json r = RunTool({{"language", "python"}, {"code", "x"}, {"isolation", "wasm"}}, "2025-06-18");
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_EQ(r["result"]["content"][0]["text"], "isolation \"wasm\" is not available for python; available: native");
  EXPECT_TRUE(executor_.requests.empty());
  r = Send(RunCode(9, {{"language", "python"}, {"code", "x"}, {"isolation", "native"}}));
  EXPECT_FALSE(r["result"].value("isError", false)) << r;
  ASSERT_EQ(executor_.requests.size(), 1u);
  EXPECT_EQ(executor_.requests[0].isolation, "native");
}

TEST_F(McpSessionTest, LimitsAboveTheMaximumAreRejected) {
  json r = RunTool({{"language", "python"}, {"code", "x"}, {"timeout_ms", 90000}});
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_EQ(r["result"]["content"][0]["text"], "timeout_ms 90000 exceeds the server maximum of 60000 ms");
  r = Send(RunCode(8, {{"language", "python"}, {"code", "x"}, {"memory_mb", 4096}}));
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("maximum of 2048"), std::string::npos);
  r = Send(RunCode(9, {{"language", "python"}, {"code", "x"}, {"timeout_ms", 500}, {"memory_mb", 64}}));
  EXPECT_FALSE(r["result"]["isError"].get<bool>());
  ASSERT_EQ(executor_.requests.size(), 1u);
  EXPECT_EQ(executor_.requests[0].timeout_ms, 500u);
  EXPECT_EQ(executor_.requests[0].memory_mb, 64u);
}

TEST_F(McpSessionTest, InputFilesAreValidatedAndDecoded) {
  Init();
  auto run_with_file = [&](int id, const std::string& name) {
    return Send(RunCode(id, {{"language", "python"},
                             {"code", "x"},
                             {"files", {{{"name", name}, {"content", "aGk="}, {"encoding", "base64"}}}}}));
  };
  const std::vector<std::string> bad_names = {"../etc/passwd", "/etc/passwd", "a//b", "a/./b",
                                              std::string("a\0b", 3), std::string(256, 'x'), ""};
  for (const std::string& bad : bad_names) {
    json r = run_with_file(2, bad);
    EXPECT_TRUE(r["result"].value("isError", false)) << "accepted " << SanitizeUtf8(bad) << ": " << r;
  }
  EXPECT_TRUE(executor_.requests.empty());
  json r = run_with_file(3, "data/in.bin");
  ASSERT_FALSE(r["result"]["isError"].get<bool>()) << r;
  ASSERT_EQ(executor_.requests[0].files.size(), 1u);
  EXPECT_EQ(executor_.requests[0].files[0].name, "data/in.bin");
  EXPECT_EQ(executor_.requests[0].files[0].content, "hi");

  r = Send(RunCode(4, {{"language", "python"},
                       {"code", "x"},
                       {"files", {{{"name", "a"}, {"content", "!!"}, {"encoding", "base64"}}}}}));
  EXPECT_NE(r.dump().find("arguments.files[0].content: invalid base64"), std::string::npos) << r;
}

TEST_F(McpSessionTest, FileCountAndSizeCaps) {
  config::Config c = config::DefaultConfig();
  c.limits.max_files = 2;
  c.limits.max_file_bytes = 10;
  c.limits.max_total_file_bytes = 15;
  McpServer server(c, executor_);
  auto s = server.NewSession(nullptr);
  auto send = [&](const json& m) {
    auto ch = std::make_shared<RecordingChannel>();
    s->HandleText(m.dump(), ch);
    return ch->Wait();
  };
  send(InitializeRequest(1));
  json f = {{"name", "a"}, {"content", "12345678"}};
  json g = {{"name", "b"}, {"content", "12345678"}};
  json h = {{"name", "c"}, {"content", "1"}};
  json r = send(RunCode(2, {{"language", "python"}, {"code", ""}, {"files", {f, g}}}));
  EXPECT_NE(r.dump().find("total more than the maximum of 15"), std::string::npos) << r;
  r = send(RunCode(3, {{"language", "python"}, {"code", ""}, {"files", {f, h, h}}}));
  EXPECT_NE(r.dump().find("too many files"), std::string::npos) << r;
  r = send(RunCode(4, {{"language", "python"}, {"code", ""}, {"files", {{{"name", "a"}, {"content", "12345678901"}}}}}));
  EXPECT_NE(r.dump().find("the maximum is 10"), std::string::npos) << r;
  EXPECT_TRUE(executor_.requests.empty());
  s->Close();
}

TEST_F(McpSessionTest, ProgressNotificationsIncreaseAndPrecedeTheResponse) {
  executor_.handler = [](const runtimes::RunRequest& req, const runtimes::ProgressFn& progress, CancelToken&) {
    progress(runtimes::RunPhase::kQueued);
    progress(runtimes::RunPhase::kStarting);
    progress(runtimes::RunPhase::kQueued);  // out of order: must be dropped
    progress(runtimes::RunPhase::kRunning);
    return FakeExecutor::Ok(req, "1\n");
  };
  Init();
  auto ch = SendAsync(RunCode(5, {{"language", "python"}, {"code", "print(1)"}}, {{"progressToken", "tok"}}));
  ASSERT_TRUE(ch->Wait().contains("result"));
  std::vector<json> all = ch->all();
  std::vector<std::string> messages;
  double last = -1;
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    ASSERT_EQ(all[i]["method"], "notifications/progress");
    EXPECT_EQ(all[i]["params"]["progressToken"], "tok");
    EXPECT_GT(all[i]["params"]["progress"].get<double>(), last);
    last = all[i]["params"]["progress"].get<double>();
    EXPECT_EQ(all[i]["params"]["total"], 5);
    messages.push_back(all[i]["params"]["message"]);
  }
  EXPECT_EQ(messages, (std::vector<std::string>{"queued", "starting", "running", "done"}));
  EXPECT_EQ(all.back()["id"], 5);
}

TEST_F(McpSessionTest, NoProgressWithoutToken) {
  Init();
  auto ch = SendAsync(RunCode(5, {{"language", "python"}, {"code", "print(1)"}}));
  ch->Wait();
  EXPECT_TRUE(ch->notifications().empty());
}

TEST_F(McpSessionTest, CancelledCallFiresTokenAndGetsNoResponse) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  Init();
  auto ch = SendAsync(RunCode(42, {{"language", "python"}, {"code", "while True: pass"}}));
  ASSERT_TRUE(executor_.WaitRunning(1));
  EXPECT_FALSE(ch->finished());
  auto n = std::make_shared<RecordingChannel>();
  session_->HandleText(
      json{{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 42}, {"reason", "x"}}}}
          .dump(),
      n);
  EXPECT_TRUE(executor_.WaitCancelled(1));
  ch->Wait();
  EXPECT_EQ(ch->finish_calls(), 1);
  EXPECT_TRUE(ch->all().empty()) << "a cancelled request gets no response";
  EXPECT_TRUE(n->all().empty());
  for (int i = 0; i < 500 && session_->in_flight() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(session_->in_flight(), 0u);
  // Cancelling an unknown or finished request is ignored.
  EXPECT_FALSE(session_->CancelRequest(42));
}

TEST_F(McpSessionTest, CallsInFlightAreTrackedAndCanBeCancelledByRunId) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  Init();
  RunTracker& runs = server_.runs();
  EXPECT_EQ(runs.size(), 0u);
  auto ch = SendAsync(RunCode(7, {{"language", "python"}, {"code", "while True: pass"}}));
  ASSERT_TRUE(executor_.WaitRunning(1));
  std::vector<RunInFlight> live = runs.List();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].tool, "run_code");
  EXPECT_EQ(live[0].run_id.rfind("r_", 0), 0u);
  EXPECT_GT(live[0].started_ms, 0);
  EXPECT_EQ(runs.Cancel("r_nope").code(), StatusCode::kNotFound);
  ASSERT_TRUE(runs.Cancel(live[0].run_id).ok());
  EXPECT_TRUE(executor_.WaitCancelled(1)) << "an operator's cancel reaches the run";
  ch->Wait();
  for (int i = 0; i < 500 && runs.size() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(runs.size(), 0u) << "a finished call leaves the tracker";
}

TEST(RunTrackerTest, HandlesEndTheirCallOnceAndMoveCleanly) {
  RunTracker runs;
  CancelToken a, b;
  {
    RunTracker::Handle h1 = runs.Begin("r_1", {.user = "alice", .role = "admin"}, "run_code", &a);
    RunTracker::Handle h2 = runs.Begin("r_2", {.user = "bob"}, "execute", &b);
    EXPECT_EQ(runs.size(), 2u);
    RunTracker::Handle moved = std::move(h1);
    EXPECT_EQ(runs.size(), 2u);
    moved.End();
    EXPECT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs.List()[0].user, "bob");
    ASSERT_TRUE(runs.Cancel("r_2").ok());
    EXPECT_TRUE(b.cancelled());
    EXPECT_FALSE(a.cancelled());
    EXPECT_TRUE(runs.List()[0].cancel_requested);
    EXPECT_EQ(ToJson(runs.List()[0])["tool"], "execute");
  }
  EXPECT_EQ(runs.size(), 0u);
}

// The request log's status is the documented set (docs/deploy.md): a run
// status where the program ran, else ok / error / protocol_error, with the
// reason of an error in error_code, never "internal_error" as a status.
TEST(RunTrackerTest, RequestLogOutcomesKeepToTheDocumentedStatuses) {
  auto outcome = [](const nlohmann::json& r) { return OutcomeOfToolResult(r); };
  CallOutcome o = outcome({{"structuredContent", {{"status", "timeout"}}}, {"isError", true}});
  EXPECT_EQ(o.status, "timeout");
  EXPECT_EQ(o.error_code, "");
  o = outcome({{"structuredContent", {{"status", "ok"}}}});
  EXPECT_EQ(o.status, "ok");
  o = outcome({{"structuredContent",
                {{"status", "internal_error"}, {"error_code", "E_SESSION_NOT_FOUND"}, {"message", "..."}}},
               {"isError", true}});
  EXPECT_EQ(o.status, "error");
  EXPECT_EQ(o.error_code, "E_SESSION_NOT_FOUND");
  o = outcome({{"structuredContent", {{"status", "internal_error"}}}, {"isError", true}});
  EXPECT_EQ(o.status, "error");
  EXPECT_EQ(o.error_code, "internal_error");
  o = outcome({{"structuredContent", {{"ok", false}, {"error", {{"code", "E_LIMIT_WALLCLOCK"}}}}}, {"isError", true}});
  EXPECT_EQ(o.status, "error");
  EXPECT_EQ(o.error_code, "E_LIMIT_WALLCLOCK");
  o = outcome({{"content", nlohmann::json::array()}, {"isError", true}});
  EXPECT_EQ(o.status, "error");
  EXPECT_EQ(o.error_code, "tool_error");
  o = outcome({{"structuredContent", {{"status", "proposed"}}}});  // some other tool's "status"
  EXPECT_EQ(o.status, "ok");

  RunTracker runs;
  CallOutcome seen;
  runs.SetEndObserver([&](const RunInFlight&, int64_t, const CallOutcome& c) { seen = c; });
  CancelToken token;
  {
    RunTracker::Handle h = runs.Begin("r_1", {.user = "alice"}, "run_code", &token);
    h.SetOutcome({.status = "error", .error_code = "E_SESSION_LOST"});
  }
  EXPECT_EQ(seen.status, "error");
  EXPECT_EQ(seen.error_code, "E_SESSION_LOST");
}

TEST_F(McpSessionTest, CallsRunConcurrentlyAndCloseCancelsThem) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  Init();
  auto a = SendAsync(RunCode(1, {{"language", "python"}, {"code", "a"}}));
  auto b = SendAsync(RunCode(2, {{"language", "python"}, {"code", "b"}}));
  ASSERT_TRUE(executor_.WaitRunning(2)) << "the second call must not wait for the first";
  json ping = Send(Request(3, "ping"));
  EXPECT_EQ(ping["result"], json::object()) << "the session keeps answering while runs execute";
  session_->Close();
  EXPECT_EQ(executor_.cancelled_runs, 2);
  EXPECT_TRUE(a->finished());
  EXPECT_TRUE(b->finished());
  json r = Send(Request(4, "tools/list"));
  EXPECT_EQ(r["error"]["code"], -32600);
}

TEST_F(McpSessionTest, DuplicateInFlightIdIsRefused) {
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  Init();
  auto a = SendAsync(RunCode(1, {{"language", "python"}, {"code", "a"}}));
  ASSERT_TRUE(executor_.WaitRunning(1));
  json r = Send(RunCode(1, {{"language", "python"}, {"code", "b"}}));
  EXPECT_EQ(r["error"]["code"], -32600);
}

TEST_F(McpSessionTest, BusyWhenThePoolIsFull) {
  config::Config c = config::DefaultConfig();
  c.server.max_concurrent_runs = 1;
  c.server.max_queued_runs = 0;  // pool of 1 + 4 threads
  executor_.handler = FakeExecutor::BlockUntilCancelled;
  McpServer server(c, executor_);
  auto s = server.NewSession(nullptr);
  auto init = std::make_shared<RecordingChannel>();
  s->HandleText(InitializeRequest(1).dump(), init);
  std::vector<std::shared_ptr<RecordingChannel>> calls;
  for (int i = 0; i < 5; ++i) {
    calls.push_back(std::make_shared<RecordingChannel>());
    s->HandleText(RunCode(10 + i, {{"language", "python"}, {"code", "x"}}).dump(), calls.back());
  }
  ASSERT_TRUE(executor_.WaitRunning(5));
  auto extra = std::make_shared<RecordingChannel>();
  s->HandleText(RunCode(99, {{"language", "python"}, {"code", "x"}}).dump(), extra);
  json r = extra->Wait();
  EXPECT_TRUE(r["result"]["isError"].get<bool>());
  EXPECT_NE(r.dump().find("busy"), std::string::npos);
  s->Close();
}

TEST_F(McpSessionTest, LoggingFollowsTheLevel) {
  Init();
  auto quiet = SendAsync(RunCode(2, {{"language", "python"}, {"code", "x"}}));
  quiet->Wait();
  EXPECT_TRUE(quiet->notifications().empty()) << "info logs are off until setLevel";
  json r = Send(Request(3, "logging/setLevel", {{"level", "info"}}));
  EXPECT_EQ(r["result"], json::object());
  auto loud = SendAsync(RunCode(4, {{"language", "python"}, {"code", "x"}}));
  loud->Wait();
  auto notes = loud->notifications();
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes[0]["method"], "notifications/message");
  EXPECT_EQ(notes[0]["params"]["level"], "info");
  EXPECT_EQ(notes[0]["params"]["logger"], "airlock");
  r = Send(Request(5, "logging/setLevel", {{"level", "loud"}}));
  EXPECT_EQ(r["error"]["code"], -32602);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("params.level"), std::string::npos);
  server_.Broadcast(LogLevel::kError, "runner restarted");
  server_.Broadcast(LogLevel::kDebug, "too chatty");
  auto standalone = standalone_->notifications();
  ASSERT_EQ(standalone.size(), 1u);
  EXPECT_EQ(standalone[0]["params"]["data"], "runner restarted");
  server_.NotifyToolsChanged();
  EXPECT_EQ(standalone_->notifications().back()["method"], "notifications/tools/list_changed");
}

TEST_F(McpSessionTest, LanguagesResourceAndTool) {
  Init();
  json r = Send(Request(2, "resources/list"));
  ASSERT_EQ(r["result"]["resources"].size(), 1u);
  EXPECT_EQ(r["result"]["resources"][0]["uri"], "airlock://languages");
  r = Send(Request(3, "resources/read", {{"uri", "airlock://languages"}}));
  json doc = json::parse(r["result"]["contents"][0]["text"].get<std::string>());
  EXPECT_EQ(doc["languages"].size(), 2u);
  EXPECT_EQ(doc["languages"][1]["name"], "python");
  EXPECT_EQ(doc["limits"]["max_timeout_ms"], 60000);
  EXPECT_FALSE(doc["sandbox"]["network"].get<bool>());
  r = Send(Request(4, "resources/read", {{"uri", "airlock://nope"}}));
  EXPECT_EQ(r["error"]["code"], -32002);
  r = Send(Request(5, "tools/call", {{"name", "list_languages"}, {"arguments", json::object()}}));
  EXPECT_EQ(r["result"]["structuredContent"]["languages"][0]["name"], "c");
  EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("python 3.11.2"), std::string::npos);
}

}  // namespace
}  // namespace airlock::mcp
