// codemode::BridgeSession against the real fixture MCP server
// (tests/fixtures/mcp-servers/test-server.mjs, run twice as connectors "test"
// and "other"), driven with hand-written bridge frames; plus Limits, the
// frame parser and the call queue on their own. Needs node and `npm install`
// in tests/fixtures/mcp-servers (scripts/setup.sh does it) for the
// gateway-backed tests.
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/encoding.h"
#include "codemode/bridge_frames.h"
#include "codemode/bridge_session.h"
#include "codemode/call_queue.h"
#include "codemode/limits.h"
#include "gateway/child_process.h"
#include "gateway/gateway.h"

namespace airlock::codemode {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const std::string kFixtures = std::string(AIRLOCK_SOURCE_DIR) + "/tests/fixtures/mcp-servers";

bool FixturesInstalled() {
  return std::filesystem::exists(kFixtures + "/node_modules/@modelcontextprotocol/sdk") &&
         !gateway::FindExecutable("node", getenv("PATH") ? getenv("PATH") : "").empty();
}

// Replies the session sends, collected from any thread.
class Replies {
 public:
  runtimes::BridgeHandler::ReplyFn Fn() {
    return [this](std::string frame) {
      std::lock_guard<std::mutex> lock(mu_);
      frames_.push_back(json::parse(frame));
      cv_.notify_all();
    };
  }
  // The reply with this id (waits up to `budget`); null if none came.
  json Get(int64_t id, milliseconds budget = milliseconds(15000)) {
    std::unique_lock<std::mutex> lock(mu_);
    json found;
    cv_.wait_for(lock, budget, [&] {
      for (const json& f : frames_) {
        if (f["id"] == id) {
          found = f;
          return true;
        }
      }
      return false;
    });
    return found;
  }
  bool WaitCount(size_t n, milliseconds budget) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, budget, [&] { return frames_.size() >= n; });
  }
  std::vector<json> All() {
    std::lock_guard<std::mutex> lock(mu_);
    return frames_;
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return frames_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<json> frames_;
};

Clock::time_point Later() { return Clock::now() + std::chrono::seconds(30); }

std::string ErrorCode(const json& reply) { return reply.is_object() ? reply["error"].value("code", "") : ""; }
std::string ErrorMessage(const json& reply) { return reply.is_object() ? reply["error"].value("message", "") : ""; }

// ---------------------------------------------------------------- Limits

TEST(CodemodeLimits, DefaultsAndJson) {
  Limits l;
  EXPECT_EQ(l.ToJson(), json::parse(R"({"wall_ms":10000,"max_calls":500,"max_concurrent":16,
      "max_args_bytes":262144,"max_result_bytes":1048576,"max_console_bytes":65536,"memory_mb":256})"));
  StatusOr<Limits> back = LimitsFromJson(l.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ToJson(), l.ToJson());
  StatusOr<Limits> some = LimitsFromJson({{"max_calls", 20}, {"wall_ms", 3000}});
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_EQ(some->max_calls, 20u);
  EXPECT_EQ(some->wall_ms, 3000u);
  EXPECT_EQ(some->max_concurrent, 16u);
  EXPECT_TRUE(LimitsFromJson(nullptr).ok());
}

