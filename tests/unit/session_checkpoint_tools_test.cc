// The checkpoint tools (mcp/tools/session_tools.h): pause_session,
// resume_session and fork_session through the MCP server, against a fake
// executor: their schemas, their results, and each refusal as a tool error
// with its code (E_SESSION_NOT_FOUND for another caller's id exactly as for
// an unknown one, E_SESSION_NOT_PAUSABLE naming which sessions can be
// paused, E_SESSION_BUSY, E_SESSION_LOST, E_SESSION_LIMIT).
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mcp/server.h"
#include "mcp/session.h"
#include "mcp_test_util.h"

namespace airlock::mcp {
namespace {

using nlohmann::json;
using testing::InitializeRequest;
using testing::RecordingChannel;
using testing::Request;

// Sessions that can be checkpointed in the WASM tier only, as the runner's:
// a native one refuses as SandboxSession does.
class CheckpointExecutor : public testing::FakeExecutor {
 public:
  CheckpointExecutor() {
    languages[0].sessions = true;
    languages[0].tiers = {"native", "wasm"};
    languages[0].session_tiers = {"native", "wasm"};
  }
  Status OpenSession(const runtimes::SessionSpec& spec) override {
    std::lock_guard<std::mutex> lock(session_mu);
    tier[spec.id] = spec.isolation;
    return OkStatus();
  }
  Status CloseSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(session_mu);
    paused.erase(id);
    return tier.erase(id) ? OkStatus() : NotFound("no such session");
  }
  Status PauseSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(session_mu);
    AIRLOCK_RETURN_IF_ERROR(CheckLocked(id));
    paused.insert(id);
    return OkStatus();
  }
  Status ResumeSession(const std::string& id) override {
    std::lock_guard<std::mutex> lock(session_mu);
    AIRLOCK_RETURN_IF_ERROR(CheckLocked(id));
    paused.erase(id);
    return OkStatus();
  }
  Status ForkSession(const std::string& id, const runtimes::SessionSpec& copy) override {
    std::lock_guard<std::mutex> lock(session_mu);
    AIRLOCK_RETURN_IF_ERROR(CheckLocked(id));
    tier[copy.id] = tier[id];
    forked_from[copy.id] = id;
    return OkStatus();
  }

  Status CheckLocked(const std::string& id) {
    auto it = tier.find(id);
    if (it == tier.end()) return NotFound("no such session");
    if (!next_error.ok()) return std::exchange(next_error, OkStatus());
    if (it->second != "wasm") {
      return FailedPrecondition("E_SESSION_NOT_PAUSABLE: python sessions in the " + it->second +
                                " tier cannot be paused or forked (only the WASM tier's Python can)");
    }
    return OkStatus();
  }

  std::mutex session_mu;
  std::map<std::string, std::string> tier;         // open session -> its tier
  std::set<std::string> paused;
  std::map<std::string, std::string> forked_from;  // copy -> source
  Status next_error;                               // the next checkpoint's answer, once
};

governance::Caller As(const std::string& user) {
  return {.user = user, .role = "reader", .auth = "api_key", .key_id = "k_" + user};
}

class Client {
 public:
  Client(McpServer& server, governance::Caller caller) : session_(server.NewSession(nullptr, std::move(caller))) {
    EXPECT_TRUE(Send(InitializeRequest(1)).contains("result"));
  }
  ~Client() { session_->Close(); }
  json Send(const json& msg) {
    auto ch = std::make_shared<RecordingChannel>();
    session_->HandleText(msg.dump(), ch);
    return ch->Wait();
  }
  // tools/call's result (a tool error included).
  json Call(const std::string& tool, const json& arguments) {
    json r = Send(Request(++id_, "tools/call", {{"name", tool}, {"arguments", arguments}}));
    EXPECT_TRUE(r.contains("result")) << r;
    return r["result"];
  }
  std::string Open(const std::string& isolation) {
    json r = Call("open_session", {{"language", "python"}, {"isolation", isolation}});
    EXPECT_FALSE(r.value("isError", false)) << r;
    return r["structuredContent"].value("session_id", "");
  }
  std::map<std::string, json> Tools() {
    std::map<std::string, json> out;
    json r = Send(Request(++id_, "tools/list"));
    for (const json& t : r["result"]["tools"]) out[t["name"].get<std::string>()] = t;
    return out;
  }