TEST(CodemodeLimits, AdminConfigErrorsNameTheKey) {
  auto err = [](const json& j) { return LimitsFromJson(j).status(); };
  EXPECT_EQ(err({{"max_cals", 5}}).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(err({{"max_cals", 5}}).message().find("max_cals"), std::string::npos);
  EXPECT_NE(err({{"wall_ms", 0}}).message().find("limits.wall_ms"), std::string::npos);
  EXPECT_NE(err({{"memory_mb", -1}}).message().find("limits.memory_mb"), std::string::npos);
  EXPECT_FALSE(LimitsFromJson({{"max_calls", 1.5}}).ok());
  EXPECT_FALSE(LimitsFromJson({{"max_calls", "5"}}).ok());
  EXPECT_FALSE(LimitsFromJson({{"max_calls", 5000000000LL}}).ok());  // > uint32
  EXPECT_FALSE(LimitsFromJson(json::array()).ok());
}

TEST(CodemodeLimits, CallerMayOnlyLower) {
  Limits admin;
  StatusOr<Limits> lower = ApplyCallerLimits(admin, {{"wall_ms", 2000}, {"max_calls", 0}});
  ASSERT_TRUE(lower.ok()) << lower.status().ToString();
  EXPECT_EQ(lower->wall_ms, 2000u);
  EXPECT_EQ(lower->max_calls, 500u);  // 0 keeps the admin's value
  StatusOr<Limits> same = ApplyCallerLimits(admin, {{"wall_ms", 10000}});
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->wall_ms, 10000u);
  Status higher = ApplyCallerLimits(admin, {{"wall_ms", 20000}}).status();
  EXPECT_EQ(higher.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(higher.message(), "limits.wall_ms 20000 exceeds the maximum of 10000");
  EXPECT_FALSE(ApplyCallerLimits(admin, {{"max_concurrent", -1}}).ok());
  EXPECT_FALSE(ApplyCallerLimits(admin, {{"cpu_ms", 5}}).ok());
  EXPECT_TRUE(ApplyCallerLimits(admin, nullptr).ok());
}

// ---------------------------------------------------------------- frames and queue

TEST(CodemodeFrames, ParseFrameChecks) {
  EXPECT_EQ(ParseFrame(R"({"id":1,"op":"search","query":"x"})").op, "search");
  EXPECT_EQ(ParseFrame(R"({"op":"result","value":1})").op, "result");
  ParsedFrame no_id = ParseFrame(R"({"op":"call","name":"a.b"})");
  EXPECT_FALSE(no_id.problem.empty());
  EXPECT_TRUE(no_id.id.is_null());
  ParsedFrame bad_utf8 = ParseFrame("{\"id\":3,\"op\":\"search\",\"query\":\"\xff\"}");
  EXPECT_EQ(bad_utf8.problem, "the frame is not valid UTF-8");
  EXPECT_EQ(bad_utf8.id, 3);
  std::string deep = R"({"id":4,"op":"call","name":"a.b","args":{"x":)" + std::string(100000, '[') +
                     std::string(100000, ']') + "}}";
  ParsedFrame too_deep = ParseFrame(deep);
  EXPECT_NE(too_deep.problem.find("deeper"), std::string::npos);
  EXPECT_EQ(too_deep.id, 4);
  EXPECT_EQ(NormalizeProgramError(json::parse(R"({"name":"TypeError","message":"m","stack":"s","x":1})")),
            json::parse(R"({"name":"TypeError","message":"m","stack":"s"})"));
  EXPECT_EQ(NormalizeProgramError("boom"), json::parse(R"({"name":"Error","message":"\"boom\""})"));
}

TEST(CodemodeCallQueue, FifoBoundedAndStopDrops) {
  CallQueue q(2);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<int> started, dropped;
  std::atomic<int> running{0}, max_running{0};
  for (int i = 0; i < 6; ++i) {
    q.Submit(
        [&, i] {
          int now = ++running;
          int seen = max_running.load();
          while (now > seen && !max_running.compare_exchange_weak(seen, now)) {
          }
          std::unique_lock<std::mutex> lock(mu);
          started.push_back(i);
          cv.notify_all();
          cv.wait(lock, [&] { return release; });
          --running;
        },
        [&, i] {
          std::lock_guard<std::mutex> lock(mu);
          dropped.push_back(i);
        });
  }
  bool two_started;
  {
    std::unique_lock<std::mutex> lock(mu);
    two_started = cv.wait_for(lock, std::chrono::seconds(5), [&] { return started.size() >= 2; });
  }
  std::this_thread::sleep_for(milliseconds(50));  // room for a third job to start, if it could
  EXPECT_TRUE(two_started);
  EXPECT_EQ(q.running(), 2u);
  q.Stop();  // before any assertion can return: the jobs must be released
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
  q.Join();
  // The first two were dispatched (FIFO); which of their two threads
  // recorded itself first is up to the scheduler.
  std::sort(started.begin(), started.end());
  EXPECT_EQ(started, (std::vector<int>{0, 1}));
  EXPECT_EQ(dropped, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(max_running.load(), 2);
  bool late_dropped = false;
  q.Submit([] { FAIL() << "ran after Stop"; }, [&] { late_dropped = true; });
  EXPECT_TRUE(late_dropped);
}

// ---------------------------------------------------------------- sessions without servers

class CodemodeBridgeNoServers : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gw = gateway::Gateway::Create(nullptr);
    ASSERT_TRUE(gw.ok());
    gw_ = std::move(gw).value();
  }
  std::unique_ptr<gateway::Gateway> gw_;
};

TEST_F(CodemodeBridgeNoServers, MalformedFrames) {
  BridgeSession s(*gw_, Grants{}, Limits{}, Later());
  Replies r;
  s.OnFrame("not json", r.Fn());
  s.OnFrame("[1,2]", r.Fn());
  s.OnFrame(R"({"op":"call","name":"test.echo"})", r.Fn());  // no id
  s.OnFrame(R"({"id":1.5,"op":"search","query":"x"})", r.Fn());
  s.OnFrame(R"({"id":"7","op":"search","query":"x"})", r.Fn());
  EXPECT_EQ(r.count(), 0u);
  EXPECT_EQ(s.protocol_error(), "the frame is not valid JSON");

  s.OnFrame(R"({"id":7,"op":"frobnicate"})", r.Fn());
  s.OnFrame(R"({"id":8})", r.Fn());
  s.OnFrame("{\"id\":9,\"op\":\"search\",\"query\":\"\xc3\"}", r.Fn());
  s.OnFrame(R"({"id":10,"op":"call","name":"a.b","args":)" + std::string(1000, '[') + std::string(1000, ']') + "}",
            r.Fn());
  for (int id : {7, 8, 9, 10}) {
    json reply = r.Get(id, milliseconds(1000));
    EXPECT_EQ(ErrorCode(reply), "E_BRIDGE_PROTOCOL") << id << ": " << reply;
    EXPECT_EQ(reply["ok"], false);
  }
  EXPECT_EQ(ErrorMessage(r.Get(7)), "unknown op \"frobnicate\"");
  EXPECT_EQ(s.calls_total(), 0u);  // malformed frames are not requests
  s.OnBridgeError("channel broke");
  EXPECT_EQ(s.protocol_error(), "the frame is not valid JSON");  // the first one stays
}

TEST_F(CodemodeBridgeNoServers, BridgeErrorIsRecorded) {
  BridgeSession s(*gw_, Grants{}, Limits{}, Later());
  EXPECT_EQ(s.protocol_error(), "");
  s.OnBridgeError("frame of 3000000 bytes exceeds the maximum");
  EXPECT_EQ(s.protocol_error(), "frame of 3000000 bytes exceeds the maximum");
}

TEST_F(CodemodeBridgeNoServers, ResultFrames) {
  {
    BridgeSession s(*gw_, Grants{}, Limits{}, Later());
    EXPECT_FALSE(s.return_value().has_value());
    Replies r;
    s.OnFrame(R"({"op":"result","value":{"a":[1,2]}})", r.Fn());
    ASSERT_TRUE(s.return_value().has_value());
    EXPECT_EQ(*s.return_value(), json::parse(R"({"a":[1,2]})"));
    EXPECT_FALSE(s.return_error().has_value());
    EXPECT_EQ(s.protocol_error(), "");
    s.OnFrame(R"({"op":"result","value":2})", r.Fn());
    EXPECT_EQ(*s.return_value(), json::parse(R"({"a":[1,2]})"));  // the first one counts
    EXPECT_NE(s.protocol_error().find("second"), std::string::npos);
    EXPECT_EQ(r.count(), 0u);
  }
  {
    BridgeSession s(*gw_, Grants{}, Limits{}, Later());
    Replies r;
    s.OnFrame(R"({"op":"result"})", r.Fn());  // `return undefined`
    ASSERT_TRUE(s.return_value().has_value());
    EXPECT_TRUE(s.return_value()->is_null());
  }
  {
    BridgeSession s(*gw_, Grants{}, Limits{}, Later());
    Replies r;
    s.OnFrame(R"({"op":"result_error","error":{"name":"TypeError","message":"x is not a function","stack":"at 1"}})",
              r.Fn());
    EXPECT_FALSE(s.return_value().has_value());
    ASSERT_TRUE(s.return_error().has_value());
    EXPECT_EQ(*s.return_error(), json::parse(R"({"name":"TypeError","message":"x is not a function","stack":"at 1"})"));
    s.OnFrame(R"({"op":"result","value":1})", r.Fn());
    EXPECT_FALSE(s.return_value().has_value());
    EXPECT_NE(s.protocol_error(), "");
  }
}