 private:
  std::shared_ptr<Session> session_;
  int id_ = 1;
};

// The error code of a tool error; "" when the call succeeded.
std::string ErrorCode(const json& result) {
  if (!result.value("isError", false)) return "";
  return result["structuredContent"].value("error_code", "?");
}

class CheckpointToolsTest : public ::testing::Test {
 protected:
  CheckpointToolsTest() : server_(Config(), executor_) {}
  static config::Config Config() {
    config::Config c = config::DefaultConfig();
    c.sessions.max_per_caller = 2;
    return c;
  }

  CheckpointExecutor executor_;
  McpServer server_;
};

TEST_F(CheckpointToolsTest, SchemasTakeOneSessionId) {
  Client alice(server_, As("alice"));
  std::map<std::string, json> tools = alice.Tools();
  for (const char* name : {"pause_session", "resume_session", "fork_session"}) {
    ASSERT_TRUE(tools.count(name)) << name;
    const json& t = tools[name];
    EXPECT_EQ(t["inputSchema"]["required"], json({"session_id"})) << t;
    EXPECT_EQ(t["inputSchema"]["properties"].size(), 1u) << t;
    EXPECT_EQ(t["inputSchema"]["properties"]["session_id"]["type"], "string");
    EXPECT_FALSE(t["inputSchema"]["additionalProperties"].get<bool>());
    EXPECT_NE(t["description"].get<std::string>().find("WASM tier's Python"), std::string::npos) << t;
    EXPECT_FALSE(t["annotations"]["destructiveHint"].get<bool>());
    // Bad arguments are refused before anything is asked.
    json missing = alice.Call(name, json::object());
    EXPECT_TRUE(missing.value("isError", false)) << missing;
    json extra = alice.Call(name, {{"session_id", "s_1"}, {"code", "x"}});
    EXPECT_TRUE(extra.value("isError", false)) << extra;
  }
}

TEST_F(CheckpointToolsTest, PauseResumeAndForkAnswerTheirShapes) {
  Client alice(server_, As("alice"));
  const std::string id = alice.Open("wasm");
  ASSERT_FALSE(id.empty());

  json p = alice.Call("pause_session", {{"session_id", id}});
  EXPECT_EQ(p["structuredContent"], json({{"session_id", id}, {"paused", true}})) << p;
  EXPECT_TRUE(executor_.paused.count(id));
  json r = alice.Call("resume_session", {{"session_id", id}});
  EXPECT_EQ(r["structuredContent"], json({{"session_id", id}, {"paused", false}})) << r;
  EXPECT_FALSE(executor_.paused.count(id));

  json f = alice.Call("fork_session", {{"session_id", id}});
  ASSERT_FALSE(f.value("isError", false)) << f;
  const json& copy = f["structuredContent"];
  const std::string copy_id = copy.value("session_id", "");
  EXPECT_EQ(copy_id.size(), 34u);
  EXPECT_NE(copy_id, id);
  EXPECT_EQ(copy["forked_from"], id);
  // open_session's shape, for the copy.
  for (const char* key : {"language", "isolation", "idle_timeout_s", "expires_at", "max_lifetime_s", "memory_mb",
                          "mode", "created_at"}) {
    EXPECT_TRUE(copy.contains(key)) << key << ": " << copy;
  }
  EXPECT_EQ(copy["isolation"], "wasm");
  EXPECT_EQ(executor_.forked_from[copy_id], id);
  json listed = alice.Call("list_sessions", json::object());
  EXPECT_EQ(listed["structuredContent"]["sessions"].size(), 2u) << listed;
  // The copy is a session like any other: it can be closed on its own.
  EXPECT_FALSE(alice.Call("close_session", {{"session_id", copy_id}}).value("isError", false));
}