TEST_F(CodemodeBridgeNoServers, ReturnValueAtAndOverOneMebibyte) {
  const size_t limit = Limits{}.max_result_bytes;
  // A JSON string of n bytes serializes to n + 2 bytes (the quotes).
  {
    BridgeSession s(*gw_, Grants{}, Limits{}, Later());
    Replies r;
    s.OnFrame(json{{"op", "result"}, {"value", std::string(limit - 2, 'v')}}.dump(), r.Fn());
    ASSERT_TRUE(s.return_value().has_value());
    EXPECT_EQ(s.return_value()->get<std::string>().size(), limit - 2);
    EXPECT_FALSE(s.return_error().has_value());
  }
  {
    BridgeSession s(*gw_, Grants{}, Limits{}, Later());
    Replies r;
    s.OnFrame(json{{"op", "result"}, {"value", std::string(limit - 1, 'v')}}.dump(), r.Fn());
    EXPECT_FALSE(s.return_value().has_value());
    ASSERT_TRUE(s.return_error().has_value());
    EXPECT_EQ((*s.return_error())["name"], "E_LIMIT_RESULT");
    EXPECT_NE((*s.return_error())["message"].get<std::string>().find("1048577"), std::string::npos);
  }
}

TEST_F(CodemodeBridgeNoServers, FramesAfterCloseAreIgnored) {
  BridgeSession s(*gw_, Grants{}, Limits{}, Later());
  Replies r;
  s.Close();
  s.Close();  // idempotent
  s.OnFrame(R"({"id":1,"op":"search","query":"x"})", r.Fn());
  s.OnFrame(R"({"op":"result","value":1})", r.Fn());
  EXPECT_EQ(r.count(), 0u);
  EXPECT_EQ(s.calls_total(), 0u);
  EXPECT_FALSE(s.return_value().has_value());
}

// ---------------------------------------------------------------- sessions against the test server

// "test": trusted, so its readOnlyHint tools are read and write_note is write.
// "other": untrusted, with echo pinned read (so slow etc. are write).
class CodemodeBridge : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!FixturesInstalled()) return;
    const std::string server = kFixtures + "/test-server.mjs";
    json servers = {
        {"test", {{"command", "node"}, {"args", {server}}, {"trusted", true}, {"stderr", "discard"},
                  {"timeout_ms", 20000}}},
        {"other", {{"command", "node"}, {"args", {server}}, {"read_only_tools", {"echo"}}, {"stderr", "discard"},
                   {"timeout_ms", 20000}}},
    };
    auto gw = gateway::Gateway::Create(servers);
    ASSERT_TRUE(gw.ok()) << gw.status().ToString();
    gw_ = std::move(gw).value().release();
    for (const auto& [name, st] : gw_->ConnectAll(milliseconds(30000))) {
      ASSERT_TRUE(st.ok()) << name << ": " << st.ToString();
    }
  }
  static void TearDownTestSuite() {
    delete gw_;
    gw_ = nullptr;
  }
  void SetUp() override {
    if (!FixturesInstalled()) GTEST_SKIP() << "run scripts/setup.sh (npm install in " << kFixtures << ") and install node";
  }

  static Grants TestOnly() { return Grants{{"test"}, {}}; }
  static json Stats() {
    gateway::CallOutcome r = gw_->CallTool("test.stats", json::object(), nullptr, milliseconds(10000));
    EXPECT_TRUE(r.ok) << r.error_message;
    return r.value;
  }
  // Sends a request and waits for its reply.
  static json Ask(BridgeSession& s, Replies& r, json frame) {
    const int64_t id = frame["id"].get<int64_t>();
    s.OnFrame(frame.dump(), r.Fn());
    return r.Get(id);
  }
  static json Call(BridgeSession& s, Replies& r, int64_t id, const std::string& name, json args) {
    return Ask(s, r, {{"id", id}, {"op", "call"}, {"name", name}, {"args", std::move(args)}});
  }

  static gateway::Gateway* gw_;
};
gateway::Gateway* CodemodeBridge::gw_ = nullptr;

TEST_F(CodemodeBridge, SearchDescribeAndCallAllowed) {
  BridgeSession s(*gw_, TestOnly(), Limits{}, Later());
  Replies r;
  json found = Ask(s, r, {{"id", 1}, {"op", "search"}, {"query", "echo"}});
  ASSERT_EQ(found["ok"], true) << found;
  std::set<std::string> names;
  for (const json& t : found["result"]["tools"]) names.insert(t["name"].get<std::string>());
  EXPECT_TRUE(names.count("test.echo")) << found;
  for (const std::string& n : names) EXPECT_EQ(n.rfind("test.", 0), 0u) << n;  // nothing of "other"

  json limited = Ask(s, r, {{"id", 2}, {"op", "search"}, {"query", ""}, {"limit", 1}});
  ASSERT_EQ(limited["ok"], true);
  EXPECT_EQ(limited["result"]["tools"].size(), 1u);
  EXPECT_EQ(limited["result"]["truncated"], true);

  json described = Ask(s, r, {{"id", 3}, {"op", "describe"}, {"name", "test.echo"}});
  ASSERT_EQ(described["ok"], true) << described;
  EXPECT_EQ(described["result"]["name"], "test.echo");
  EXPECT_EQ(described["result"]["read_only"], true);
  EXPECT_TRUE(described["result"]["input_schema"]["properties"].contains("text"));

  json echoed = Call(s, r, 4, "test.echo", {{"text", "hi"}});
  EXPECT_EQ(echoed, json::parse(R"({"id":4,"ok":true,"result":"hi"})"));
  json structured = Ask(s, r, {{"id", 5}, {"op", "call"}, {"name", "test.structured"}});  // args missing = {}
  EXPECT_EQ(structured["result"], json::parse(R"({"answer":42})")) << structured;

  std::vector<CallRecord> calls = s.calls();
  ASSERT_EQ(calls.size(), 5u);
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i].seq, i + 1);
    EXPECT_EQ(calls[i].decision, "allowed");
    EXPECT_EQ(calls[i].error_code, "");
  }
  EXPECT_EQ(calls[0].op, "search");
  EXPECT_EQ(calls[0].name, "echo");
  EXPECT_EQ(calls[2].op, "describe");
  EXPECT_EQ(calls[3].op, "call");
  EXPECT_EQ(calls[3].name, "test.echo");
  EXPECT_EQ(calls[3].connector, "test");
  EXPECT_EQ(calls[3].tool, "echo");
  EXPECT_EQ(calls[3].effective_class, "read");
  EXPECT_EQ(calls[3].args_bytes, 13u);
  EXPECT_EQ(calls[3].args_sha256, Sha256Hex(R"({"text":"hi"})"));
  EXPECT_EQ(calls[3].result_bytes, 4u);  // "hi"
  EXPECT_EQ(calls[4].args_sha256, Sha256Hex("{}"));
  EXPECT_EQ(s.calls_total(), 5u);
  EXPECT_EQ(s.calls_denied(), 0u);
}

TEST_F(CodemodeBridge, UndeclaredConnectorAndUnknownToolLookAlike) {
  BridgeSession s(*gw_, TestOnly(), Limits{}, Later());
  Replies r;
  const std::vector<std::string> names = {"other.echo", "test.no_such_tool", "nobody.echo", "TEST.echo",
                                          "test.echo ", "echo"};
  int64_t id = 1;
  for (const std::string& name : names) {
    json call = Call(s, r, id++, name, {{"text", "x"}});
    EXPECT_EQ(ErrorCode(call), "E_TOOL_NOT_DECLARED") << name;
    EXPECT_EQ(ErrorMessage(call), "tool \"" + name + "\" is not available in this run");
    json described = Ask(s, r, {{"id", id++}, {"op", "describe"}, {"name", name}});
    EXPECT_EQ(ErrorCode(described), "E_TOOL_NOT_DECLARED") << name;
    EXPECT_EQ(ErrorMessage(described), ErrorMessage(call));
  }
  std::vector<CallRecord> calls = s.calls();
  ASSERT_EQ(calls.size(), 12u);
  EXPECT_EQ(calls[0].reason, "not_declared");
  EXPECT_EQ(calls[0].connector, "other");
  EXPECT_EQ(calls[1].reason, "not_declared");  // describe
  EXPECT_EQ(calls[2].reason, "unknown_tool");  // test.no_such_tool
  EXPECT_EQ(calls[2].connector, "");
  EXPECT_EQ(calls[4].reason, "unknown_tool");  // nobody.echo
  for (const CallRecord& c : calls) EXPECT_EQ(c.decision, "denied");
  EXPECT_EQ(s.calls_denied(), 12u);

  // With "other" granted, the same call goes through.
  BridgeSession both(*gw_, Grants{{"test", "other"}, {}}, Limits{}, Later());
  Replies r2;
  EXPECT_EQ(Call(both, r2, 1, "other.echo", {{"text", "x"}})["result"], "x");
}