TEST_F(CheckpointToolsTest, AnotherCallersIdIsAnsweredAsAnUnknownOne) {
  Client alice(server_, As("alice"));
  Client bob(server_, As("bob"));
  const std::string id = alice.Open("wasm");
  const std::string unknown = "s_" + std::string(32, '0');
  for (const char* tool : {"pause_session", "resume_session", "fork_session"}) {
    json foreign = bob.Call(tool, {{"session_id", id}});
    json none = bob.Call(tool, {{"session_id", unknown}});
    EXPECT_EQ(ErrorCode(foreign), "E_SESSION_NOT_FOUND") << foreign;
    EXPECT_EQ(ErrorCode(none), "E_SESSION_NOT_FOUND") << none;
    std::string a = foreign.dump(), b = none.dump();
    for (size_t at; (at = a.find(id)) != std::string::npos;) a.replace(at, id.size(), "ID");
    for (size_t at; (at = b.find(unknown)) != std::string::npos;) b.replace(at, unknown.size(), "ID");
    EXPECT_EQ(a, b) << tool;
  }
  EXPECT_TRUE(executor_.paused.empty());
  EXPECT_TRUE(executor_.forked_from.empty());
}

TEST_F(CheckpointToolsTest, RefusalsNameTheirCause) {
  Client alice(server_, As("alice"));
  const std::string native = alice.Open("native");
  json np = alice.Call("pause_session", {{"session_id", native}});
  EXPECT_EQ(ErrorCode(np), "E_SESSION_NOT_PAUSABLE") << np;
  EXPECT_EQ(np["structuredContent"]["session_id"], native);
  const std::string message = np["structuredContent"]["message"];
  EXPECT_EQ(message.rfind("python sessions in the native tier", 0), 0u) << "the code is not repeated: " << message;
  EXPECT_NE(message.find("\"isolation\": \"wasm\""), std::string::npos) << message;
  EXPECT_EQ(ErrorCode(alice.Call("fork_session", {{"session_id", native}})), "E_SESSION_NOT_PAUSABLE");
  json listed = alice.Call("list_sessions", json::object());
  EXPECT_EQ(listed["structuredContent"]["sessions"].size(), 1u) << "a refused fork leaves no session: " << listed;

  const std::string wasm = alice.Open("wasm");
  executor_.next_error = FailedPrecondition("E_SESSION_BUSY: a call of this session is running");
  EXPECT_EQ(ErrorCode(alice.Call("pause_session", {{"session_id", wasm}})), "E_SESSION_BUSY");
  // Alice holds two sessions, her maximum: a fork is one more.
  json over = alice.Call("fork_session", {{"session_id", wasm}});
  EXPECT_EQ(ErrorCode(over), "E_SESSION_LIMIT") << over;
  executor_.next_error = FailedPrecondition("the session's image is larger than its memory limit");
  json failed = alice.Call("pause_session", {{"session_id", wasm}});
  EXPECT_EQ(ErrorCode(failed), "E_SESSION_CHECKPOINT_FAILED") << failed;
  EXPECT_NE(failed["structuredContent"]["message"].get<std::string>().find("goes on"), std::string::npos);
  executor_.next_error = FailedPrecondition("E_SESSION_LOST: the session was lost: the interpreter did not answer");
  EXPECT_EQ(ErrorCode(alice.Call("resume_session", {{"session_id", wasm}})), "E_SESSION_LOST");
  // From then on without asking the runner; close still works.
  EXPECT_EQ(ErrorCode(alice.Call("pause_session", {{"session_id", wasm}})), "E_SESSION_LOST");
  EXPECT_FALSE(alice.Call("close_session", {{"session_id", wasm}}).value("isError", false));
}

}  // namespace
}  // namespace airlock::mcp