TEST_F(CodemodeBridge, WriteToolsNeedAWriteGrant) {
  {
    BridgeSession s(*gw_, Grants{{"test", "other"}, {}}, Limits{}, Later());
    Replies r;
    json note = Call(s, r, 1, "test.write_note", {{"key", "k"}, {"text", "t"}});
    EXPECT_EQ(ErrorCode(note), "E_WRITE_NOT_ALLOWED") << note;
    // Untrusted "other": slow is write although it claims readOnlyHint.
    EXPECT_EQ(ErrorCode(Call(s, r, 2, "other.slow", {{"ms", 1}})), "E_WRITE_NOT_ALLOWED");
    // The write check comes before the schema check.
    EXPECT_EQ(ErrorCode(Call(s, r, 3, "test.write_note", {{"key", 1}})), "E_WRITE_NOT_ALLOWED");
    std::vector<CallRecord> calls = s.calls();
    EXPECT_EQ(calls[0].reason, "write_not_allowed");
    EXPECT_EQ(calls[0].effective_class, "write");
  }
  {
    BridgeSession s(*gw_, Grants{{"test", "other"}, {"test"}}, Limits{}, Later());
    Replies r;
    json note = Call(s, r, 1, "test.write_note", {{"key", "k"}, {"text", "t"}});
    ASSERT_EQ(note["ok"], true) << note;
    EXPECT_GE(note["result"]["count"].get<int>(), 1);
    EXPECT_EQ(ErrorCode(Call(s, r, 2, "other.slow", {{"ms", 1}})), "E_WRITE_NOT_ALLOWED");  // grant is per connector
  }
}

TEST_F(CodemodeBridge, ArgumentsAreCheckedBeforeDispatch) {
  BridgeSession s(*gw_, TestOnly(), Limits{}, Later());
  Replies r;
  json wrong_type = Call(s, r, 1, "test.echo", {{"text", 5}});
  EXPECT_EQ(ErrorCode(wrong_type), "E_INVALID_ARGS");
  EXPECT_NE(ErrorMessage(wrong_type).find("/text"), std::string::npos) << wrong_type;
  json missing = Call(s, r, 2, "test.echo", json::object());
  EXPECT_EQ(ErrorCode(missing), "E_INVALID_ARGS");
  EXPECT_NE(ErrorMessage(missing).find("text"), std::string::npos) << missing;
  EXPECT_EQ(ErrorCode(Call(s, r, 3, "test.echo", json::array({1}))), "E_INVALID_ARGS");
  EXPECT_EQ(ErrorCode(Call(s, r, 4, std::string(65, 'a'), {{"text", "x"}})), "E_INVALID_ARGS");
  EXPECT_EQ(ErrorCode(Ask(s, r, {{"id", 5}, {"op", "call"}, {"name", 5}})), "E_INVALID_ARGS");
  EXPECT_EQ(ErrorCode(Ask(s, r, {{"id", 6}, {"op", "search"}})), "E_INVALID_ARGS");
  EXPECT_EQ(ErrorCode(Ask(s, r, {{"id", 7}, {"op", "search"}, {"query", "x"}, {"limit", "3"}})), "E_INVALID_ARGS");
  EXPECT_EQ(s.calls()[0].reason, "schema");
  EXPECT_EQ(s.calls_denied(), 7u);
}

TEST_F(CodemodeBridge, ArgsAtAndOverTheLimit) {
  BridgeSession s(*gw_, TestOnly(), Limits{}, Later());
  Replies r;
  const size_t limit = Limits{}.max_args_bytes;  // 256 KiB
  const size_t overhead = json{{"text", ""}}.dump().size();
  json at = Call(s, r, 1, "test.echo", {{"text", std::string(limit - overhead, 'a')}});
  ASSERT_EQ(at["ok"], true) << ErrorMessage(at);
  EXPECT_EQ(at["result"].get<std::string>().size(), limit - overhead);
  json over = Call(s, r, 2, "test.echo", {{"text", std::string(limit - overhead + 1, 'a')}});
  EXPECT_EQ(ErrorCode(over), "E_LIMIT_ARGS");
  EXPECT_EQ(ErrorMessage(over), "the arguments are 262145 bytes, over the limit of 262144");
  // The size is checked before the tool is looked up.
  Limits small;
  small.max_args_bytes = 20;
  BridgeSession s2(*gw_, TestOnly(), small, Later());
  EXPECT_EQ(ErrorCode(Call(s2, r, 3, "nobody.tool", {{"text", std::string(20, 'a')}})), "E_LIMIT_ARGS");
  std::vector<CallRecord> calls = s.calls();
  EXPECT_EQ(calls[0].args_bytes, limit);
  EXPECT_EQ(calls[1].args_bytes, limit + 1);
  EXPECT_EQ(calls[1].reason, "args_too_large");
}

TEST_F(CodemodeBridge, MaxCallsAtAndOver) {
  Limits limits;
  limits.max_calls = 5;
  BridgeSession s(*gw_, TestOnly(), limits, Later());
  Replies r;
  EXPECT_EQ(Ask(s, r, {{"id", 1}, {"op", "search"}, {"query", "echo"}})["ok"], true);
  EXPECT_EQ(Ask(s, r, {{"id", 2}, {"op", "describe"}, {"name", "test.echo"}})["ok"], true);
  EXPECT_EQ(ErrorCode(Call(s, r, 3, "test.nope", json::object())), "E_TOOL_NOT_DECLARED");  // denied ones count
  EXPECT_EQ(Call(s, r, 4, "test.echo", {{"text", "a"}})["ok"], true);
  EXPECT_EQ(Call(s, r, 5, "test.echo", {{"text", "b"}})["ok"], true);  // the 5th: still fine
  json sixth = Call(s, r, 6, "test.echo", {{"text", "c"}});
  EXPECT_EQ(ErrorCode(sixth), "E_LIMIT_CALLS");
  EXPECT_EQ(ErrorCode(Ask(s, r, {{"id", 7}, {"op", "search"}, {"query", "x"}})), "E_LIMIT_CALLS");
  EXPECT_EQ(s.calls_total(), 7u);
  EXPECT_EQ(s.calls_denied(), 3u);
  std::vector<CallRecord> calls = s.calls();
  ASSERT_EQ(calls.size(), 7u);
  EXPECT_EQ(calls[5].reason, "call_limit");
  EXPECT_EQ(calls[6].op, "search");
}

TEST_F(CodemodeBridge, ConcurrencyIsBoundedAndFifo) {
  Limits limits;
  limits.max_concurrent = 4;
  BridgeSession s(*gw_, TestOnly(), limits, Later());
  Replies r;
  const int before = Stats()["started_slow"].get<int>();
  std::atomic<bool> done{false};
  std::atomic<int> max_in_flight{0};
  std::thread watcher([&] {
    while (!done) {
      const int started = Stats()["started_slow"].get<int>() - before;
      // Replies counted after the server's snapshot: never over-estimates.
      const int in_flight = started - static_cast<int>(r.count());
      if (in_flight > max_in_flight) max_in_flight = in_flight;
      std::this_thread::sleep_for(milliseconds(15));
    }
  });
  const auto start = Clock::now();
  for (int id = 1; id <= 20; ++id) {
    s.OnFrame(json{{"id", id}, {"op", "call"}, {"name", "test.slow"}, {"args", {{"ms", 300}}}}.dump(), r.Fn());
  }
  const auto queued = Clock::now() - start;
  EXPECT_LT(queued, milliseconds(1000));  // OnFrame does not wait for calls
  const bool all_replied = r.WaitCount(20, milliseconds(20000));
  const auto elapsed = Clock::now() - start;
  done = true;
  watcher.join();
  ASSERT_TRUE(all_replied);
  EXPECT_GE(elapsed, milliseconds(5 * 300));  // 20 calls, 4 at a time
  EXPECT_LE(max_in_flight.load(), 4);
  EXPECT_GE(max_in_flight.load(), 2);  // they did run in parallel
  // FIFO: the replies come in waves of four, in the order the calls arrived.
  std::vector<json> replies = r.All();
  for (size_t i = 0; i < replies.size(); ++i) {
    EXPECT_EQ(replies[i]["ok"], true) << replies[i];
    EXPECT_EQ((replies[i]["id"].get<int>() - 1) / 4, static_cast<int>(i / 4)) << "reply " << i << ": " << replies[i];
  }
  EXPECT_EQ(Stats()["started_slow"].get<int>() - before, 20);
}

TEST_F(CodemodeBridge, LargeResultAtAndOverTheLimit) {
  BridgeSession s(*gw_, TestOnly(), Limits{}, Later());
  Replies r;
  const int64_t limit = Limits{}.max_result_bytes;
  json at = Call(s, r, 1, "test.huge", {{"bytes", limit - 2}});  // + 2 quotes = the limit
  ASSERT_EQ(at["ok"], true) << ErrorMessage(at);
  EXPECT_EQ(at["result"].get<std::string>().size(), static_cast<size_t>(limit - 2));
  json over = Call(s, r, 2, "test.huge", {{"bytes", limit - 1}});
  EXPECT_EQ(ErrorCode(over), "E_LIMIT_RESULT");
  EXPECT_FALSE(over.contains("result"));
  std::vector<CallRecord> calls = s.calls();
  EXPECT_EQ(calls[0].result_bytes, static_cast<uint64_t>(limit));
  EXPECT_EQ(calls[1].result_bytes, static_cast<uint64_t>(limit + 1));
  EXPECT_EQ(calls[1].error_code, "E_LIMIT_RESULT");
  EXPECT_EQ(calls[1].decision, "allowed");
}

TEST_F(CodemodeBridge, ToolErrorIsCatchable) {
  BridgeSession s(*gw_, TestOnly(), Limits{}, Later());
  Replies r;
  json failed = Call(s, r, 1, "test.fail", {{"message", "boom happened"}});
  EXPECT_EQ(failed, json::parse(R"({"id":1,"ok":false,"error":{"code":"E_TOOL_ERROR","message":"boom happened"}})"));
  EXPECT_EQ(Call(s, r, 2, "test.echo", {{"text", "after"}})["result"], "after");  // the run goes on
  EXPECT_EQ(s.calls()[0].error_code, "E_TOOL_ERROR");
  EXPECT_EQ(s.calls()[0].decision, "allowed");
}

TEST_F(CodemodeBridge, CloseDropsQueuedAndCancelsInFlight) {
  const json before = Stats();
  Limits limits;
  limits.max_concurrent = 2;
  auto s = std::make_unique<BridgeSession>(*gw_, TestOnly(), limits, Later());
  Replies r;
  for (int id = 1; id <= 6; ++id) {
    s->OnFrame(json{{"id", id}, {"op", "call"}, {"name", "test.slow"}, {"args", {{"ms", 15000}}}}.dump(), r.Fn());
  }
  const int started_before = before["started_slow"].get<int>();
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (Stats()["started_slow"].get<int>() < started_before + 2 && Clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  ASSERT_EQ(Stats()["started_slow"].get<int>(), started_before + 2);
  const auto closing = Clock::now();
  s->Close();
  EXPECT_LT(Clock::now() - closing, milliseconds(3000));  // in-flight calls returned early
  std::vector<CallRecord> calls = s->calls();
  ASSERT_EQ(calls.size(), 6u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(calls[i].decision, "allowed");
    EXPECT_EQ(calls[i].error_code, "E_CANCELLED");
  }
  for (int i = 2; i < 6; ++i) {
    EXPECT_EQ(calls[i].decision, "denied");
    EXPECT_EQ(calls[i].error_code, "E_CANCELLED");
    EXPECT_EQ(calls[i].reason, "run_ended");
  }
  s.reset();
  // The server aborted both handlers; nothing queued ever reached it.
  const int cancelled_before = before["cancelled_count"].get<int>();
  json after;
  for (int i = 0; i < 100; ++i) {
    after = Stats();
    if (after["cancelled_count"].get<int>() >= cancelled_before + 2) break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_EQ(after["cancelled_count"].get<int>(), cancelled_before + 2);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_EQ(Stats()["started_slow"].get<int>(), started_before + 2);
  EXPECT_EQ(r.count(), 0u);  // no replies after the run ended
}

TEST_F(CodemodeBridge, WallClock) {
  {  // Already past: nothing is dispatched.
    BridgeSession s(*gw_, TestOnly(), Limits{}, Clock::now() - milliseconds(1));
    Replies r;
    const int calls_before = Stats()["calls"].get<int>();
    json late = Call(s, r, 1, "test.echo", {{"text", "x"}});
    EXPECT_EQ(ErrorCode(late), "E_LIMIT_WALLCLOCK") << late;
    EXPECT_EQ(Stats()["calls"].get<int>(), calls_before + 1);  // only this stats call
    EXPECT_EQ(s.calls()[0].decision, "denied");
    EXPECT_EQ(s.calls()[0].reason, "deadline");
  }
  {  // Runs out during the call: the call gets the time that is left.
    const int cancelled_before = Stats()["cancelled_count"].get<int>();
    const auto start = Clock::now();
    BridgeSession s(*gw_, TestOnly(), Limits{}, start + milliseconds(400));
    Replies r;
    json slow = Call(s, r, 1, "test.slow", {{"ms", 10000}});
    EXPECT_EQ(ErrorCode(slow), "E_LIMIT_WALLCLOCK") << slow;
    EXPECT_LT(Clock::now() - start, milliseconds(3000));
    json after;
    for (int i = 0; i < 100; ++i) {
      after = Stats();
      if (after["cancelled_count"].get<int>() > cancelled_before) break;
      std::this_thread::sleep_for(milliseconds(20));
    }
    EXPECT_EQ(after["cancelled_count"].get<int>(), cancelled_before + 1);
  }
}

}  // namespace
}  // namespace airlock::codemode
